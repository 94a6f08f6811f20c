"""A local stand-in for GitHub's issue-comments API, served on 127.0.0.1 from a thread.

It speaks the parts of the REST API kgitops uses, the way GitHub does: paginated listing
with a ``Link`` header, create, update, the commit -> pull requests lookup, a pull request's
author, labels and head, its issue events (labeled / unlabeled, oldest first, paginated),
its reviews (oldest first, paginated; a dismissed review's state becomes DISMISSED), a
collaborator's permission (maintain reads as write, triage as read, as GitHub maps them),
bearer-token auth, the 65,536-character body limit (422), and scripted failures (401, 403,
404, 429, 5xx with GitHub's rate-limit headers, or any raw bytes) for every request or for
the paths matching a pattern.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "ghs_s3cr3tTOKENvalue0123456789"


@dataclass
class Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    method: str | None = None  # only fail requests with this method
    path: str | None = None  # only fail requests whose path matches this regular expression
    raw: bytes | None = None  # send these bytes as the body instead of JSON


@dataclass
class Request:
    method: str
    path: str
    authorization: str | None
    body: Any


class FakeGitHub:
    def __init__(self, page_size: int = 30) -> None:
        self.page_size = page_size
        self.repos: set[str] = {"acme/topics"}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.pulls_of_commit: dict[str, list[dict[str, Any]]] = {}
        self.pull_heads: dict[int, str] = {}
        self.pulls: dict[int, dict[str, Any]] = {}  # acme/topics' pull requests
        self.events: dict[int, list[dict[str, Any]]] = {}  # issue events per pull request
        self.reviews: dict[int, list[dict[str, Any]]] = {}  # reviews per pull request
        self.roles: dict[str, str] = {}  # login -> role on acme/topics (admin ... read)
        self.issues: list[dict[str, Any]] = []  # acme/topics' issues, numbered from 100
        self.failures: list[Failure] = []
        self.requests: list[Request] = []
        self.link_host: str | None = None  # to send a pagination link elsewhere
        # Who TOKEN writes as: a workflow's GITHUB_TOKEN is github-actions[bot], and GitHub
        # answers its GET /user with 403; set user_token to answer as a user's token does.
        self.token_login = "github-actions[bot]"
        self.user_token = False
        self._next_id = 1000
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    # -- test helpers ------------------------------------------------------------------------

    def add_comment(self, repo: str, pr: int, body: str, author: str | None = None) -> int:
        """A comment on ``pr`` written by ``author`` (default: the token's own identity)."""
        with self._lock:
            self._next_id += 1
            cid = self._next_id
            login = self.token_login if author is None else author
            self.comments.setdefault((repo, pr), []).append(
                {
                    "id": cid,
                    "body": body,
                    "html_url": f"https://github.test/{repo}/pull/{pr}#c{cid}",
                    "user": {"login": login, "type": "Bot" if "[bot]" in login else "User"},
                }
            )
            return cid

    def add_pull(self, number: int, author: str, head: str = "ab" * 20) -> None:
        self.pulls[number] = {
            "number": number,
            "user": {"login": author, "type": "User"},
            "labels": [],
            "head": {"sha": head},
        }

    def label(self, pr: int, name: str, actor: str | None, event: str = "labeled") -> None:
        """``actor`` adds (or with ``event="unlabeled"`` removes) label ``name``: the event is
        recorded and the pull request's labels change, as on GitHub."""
        with self._lock:
            events = self.events.setdefault(pr, [])
            self._next_id += 1
            events.append(
                {
                    "id": self._next_id,
                    "event": event,
                    "actor": None if actor is None else {"login": actor, "type": "User"},
                    "label": {"name": name, "color": "ededed"},
                    "created_at": f"2026-11-24T10:{len(events) // 60:02d}:{len(events) % 60:02d}Z",
                }
            )
            labels = self.pulls[pr]["labels"]
            labels[:] = [lb for lb in labels if lb["name"] != name]
            if event == "labeled":
                labels.append({"name": name})

    def push(self, pr: int, head: str) -> None:
        """A push to pull request ``pr``: its head is now ``head``."""
        self.pulls[pr]["head"]["sha"] = head

    def review(
        self, pr: int, reviewer: str | None, state: str = "APPROVED", commit: str | None = None
    ) -> dict[str, Any]:
        """``reviewer`` submits a review of ``commit`` (default: the head now), as GitHub
        lists it; returned so a test can dismiss it (``["state"] = "DISMISSED"``)."""
        with self._lock:
            self._next_id += 1
            review = {
                "id": self._next_id,
                "user": None if reviewer is None else {"login": reviewer, "type": "User"},
                "body": "",
                "state": state,
                "commit_id": self.pulls[pr]["head"]["sha"] if commit is None else commit,
                "submitted_at": "2026-11-24T11:00:00Z",
                "author_association": "MEMBER",
            }
            self.reviews.setdefault(pr, []).append(review)
            return review

    def other_event(self, pr: int, event: str, actor: str) -> None:
        with self._lock:
            self._next_id += 1
            self.events.setdefault(pr, []).append(
                {"id": self._next_id, "event": event, "actor": {"login": actor}}
            )

    def bodies(self, repo: str = "acme/topics", pr: int = 42) -> list[str]:
        return [c["body"] for c in self.comments.get((repo, pr), [])]

    def fail(self, status: int, times: int = 1, **kw: Any) -> None:
        self.failures.extend(Failure(status, **kw) for _ in range(times))

    def methods(self) -> list[str]:
        return [r.method for r in self.requests]

    # -- the HTTP side -----------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(
                self,
                status: int,
                data: Any,
                headers: dict[str, str] | None = None,
                raw: bytes | None = None,
            ) -> None:
                raw = json.dumps(data).encode() if raw is None else raw
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body: Any = json.loads(raw) if raw else None
                fake.requests.append(
                    Request(self.command, self.path, self.headers.get("Authorization"), body)
                )
                for i, f in enumerate(fake.failures):
                    if f.method in (None, self.command) and (
                        f.path is None or re.search(f.path, urlsplit(self.path).path)
                    ):
                        del fake.failures[i]
                        self._send(f.status, f.body or {"message": "failure"}, f.headers, f.raw)
                        return
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._send(401, {"message": "Bad credentials"})
                    return
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                if url.path == "/user" and self.command == "GET":
                    if fake.user_token:
                        self._send(200, {"login": fake.token_login, "type": "User"})
                    else:
                        self._send(403, {"message": "Resource not accessible by integration"})
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", url.path)
                if m and m.group(1) in fake.repos:
                    repo, pr = m.group(1), int(m.group(2))
                    if self.command == "GET":
                        self._list(repo, pr, query, url.path)
                        return
                    if self.command == "POST":
                        if not self._body_ok(body):
                            return
                        cid = fake.add_comment(repo, pr, body["body"])
                        self._send(201, self._find(cid))
                        return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues", url.path)
                if m and m.group(1) in fake.repos and self.command == "GET":
                    labels = set(filter(None, query.get("labels", [""])[0].split(",")))
                    state = query.get("state", ["open"])[0]
                    self._send(
                        200,
                        [
                            i
                            for i in fake.issues
                            if (state == "all" or i["state"] == state)
                            and labels <= {lb["name"] for lb in i["labels"]}
                        ],
                    )
                    return
                if m and m.group(1) in fake.repos and self.command == "POST":
                    if not self._body_ok(body) or not body.get("title"):
                        return
                    number = 100 + len(fake.issues)
                    issue = {
                        "number": number,
                        "title": body["title"],
                        "body": body["body"],
                        "state": "open",
                        "labels": [{"name": n} for n in body.get("labels", [])],
                        "html_url": f"https://github.test/{m.group(1)}/issues/{number}",
                        "user": {"login": fake.token_login},
                    }
                    fake.issues.append(issue)
                    self._send(201, issue)
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)", url.path)
                if m and m.group(1) in fake.repos and self.command == "PATCH":
                    found_issue = [i for i in fake.issues if i["number"] == int(m.group(2))]
                    if not found_issue:
                        self._send(404, {"message": "Not Found"})
                        return
                    for k in ("body", "state", "state_reason", "title"):
                        if k in body:
                            found_issue[0][k] = body[k]
                    self._send(200, found_issue[0])
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", url.path)
                if m and m.group(1) in fake.repos and self.command == "PATCH":
                    found = self._find(int(m.group(2)))
                    if found is None:
                        self._send(404, {"message": "Not Found"})
                        return
                    if not self._body_ok(body):
                        return
                    found["body"] = body["body"]
                    self._send(200, found)
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/events", url.path)
                if m and m.group(1) in fake.repos and self.command == "GET":
                    self._page(fake.events.get(int(m.group(2)), []), query, url.path)
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)/reviews", url.path)
                if m and m.group(1) in fake.repos and self.command == "GET":
                    self._page(fake.reviews.get(int(m.group(2)), []), query, url.path)
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/collaborators/([^/]+)/permission", url.path)
                if m and m.group(1) in fake.repos and self.command == "GET":
                    login = unquote(m.group(2))
                    role = fake.roles.get(login)
                    if role is None:
                        self._send(404, {"message": f"{login} is not a user"})
                        return
                    base = {"maintain": "write", "triage": "read"}.get(role, role)
                    self._send(
                        200, {"permission": base, "role_name": role, "user": {"login": login}}
                    )
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", url.path)
                if m and m.group(1) in fake.repos and int(m.group(2)) in fake.pulls:
                    self._send(200, fake.pulls[int(m.group(2))])
                    return
                if m and m.group(1) in fake.repos and int(m.group(2)) in fake.pull_heads:
                    number = int(m.group(2))
                    self._send(200, {"number": number, "head": {"sha": fake.pull_heads[number]}})
                    return
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/pulls", url.path)
                if m and m.group(1) in fake.repos and self.command == "GET":
                    self._send(200, fake.pulls_of_commit.get(m.group(2), []))
                    return
                self._send(404, {"message": "Not Found"})

            def _body_ok(self, body: Any) -> bool:
                if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                    self._send(422, {"message": "Validation Failed"})
                    return False
                if len(body["body"]) > 65536:
                    self._send(
                        422,
                        {
                            "message": "Validation Failed",
                            "errors": [
                                {
                                    "resource": "IssueComment",
                                    "code": "custom",
                                    "field": "body",
                                    "message": "body is too long (maximum is 65536 characters)",
                                }
                            ],
                        },
                    )
                    return False
                return True

            def _find(self, cid: int) -> dict[str, Any] | None:
                for items in fake.comments.values():
                    for c in items:
                        if c["id"] == cid:
                            return c
                return None

            def _list(self, repo: str, pr: int, query: dict[str, list[str]], path: str) -> None:
                self._page(fake.comments.get((repo, pr), []), query, path)

            def _page(self, items: list[Any], query: dict[str, list[str]], path: str) -> None:
                per_page = min(int(query.get("per_page", ["30"])[0]), fake.page_size)
                page = int(query.get("page", ["1"])[0])
                chunk = items[(page - 1) * per_page : page * per_page]
                headers = {}
                if page * per_page < len(items):
                    host = fake.link_host or fake.url
                    nxt = f"{host}{path}?per_page={per_page}&page={page + 1}"
                    last = f"{host}{path}?per_page={per_page}&page={-(-len(items) // per_page)}"
                    headers["Link"] = f'<{nxt}>; rel="next", <{last}>; rel="last"'
                self._send(200, chunk, headers)

            do_GET = do_POST = do_PATCH = _handle

        return Handler

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
