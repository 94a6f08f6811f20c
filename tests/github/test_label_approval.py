"""`kgitops github check-label`: the label that allows a connection change counts only when
the person who added it last may review (write, maintain, admin) and is not the author.

Against the local fake GitHub: its pull request, its issue events (oldest first, paginated)
and the collaborator permission API, with hostile answers. Whatever cannot be verified does
not count, and the reason is one line.
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
from kgitops.integrations.github import MAX_RESPONSE_BYTES, GitHubClient

LABEL = "kgitops:allow-connection-change"
PR = 42
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
    """Pull request #42 of acme/topics, opened by olga (an admin), no label yet."""
    github.roles.update(TEAM)
    github.add_pull(PR, "olga")
    return github


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
            *extra,
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
    pr.label(PR, LABEL, who)
    code, out, err = check(pr, capsys)
    assert code == 0, err
    assert out == (
        f"the label '{LABEL}' on acme/topics#{PR} counts: @{who} added it last, has "
        f"{TEAM[who]} permission on acme/topics and did not open the pull request\n"
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
    pr.label(PR, LABEL, "wes")
    code, out, _ = check(pr, capsys)
    assert code == 0 and "@wes added it last" in out


def test_a_writers_label_removed_and_added_again_by_triage_no_longer_counts(
    pr: FakeGitHub, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr.label(PR, LABEL, "wes")
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
    pr.label(PR, LABEL, "wes")
    assert check(pr, capsys)[0] == 0
    pr.roles["wes"] = "read"
    assert refused(pr, capsys).startswith("@wes added it last and has read permission")
    del pr.roles["wes"]  # removed from the repository: GitHub answers 404
    reason = refused(pr, capsys)
    assert reason.startswith("who added it cannot be verified: reading the permission of @wes")
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
    assert reason.startswith("who added it cannot be verified: ")
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
        "who added it cannot be verified: listing the events of pull request #42 in "
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
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and len(err.splitlines()) == 1
    assert "does not count: who added it cannot be verified: reading pull request #42" in err
    assert "cannot reach the GitHub API" in err


def test_a_server_error_is_retried_then_does_not_count(pr: FakeGitHub) -> None:
    pr.label(PR, LABEL, "wes")
    pr.fail(502, times=4, path=r"/permission$")
    waits: list[float] = []
    client = GitHubClient(TOKEN, pr.url, sleep=waits.append)
    approval = label_approval(client, "acme/topics", PR, LABEL)
    assert not approval.counts
    assert approval.reason.endswith("GitHub answered 502 failure")
    assert waits == [2.0, 4.0, 8.0]
    pr.fail(502, times=1, path=r"/permission$")
    assert label_approval(client, "acme/topics", PR, LABEL).counts  # one retry suffices


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
    )
)
def test_the_label_counts_exactly_when_its_last_adder_may_review_and_is_not_the_author(
    shared_github: FakeGitHub, history: list[tuple[str, str]]
) -> None:
    github = shared_github
    github.roles.clear()
    github.roles.update(TEAM)
    github.events.clear()
    github.add_pull(PR, "olga")
    on, last_adder = False, None
    for who, event in history:
        github.label(PR, LABEL, who, event=event)
        on = event == "labeled"
        last_adder = who if on else last_adder
    approval = label_approval(GitHubClient(TOKEN, github.url), "acme/topics", PR, LABEL)
    expected = (
        on and last_adder != "olga" and TEAM[str(last_adder)] in ("admin", "maintain", "write")
    )
    assert approval.counts == expected, approval.reason
    assert "\n" not in approval.reason
