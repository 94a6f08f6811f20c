"""Who may allow a connection change with a pull-request label.

A label is not a review: on GitHub anyone with *triage* permission can add one, and the
author of a pull request with write permission can label their own. So the label
``kgitops:allow-connection-change`` counts only when the most recent event that added it
(GitHub's issue events of the pull request, oldest first, every page) was by a person who

- has **write**, **maintain** or **admin** permission on the repository now (GitHub's
  ``permission`` is ``write`` or ``admin``: maintain reads as write, triage as read), and
- is **not the pull request's author**: a connection change is reviewed by someone else, as a
  CODEOWNERS review would be (an admin who opened the pull request asks a colleague).

An app (``name[bot]``) adding the label does not count: automation can be set off by
people who may not review. Anything that cannot be verified does not count either: GitHub
unreachable or answering an error, an answer that is not what the API returns, a login
GitHub would not issue. Each verdict is one line saying why::

    approval = label_approval(client, "acme/topics", 42, "kgitops:allow-connection-change")
    approval.counts  # False
    approval.reason  # "@trish added it last and has triage permission on acme/topics; ..."

The HTTP calls are ``GitHubClient``'s (``kgitops.integrations.github``, the one module that
talks to GitHub); this module holds the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgitops.errors import GitHubError
from kgitops.integrations.github import LOGIN_RE, GitHubClient, LabelEvent, one_line

COUNTING_PERMISSIONS = frozenset({"admin", "write"})
"""GitHub's base permissions that may allow a connection change (maintain reads as write)."""


@dataclass(frozen=True)
class LabelApproval:
    """Whether the label counts, and the one line that says why."""

    counts: bool
    reason: str
    labeler: str | None = None
    role: str | None = None


def last_label_event(events: list[LabelEvent], label: str) -> LabelEvent | None:
    """The most recent ``labeled``/``unlabeled`` event of ``label`` (GitHub lists events
    oldest first; label names compare as GitHub compares them, ignoring case)."""
    wanted = label.casefold()
    found = None
    for event in events:
        if event.label.casefold() == wanted:
            found = event
    return found


def label_approval(client: GitHubClient, repo: str, pr: int, label: str) -> LabelApproval:
    """Whether ``label`` on pull request ``pr`` allows a connection change (module docstring);
    never raises for what GitHub answers: a failure is a verdict that does not count."""
    try:
        return _decide(client, repo, pr, label)
    except GitHubError as exc:
        return LabelApproval(False, f"who added it cannot be verified: {exc}")


def _decide(client: GitHubClient, repo: str, pr: int, label: str) -> LabelApproval:
    pull = client.pull_request(repo, pr)
    if label.casefold() not in {name.casefold() for name in pull.labels}:
        return LabelApproval(False, f"pull request #{pr} does not carry it")
    last = last_label_event(list(client.label_events(repo, pr)), label)
    if last is None:
        return LabelApproval(False, "GitHub lists no event that added it (was it renamed?)")
    if last.event != "labeled":
        return LabelApproval(False, "its most recent event removed it")
    login = last.actor
    if login is None:
        return LabelApproval(False, "the account that added it last no longer exists")
    if not LOGIN_RE.fullmatch(login):
        return LabelApproval(
            False,
            f"GitHub names whoever added it last {one_line(repr(login), 60)}, "
            "which is not a GitHub login",
        )
    if login.endswith("[bot]"):
        return LabelApproval(
            False,
            f"the app @{login} added it last: a connection change needs a person's review",
            login,
        )
    if login.casefold() == pull.author.casefold():
        return LabelApproval(
            False,
            f"@{login} added it last and opened the pull request: a connection change "
            "needs the review of someone else with write, maintain or admin permission",
            login,
        )
    permission, role = client.collaborator_permission(repo, login)
    if permission not in COUNTING_PERMISSIONS:
        return LabelApproval(
            False,
            f"@{login} added it last and has {one_line(role, 40)} permission on {repo}; only "
            "write, maintain or admin counts (triage may label, it may not review)",
            login,
            role,
        )
    return LabelApproval(
        True,
        f"@{login} added it last, has {one_line(role, 40)} permission on {repo} and did not "
        "open the pull request",
        login,
        role,
    )
