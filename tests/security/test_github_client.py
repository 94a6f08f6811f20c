"""The GitHub token goes only to the API it was given for, and only over https."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "github"))
from fake_github import TOKEN, FakeGitHub

from kgitops.errors import GitHubError
from kgitops.integrations.github.client import GitHubClient
from kgitops.integrations.github.upsert import upsert_comment


@pytest.fixture
def two_githubs() -> Iterator[tuple[FakeGitHub, FakeGitHub]]:
    a, b = FakeGitHub(), FakeGitHub()
    a.start()
    b.start()
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://api.github.com",
        "http://github.example.com/api/v3",
        "ftp://api.github.com",
        "https://user:pw@api.github.com",
        "api.github.com",
    ],
)
def test_the_client_refuses_an_api_url_that_is_not_https(url: str) -> None:
    with pytest.raises(GitHubError, match="invalid GitHub API URL"):
        GitHubClient(TOKEN, url)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed_with_the_token(
    two_githubs: tuple[FakeGitHub, FakeGitHub], status: int
) -> None:
    ours, theirs = two_githubs
    ours.fail(status, headers={"Location": f"{theirs.url}/repos/acme/topics/issues/42/comments"})
    client = GitHubClient(TOKEN, ours.url, sleep=lambda s: None)
    with pytest.raises(GitHubError, match=r"redirected to another host.*refusing"):
        upsert_comment(client, "acme/topics", 42, "plan", marker="plan")
    assert theirs.requests == []
    assert ours.bodies() == []


def test_a_redirect_within_the_api_is_followed(two_githubs: tuple[FakeGitHub, FakeGitHub]) -> None:
    ours, _ = two_githubs
    ours.fail(
        301, headers={"Location": f"{ours.url}/repos/acme/topics/issues/42/comments"}, method="GET"
    )
    client = GitHubClient(TOKEN, ours.url, sleep=lambda s: None)
    assert upsert_comment(client, "acme/topics", 42, "plan", marker="plan").action == "created"
