"""Who may allow a connection change with a pull-request label, and for which commit.

A label is not a review: on GitHub anyone with *triage* permission can add one, and the
author of a pull request with write permission can label their own. And a label is not tied
to a commit: it stays on through later pushes. So the label
``kgitops:allow-connection-change`` counts only when the most recent event that added it
(GitHub's issue events of the pull request, oldest first, every page) was by a person who

- has **write**, **maintain** or **admin** permission on the repository now (GitHub's
  ``permission`` is ``write`` or ``admin``: maintain reads as write, triage as read),
- is **not the pull request's author**: a connection change is reviewed by someone else, as a
  CODEOWNERS review would be (an admin who opened the pull request asks a colleague), and
- **approved the commit being planned**: that person's latest review state (GitHub's rule:
  their latest review that is not a comment, every page of the reviews, oldest first) is
  ``APPROVED`` and that review's ``commit_id`` is the pull request's head, which is the
  commit the workflow plans (``head_sha``; a head that moved during the run is refused). A
  later ``CHANGES_REQUESTED`` or a dismissed review cancels the approval; an approval of an
  older commit does not cover what was pushed since; someone else's approval does not count
  for the labeller.

An app (``name[bot]``) adding the label does not count: automation can be set off by
people who may not review. Anything that cannot be verified does not count either: GitHub
unreachable or answering an error, an answer that is not what the API returns, a login
GitHub would not issue. Each verdict is one line saying why::

    approval = label_approval(client, "acme/topics", 42, LABEL, head_sha="5d6e7f8...")
    approval.counts  # False
    approval.reason  # "@wes approved 1a2b3c4, the head is 5d6e7f8 (pushed since); ..."

The HTTP calls are ``GitHubClient``'s (``kgitops.integrations.github``, the one package that
talks to GitHub); this module holds the rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kgitops.errors import GitHubError
from kgitops.integrations.github.client import LOGIN_RE, SHA_RE, GitHubClient, LabelEvent, Review
from kgitops.integrations.github.transport import one_line

COUNTING_PERMISSIONS = frozenset({"admin", "write"})
"""GitHub's base permissions that may allow a connection change (maintain reads as write)."""
DECIDING_STATES = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})
"""The review states that set a reviewer's state; a comment (or a pending review) does not."""


@dataclass(frozen=True)
class LabelApproval:
    """Whether the label counts, and the one line that says why."""

    counts: bool
    reason: str


def last_label_event(events: list[LabelEvent], label: str) -> LabelEvent | None:
    """The most recent ``labeled``/``unlabeled`` event of ``label`` (GitHub lists events
    oldest first; label names compare as GitHub compares them, ignoring case)."""
    wanted = label.casefold()
    found = None
    for event in events:
        if event.label.casefold() == wanted:
            found = event
    return found


def review_states(reviews: Iterable[Review]) -> dict[str, Review]:
    """Each reviewer's state, as GitHub decides it: their latest review that approves,
    requests changes or was dismissed (a later comment or a pending review changes nothing),
    keyed by the login in lower case (GitHub's logins ignore case). Reviews come oldest
    first; a deleted account's reviews belong to nobody."""
    states: dict[str, Review] = {}
    for review in reviews:
        if review.state in DECIDING_STATES and review.reviewer is not None:
            states[review.reviewer.casefold()] = review
    return states


def short(sha: str) -> str:
    """A commit as git shows it short (7 hexadecimal digits)."""
    return sha[:7]


def label_approval(
    client: GitHubClient, repo: str, pr: int, label: str, *, head_sha: str
) -> LabelApproval:
    """Whether ``label`` on pull request ``pr`` allows a connection change for commit
    ``head_sha`` (what the workflow plans; module docstring); never raises for what GitHub
    answers: a failure is a verdict that does not count."""
    if not SHA_RE.fullmatch(head_sha):
        return LabelApproval(
            False, f"{one_line(repr(head_sha), 60)} is not a full commit SHA to approve"
        )
    try:
        return _decide(client, repo, pr, label, head_sha.lower())
    except GitHubError as exc:
        return LabelApproval(False, f"it cannot be verified: {exc}")


def _decide(client: GitHubClient, repo: str, pr: int, label: str, head: str) -> LabelApproval:
    pull = client.pull_request(repo, pr)
    if label.casefold() not in {name.casefold() for name in pull.labels}:
        return LabelApproval(False, f"pull request #{pr} does not carry it")
    if pull.head_sha != head:
        return LabelApproval(
            False,
            f"the pull request moved during the run: this run plans {short(head)}, its head "
            f"is now {short(pull.head_sha)} (the push gets a run of its own)",
        )
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
        )
    if login.casefold() == pull.author.casefold():
        return LabelApproval(
            False,
            f"@{login} added it last and opened the pull request: a connection change "
            "needs the review of someone else with write, maintain or admin permission",
        )
    permission, role = client.collaborator_permission(repo, login)
    if permission not in COUNTING_PERMISSIONS:
        return LabelApproval(
            False,
            f"@{login} added it last and has {one_line(role, 40)} permission on {repo}; only "
            "write, maintain or admin counts (triage may label, it may not review)",
        )
    refusal = _approval_refusal(list(client.reviews(repo, pr)), login, head)
    if refusal is not None:
        return LabelApproval(False, refusal)
    return LabelApproval(
        True,
        f"@{login} added it last, has {one_line(role, 40)} permission on {repo}, did not "
        f"open the pull request and approved its head {short(head)}",
    )


def _approval_refusal(reviews: list[Review], login: str, head: str) -> str | None:
    """Why ``login``'s reviews do not approve commit ``head``; None when they do."""
    states = review_states(reviews)
    latest = states.get(login.casefold())
    again = f"@{login} approves the head {short(head)} and the check runs again"
    if latest is None:
        others = sorted(
            f"@{r.reviewer}" for r in states.values() if r.state == "APPROVED" and r.commit == head
        )
        aside = (
            f" (an approval by {one_line(', '.join(others), 80)} does not count for the "
            "label: whoever adds it approves)"
            if others
            else ""
        )
        return f"@{login} added it last but has not approved the pull request{aside}; {again}"
    if latest.state == "CHANGES_REQUESTED":
        return f"@{login} added it last but @{login}'s latest review requests changes; {again}"
    if latest.state == "DISMISSED":
        return f"@{login} added it last but @{login}'s latest review was dismissed; {again}"
    if latest.commit is None:
        return (
            f"@{login} approved a commit GitHub no longer has (force-pushed away), the head "
            f"is {short(head)}; {again}"
        )
    if latest.commit != head:
        return (
            f"@{login} approved {short(latest.commit)}, the head is {short(head)} (pushed "
            f"since); @{login} approves the current head and the check runs again"
        )
    return None
