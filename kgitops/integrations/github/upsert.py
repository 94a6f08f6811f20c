"""The one marked comment of a pull request, or the one marked issue of a cluster, that
the token's own identity wrote, kept up to date: created, updated in place, or closed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from kgitops.errors import GitHubError
from kgitops.integrations.github.body import check_repo, compose_body, marker_tag
from kgitops.integrations.github.client import Comment, GitHubClient, Issue


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
