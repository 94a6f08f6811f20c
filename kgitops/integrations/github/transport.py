"""HTTP to the GitHub API: one request with its token, deadline, redirects kept on the API's
origin, a capped answer, rate limits waited out, server errors retried, and every failure a
``GitHubError`` that says what to do (never showing the token)."""

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
from typing import Any, TypedDict

from kgitops import __version__
from kgitops.errors import GitHubError, remember_secrets

GITHUB_API_URL = "https://api.github.com"
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


@dataclass(frozen=True)
class Response:
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


class TransportOptions(TypedDict, total=False):
    """``Transport``'s keyword options, as ``GitHubClient`` passes them on."""

    max_wait: float
    retries: int
    timeout: float
    answer_seconds: float
    sleep: Callable[[float], None]
    now: Callable[[], float]


class Transport:
    """Sends one request to the API at ``api_url`` with ``token`` and returns GitHub's JSON
    answer: errors translated, rate limits waited out, server errors retried.

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
            _TrackedHandler(self._connections),
        )
        self.max_wait = max_wait
        self.retries = retries
        self.timeout = timeout
        self.answer_seconds = answer_seconds
        self._sleep = sleep
        self._now = now

    def pages(self, url: str, *, what: str, need: str, items: str) -> Iterator[Any]:
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
            resp = self.request("GET", next_url, what=what, need=need)
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

    def request(
        self, method: str, url: str, payload: object = None, *, what: str, need: str
    ) -> Response:
        try:
            return self._request_once(method, url, payload, what=what, need=need)
        except GitHubError as exc:  # an answer that echoes the token never shows it
            text = str(exc)
            if self._token in text:
                raise GitHubError(text.replace(self._token, "***")) from None
            raise

    def _request_once(
        self, method: str, url: str, payload: object, *, what: str, need: str
    ) -> Response:
        rate_waits = 0
        server_errors = 0
        while True:
            resp = self.send(method, url, payload, what=what)
            if 200 <= resp.status < 300:
                return resp
            wait = self.rate_limit_wait(resp)
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

    def rate_limit_wait(self, resp: Response) -> float | None:
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

    def send(self, method: str, url: str, payload: object, *, what: str) -> Response:
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

    def _exchange(self, request: urllib.request.Request, what: str) -> Response:
        try:
            with self._opener.open(request, timeout=self.timeout) as raw:
                body = _read_capped(raw, what)
                return Response(raw.status, _lower(raw.headers.items()), _json(body))
        except _CrossOriginRedirect as exc:
            raise GitHubError(
                f"{what}: GitHub redirected to another host ({exc.netloc}); refusing to send "
                "the token there"
            ) from None
        except urllib.error.HTTPError as exc:
            with exc:
                body = _read_capped(exc, what)
                return Response(exc.code, _lower(exc.headers.items()), _json(body))
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


class _TrackedHandler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """urllib's handlers of http and https (the default TLS context: certificates checked) in
    one, noting each socket they open (so a deadline can shut it)."""

    def __init__(self, opened: list[socket.socket]) -> None:
        super().__init__()
        self._plain = _tracked(http.client.HTTPConnection, opened)
        self._tls = _tracked(http.client.HTTPSConnection, opened)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._plain, req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._tls, req)


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


def _error_message(resp: Response, *, what: str, need: str) -> str:
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
