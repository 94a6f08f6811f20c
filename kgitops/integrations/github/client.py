"""``GitHubClient``: the GitHub REST endpoints kgitops calls (comments, issues, pull
requests, label events, reviews, permissions) and the records they return, each answer
checked before it is trusted; the HTTP is ``transport``'s."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, Unpack

from kgitops.errors import GitHubError
from kgitops.integrations.github.transport import (
    GITHUB_API_URL,
    Transport,
    TransportOptions,
    one_line,
)

LOGIN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\[bot\])?")
"""A GitHub login (``fullmatch``): letters, digits and hyphens, not first, at most 39 (an
app's ends in [bot])."""
SHA_RE = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
"""A full commit SHA (``fullmatch``): SHA-1, or SHA-256 for a repository that uses it."""
REVIEW_STATES = ("APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING")
"""The states GitHub gives a pull-request review; anything else is not GitHub's answer."""

APP_LOGIN = "github-actions[bot]"
"""Who writes with a workflow's GITHUB_TOKEN: an installation token, for which GitHub answers
``GET /user`` with 403 (Resource not accessible by integration)."""


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str
    author: str | None = None  # the login that wrote it (None: a deleted account)


@dataclass(frozen=True)
class Issue:
    number: int
    body: str
    url: str
    author: str | None = None


@dataclass(frozen=True)
class PullRequest:
    """What kgitops reads of a pull request: who opened it, its labels now, its head."""

    number: int
    author: str
    labels: tuple[str, ...]
    head_sha: str


@dataclass(frozen=True)
class LabelEvent:
    """One ``labeled`` or ``unlabeled`` event of an issue or pull request, as GitHub lists
    them (oldest first). ``actor`` is None for a deleted account."""

    event: Literal["labeled", "unlabeled"]
    label: str
    actor: str | None
    created_at: str


@dataclass(frozen=True)
class Review:
    """One pull-request review, as GitHub lists them (oldest first). ``reviewer`` is None for
    a deleted account; ``commit`` (lower-case) is None when GitHub no longer has the commit
    the review was of (garbage collected after a force push: GitHub's ``commit_id: null``)."""

    reviewer: str | None
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
    commit: str | None


class GitHubClient:
    """A small GitHub REST client: JSON in and out, errors translated, rate limits waited out
    (by its ``Transport``, which takes the ``options``: ``max_wait``, ``retries``,
    ``timeout``, ``answer_seconds``, and ``sleep`` and ``now``, injectable so tests can check
    the waits without waiting).
    """

    def __init__(
        self, token: str, api_url: str = GITHUB_API_URL, **options: Unpack[TransportOptions]
    ) -> None:
        self._http = Transport(token, api_url, **options)
        self.api_url = self._http.api_url

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r})"

    # -- the REST calls kgitops needs ---------------------------------------------------------

    def identity(self) -> str:
        """The login the token writes as: ``GET /user``'s, or ``github-actions[bot]`` when
        GitHub answers that an installation token (a workflow's GITHUB_TOKEN) may not read
        it. Only what this identity wrote is ever edited (a marker anyone can copy)."""
        what = "asking GitHub who the token is (GET /user)"
        url = f"{self.api_url}/user"
        resp = self._http.send("GET", url, None, what=what)
        if resp.status == 403 and self._http.rate_limit_wait(resp) is None:
            return APP_LOGIN
        if not 200 <= resp.status < 300:
            resp = self._http.request("GET", url, what=what, need="a token GitHub accepts")
        login = resp.data.get("login") if isinstance(resp.data, dict) else None
        if not isinstance(login, str) or not login:
            raise GitHubError(f"{what}: GitHub's answer has no login")
        return login

    def list_comments(self, repo: str, pr: int) -> Iterator[Comment]:
        """Every comment of pull request ``pr`` (its issue comments), following pagination."""
        url = f"{self.api_url}/repos/{repo}/issues/{pr}/comments?per_page=100"
        what = f"listing the comments of pull request #{pr} in {repo}"
        for item in self._http.pages(url, what=what, need="pull-requests: read", items="comments"):
            yield _comment(item, what)

    def create_comment(self, repo: str, pr: int, body: str) -> Comment:
        what = f"creating a comment on pull request #{pr} in {repo}"
        return self._write_comment("POST", f"/repos/{repo}/issues/{pr}/comments", body, what)

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        what = f"updating comment {comment_id} in {repo}"
        path = f"/repos/{repo}/issues/comments/{comment_id}"
        return self._write_comment("PATCH", path, body, what)

    def _write_comment(self, method: str, path: str, body: str, what: str) -> Comment:
        url = f"{self.api_url}{path}"
        need = "pull-requests: write"
        resp = self._http.request(method, url, {"body": body}, what=what, need=need)
        return _comment(resp.data, what)

    def list_open_issues(self, repo: str, label: str) -> Iterator[Issue]:
        """The open issues (not pull requests) of ``repo`` carrying ``label``, oldest first."""
        query = urllib.parse.urlencode(
            {"state": "open", "labels": label, "per_page": 100, "direction": "asc"}
        )
        url = f"{self.api_url}/repos/{repo}/issues?{query}"
        what = f"listing the open issues labelled {label!r} in {repo}"
        for item in self._http.pages(url, what=what, need="issues: read", items="issues"):
            if isinstance(item, dict) and "pull_request" not in item:
                yield _issue(item, what)

    def create_issue(self, repo: str, title: str, body: str, labels: list[str]) -> Issue:
        what = f"opening an issue in {repo}"
        payload = {"title": title, "body": body, "labels": labels}
        resp = self._http.request(
            "POST", f"{self.api_url}/repos/{repo}/issues", payload, what=what, need="issues: write"
        )
        return _issue(resp.data, what)

    def update_issue(self, repo: str, number: int, **fields: str) -> Issue:
        """PATCH issue ``number``: ``body=...``, ``state="closed"``, ``state_reason=...``."""
        what = f"updating issue #{number} in {repo}"
        url = f"{self.api_url}/repos/{repo}/issues/{number}"
        resp = self._http.request("PATCH", url, dict(fields), what=what, need="issues: write")
        return _issue(resp.data, what)

    def pull_head_sha(self, repo: str, pr: int) -> str:
        """The commit at the head of pull request ``pr`` now."""
        what = f"reading pull request #{pr} in {repo}"
        resp = self._http.request(
            "GET", f"{self.api_url}/repos/{repo}/pulls/{pr}", what=what, need="pull-requests: read"
        )
        try:
            return str(resp.data["head"]["sha"])
        except (KeyError, TypeError):
            raise GitHubError(f"{what}: GitHub's answer has no head commit") from None

    def pull_request(self, repo: str, pr: int) -> PullRequest:
        """Pull request ``pr`` as it is now: its author, its labels and its head commit."""
        what = f"reading pull request #{pr} in {repo}"
        resp = self._http.request(
            "GET", f"{self.api_url}/repos/{repo}/pulls/{pr}", what=what, need="pull-requests: read"
        )
        data = resp.data
        try:
            author = data["user"]["login"]
            labels = tuple(item["name"] for item in data["labels"])
            head = data["head"]["sha"]
            number = data["number"]
        except (KeyError, TypeError):
            raise GitHubError(f"{what}: GitHub's answer is not a pull request") from None
        if not (
            isinstance(author, str)
            and isinstance(head, str)
            and SHA_RE.fullmatch(head)
            and isinstance(number, int)
            and all(isinstance(name, str) for name in labels)
        ):
            raise GitHubError(f"{what}: GitHub's answer is not a pull request")
        if number != pr:
            raise GitHubError(f"{what}: GitHub answered with pull request #{number}")
        return PullRequest(number, author, labels, head.lower())

    def label_events(self, repo: str, pr: int) -> Iterator[LabelEvent]:
        """Every ``labeled`` and ``unlabeled`` event of pull request ``pr``, oldest first (the
        issue events API, following pagination for at most ``MAX_PAGES`` pages)."""
        url = f"{self.api_url}/repos/{repo}/issues/{pr}/events?per_page=100"
        what = f"listing the events of pull request #{pr} in {repo}"
        for item in self._http.pages(url, what=what, need="pull-requests: read", items="events"):
            event = _label_event(item, what)
            if event is not None:
                yield event

    def reviews(self, repo: str, pr: int) -> Iterator[Review]:
        """Every review of pull request ``pr``, oldest first (``GET .../pulls/{pr}/reviews``,
        following pagination for at most ``MAX_PAGES`` pages). A review that is not what the
        API returns (an unknown state, a ``commit_id`` that is not a SHA or is missing) is an
        error: the list cannot be trusted."""
        url = f"{self.api_url}/repos/{repo}/pulls/{pr}/reviews?per_page=100"
        what = f"listing the reviews of pull request #{pr} in {repo}"
        for item in self._http.pages(url, what=what, need="pull-requests: read", items="reviews"):
            yield _review(item, what)

    def collaborator_permission(self, repo: str, login: str) -> tuple[str, str]:
        """(permission, role) of ``login`` on ``repo``: GitHub's base permission (``admin``,
        ``write``, ``read`` or ``none``; maintain counts as write, triage as read) and the
        role's own name (``maintain``, ``triage``, a custom role...)."""
        if not LOGIN_RE.fullmatch(login):
            raise GitHubError(f"invalid GitHub login {one_line(repr(login), 60)}")
        what = f"reading the permission of @{login} on {repo}"
        user = urllib.parse.quote(login, safe="")
        url = f"{self.api_url}/repos/{repo}/collaborators/{user}/permission"
        resp = self._http.request("GET", url, what=what, need="metadata: read")
        data = resp.data
        permission = data.get("permission") if isinstance(data, dict) else None
        if permission not in ("admin", "write", "read", "none"):
            raise GitHubError(f"{what}: GitHub's answer names no permission")
        role = data.get("role_name")
        return permission, role if isinstance(role, str) and role else permission

    def pull_for_commit(self, repo: str, sha: str) -> int | None:
        """The pull request that merged ``sha`` (None for a direct push)."""
        if not re.fullmatch(r"[0-9a-fA-F]{7,40}", sha):
            raise GitHubError(f"invalid commit {sha!r}: expected a hexadecimal SHA")
        what = f"finding the pull request of commit {sha} in {repo}"
        url = f"{self.api_url}/repos/{repo}/commits/{sha}/pulls?per_page=100"
        resp = self._http.request("GET", url, what=what, need="pull-requests: read")
        pulls = [p for p in resp.data if isinstance(p, dict)] if isinstance(resp.data, list) else []
        ranked = sorted(
            pulls,
            key=lambda p: (p.get("merge_commit_sha") != sha, p.get("merged_at") is None),
        )
        return int(ranked[0]["number"]) if ranked and "number" in ranked[0] else None


_Posted = TypeVar("_Posted", Comment, Issue)


def _author(item: Any) -> str | None:
    user = item.get("user") if isinstance(item, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def _comment(item: Any, what: str) -> Comment:
    return _posted(Comment, "id", "a comment", item, what)


def _posted(
    make: Callable[[int, str, str, str | None], _Posted],
    key: str,
    noun: str,
    item: Any,
    what: str,
) -> _Posted:
    """A comment or an issue as GitHub answers it: the number under ``key``, the body, the
    link and the author; anything else is an error saying it is not ``noun``."""
    try:
        return make(
            int(item[key]),
            str(item.get("body") or ""),
            str(item.get("html_url", "")),
            _author(item),
        )
    except (KeyError, TypeError, ValueError):
        raise GitHubError(f"{what}: GitHub's answer is not {noun}") from None


def _label_event(item: Any, what: str) -> LabelEvent | None:
    """A ``labeled``/``unlabeled`` event, None for any other kind; an answer that is not an
    event, or a label event without its label, is an error (the list cannot be trusted)."""
    if not isinstance(item, dict) or not isinstance(item.get("event"), str):
        raise GitHubError(f"{what}: GitHub's answer holds something that is not an event")
    kind = item["event"]
    if kind not in ("labeled", "unlabeled"):
        return None
    label = item.get("label")
    name = label.get("name") if isinstance(label, dict) else None
    if not isinstance(name, str):
        raise GitHubError(f"{what}: GitHub's answer holds a {kind} event without its label")
    actor = item.get("actor")
    login = actor.get("login") if isinstance(actor, dict) else None
    created = item.get("created_at")
    return LabelEvent(
        kind,
        name,
        login if isinstance(login, str) else None,
        created if isinstance(created, str) else "",
    )


def _review(item: Any, what: str) -> Review:
    """A review as GitHub lists it: a known state, a reviewer (or null: a deleted account)
    and a ``commit_id`` that is a full SHA or null; anything else is an error."""
    state = item.get("state") if isinstance(item, dict) else None
    if state not in REVIEW_STATES:
        raise GitHubError(f"{what}: GitHub's answer holds something that is not a review")
    user = item.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    if user is not None and not isinstance(login, str):
        raise GitHubError(f"{what}: GitHub's answer holds a review without its reviewer")
    if "commit_id" not in item:
        raise GitHubError(f"{what}: GitHub's answer holds a review without its commit_id")
    commit = item["commit_id"]
    if commit is not None and not (isinstance(commit, str) and SHA_RE.fullmatch(commit)):
        shown = one_line(repr(commit) if isinstance(commit, str) else type(commit).__name__, 60)
        raise GitHubError(
            f"{what}: GitHub's answer holds a review whose commit_id {shown} is not a commit SHA"
        )
    return Review(login, state, None if commit is None else commit.lower())


def _issue(item: Any, what: str) -> Issue:
    return _posted(Issue, "number", "an issue", item, what)
