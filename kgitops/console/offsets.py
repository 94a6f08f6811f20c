"""The plan of ``kgitops reset-offsets``: per partition, the committed offset now, the one it
would become, and how many messages the group would skip (move forward) or replay (move
back). Pure.

Targets outside the log are clamped to its start or end, with a note, as
``kafka-consumer-groups.sh --reset-offsets`` does; ``--shift-by`` moves from the committed
offset, so a partition without one is left out, with a note.

>>> plan = reset_plan({0: 5, 1: None}, {0: (0, 10), 1: (0, 4)}, {0: 12, 1: 2})
>>> [(r.partition, r.current, r.target, r.change) for r in plan.rows]
[(0, 5, 10, 'skips 5'), (1, None, 2, 'new')]
>>> plan.notes
['partition 0: 12 is past the end 10: clamped to 10']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgitops.console.views import table
from kgitops.errors import KgitopsError
from kgitops.groups import ConsumerGroup
from kgitops.safetext import safe_text


@dataclass(frozen=True)
class ResetRow:
    partition: int
    current: int | None
    target: int
    log_start: int
    log_end: int

    @property
    def delta(self) -> int | None:
        return None if self.current is None else self.target - self.current

    @property
    def change(self) -> str:
        d = self.delta
        if d is None:
            return "new"
        if d == 0:
            return "unchanged"
        return f"skips {d}" if d > 0 else f"replays {-d}"


@dataclass(frozen=True)
class ResetPlan:
    rows: tuple[ResetRow, ...]
    notes: list[str] = field(default_factory=list)

    @property
    def changes(self) -> dict[int, int]:
        return {r.partition: r.target for r in self.rows if r.delta != 0}

    def to_json(self, group: str, topic: str, applied: bool) -> dict[str, Any]:
        return {
            "format": "kgitops-reset-offsets/v1",
            "group": group,
            "topic": topic,
            "applied": applied,
            "partitions": [
                {
                    "partition": r.partition,
                    "from": r.current,
                    "to": r.target,
                    "logStart": r.log_start,
                    "logEnd": r.log_end,
                    "skipped": max(r.delta or 0, 0),
                    "replayed": max(-(r.delta or 0), 0),
                }
                for r in self.rows
            ],
            "notes": self.notes,
        }

    def lines(self, group: str, topic: str) -> list[str]:
        out = [f"reset offsets of group {safe_text(group)} on {safe_text(topic)}:"]
        out += [
            "  " + line
            for line in table(
                ("partition", "from", "to", "log-start", "log-end", "change"),
                (
                    (r.partition, r.current, r.target, r.log_start, r.log_end, r.change)
                    for r in self.rows
                ),
            )
        ]
        skipped = sum(max(r.delta or 0, 0) for r in self.rows)
        replayed = sum(max(-(r.delta or 0), 0) for r in self.rows)
        out.append(f"in all: {skipped} message(s) skipped, {replayed} replayed")
        out += [f"note: {n}" for n in self.notes]
        return out


def reset_plan(
    committed: Mapping[int, int | None],
    logs: Mapping[int, tuple[int, int]],
    targets: Mapping[int, int | None],
) -> ResetPlan:
    """``targets`` per partition (None: nothing to reset it to, noted), clamped to the log."""
    rows: list[ResetRow] = []
    notes: list[str] = []
    for p in sorted(targets):
        start, end = logs[p]
        want = targets[p]
        if want is None:
            notes.append(f"partition {p}: no committed offset to shift: left as it is")
            continue
        to = min(max(want, start), end)
        if want < start:
            notes.append(f"partition {p}: {want} is before the log start {start}: clamped to {to}")
        elif want > end:
            notes.append(f"partition {p}: {want} is past the end {end}: clamped to {to}")
        rows.append(ResetRow(p, committed.get(p), to, start, end))
    return ResetPlan(tuple(rows), notes)


def refuse_active(group: ConsumerGroup, doing: str) -> None:
    """Kafka refuses to change the offsets of (or delete) a group with members: say who."""
    if not group.members:
        return
    shown = ", ".join(
        safe_text(m.member_id)
        + (f" (client {safe_text(m.client_id)}" if m.client_id else " (")
        + (f", host {safe_text(m.host)})" if m.host else ")")
        for m in group.members[:5]
    ).replace(" ()", "")
    more = f" and {len(group.members) - 5} more" if len(group.members) > 5 else ""
    raise KgitopsError(
        f"cannot {doing}: group '{safe_text(group.group_id)}' has {len(group.members)} active "
        f"member(s): {shown}{more}; stop its consumers first (state {safe_text(group.state)})"
    )


def parse_partitions(text: str, count: int, topic: str) -> list[int]:
    """``"0,1"`` -> [0, 1], each a partition the topic has (KgitopsError otherwise)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise KgitopsError(f"--partitions: {safe_text(part)!s} is not a partition id")
        p = int(part)
        if p >= count:
            raise KgitopsError(
                f"topic '{safe_text(topic)}' has no partition {p} (it has {count}: 0-{count - 1})"
            )
        out.append(p)
    return sorted(set(out))


def selected(partitions: Sequence[int] | None, count: int) -> list[int]:
    return list(range(count)) if partitions is None else list(partitions)
