"""The GitHub REST adapter: the only module that talks to GitHub (stdlib ``urllib`` only).

It does one job for the GitOps workflows: keep exactly one pull-request comment per marker
up to date. The comment carries a hidden HTML marker (``<!-- kgitops:plan-prod -->``); a run
finds the comment with that marker *that the token's own identity wrote* (``GET /user``, or
``github-actions[bot]`` for a workflow's GITHUB_TOKEN) and edits it in place, or creates it,
so a pull request pushed ten times shows one plan comment, not ten; a marked comment someone
else wrote is never edited (a marker is text anyone can copy)::

    client = GitHubClient(token, "https://api.github.com")
    upsert_comment(client, "acme/topics", 42, plan_markdown, marker="plan-prod")
    # -> CommentResult(action="created" | "updated" | "unchanged", ...)

Every failure is a ``GitHubError`` whose message says what to do: a missing permission names
the permission (``pull-requests: write``), a rate limit waits for the reset (bounded by
``max_wait``) and retries, a 404 says what was not found. The token is sent only to the API
host it was given for (pagination links elsewhere are refused) and never appears in a message.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kgitops import __version__
from kgitops.errors import GitHubError, remember_secrets

GITHUB_API_URL = "https://api.github.com"
COMMENT_LIMIT = 65_536
"""GitHub refuses an issue or pull-request comment body longer than this many characters."""

MARKER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
ARTIFACT_URL_RE = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~%/+=&?-]*)?$")
SECONDARY_LIMIT_WAIT = 60.0
"""GitHub's advice for a secondary rate limit that gives no Retry-After: wait a minute."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The largest answer read (a page of 100 comments of 65,536 characters fits): a larger one
is refused, not read into memory."""
MAX_PAGES = 100
"""Pages of a listing followed (10,000 items at 100 a page) before kgitops stops: every
listing (comments, issues, events, reviews), so a ``rel="next"`` loop ends."""
ANSWER_SECONDS = 120.0
"""The longest one request may take, its whole answer read: an answer that trickles a byte
at a time (each within the socket timeout) is cut there."""
LOGIN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\[bot\])?")
"""A GitHub login (``fullmatch``): letters, digits and hyphens, not first, at most 39 (an
app's ends in [bot])."""
SHA_RE = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
"""A full commit SHA (``fullmatch``): SHA-1, or SHA-256 for a repository that uses it."""
REVIEW_STATES = ("APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING")
"""The states GitHub gives a pull-request review; anything else is not GitHub's answer."""


def marker_tag(name: str) -> str:
    """The hidden line that identifies a comment: ``<!-- kgitops:plan-prod -->``."""
    if not MARKER_RE.fullmatch(name):
        raise GitHubError(
            f"invalid marker {name!r}: use letters, digits, '.', '_', '/' or '-' (at most 100)"
        )
    return f"<!-- kgitops:{name} -->"


def check_repo(repo: str) -> str:
    if not REPO_RE.fullmatch(repo) or repo.endswith((".", "/")) or "/.." in repo:
        raise GitHubError(f"invalid repository {repo!r}: expected OWNER/NAME, e.g. acme/topics")
    return repo


@dataclass(frozen=True)
class Body:
    """A comment body ready to send, and whether (and how much) it was cut to fit."""

    text: str
    truncated: bool = False
    lines_left_out: int = 0


_FENCE_STARTS = frozenset({"`", " "})


def _open_fence(lines: list[str]) -> str | None:
    """The code fence still open after ``lines`` (CommonMark: a run of three or more
    backticks opens; a line of at least as many backticks and nothing else closes)."""
    open_fence: str | None = None
    for line in lines:
        if line[:1] not in _FENCE_STARTS:  # most lines: one slice, no copy
            continue
        stripped = line.lstrip(" ")
        if not stripped.startswith("```") or len(line) - len(stripped) > 3:
            continue
        rest = stripped.lstrip("`")
        run = stripped[: len(stripped) - len(rest)]
        if open_fence is None:
            if "`" not in rest:
                open_fence = run
        elif len(run) >= len(open_fence) and not rest.strip():
            open_fence = None
    return open_fence


def compose_body(
    text: str, marker: str, *, artifact_url: str | None = None, limit: int = COMMENT_LIMIT
) -> Body:
    """The marker line followed by ``text``, cut at line boundaries to fit ``limit`` characters.

    A cut keeps the head and the last few lines (a plan's summary of what it left out and
    its footer are there) and puts a note where lines were removed, saying how many and
    where the whole plan is (``artifact_url``, e.g. the workflow run's artifact). Code fences
    the cut would leave open are closed and reopened, so the note renders as text. Example:
    a 90,000-character plan becomes the marker, about 64,000 characters of whole lines from
    the top, the note, then the last lines (at most 1,000 characters).
    """
    tag = marker_tag(marker)
    if artifact_url is not None and not ARTIFACT_URL_RE.fullmatch(artifact_url):
        raise GitHubError(f"invalid artifact URL {artifact_url!r}: expected https://HOST/PATH")
    text = text.replace("\r\n", "\n")
    whole = f"{tag}\n{text}"
    if len(whole) <= limit:
        return Body(whole)
    lines = text.split("\n")
    total = len(lines) - (1 if text.endswith("\n") else 0)
    where = (
        f"The full plan: [plan artifact]({artifact_url})."
        if artifact_url
        else "The full plan is in this workflow run's artifacts."
    )

    def note(left_out: int) -> str:
        return (
            f"\n\n> [!WARNING]\n> **Truncated.** This plan is {len(text):,} characters; GitHub "
            f"allows {limit:,} in a comment, so {left_out:,} of its {total:,} lines are left "
            f"out here. {where}\n\n"
        )

    fence_lines = [ln.lstrip(" ") for ln in lines if ln[:1] in _FENCE_STARTS]
    longest = max((len(s) - len(s.lstrip("`")) for s in fence_lines if s[:3] == "```"), default=3)
    budget = limit - len(tag) - 1 - len(note(total)) - 2 * (longest + 1)
    if budget <= 0:
        raise GitHubError(f"the comment limit {limit} is too small for the truncation note")
    tail: list[str] = []
    tail_len = 0
    for line in reversed(lines):
        if tail_len + len(line) + 1 > min(1000, budget // 4):
            break
        tail.insert(0, line)
        tail_len += len(line) + 1
    head: list[str] = []
    head_len = 0
    for line in lines[: len(lines) - len(tail)]:
        if head_len + len(line) + 1 > budget - tail_len:
            break
        head.append(line)
        head_len += len(line) + 1
    left = len(lines) - len(head) - len(tail)
    open_at_cut = _open_fence(head)
    head_text = "\n".join(head) + ("\n" + open_at_cut if open_at_cut else "")
    reopen = _open_fence(lines[: len(lines) - len(tail)])
    tail_text = (reopen + "\n" if reopen else "") + "\n".join(tail)
    return Body(f"{tag}\n{head_text}{note(left)}{tail_text}", True, left)


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


APP_LOGIN = "github-actions[bot]"
"""Who writes with a workflow's GITHUB_TOKEN: an installation token, for which GitHub answers
``GET /user`` with 403 (Resource not accessible by integration)."""


def same_login(a: str | None, b: str) -> bool:
    """Whether login ``a`` is ``b`` (GitHub logins are case-insensitive)."""
    return a is not None and a.lower() == b.lower()


@dataclass(frozen=True)
class IssueResult:
    """What ``upsert_issue`` or ``close_issues`` did, and to which issues."""

    action: Literal["created", "updated", "unchanged", "closed", "none"]
    numbers: tuple[int, ...] = ()


@dataclass(frozen=True)
class CommentResult:
    """What ``upsert_comment`` did. ``duplicates`` are other comments with the same marker."""

    action: Literal["created", "updated", "unchanged"]
    comment: Comment
    truncated: bool = False
    lines_left_out: int = 0
    duplicates: tuple[int, ...] = ()
    foreign: tuple[int, ...] = ()  # marked comments another identity wrote: left alone


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


@dataclass(frozen=True)
class _Response:
    status: int
    headers: Mapping[str, str]
    data: Any


def _next_link(link_header: str) -> str | None:
    """The ``rel="next"`` URL of a Link header, as GitHub paginates."""
    for part in link_header.split(","):
        m = re.match(r"\s*<([^>]*)>\s*;(.*)", part)
        if m and re.search(r'rel="?next"?', m.group(2)):
            return m.group(1)
    return None


class GitHubClient:
    """A small GitHub REST client: JSON in and out, errors translated, rate limits waited out.

    ``sleep`` and ``now`` are injectable so tests can check the waits without waiting.
    """

    def __init__(
        self,
        token: str,
        api_url: str = GITHUB_API_URL,
        *,
        max_wait: float = 300.0,
        retries: int = 3,
        timeout: float = 30.0,
        answer_seconds: float = ANSWER_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.time,
    ) -> None:
        if not token:
            raise GitHubError("no GitHub token: set GITHUB_TOKEN")
        parsed = urllib.parse.urlsplit(api_url)
        loopback = (parsed.hostname or "") in ("127.0.0.1", "localhost", "::1")
        if not parsed.netloc or not (
            parsed.scheme == "https" or (parsed.scheme == "http" and loopback)
        ):
            raise GitHubError(
                f"invalid GitHub API URL {api_url!r}: expected https://HOST[/PATH] (the token "
                "is never sent over plain http, except to this machine)"
            )
        if parsed.username or parsed.password or parsed.query or parsed.fragment:
            raise GitHubError(f"invalid GitHub API URL {api_url!r}: expected https://HOST[/PATH]")
        self._token = token
        remember_secrets([token])  # the CLI scrubs it from anything it prints
        self.api_url = api_url.rstrip("/")
        self._origin = (parsed.scheme, parsed.netloc)
        self._connections: list[socket.socket] = []  # of the request being made
        self._opener = urllib.request.build_opener(
            _SameOriginRedirects(self._origin),
            _TrackedHTTPHandler(self._connections),
            _TrackedHTTPSHandler(self._connections),
        )
        self.max_wait = max_wait
        self.retries = retries
        self.timeout = timeout
        self.answer_seconds = answer_seconds
        self._sleep = sleep
        self._now = now

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r})"

    # -- the REST calls kgitops needs ---------------------------------------------------------

    def identity(self) -> str:
        """The login the token writes as: ``GET /user``'s, or ``github-actions[bot]`` when
        GitHub answers that an installation token (a workflow's GITHUB_TOKEN) may not read
        it. Only what this identity wrote is ever edited (a marker anyone can copy)."""
        what = "asking GitHub who the token is (GET /user)"
        url = f"{self.api_url}/user"
        resp = self._send("GET", url, None, what=what)
        if resp.status == 403 and self._rate_limit_wait(resp) is None:
            return APP_LOGIN
        if not 200 <= resp.status < 300:
            resp = self._request("GET", url, what=what, need="a token GitHub accepts")
        login = resp.data.get("login") if isinstance(resp.data, dict) else None
        if not isinstance(login, str) or not login:
            raise GitHubError(f"{what}: GitHub's answer has no login")
        return login

    def list_comments(self, repo: str, pr: int) -> Iterator[Comment]:
        """Every comment of pull request ``pr`` (its issue comments), following pagination."""
        url = f"{self.api_url}/repos/{repo}/issues/{pr}/comments?per_page=100"
        what = f"listing the comments of pull request #{pr} in {repo}"
        for item in self._pages(url, what=what, need="pull-requests: read", items="comments"):
            yield _comment(item, what)

    def create_comment(self, repo: str, pr: int, body: str) -> Comment:
        what = f"creating a comment on pull request #{pr} in {repo}"
        url = f"{self.api_url}/repos/{repo}/issues/{pr}/comments"
        resp = self._request("POST", url, {"body": body}, what=what, need="pull-requests: write")
        return _comment(resp.data, what)

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        what = f"updating comment {comment_id} in {repo}"
        url = f"{self.api_url}/repos/{repo}/issues/comments/{comment_id}"
        resp = self._request("PATCH", url, {"body": body}, what=what, need="pull-requests: write")
        return _comment(resp.data, what)

    def list_open_issues(self, repo: str, label: str) -> Iterator[Issue]:
        """The open issues (not pull requests) of ``repo`` carrying ``label``, oldest first."""
        query = urllib.parse.urlencode(
            {"state": "open", "labels": label, "per_page": 100, "direction": "asc"}
        )
        url = f"{self.api_url}/repos/{repo}/issues?{query}"
        what = f"listing the open issues labelled {label!r} in {repo}"
        for item in self._pages(url, what=what, need="issues: read", items="issues"):
            if isinstance(item, dict) and "pull_request" not in item:
                yield _issue(item, what)

    def create_issue(self, repo: str, title: str, body: str, labels: list[str]) -> Issue:
        what = f"opening an issue in {repo}"
        payload = {"title": title, "body": body, "labels": labels}
        resp = self._request(
            "POST", f"{self.api_url}/repos/{repo}/issues", payload, what=what, need="issues: write"
        )
        return _issue(resp.data, what)

    def update_issue(self, repo: str, number: int, **fields: str) -> Issue:
        """PATCH issue ``number``: ``body=...``, ``state="closed"``, ``state_reason=...``."""
        what = f"updating issue #{number} in {repo}"
        url = f"{self.api_url}/repos/{repo}/issues/{number}"
        resp = self._request("PATCH", url, dict(fields), what=what, need="issues: write")
        return _issue(resp.data, what)

    def pull_head_sha(self, repo: str, pr: int) -> str:
        """The commit at the head of pull request ``pr`` now."""
        what = f"reading pull request #{pr} in {repo}"
        resp = self._request(
            "GET", f"{self.api_url}/repos/{repo}/pulls/{pr}", what=what, need="pull-requests: read"
        )
        try:
            return str(resp.data["head"]["sha"])
        except (KeyError, TypeError):
            raise GitHubError(f"{what}: GitHub's answer has no head commit") from None

    def pull_request(self, repo: str, pr: int) -> PullRequest:
        """Pull request ``pr`` as it is now: its author, its labels and its head commit."""
        what = f"reading pull request #{pr} in {repo}"
        resp = self._request(
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
        for item in self._pages(url, what=what, need="pull-requests: read", items="events"):
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
        for item in self._pages(url, what=what, need="pull-requests: read", items="reviews"):
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
        resp = self._request("GET", url, what=what, need="metadata: read")
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
        resp = self._request("GET", url, what=what, need="pull-requests: read")
        pulls = [p for p in resp.data if isinstance(p, dict)] if isinstance(resp.data, list) else []
        ranked = sorted(
            pulls,
            key=lambda p: (p.get("merge_commit_sha") != sha, p.get("merged_at") is None),
        )
        return int(ranked[0]["number"]) if ranked and "number" in ranked[0] else None

    # -- transport, errors, rate limits -------------------------------------------------------

    def _pages(self, url: str, *, what: str, need: str, items: str) -> Iterator[Any]:
        """The items of a listing, page after page (GitHub's ``Link: rel="next"``), at most
        ``MAX_PAGES`` pages, every link on the API's own host."""
        next_url: str | None = url
        pages = 0
        while next_url is not None:
            pages += 1
            if pages > MAX_PAGES:
                raise GitHubError(
                    f"{what}: more than {MAX_PAGES} pages of {items}; kgitops stops there"
                )
            resp = self._request("GET", next_url, what=what, need=need)
            if not isinstance(resp.data, list):
                raise GitHubError(f"{what}: GitHub answered with something other than a list")
            yield from resp.data
            next_url = _next_link(resp.headers.get("link", ""))
            if next_url is not None:
                self._check_same_origin(next_url)

    def _check_same_origin(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        if (parsed.scheme, parsed.netloc) != self._origin:
            raise GitHubError(
                f"GitHub sent a pagination link to another host ({parsed.netloc}); "
                "refusing to send the token there"
            )

    def _request(
        self, method: str, url: str, payload: object = None, *, what: str, need: str
    ) -> _Response:
        try:
            return self._request_once(method, url, payload, what=what, need=need)
        except GitHubError as exc:  # an answer that echoes the token never shows it
            text = str(exc)
            if self._token in text:
                raise GitHubError(text.replace(self._token, "***")) from None
            raise

    def _request_once(
        self, method: str, url: str, payload: object, *, what: str, need: str
    ) -> _Response:
        rate_waits = 0
        server_errors = 0
        while True:
            resp = self._send(method, url, payload, what=what)
            if 200 <= resp.status < 300:
                return resp
            wait = self._rate_limit_wait(resp)
            if wait is not None:
                rate_waits += 1
                if rate_waits > self.retries:
                    raise GitHubError(f"{what}: still rate limited after {self.retries} waits")
                if wait > self.max_wait:
                    raise GitHubError(
                        f"{what}: GitHub's rate limit resets in {wait:.0f} s, longer than the "
                        f"{self.max_wait:.0f} s kgitops waits (--max-wait); run it again later"
                    )
                self._sleep(wait)
                continue
            if resp.status >= 500 and server_errors < self.retries:
                server_errors += 1
                self._sleep(float(2**server_errors))
                continue
            raise GitHubError(_error_message(resp, what=what, need=need))

    def _rate_limit_wait(self, resp: _Response) -> float | None:
        """Seconds to wait before retrying, or None when the answer is not a rate limit."""
        if resp.status not in (403, 429):
            return None
        headers = resp.headers
        retry_after = headers.get("retry-after", "").strip()
        if retry_after:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return SECONDARY_LIMIT_WAIT
        if headers.get("x-ratelimit-remaining", "").strip() == "0":
            try:
                reset = float(headers.get("x-ratelimit-reset", ""))
            except ValueError:
                return SECONDARY_LIMIT_WAIT
            return max(0.0, reset - self._now()) + 1.0
        if resp.status == 429 or "rate limit" in _message(resp.data).lower():
            return SECONDARY_LIMIT_WAIT
        return None

    def _send(self, method: str, url: str, payload: object, *, what: str) -> _Response:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", f"kgitops/{__version__}")
        request.add_header("Authorization", f"Bearer {self._token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        self._connections.clear()
        cut = threading.Event()
        timer = threading.Timer(self.answer_seconds, self._cut, args=(cut,))
        timer.daemon = True
        timer.start()
        late = GitHubError(
            f"{what}: {self.api_url} took more than {self.answer_seconds:g} s to answer; "
            "kgitops stops there (run it again later)"
        )
        try:
            resp = self._exchange(request, what)
        except Exception:
            if cut.is_set():  # whatever the cut connection raised: the deadline is the cause
                raise late from None
            raise
        finally:
            timer.cancel()
            self._connections.clear()
        if cut.is_set():  # a body cut short can still parse: never trust it
            raise late
        return resp

    def _cut(self, cut: threading.Event) -> None:
        """The deadline: shut the request's connections, so the read blocked on them ends."""
        cut.set()
        for sock in list(self._connections):
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)  # under TLS too

    def _exchange(self, request: urllib.request.Request, what: str) -> _Response:
        try:
            with self._opener.open(request, timeout=self.timeout) as raw:
                body = _read_capped(raw, what)
                return _Response(raw.status, _lower(raw.headers.items()), _json(body))
        except _CrossOriginRedirect as exc:
            raise GitHubError(
                f"{what}: GitHub redirected to another host ({exc.netloc}); refusing to send "
                "the token there"
            ) from None
        except urllib.error.HTTPError as exc:
            with exc:
                body = _read_capped(exc, what)
                return _Response(exc.code, _lower(exc.headers.items()), _json(body))
        except urllib.error.URLError as exc:
            raise GitHubError(
                f"{what}: cannot reach the GitHub API at {self.api_url}: "
                + one_line(str(exc.reason))
            ) from None
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            raise GitHubError(
                f"{what}: no answer from {self.api_url}: {one_line(str(exc) or type(exc).__name__)}"
            ) from None


def _tracked(base: type[http.client.HTTPConnection], opened: list[socket.socket]) -> Any:
    """A connection class like ``base`` that notes the socket of each connection it makes
    (urllib drops the connection's own reference while the body is still being read)."""

    class Tracked(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            opened.append(self.sock)

    return Tracked


class _TrackedHTTPHandler(urllib.request.HTTPHandler):
    """urllib's handler, noting each socket it opens (so a deadline can shut it)."""

    def __init__(self, opened: list[socket.socket]) -> None:
        super().__init__()
        self.connection = _tracked(http.client.HTTPConnection, opened)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _TrackedHTTPSHandler(urllib.request.HTTPSHandler):
    """urllib's TLS handler (default context, certificates checked), noting each socket."""

    def __init__(self, opened: list[socket.socket]) -> None:
        super().__init__()
        self.connection = _tracked(http.client.HTTPSConnection, opened)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _CrossOriginRedirect(urllib.error.URLError):
    def __init__(self, netloc: str) -> None:
        super().__init__(f"redirect to {netloc}")
        self.netloc = netloc


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the API's origin (scheme and host): urllib would
    otherwise copy the Authorization header to whatever host a redirect names."""

    def __init__(self, origin: tuple[str, str]) -> None:
        self.origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        target = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl))
        if (target.scheme, target.netloc) != self.origin:
            raise _CrossOriginRedirect(target.netloc or newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _read_capped(raw: Any, what: str) -> bytes:
    """The answer's body, refused past ``MAX_RESPONSE_BYTES`` without reading the rest."""
    body: bytes = raw.read(MAX_RESPONSE_BYTES + 1)
    if len(body) > MAX_RESPONSE_BYTES:
        raise GitHubError(
            f"{what}: GitHub's answer is larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB; "
            "refusing it"
        )
    return body


def one_line(text: str, limit: int = 200) -> str:
    """``text`` as one printable line of at most ``limit`` characters: control characters
    (newlines, escapes, direction overrides) shown as escapes, a longer text cut with "...".
    Text from GitHub (a message, a login) goes through this before it is shown."""
    out: list[str] = []
    size = 0
    for ch in text:
        shown = ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        if size + len(shown) > limit:
            out.append("...")
            break
        out.append(shown)
        size += len(shown)
    return "".join(out)


def _lower(items: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in items}


def _json(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return raw[:400].decode("utf-8", "replace")


def _message(data: Any) -> str:
    if isinstance(data, dict):
        return one_line(str(data.get("message", "")))
    return one_line(data) if isinstance(data, str) else ""


def _author(item: Any) -> str | None:
    user = item.get("user") if isinstance(item, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def _comment(item: Any, what: str) -> Comment:
    try:
        return Comment(
            int(item["id"]),
            str(item.get("body") or ""),
            str(item.get("html_url", "")),
            _author(item),
        )
    except (KeyError, TypeError, ValueError):
        raise GitHubError(f"{what}: GitHub's answer is not a comment") from None


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
    try:
        return Issue(
            int(item["number"]),
            str(item.get("body") or ""),
            str(item.get("html_url", "")),
            _author(item),
        )
    except (KeyError, TypeError, ValueError):
        raise GitHubError(f"{what}: GitHub's answer is not an issue") from None


def _error_message(resp: _Response, *, what: str, need: str) -> str:
    message = _message(resp.data) or "no message"
    status = resp.status
    if status == 401:
        return (
            f"{what}: GitHub rejected the token in GITHUB_TOKEN (401 {message}): "
            "it is invalid, expired or revoked"
        )
    if status == 403:
        accepted = resp.headers.get("x-accepted-github-permissions", "")
        needs = need
        if accepted:  # e.g. "issues=write; pull_requests=write": any one of the sets
            sets = [s.strip().replace("=", ": ").replace("_", "-") for s in accepted.split(";")]
            needs = " or ".join(s for s in sets if s) or need
        return (
            f"{what}: permission denied (403 {message}): the token needs {needs}; in a "
            f"workflow add `permissions: {{{need}}}` (a pull request from a fork gets a "
            "read-only token: post the comment from a workflow_run workflow)"
        )
    if status == 404:
        return (
            f"{what}: not found (404 {message}): check the repository and pull request "
            "number; a token that cannot see a private repository also gets 404"
        )
    detail = ""
    if isinstance(resp.data, dict) and isinstance(resp.data.get("errors"), list):
        detail = one_line(
            "; ".join(
                str(e.get("message") or e.get("code") or e) if isinstance(e, dict) else str(e)
                for e in resp.data["errors"][:10]
            )
        )
    return f"{what}: GitHub answered {status} {message}" + (f" ({detail})" if detail else "")


def find_marked(comments: Iterator[Comment], marker: str) -> list[Comment]:
    """The comments carrying ``marker``'s hidden tag, oldest first (GitHub lists in order)."""
    tag = marker_tag(marker)
    return [c for c in comments if tag in c.body]


def upsert_comment(
    client: GitHubClient,
    repo: str,
    pr: int,
    text: str,
    *,
    marker: str = "plan",
    artifact_url: str | None = None,
) -> CommentResult:
    """Create or update the one comment carrying ``marker`` that the token's own identity
    wrote (``GitHubClient.identity``); never a second one.

    The oldest such comment is the one kept up to date; an identical body is not re-sent. A
    comment carrying the marker that someone else wrote (anyone who can comment can copy a
    marker, to receive the plan and then edit it) is never edited: it is listed in
    ``foreign`` and, if it is the only one, a new comment is made.
    """
    check_repo(repo)
    if pr < 1:
        raise GitHubError(f"invalid pull request number {pr}")
    body = compose_body(text, marker, artifact_url=artifact_url)
    marked = find_marked(client.list_comments(repo, pr), marker)
    me = client.identity() if marked else ""  # asked only when there is a comment to edit
    foreign = tuple(c.id for c in marked if not same_login(c.author, me))
    marked = [c for c in marked if same_login(c.author, me)]
    cut, left = body.truncated, body.lines_left_out
    if not marked:
        created = client.create_comment(repo, pr, body.text)
        return CommentResult("created", created, cut, left, foreign=foreign)
    first, dupes = marked[0], tuple(c.id for c in marked[1:])
    if first.body.replace("\r\n", "\n") == body.text:
        return CommentResult("unchanged", first, cut, left, dupes, foreign)
    updated = client.update_comment(repo, first.id, body.text)
    return CommentResult("updated", updated, cut, left, dupes, foreign)


def _own_marked(client: GitHubClient, repo: str, marker: str, label: str) -> list[Issue]:
    """The open issues labelled ``label`` carrying ``marker`` that the token's identity
    opened (an issue anyone opened with the marker and label is never edited or closed)."""
    tag = marker_tag(marker)
    found = [i for i in client.list_open_issues(repo, label) if tag in i.body]
    me = client.identity() if found else ""
    return [i for i in found if same_login(i.author, me)]


def upsert_issue(
    client: GitHubClient, repo: str, text: str, *, marker: str, title: str, label: str
) -> IssueResult:
    """Open, or update in place, the one open issue carrying ``marker`` (the drift issue of a
    cluster) that the token's identity opened: never a second one while the first is open."""
    check_repo(repo)
    body = compose_body(text, marker)
    found = _own_marked(client, repo, marker, label)
    if not found:
        created = client.create_issue(repo, title, body.text, [label])
        return IssueResult("created", (created.number,))
    first = found[0]
    if first.body.replace("\r\n", "\n") == body.text:
        return IssueResult("unchanged", (first.number,))
    client.update_issue(repo, first.number, body=body.text)
    return IssueResult("updated", (first.number,))


def close_issues(
    client: GitHubClient, repo: str, text: str, *, marker: str, label: str
) -> IssueResult:
    """Close every open issue carrying ``marker`` that the token's identity opened, saying
    why (``text``) in a comment."""
    check_repo(repo)
    found = _own_marked(client, repo, marker, label)
    for issue in found:
        client.create_comment(repo, issue.number, compose_body(text, marker).text)
        client.update_issue(repo, issue.number, state="closed", state_reason="completed")
    return IssueResult("closed" if found else "none", tuple(i.number for i in found))
