"""A comment body: the hidden marker line that identifies it, and the text cut at line
boundaries to fit GitHub's limit (pure: no HTTP)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgitops.errors import GitHubError

COMMENT_LIMIT = 65_536
"""GitHub refuses an issue or pull-request comment body longer than this many characters."""

MARKER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
ARTIFACT_URL_RE = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~%/+=&?-]*)?$")


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
