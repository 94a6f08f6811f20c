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

``ApplyReport`` is what ``run.apply_plan`` returns: the outcomes, the change requests (the
``--dry-run`` output) and the text lines apply prints; ``label`` names an action in both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.errors import ActionOutcome, InterruptedBeforeAnyChange, NothingApplied, Status
from kgitops.plan.actions import Action

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
    report: ApplyReport, *, cluster: str, result: str, exit_code: int, message: str | None = None
) -> dict[str, Any]:
    dry_run = report.dry_run
    actions = [_action(o, dry_run=dry_run) for o in report.outcomes]
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
        "requests": list(report.requests),
        "notes": list(report.notes),
    }


@dataclass
class ApplyReport:
    """What an apply did: one outcome per plan action, its change requests (one line each,
    the ``--dry-run`` output), notes, and ``sent``: every request the run sent to the brokers
    by API, reads included (``cluster.port.sent_requests``; empty on the simulated cluster)."""

    outcomes: list[ActionOutcome] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False
    sent: Mapping[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> list[ActionOutcome]:
        return [o for o in self.outcomes if not o.done]

    @property
    def complete(self) -> bool:
        """Whether nothing is owed: every action done, or submitted and running (--no-wait)."""
        return all(o.status in (Status.DONE, Status.IN_FLIGHT) for o in self.outcomes)

    def lines(self) -> list[str]:
        if self.dry_run:
            return [*self.requests, f"dry run: {len(self.requests)} change request(s), none sent"]
        out = [line for o in self.outcomes for line in o.lines()]
        out.extend(self.notes)
        done = sum(o.done for o in self.outcomes)
        out.append(f"apply: {done} of {len(self.outcomes)} action(s) done; {self._requests()}")
        return out

    def _requests(self) -> str:
        """``22 request(s) sent to the brokers: 14 Metadata, 1 CreateTopics, ...`` where the
        adapter counted them; else the change requests (``1 change request(s): 1
        CreateTopics``: the simulated cluster, which receives no requests as such)."""
        if sum(self.sent.values()):
            total = sum(self.sent.values())
            listed = _by_api(self.sent)
            return f"{total} request(s) sent to the brokers: {listed} (connection set-up aside)"
        apis = Counter(line.split(" ", 1)[0] for line in self.requests)
        return f"{len(self.requests)} change request(s)" + (f": {_by_api(apis)}" if apis else "")


def _by_api(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {api}" for api, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def label(action: Action) -> str:
    """``+ create_topic payments.orders``: how the report names an action."""
    return f"{action.symbol} {action.kind} {action.name}"
