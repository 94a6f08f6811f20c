"""`kgitops github check-label`: the label that allows a connection change counts only when
the person who added it last may review (write, maintain, admin), is not the author, and
approved the very commit the workflow plans.

Against the local fake GitHub: its pull request, its issue events (oldest first, paginated),
its reviews (oldest first, paginated) and the collaborator permission API, with hostile
answers. Whatever cannot be verified does not count, and the reason is one line.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from fake_github import TOKEN, FakeGitHub
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.integrations.approval import label_approval
from kgitops.integrations.github.client import GitHubClient
from kgitops.integrations.github.transport import MAX_RESPONSE_BYTES

LABEL = "kgitops:allow-connection-change"
PR = 42
HEAD = "5d6e7f8" + "e" * 33  # the commit the workflow plans: the pull request's head
OLD = "1a2b3c4" + "c" * 33  # an earlier commit of the pull request
TEAM = {
    "olga": "admin",  # opens the pull requests
    "ada": "admin",
    "max": "maintain",
    "wes": "write",
    "trish": "triage",
    "reed": "read",
}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    return monkeypatch


@pytest.fixture
def pr(github: FakeGitHub) -> FakeGitHub:
    """Pull request #42 of acme/topics, opened by olga (an admin), at HEAD, no label yet."""
    github.roles.update(TEAM)
    github.add_pull(PR, "olga", head=HEAD)
    return github


def allowed_by(github: FakeGitHub, who: str) -> None:
    """``who`` approves the head, then adds the label: what a reviewer does."""
    github.review(PR, who)
    github.label(PR, LABEL, who)


def check(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    code = main(
        [
            "github",
            "check-label",
            "--api-url",
            github.url,
            "--repo",
            "acme/topics",
            "--pr",
            str(PR),
            *(extra if "--head-sha" in extra else (*extra, "--head-sha", HEAD)),
        ]
    )
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def refused(github: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> str:
    """The check's one line when the label does not count (exit 1, nothing on stdout)."""
    code, out, err = check(github, capsys)
    assert code == 1, out
    assert out == ""
    assert len(err.splitlines()) == 1, err
    prefix = f"error: the label '{LABEL}' on acme/topics#{PR} does not count: "
    assert err.startswith(prefix), err
    return err[len(prefix) :].rstrip("\n")


def permission_lookups(github: FakeGitHub) -> list[str]:
    return [r.path for r in github.requests if "/collaborators/" in r.path]


# -- who added it ----------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["ada", "max", "wes"])
def test_the_label_counts_when_someone_with_write_maintain_or_admin_added_it(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], who: str
) -> None:
    allowed_by(pr, who)
    code, out, err = check(pr, capsys)
    assert code == 0, err
    assert out == (
        f"the label '{LABEL}' on acme/topics#{PR} counts: @{who} added it last, has "
        f"{TEAM[who]} permission on acme/topics, did not open the pull request and approved "
        "its head 5d6e7f8\n"
    )
    assert permission_lookups(pr) == [f"/repos/acme/topics/collaborators/{who}/permission"]
    assert {r.authorization for r in pr.requests} == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize("who", ["trish", "reed"])
def test_a_label_added_by_triage_or_read_permission_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], who: str
) -> None:
    pr.label(PR, LABEL, who)
    reason = refused(pr, capsys)
    assert reason == (
        f"@{who} added it last and has {TEAM[who]} permission on acme/topics; only write, "
        "maintain or admin counts (triage may label, it may not review)"
    )


def test_the_author_cannot_allow_their_own_connection_change_even_as_an_admin(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "olga")
    assert "opened the pull request" in refused(pr, capsys)
    assert permission_lookups(pr) == []  # decided before asking


def test_the_author_is_recognised_whatever_the_case_of_the_login(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.roles["OLGA"] = "admin"
    pr.label(PR, LABEL, "OLGA")  # GitHub logins are case-insensitive
    assert "opened the pull request" in refused(pr, capsys)


def test_a_triage_label_removed_and_added_again_by_a_writer_counts(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "trish")
    pr.label(PR, LABEL, "wes", event="unlabeled")
    allowed_by(pr, "wes")
    code, out, _ = check(pr, capsys)
    assert code == 0 and "@wes added it last" in out


def test_a_writers_label_removed_and_added_again_by_triage_no_longer_counts(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")
    pr.label(PR, LABEL, "trish", event="unlabeled")
    pr.label(PR, LABEL, "trish")
    assert refused(pr, capsys).startswith("@trish added it last and has triage permission")


def test_other_labels_and_events_are_not_mistaken_for_it(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "trish")
    pr.label(PR, "kgitops:allow-connection-change-later", "wes")
    pr.label(PR, "needs-review", "ada")
    pr.other_event(PR, "review_requested", "ada")
    pr.other_event(PR, "head_ref_force_pushed", "olga")
    assert refused(pr, capsys).startswith("@trish added it last")


def test_a_pull_request_without_the_label_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
    pr.label(PR, LABEL, "wes", event="unlabeled")
    assert refused(pr, capsys) == f"pull request #{PR} does not carry it"


def test_a_label_the_events_do_not_show_being_added_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.pulls[PR]["labels"].append({"name": LABEL})  # e.g. a label renamed to this name
    assert "no event that added it" in refused(pr, capsys)
    pr.label(PR, LABEL, "wes")
    pr.events[PR].append({**pr.events[PR][-1], "event": "unlabeled"})  # a race: removed since
    assert refused(pr, capsys) == "its most recent event removed it"


def test_a_label_added_by_an_app_or_a_deleted_account_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.roles["github-actions[bot]"] = "write"
    pr.label(PR, LABEL, "github-actions[bot]")
    assert "the app @github-actions[bot] added it last" in refused(pr, capsys)
    pr.label(PR, LABEL, None)  # GitHub shows a deleted account as no actor
    assert refused(pr, capsys) == "the account that added it last no longer exists"
    assert permission_lookups(pr) == []


def test_a_collaborator_who_lost_write_permission_since_no_longer_counts(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")
    assert check(pr, capsys)[0] == 0
    pr.roles["wes"] = "read"
    assert refused(pr, capsys).startswith("@wes added it last and has read permission")
    del pr.roles["wes"]  # removed from the repository: GitHub answers 404
    reason = refused(pr, capsys)
    assert reason.startswith("it cannot be verified: reading the permission of @wes")
    assert "404" in reason


@pytest.mark.parametrize(
    "login",
    [
        "../../../orgs/acme/members/wes",
        "wes/../../ada",
        "wes?role=admin",
        "wes#",
        "wes\n::error::injected",
        "wes\n",  # a trailing newline: what $ in a regular expression lets through
        "wes\u202eadmin",
        "-wes",
        "w" * 40,
        "",
        "wes%2F..%2Fada",
    ],
)
def test_a_login_github_would_not_issue_does_not_count_and_is_never_put_in_a_url(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], login: str
) -> None:
    pr.roles[login] = "admin"
    pr.label(PR, LABEL, login)
    reason = refused(pr, capsys)
    assert reason.startswith("GitHub names whoever added it last '") or reason.startswith(
        'GitHub names whoever added it last "'
    )
    assert reason.endswith("which is not a GitHub login")
    assert permission_lookups(pr) == []
    assert "\u202e" not in reason


# -- the commit it allows: the labeller's approval of the head -------------------------------

NEW = "9f8e7d6" + "a" * 33  # a commit pushed while a run plans HEAD


def review_lookups(github: FakeGitHub) -> list[str]:
    return [r.path for r in github.requests if r.path.split("?")[0].endswith("/reviews")]


def test_a_label_without_the_labellers_approval_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
    assert refused(pr, capsys) == (
        "@wes added it last but has not approved the pull request; @wes approves the head "
        "5d6e7f8 and the check runs again"
    )
    assert review_lookups(pr) == [f"/repos/acme/topics/pulls/{PR}/reviews?per_page=100"]


def test_an_approval_of_an_older_commit_does_not_cover_what_was_pushed_since(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.push(PR, OLD)
    allowed_by(pr, "wes")  # wes reviewed OLD and labelled it
    assert check(pr, capsys, "--head-sha", OLD)[0] == 0
    pr.push(PR, HEAD)  # the author pushes again: the label stays on
    assert refused(pr, capsys) == (
        "@wes approved 1a2b3c4, the head is 5d6e7f8 (pushed since); @wes approves the "
        "current head and the check runs again"
    )
    pr.review(PR, "wes", "COMMENTED")  # a comment on the new head approves nothing
    assert refused(pr, capsys).startswith("@wes approved 1a2b3c4, the head is 5d6e7f8")
    pr.review(PR, "wes")  # wes reviews the new head
    code, out, _ = check(pr, capsys)
    assert code == 0 and out.endswith("approved its head 5d6e7f8\n")


def test_changes_requested_after_an_approval_cancels_it_and_a_comment_changes_nothing(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")
    pr.review(PR, "wes", "COMMENTED")
    assert check(pr, capsys)[0] == 0  # GitHub's rule: a comment keeps the approval
    pr.review(PR, "wes", "CHANGES_REQUESTED")
    assert refused(pr, capsys) == (
        "@wes added it last but @wes's latest review requests changes; @wes approves the "
        "head 5d6e7f8 and the check runs again"
    )
    pr.review(PR, "wes", "COMMENTED")
    pr.review(PR, "wes", "PENDING")  # a review not submitted yet
    assert "latest review requests changes" in refused(pr, capsys)
    pr.review(PR, "wes")
    assert check(pr, capsys)[0] == 0


def test_a_dismissed_approval_does_not_count_and_an_older_one_does_not_revive(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.review(PR, "wes")
    approval = pr.review(PR, "wes")
    pr.label(PR, LABEL, "wes")
    assert check(pr, capsys)[0] == 0
    approval["state"] = "DISMISSED"  # "Dismiss review", or a stale approval dismissed
    assert refused(pr, capsys) == (
        "@wes added it last but @wes's latest review was dismissed; @wes approves the head "
        "5d6e7f8 and the check runs again"
    )


def test_the_labellers_approval_is_found_on_a_later_page_and_so_is_a_later_refusal(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.page_size = 2
    pr.label(PR, LABEL, "wes")
    pr.review(PR, "wes", "CHANGES_REQUESTED")  # page 1
    for who in ("ada", "max", "ada"):
        pr.review(PR, who, "COMMENTED")
    pr.review(PR, "wes")  # page 3
    code, out, _ = check(pr, capsys)
    assert code == 0, out
    pages = review_lookups(pr)
    assert len(pages) == 3 and pages[1].endswith("page=2") and pages[2].endswith("page=3")
    pr.review(PR, "ada", "COMMENTED")
    pr.review(PR, "wes", "CHANGES_REQUESTED")  # page 4: read too
    assert "latest review requests changes" in refused(pr, capsys)


def test_endless_pages_of_reviews_stop_and_do_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.page_size = 1
    allowed_by(pr, "wes")
    for _ in range(100):
        pr.review(PR, "ada", "COMMENTED")
    assert refused(pr, capsys) == (
        "it cannot be verified: listing the reviews of pull request #42 in acme/topics: more "
        "than 100 pages of reviews; kgitops stops there"
    )
    assert len(review_lookups(pr)) == 100


def test_an_approval_by_someone_else_than_the_labeller_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.review(PR, "ada")  # an admin approves the head ...
    pr.review(PR, "max")
    pr.label(PR, LABEL, "wes")  # ... and a writer who did not approve labels it
    assert refused(pr, capsys) == (
        "@wes added it last but has not approved the pull request (an approval by @ada, @max "
        "does not count for the label: whoever adds it approves); @wes approves the head "
        "5d6e7f8 and the check runs again"
    )
    pr.label(PR, LABEL, "trish", event="unlabeled")
    pr.label(PR, LABEL, "ada")  # the approver adds it herself
    code, out, _ = check(pr, capsys)
    assert code == 0 and "@ada added it last" in out


def test_the_authors_own_approval_is_never_asked_for(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.review(PR, "olga")  # GitHub refuses this; a hostile answer may still say it
    pr.label(PR, LABEL, "olga")
    assert "opened the pull request" in refused(pr, capsys)
    assert review_lookups(pr) == []


def test_the_reviewers_login_is_compared_ignoring_case(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.review(PR, "WES")
    pr.label(PR, LABEL, "wes")
    assert check(pr, capsys)[0] == 0


def test_a_head_that_moved_during_the_run_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")  # wes approved HEAD, the commit this run plans
    pr.push(PR, NEW)  # the author pushes while the run is on its way
    pr.review(PR, "wes")  # even an approval of the new head does not make this run's count
    assert refused(pr, capsys) == (
        "the pull request moved during the run: this run plans 5d6e7f8, its head is now "
        "9f8e7d6 (the push gets a run of its own)"
    )
    assert review_lookups(pr) == [] and permission_lookups(pr) == []
    code, out, _ = check(pr, capsys, "--head-sha", NEW.upper())  # the run of the push
    assert code == 0 and out.endswith("approved its head 9f8e7d6\n")


def test_an_approval_of_a_commit_github_no_longer_has_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.review(PR, "ada", commit=None)
    pr.reviews[PR][-1]["commit_id"] = None  # someone else's: GitHub's answer, no harm
    allowed_by(pr, "wes")
    assert check(pr, capsys)[0] == 0
    pr.reviews[PR][-1]["commit_id"] = None  # wes's own: force-pushed away, collected
    assert refused(pr, capsys) == (
        "@wes approved a commit GitHub no longer has (force-pushed away), the head is "
        "5d6e7f8; @wes approves the head 5d6e7f8 and the check runs again"
    )


def test_reviews_of_deleted_accounts_belong_to_nobody(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")
    pr.review(PR, None, "CHANGES_REQUESTED")
    assert check(pr, capsys)[0] == 0


HOSTILE_REVIEWS = {
    "commit_id a short sha": {"commit_id": HEAD[:7]},
    "commit_id a ref name": {"commit_id": "HEAD"},
    "commit_id with a newline": {"commit_id": HEAD + "\n"},
    "commit_id with a path": {"commit_id": "../../" + HEAD},
    "commit_id not ASCII digits": {"commit_id": "\u0665" * 40},
    "commit_id huge": {"commit_id": HEAD * 250_000},  # 10 MB
    "commit_id a number": {"commit_id": 5},
    "commit_id a list": {"commit_id": [HEAD]},
    "commit_id missing": {"commit_id": ...},
    "state unknown": {"state": "APPROVED_BY_ADMIN"},
    "state in lower case": {"state": "approved"},
    "state missing": {"state": ...},
    "user without a login": {"user": {"id": 1}},
    "user a string": {"user": "wes"},
}


@pytest.mark.parametrize("whose", ["wes", "ada"])
@pytest.mark.parametrize("change", list(HOSTILE_REVIEWS.values()), ids=list(HOSTILE_REVIEWS))
def test_a_review_that_is_not_what_the_api_returns_does_not_count(
    pr: FakeGitHub,
    env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, object],
    whose: str,
) -> None:
    """The labeller's approval of the head is there, and one review (the labeller's own or
    someone else's) is not a review GitHub would list: the list is not trusted at all."""
    allowed_by(pr, "wes")
    bad = pr.review(PR, whose)
    for key, value in change.items():
        if value is ...:
            del bad[key]
        else:
            bad[key] = value
    reason = refused(pr, capsys)
    assert reason.startswith(
        "it cannot be verified: listing the reviews of pull request #42 in acme/topics: "
        "GitHub's answer holds "
    ), reason
    assert len(reason) < 400 and reason.isprintable()


@pytest.mark.parametrize(
    "raw",
    [
        b"<html>\n<h1>Unicorn!</h1>\n\x1b[31m</html>",
        b"[" * 200_000,
        b'{"state": "APPROVED", "commit_id": "' + HEAD.encode() + b'"}',
        b'[{"state": "APPROVED"}]',
        b"[1, 2, 3]",
        b"null",
    ],
)
def test_a_reviews_answer_that_is_not_a_list_of_reviews_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    allowed_by(pr, "wes")
    pr.fail(200, path=r"/reviews$", raw=raw)
    reason = refused(pr, capsys)
    assert reason.startswith("it cannot be verified: listing the reviews of pull request #42")
    assert "\x1b" not in reason


def test_a_head_that_is_not_a_sha_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed_by(pr, "wes")
    pr.push(PR, HEAD[:7])
    assert refused(pr, capsys) == (
        "it cannot be verified: reading pull request #42 in acme/topics: GitHub's answer is "
        "not a pull request"
    )


# -- what GitHub answers ---------------------------------------------------------------------


def test_the_adding_event_is_found_on_a_later_page(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.page_size = 3
    pr.label(PR, LABEL, "trish")  # page 1: triage added it first
    for _ in range(4):
        pr.other_event(PR, "subscribed", "ada")
    pr.label(PR, LABEL, "wes", event="unlabeled")  # page 2
    pr.label(PR, LABEL, "wes")  # page 3
    pr.review(PR, "wes")
    code, out, _ = check(pr, capsys)
    assert code == 0 and "@wes added it last" in out
    pages = [r.path for r in pr.requests if "/events" in r.path]
    assert len(pages) == 3 and pages[1].endswith("page=2") and pages[2].endswith("page=3")


def test_a_pagination_link_to_another_host_is_not_followed(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.page_size = 1
    pr.label(PR, "other", "trish")
    pr.label(PR, LABEL, "wes")
    pr.link_host = "http://127.0.0.2:9"
    assert "pagination link to another host" in refused(pr, capsys)


def test_endless_pages_of_events_stop_and_do_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.page_size = 1
    for _ in range(101):
        pr.other_event(PR, "subscribed", "ada")
    pr.label(PR, LABEL, "wes")
    assert "more than 100 pages of events" in refused(pr, capsys)
    assert len([r for r in pr.requests if "/events" in r.path]) == 100


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        (r"/events$", b"<html>\n<h1>Unicorn!</h1>\n\x1b[31m</html>"),
        (r"/events$", b"[" * 200_000),  # nested deeper than Python's parser recurses
        (r"/events$", b'[{"event": "labeled", "label": "' + LABEL.encode() + b'"}]'),
        (r"/events$", b'{"event": "labeled"}'),
        (r"/events$", b"[1, 2, 3]"),
        (r"/pulls/42$", b"<html>maintenance</html>"),
        (
            r"/pulls/42$",
            b'{"number": 43, "user": {"login": "x"}, "labels": [], "head": {"sha": "a"}}',
        ),
        (r"/permission$", b"not json"),
        (r"/permission$", b'{"permission": "superuser"}'),
        (r"/permission$", b'{"permission": ["admin"]}'),
    ],
)
def test_an_answer_that_is_not_what_the_api_returns_does_not_count(
    pr: FakeGitHub,
    env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: str,
    raw: bytes,
) -> None:
    pr.label(PR, LABEL, "wes")
    pr.fail(200, path=path, raw=raw)
    reason = refused(pr, capsys)
    assert reason.startswith("it cannot be verified: ")
    assert "\x1b" not in reason


def test_an_error_page_with_newlines_and_escapes_is_shown_as_one_line(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
    pr.fail(404, path=r"/events$", raw=b"<html>\n::error::owned\n\x1b]8;;http://x\x07" + b"y" * 999)
    reason = refused(pr, capsys)
    assert "\\n::error::owned" in reason and "\\x1b" in reason
    assert len(reason) < 600


def test_a_huge_answer_is_refused_without_reading_it_all(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
    pr.fail(200, path=r"/events$", raw=b"[" + b" " * (MAX_RESPONSE_BYTES + 1024) + b"]")
    assert refused(pr, capsys) == (
        "it cannot be verified: listing the events of pull request #42 in "
        "acme/topics: GitHub's answer is larger than 32 MiB; refusing it"
    )


def test_an_answer_that_echoes_the_token_never_shows_it(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
    pr.fail(403, path=r"/events$", body={"message": f"token {TOKEN} may not read events"})
    reason = refused(pr, capsys)  # asserts the token is not in the output
    assert "token *** may not read events" in reason
    assert "the token needs pull-requests: read" in reason


def test_github_unreachable_does_not_count(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(
        [
            "github",
            "check-label",
            "--api-url",
            f"http://127.0.0.1:{port}",
            "--repo",
            "acme/topics",
            "--pr",
            "42",
            "--head-sha",
            HEAD,
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and len(err.splitlines()) == 1
    assert "does not count: it cannot be verified: reading pull request #42" in err
    assert "cannot reach the GitHub API" in err


def test_a_server_error_is_retried_then_does_not_count(pr: FakeGitHub) -> None:
    allowed_by(pr, "wes")
    pr.fail(502, times=4, path=r"/reviews$")
    waits: list[float] = []
    client = GitHubClient(TOKEN, pr.url, sleep=waits.append)
    approval = label_approval(client, "acme/topics", PR, LABEL, head_sha=HEAD)
    assert not approval.counts
    assert approval.reason.endswith("GitHub answered 502 failure")
    assert waits == [2.0, 4.0, 8.0]
    pr.fail(502, times=1, path=r"/reviews$")
    assert label_approval(client, "acme/topics", PR, LABEL, head_sha=HEAD).counts


def test_without_a_token_nothing_is_asked_and_the_label_does_not_count(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.delenv("GITHUB_TOKEN")
    pr.label(PR, LABEL, "wes")
    assert "GITHUB_TOKEN is not set" in refused(pr, capsys)
    assert pr.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pr", "0"], "invalid pull request number 0"),
        (["--label", "a\nb"], "invalid label"),
        (["--label", "x" * 51], "invalid label"),
        (["--repo", "acme/../x"], "invalid repository"),
        (["--head-sha", "5d6e7f8"], "invalid --head-sha '5d6e7f8'"),  # short: ambiguous
        (["--head-sha", "HEAD"], "invalid --head-sha"),
        (["--head-sha", HEAD + "\n"], "invalid --head-sha"),
        (["--head-sha", HEAD[:-1] + "g"], "invalid --head-sha"),
        (["--head-sha", "\u0665" * 40], "invalid --head-sha"),  # Arabic-Indic digits
        (["--head-sha", HEAD * 1000], "invalid --head-sha"),
    ],
)
def test_bad_arguments_are_one_line_and_ask_nothing(
    pr: FakeGitHub,
    env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code, _, err = check(pr, capsys, *args)
    assert code == 1 and message in err and len(err.splitlines()) == 1
    assert len(err) < 400
    assert pr.requests == []


# -- the rule, over any history --------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    history=st.lists(
        st.tuples(st.sampled_from(sorted(TEAM)), st.sampled_from(["labeled", "unlabeled"])),
        max_size=8,
    ),
    reviews=st.lists(
        st.tuples(
            st.sampled_from(sorted(TEAM)),
            st.sampled_from(["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED"]),
            st.sampled_from([HEAD, OLD]),
        ),
        max_size=6,
    ),
)
def test_the_label_counts_exactly_when_its_last_adder_may_review_and_approved_the_head(
    shared_github: FakeGitHub,
    history: list[tuple[str, str]],
    reviews: list[tuple[str, str, str]],
) -> None:
    github = shared_github
    github.roles.clear()
    github.roles.update(TEAM)
    github.events.clear()
    github.reviews.clear()
    github.add_pull(PR, "olga", head=HEAD)
    on, last_adder = False, None
    for who, event in history:
        github.label(PR, LABEL, who, event=event)
        on = event == "labeled"
        last_adder = who if on else last_adder
    state: dict[str, tuple[str, str]] = {}  # GitHub's rule, written out once more
    for who, kind, commit in reviews:
        github.review(PR, who, kind, commit)
        if kind != "COMMENTED":
            state[who] = (kind, commit)
    approval = label_approval(
        GitHubClient(TOKEN, github.url), "acme/topics", PR, LABEL, head_sha=HEAD
    )
    expected = (
        on
        and last_adder != "olga"
        and TEAM[str(last_adder)] in ("admin", "maintain", "write")
        and state.get(str(last_adder)) == ("APPROVED", HEAD)
    )
    assert approval.counts == expected, approval.reason
    assert "\n" not in approval.reason
