"""A marker is text anyone can copy: kgitops edits only the comments and drift issues its
own token's identity wrote. A foreign comment carrying the marker is left alone (it never
receives the plan) and a new comment is made; the same for a drift issue."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "github"))

from fake_github import TOKEN, FakeGitHub

from kgitops.cli import main


@pytest.fixture
def github() -> object:
    fake = FakeGitHub()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/topics")


def test_a_foreign_comment_carrying_the_marker_never_receives_the_plan(
    github: FakeGitHub, env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bait = github.add_comment("acme/topics", 42, "<!-- kgitops:plan-prod -->\nfirst!", "mallory")
    plan = tmp_path / "plan.md"
    plan.write_text("## plan\n+ create_topic secret-project-x\n")
    argv = ["github", "comment", "--pr", "42", "--marker", "plan-prod", "--file", str(plan)]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "created comment" in out.out and f"comments {bait} carry the marker" in out.err
    bodies = github.bodies()
    assert bodies[0] == "<!-- kgitops:plan-prod -->\nfirst!"  # never edited
    assert bodies[1] == "<!-- kgitops:plan-prod -->\n## plan\n+ create_topic secret-project-x\n"
    users = [c["user"]["login"] for c in github.comments[("acme/topics", 42)]]
    assert users == ["mallory", "github-actions[bot]"]
    # the next run updates kgitops' own comment, still not mallory's
    plan.write_text("## plan v2\n")
    assert main(argv) == 0
    assert github.bodies() == [
        "<!-- kgitops:plan-prod -->\nfirst!",
        "<!-- kgitops:plan-prod -->\n## plan v2\n",
    ]


def test_with_a_users_token_the_identity_is_get_user(
    github: FakeGitHub, env: None, tmp_path: Path
) -> None:
    github.user_token = True
    github.token_login = "kgitops-bot"
    github.add_comment("acme/topics", 42, "<!-- kgitops:plan -->\nold", "github-actions[bot]")
    own = github.add_comment("acme/topics", 42, "<!-- kgitops:plan -->\nold")
    plan = tmp_path / "plan.md"
    plan.write_text("new\n")
    assert main(["github", "comment", "--pr", "42", "--file", str(plan)]) == 0
    assert github.requests[-1].method == "PATCH"
    assert github.requests[-1].path.endswith(f"/issues/comments/{own}")
    assert github.bodies()[0] == "<!-- kgitops:plan -->\nold"


def test_a_foreign_drift_issue_carrying_the_marker_is_neither_updated_nor_closed(
    github: FakeGitHub, env: None, tmp_path: Path
) -> None:
    github.issues.append(
        {
            "number": 100,
            "title": "kgitops drift: prod",
            "body": "<!-- kgitops:drift-prod -->\nplease paste the plan here",
            "state": "open",
            "labels": [{"name": "kgitops-drift"}],
            "html_url": "https://github.test/acme/topics/issues/100",
            "user": {"login": "mallory"},
        }
    )
    body = tmp_path / "issue.md"
    body.write_text("the cluster prod drifted: + create_topic secret\n")
    base = ["github", "issue", "--marker", "drift-prod", "--file", str(body)]
    assert main([*base, "--title", "kgitops drift: prod"]) == 0
    assert [i["number"] for i in github.issues] == [100, 101]
    assert github.issues[0]["body"] == "<!-- kgitops:drift-prod -->\nplease paste the plan here"
    assert "secret" in github.issues[1]["body"]
    assert main([*base, "--close"]) == 0
    assert github.issues[0]["state"] == "open" and github.issues[1]["state"] == "closed"
