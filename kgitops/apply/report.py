"""``apply --format json``: the apply report as one JSON document (kgitops/schemas/apply.json).

One entry per plan action (and per earlier apply's moves it finished), its status a closed set
read from ``Status`` alone, the counts by status, and every admin request sent::

    {"format": "kgitops-apply/v1", "cluster": "demo", "dryRun": false,
     "result": "applied", "exitCode": 0, "message": null,
     "actions": [{"type": "create_topic", "name": "orders", "action": "+ create_topic orders",
                  "status": "done", "reason": "", "items": []}],
     "counts": {"done": 1, "failed": 0, "skipped": 0, "running": 0, "deferred": 0,
                "notAttempted": 0, "inDoubt": 0},
     "requests": ["CreateTopics [...]"], "notes": []}

``result``: ``applied`` (every action done or, with ``--no-wait``, running), ``noChanges``,
``dryRun`` (the requests were printed, none sent: every action ``notAttempted``), ``partial``
(exit 3), ``nothingApplied`` (exit 1), ``interrupted`` (a signal before any change, exit 130).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgitops.errors import ActionOutcome, InterruptedBeforeAnyChange, NothingApplied, Status

FORMAT = "kgitops-apply/v1"

#: Each status's JSON word (camelCase, as every key kgitops writes); a submitted move that
#: apply did not wait for (``--no-wait``) is ``running``, one it left for the next apply
#: (``--no-wait`` past its one window) ``deferred``.
STATUS_JSON: dict[Status, str] = {
    Status.DONE: "done",
    Status.FAILED: "failed",
    Status.SKIPPED: "skipped",
    Status.IN_FLIGHT: "running",
    Status.DEFERRED: "deferred",
    Status.NOT_ATTEMPTED: "notAttempted",
    Status.IN_DOUBT: "inDoubt",
}


def _action(outcome: ActionOutcome, *, dry_run: bool) -> dict[str, Any]:
    if dry_run:  # the recorder answered success for what it did not send
        status, reason = "notAttempted", "dry run: nothing sent"
    else:
        status, reason = STATUS_JSON[outcome.status], outcome.reason
    return {
        "type": outcome.kind,
        "name": outcome.subject,
        "action": outcome.action,
        "status": status,
        "reason": reason,
        "items": list(outcome.items),
    }


def result_of(error: Exception | None, *, dry_run: bool = False, changes: bool = True) -> str:
    """The ``result`` word for how apply ended (``error``: the PartialApply it raised)."""
    if isinstance(error, InterruptedBeforeAnyChange):
        return "interrupted"
    if isinstance(error, NothingApplied):
        return "nothingApplied"
    if error is not None:
        return "partial"
    if not changes:
        return "noChanges"
    return "dryRun" if dry_run else "applied"


def report_json(
    *,
    cluster: str,
    outcomes: Sequence[ActionOutcome],
    requests: Sequence[str],
    notes: Sequence[str],
    result: str,
    exit_code: int,
    message: str | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    actions = [_action(o, dry_run=dry_run) for o in outcomes]
    counts = dict.fromkeys(STATUS_JSON.values(), 0)
    for a in actions:
        counts[a["status"]] += 1
    return {
        "format": FORMAT,
        "cluster": cluster,
        "dryRun": dry_run,
        "result": result,
        "exitCode": exit_code,
        "message": message,
        "actions": actions,
        "counts": counts,
        "requests": list(requests),
        "notes": list(notes),
    }
