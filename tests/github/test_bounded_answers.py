"""Every GitHub call is bounded: a ``rel="next"`` loop stops at MAX_PAGES pages in every
listing, and an answer that trickles (a byte at a time, each within the socket timeout) is
cut at the client's answer deadline, in the headers or in the body."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_github import TOKEN

from kgitops.cli import main
from kgitops.errors import GitHubError
from kgitops.integrations.github.client import GitHubClient
from kgitops.integrations.github.transport import MAX_PAGES


class Hostile:
    """A local API that loops its pagination, or trickles its answers."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer.requests += 1
                if outer.mode == "loop":
                    body = b"[]"
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    path = self.path.split("&page=")[0]
                    link = f'<{outer.url}{path}&page={outer.requests + 1}>; rel="next"'
                    self.send_header("Link", link)
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if outer.mode == "trickle-body":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    self.wfile.write(b"[")
                else:  # trickle-headers
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                self.wfile.flush()
                while not outer.stop.is_set():
                    try:
                        self.wfile.write(b" " if outer.mode == "trickle-body" else b"a")
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(0.05)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[Hostile]:
    server = Hostile(request.param)
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("hostile", ["loop"], indirect=True)
def test_github_comment_stops_a_pagination_loop_at_the_page_cap(
    hostile: Hostile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    body = tmp_path / "plan.md"
    body.write_text("plan\n")
    argv = ["github", "comment", "--api-url", hostile.url, "--repo", "acme/topics"]
    assert main([*argv, "--pr", "42", "--file", str(body)]) == 1
    err = capsys.readouterr().err
    assert f"more than {MAX_PAGES} pages of comments; kgitops stops there" in err
    assert hostile.requests == MAX_PAGES


@pytest.mark.parametrize("hostile", ["loop"], indirect=True)
def test_listing_open_issues_stops_a_pagination_loop_too(hostile: Hostile) -> None:
    client = GitHubClient(TOKEN, hostile.url)
    with pytest.raises(GitHubError, match=f"more than {MAX_PAGES} pages of issues"):
        list(client.list_open_issues("acme/topics", "kgitops"))
    assert hostile.requests == MAX_PAGES


@pytest.mark.parametrize("hostile", ["trickle-body", "trickle-headers"], indirect=True)
def test_an_answer_that_trickles_is_cut_at_the_deadline(hostile: Hostile) -> None:
    client = GitHubClient(TOKEN, hostile.url, timeout=5.0, answer_seconds=1.5)
    start = time.monotonic()
    with pytest.raises(GitHubError, match=r"took more than 1\.5 s to answer; kgitops stops"):
        list(client.list_comments("acme/topics", 42))
    assert time.monotonic() - start < 4.0
