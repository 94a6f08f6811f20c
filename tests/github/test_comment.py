"""`kgitops github comment` against a local GitHub: one comment per marker, clear errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_github import TOKEN, FakeGitHub
from hypothesis import given
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.errors import GitHubError
from kgitops.integrations.github.body import COMMENT_LIMIT, check_repo, compose_body, marker_tag
from kgitops.integrations.github.client import GitHubClient
from kgitops.integrations.github.upsert import upsert_comment


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    return monkeypatch


def comment(github: FakeGitHub, path: Path, *extra: str) -> int:
    return main(
        [
            "github",
            "comment",
            "--api-url",
            github.url,
            "--repo",
            "acme/topics",
            "--file",
            str(path),
            *extra,
        ]
    )


def plan_file(tmp_path: Path, text: str, name: str = "plan.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_second_run_updates_the_comment_in_place_and_never_duplicates(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert comment(github, plan_file(tmp_path, "## plan v1\n+ create_topic a\n"), "--pr", "42") == 0
    assert "created comment" in capsys.readouterr().out
    assert comment(github, plan_file(tmp_path, "## plan v2\n~ alter_config a\n"), "--pr", "42") == 0
    out = capsys.readouterr().out
    assert "updated comment" in out

    bodies = github.bodies()
    assert len(bodies) == 1
    assert bodies[0] == "<!-- kgitops:plan -->\n## plan v2\n~ alter_config a\n"
    assert github.methods() == ["GET", "POST", "GET", "GET", "PATCH"]  # the list, then GET /user


def test_an_unchanged_plan_is_not_sent_again(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = plan_file(tmp_path, "## same plan\n")
    assert comment(github, path, "--pr", "42") == 0
    assert comment(github, path, "--pr", "42") == 0
    assert "unchanged comment" in capsys.readouterr().out
    assert github.methods() == ["GET", "POST", "GET", "GET"]


def test_each_marker_owns_its_own_comment_and_human_comments_are_left_alone(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch
) -> None:
    github.add_comment("acme/topics", 42, "LGTM, but mind the kgitops:plan-prod retention")
    path = plan_file(tmp_path, "prod plan\n")
    assert comment(github, path, "--pr", "42", "--marker", "plan-prod") == 0
    assert (
        comment(github, plan_file(tmp_path, "dev plan\n"), "--pr", "42", "--marker", "plan-dev")
        == 0
    )
    assert (
        comment(github, plan_file(tmp_path, "prod plan 2\n"), "--pr", "42", "--marker", "plan-prod")
        == 0
    )
    assert github.bodies() == [
        "LGTM, but mind the kgitops:plan-prod retention",
        "<!-- kgitops:plan-prod -->\nprod plan 2\n",
        "<!-- kgitops:plan-dev -->\ndev plan\n",
    ]


def test_the_marked_comment_is_found_on_a_later_page(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch
) -> None:
    github.page_size = 2
    for i in range(7):
        github.add_comment("acme/topics", 42, f"discussion {i}")
    marked = github.add_comment("acme/topics", 42, "<!-- kgitops:plan -->\nold plan\n")
    github.add_comment("acme/topics", 42, "discussion after")
    assert comment(github, plan_file(tmp_path, "new plan\n"), "--pr", "42") == 0
    assert len(github.bodies()) == 9
    assert github.bodies()[7] == "<!-- kgitops:plan -->\nnew plan\n"
    assert github.requests[-1].method == "PATCH"
    assert github.requests[-1].path.endswith(f"/issues/comments/{marked}")
    assert [r.method for r in github.requests].count("GET") == 6  # 5 pages and GET /user


def test_when_several_comments_carry_the_marker_the_oldest_is_updated_and_reported(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github.add_comment("acme/topics", 42, "<!-- kgitops:plan -->\na")
    dup = github.add_comment("acme/topics", 42, "<!-- kgitops:plan -->\nb")
    assert comment(github, plan_file(tmp_path, "c\n"), "--pr", "42") == 0
    assert github.bodies() == ["<!-- kgitops:plan -->\nc\n", "<!-- kgitops:plan -->\nb"]
    assert f"({dup})" in capsys.readouterr().err


def test_the_token_is_sent_as_a_bearer_token_and_never_printed(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = plan_file(tmp_path, "x\n")
    assert comment(github, path, "--pr", "42") == 0
    github.fail(401, body={"message": "Bad credentials"})
    assert comment(github, path, "--pr", "42") == 1
    github.fail(403, body={"message": "Resource not accessible by integration"})
    assert comment(github, path, "--pr", "42") == 1
    github.fail(429, headers={"Retry-After": "60"})
    assert comment(github, path, "--pr", "42", "--max-wait", "0") == 1
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert {r.authorization for r in github.requests} == {f"Bearer {TOKEN}"}


def test_missing_token_is_a_clear_error_and_nothing_is_sent(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.delenv("GITHUB_TOKEN")
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 1
    err = capsys.readouterr().err
    assert "GITHUB_TOKEN is not set" in err
    assert "pull-requests: write" in err
    assert github.requests == []


def test_a_rejected_token_says_so(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.setenv("GITHUB_TOKEN", "ghp_wrong")
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 1
    err = capsys.readouterr().err
    assert "401 Bad credentials" in err and "GITHUB_TOKEN" in err
    assert "ghp_wrong" not in err
    assert "Traceback" not in err


def test_a_missing_permission_is_named(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github.fail(403, method="POST", body={"message": "Resource not accessible by integration"})
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: creating a comment on pull request #42 in acme/topics")
    assert "403 Resource not accessible by integration" in err
    assert "pull-requests: write" in err
    assert github.bodies() == []


def test_the_permission_github_asks_for_is_quoted_when_it_says(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github.fail(
        403,
        body={"message": "Resource not accessible by personal access token"},
        headers={"X-Accepted-GitHub-Permissions": "issues=write; pull_requests=write"},
    )
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 1
    assert "needs issues: write or pull-requests: write" in capsys.readouterr().err


def test_an_unknown_repository_or_pull_request_is_a_clear_404(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "github",
            "comment",
            "--api-url",
            github.url,
            "--repo",
            "acme/nope",
            "--pr",
            "42",
            "--file",
            str(plan_file(tmp_path, "x\n")),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "listing the comments of pull request #42 in acme/nope: not found (404" in err


def test_a_primary_rate_limit_waits_for_the_reset_then_retries(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github.fail(
        403,
        body={"message": "API rate limit exceeded for installation ID 1."},
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()))},
    )
    started = time.monotonic()
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 0
    assert time.monotonic() - started >= 0.9  # waited until the reset (plus a second)
    assert github.methods() == ["GET", "GET", "POST"]
    assert len(github.bodies()) == 1


def test_429_with_retry_after_is_retried(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch
) -> None:
    github.fail(
        429,
        method="POST",
        headers={"Retry-After": "0"},
        body={"message": "You have exceeded a secondary rate limit."},
    )
    assert comment(github, plan_file(tmp_path, "x\n"), "--pr", "42") == 0
    assert github.methods() == ["GET", "POST", "POST"]
    assert len(github.bodies()) == 1


def test_client_waits_exactly_until_the_reset_bounded_by_max_wait(github: FakeGitHub) -> None:
    waits: list[float] = []
    client = GitHubClient(TOKEN, github.url, max_wait=120, sleep=waits.append, now=lambda: 1000.0)
    github.fail(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1030"})
    github.fail(403, body={"message": "You have exceeded a secondary rate limit"})
    github.fail(429, headers={"Retry-After": "7"})
    result = upsert_comment(client, "acme/topics", 42, "x", marker="plan")
    assert result.action == "created"
    assert waits == [31.0, 60.0, 7.0]

    github.fail(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "4600"})
    with pytest.raises(GitHubError, match=r"resets in 3601 s, longer than the 120 s"):
        upsert_comment(client, "acme/topics", 42, "y", marker="plan")
    assert waits == [31.0, 60.0, 7.0]


def test_client_gives_up_after_repeated_rate_limits(github: FakeGitHub) -> None:
    waits: list[float] = []
    client = GitHubClient(TOKEN, github.url, retries=2, sleep=waits.append)
    github.fail(429, times=5, headers={"Retry-After": "1"})
    with pytest.raises(GitHubError, match="still rate limited after 2 waits"):
        upsert_comment(client, "acme/topics", 42, "x")
    assert waits == [1.0, 1.0]


def test_server_errors_are_retried_with_backoff(github: FakeGitHub) -> None:
    waits: list[float] = []
    client = GitHubClient(TOKEN, github.url, sleep=waits.append)
    github.fail(502, times=2, body={"message": "Server Error"})
    assert upsert_comment(client, "acme/topics", 42, "x").action == "created"
    assert waits == [2.0, 4.0]


def test_a_body_over_the_limit_is_cut_with_a_note_and_a_link_to_the_artifact(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["```diff"] + [f"+ create_topic topic-{i:05d} partitions=12 rf=3" for i in range(3000)]
    text = "\n".join([*lines, "```", ""])
    assert len(text) > COMMENT_LIMIT
    url = "https://github.test/acme/topics/actions/runs/7/artifacts/9"
    code = comment(github, plan_file(tmp_path, text), "--pr", "42", "--artifact-url", url)
    assert code == 0
    [body] = github.bodies()
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith("<!-- kgitops:plan -->\n```diff\n+ create_topic topic-00000")
    assert f"[plan artifact]({url})" in body
    assert "Truncated" in body and "lines are left out here" in body
    assert body.count("```") % 2 == 0  # the cut fence is closed
    assert "lines left out" in capsys.readouterr().err


def test_compose_body_keeps_whole_lines_and_says_how_many_were_left_out() -> None:
    text = "".join(f"line {i}\n" for i in range(100)) + "footer: what the plan left out\n"
    body = compose_body(text, "plan", limit=600)
    assert body.truncated and len(body.text) <= 600
    shown = [int(ln[5:]) for ln in body.text.split("\n") if ln.startswith("line ")]
    head = [i for i in shown if i < 50]
    tail = [i for i in shown if i >= 50]
    assert head == list(range(len(head))) and head
    assert tail == list(range(100 - len(tail), 100)) and tail
    assert body.text.endswith("line 99\nfooter: what the plan left out\n")
    assert body.lines_left_out == 101 - len(shown) - 1
    assert f"{body.lines_left_out} of its 101 lines are left out here" in body.text
    assert "workflow run's artifacts" in body.text


def test_a_cut_inside_a_code_block_closes_and_reopens_the_fence() -> None:
    text = "intro\n```diff\n" + "".join(f"+ line {i}\n" for i in range(200)) + "```\nend\n"
    body = compose_body(text, "plan", limit=800).text
    before, after = body.split("> [!WARNING]")
    assert before.count("```") == 2  # opened by the plan, closed by the cut
    assert after.count("```") == 2  # reopened for the tail, closed by the plan


@given(st.text(max_size=3000), st.integers(min_value=450, max_value=2000))
def test_a_composed_body_always_fits_and_starts_with_the_marker(text: str, limit: int) -> None:
    body = compose_body(text, "plan-prod", limit=limit)
    assert len(body.text) <= limit
    assert body.text.startswith(marker_tag("plan-prod") + "\n")
    if not body.truncated:
        assert body.text == marker_tag("plan-prod") + "\n" + text.replace("\r\n", "\n")


def test_commit_option_comments_on_the_pull_request_that_merged_it(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch
) -> None:
    sha = "a" * 40
    github.pulls_of_commit[sha] = [
        {"number": 7, "merge_commit_sha": "b" * 40, "merged_at": None},
        {"number": 9, "merge_commit_sha": sha, "merged_at": "2026-11-21T10:00:00Z"},
    ]
    assert (
        comment(github, plan_file(tmp_path, "applied\n"), "--commit", sha, "--marker", "apply-prod")
        == 0
    )
    assert github.bodies(pr=9) == ["<!-- kgitops:apply-prod -->\napplied\n"]
    assert github.bodies(pr=7) == []


def test_commit_without_a_pull_request_is_not_an_error(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert comment(github, plan_file(tmp_path, "x\n"), "--commit", "c" * 40) == 0
    assert "nothing to comment on" in capsys.readouterr().out


def test_a_pagination_link_to_another_host_is_refused(github: FakeGitHub) -> None:
    github.page_size = 1
    github.link_host = "http://evil.test:1"
    github.add_comment("acme/topics", 42, "a")
    github.add_comment("acme/topics", 42, "b")
    client = GitHubClient(TOKEN, github.url)
    with pytest.raises(GitHubError, match="refusing to send the token there"):
        upsert_comment(client, "acme/topics", 42, "x")


def test_an_unreachable_api_is_a_clear_error(
    tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stopped = FakeGitHub()
    url = stopped.url
    stopped.server.server_close()
    code = main(
        [
            "github",
            "comment",
            "--api-url",
            url,
            "--repo",
            "acme/topics",
            "--pr",
            "1",
            "--file",
            str(plan_file(tmp_path, "x\n")),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert f"cannot reach the GitHub API at {url}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repo", "not-a-repo", "--pr", "1"], "invalid repository 'not-a-repo'"),
        (["--repo", "acme/topics", "--pr", "0"], "invalid pull request number 0"),
        (["--repo", "acme/topics", "--pr", "1", "--marker", "a -->"], "invalid marker"),
        (["--pr", "1"], "no repository: pass --repo"),
        (["--repo", "acme/topics", "--commit", "xyz"], "invalid commit 'xyz'"),
    ],
)
def test_bad_arguments_are_clear_errors(
    args: list[str],
    message: str,
    github: FakeGitHub,
    tmp_path: Path,
    env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = plan_file(tmp_path, "x\n")
    assert main(["github", "comment", "--api-url", github.url, "--file", str(path), *args]) == 1
    assert message in capsys.readouterr().err
    assert github.requests == []


def test_a_missing_plan_file_is_a_clear_error(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert comment(github, tmp_path / "nope.md", "--pr", "1") == 1
    assert (
        f"cannot read {tmp_path / 'nope.md'}: No such file or directory" in capsys.readouterr().err
    )


def test_head_sha_guard_comments_only_on_the_pull_request_at_that_commit(
    github: FakeGitHub, tmp_path: Path, env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github.pull_heads[42] = "d" * 40
    path = plan_file(tmp_path, "fork plan\n")
    assert comment(github, path, "--pr", "42", "--head-sha", "e" * 40) == 1
    assert "is at commit dddddddddddd, not eeeeeeeeeeee: not commenting" in capsys.readouterr().err
    assert github.bodies() == []
    assert comment(github, path, "--pr", "42", "--head-sha", "d" * 40) == 0
    assert github.bodies() == ["<!-- kgitops:plan -->\nfork plan\n"]


@pytest.mark.parametrize("tail", ["\n", "\r\n"])
def test_a_trailing_newline_is_not_a_valid_marker_repository_or_artifact_link(tail: str) -> None:
    # Python's $ matches before a final newline: each check must hold to the end of the text
    with pytest.raises(GitHubError, match="invalid marker"):
        marker_tag("plan-prod" + tail)
    with pytest.raises(GitHubError, match="invalid repository"):
        check_repo("acme/topics" + tail)
    with pytest.raises(GitHubError, match="invalid artifact URL"):
        compose_body("y\n" * 40_000, "plan", artifact_url="https://github.com/a/b" + tail)
