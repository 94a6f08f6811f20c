"""Per-broker bytes, replicas and preferred leaders, before and after a plan: the figures the
text plan, the markdown plan and ``status`` show, from one function. Pure.

``broker_spread(state, actions)`` is the JSON a plan carries as ``spread``::

    {"bytesKnown": true,
     "brokers": {"0": {"bytes": [22548578304, 15250000000], "replicas": [34, 23],
                       "leaders": [14, 10]}, ...}}

``bytes`` counts every replica (a partition of 2 GiB on RF 3 puts 2 GiB on three brokers);
``leaders`` are preferred leaders (first replicas). Without ``actions`` before = after (status).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgitops.model import ClusterState, partition_row, partition_sizes, replicas_and_sizes
from kgitops.plan.actions import Action, AddPartitions, CreateTopic, DeleteTopic, Reassign
from kgitops.units import human_bytes

METRICS = ("bytes", "replicas", "leaders")
#: How tables and summaries name each figure: ``leaders`` here are *preferred* leaders (first
#: replicas), never the partitions a broker leads now (`get brokers`' ``leaders``).
LABELS = {"bytes": "bytes", "replicas": "replicas", "leaders": "preferred leaders"}


def _count(
    parts: Iterable[tuple[Sequence[int], int]],
) -> tuple[Counter[int], Counter[int], Counter[int]]:
    # plain dicts in the loop (a Counter's += is three times slower), Counters returned
    size: dict[int, int] = {}
    count: dict[int, int] = {}
    lead: dict[int, int] = {}
    for reps, n in parts:
        for b in reps:
            if b in count:
                size[b] += n
                count[b] += 1
            else:
                size[b] = n
                count[b] = 1
        if reps:
            first = reps[0]
            lead[first] = lead.get(first, 0) + 1
    return Counter(size), Counter(count), Counter(lead)


def broker_spread(state: ClusterState, actions: Sequence[Action] = ()) -> dict[str, Any]:
    """The ``spread`` JSON: per broker [before, after] bytes, replicas and leaders."""
    moved: dict[str, Mapping[int, tuple[int, ...]]] = {}
    added: list[tuple[Sequence[int], int]] = []
    deleted: set[str] = set()
    for a in actions:
        if isinstance(a, Reassign):
            moved[a.topic] = {p: m.target for p, m in a.moves.items()}
        elif isinstance(a, CreateTopic):
            added.extend((r, 0) for r in a.assignment.values())
        elif isinstance(a, AddPartitions):
            added.extend((r, 0) for r in (a.assignment or {}).values())
        elif isinstance(a, DeleteTopic):
            deleted.add(a.topic)
    known = all(None not in partition_sizes(t.partitions) for t in state.topics.values())
    before = _count(
        (reps, size or 0)
        for t in state.topics.values()
        for reps, size in replicas_and_sizes(t.partitions)
    )
    if actions:
        # after = before, less what moves or goes, plus what moves in or is created
        gone: list[tuple[Sequence[int], int]] = []
        came: list[tuple[Sequence[int], int]] = list(added)
        for name, t in state.topics.items():
            targets = moved.get(name)
            if name in deleted:
                gone.extend((reps, size or 0) for reps, size in replicas_and_sizes(t.partitions))
            elif targets:
                for p, target in targets.items():
                    row = partition_row(t.partitions, p)
                    if row is not None:
                        replicas, _, _, size = row
                        gone.append((replicas, size or 0))
                        came.append((target, size or 0))
        less, more = _count(gone), _count(came)
        after = (
            before[0] - less[0] + more[0],
            before[1] - less[1] + more[1],
            before[2] - less[2] + more[2],
        )
    else:
        after = before
    ids = sorted({b.id for b in state.brokers} | set(before[1]) | set(after[1]))
    return {
        "bytesKnown": known,
        "brokers": {
            str(b): {m: [before[i][b], after[i][b]] for i, m in enumerate(METRICS)} for b in ids
        },
    }


def _figure(figures: object, metric: str, which: int) -> int:
    """One number of a plan file's ``spread`` (0 for anything that is not an integer)."""
    value = figures.get(metric) if isinstance(figures, Mapping) else None
    if isinstance(value, list) and len(value) == 2:
        n = value[which]
        if isinstance(n, int) and not isinstance(n, bool):
            return n
    return 0


def summary(spread: Mapping[str, Any], which: int) -> dict[str, str]:
    """Per metric, the range over brokers as text (``which``: 0 before, 1 after), e.g.
    ``{"bytes": "13.7 GiB-14.2 GiB (max 1.02x the mean)", ...}``."""
    brokers = spread.get("brokers") or {}
    out: dict[str, str] = {}
    for m in METRICS:
        values = [_figure(v, m, which) for v in brokers.values()]
        if not values:
            continue
        mean = sum(values) / len(values)
        low, high = min(values), max(values)
        shown = human_bytes if m == "bytes" else str
        ratio = f" (max {high / mean:.2f}x the mean)" if mean else ""
        out[m] = f"{shown(low)}-{shown(high)}{ratio}"
    return out


def text_lines(spread: Mapping[str, Any], *, changes: bool = True, rows: int = 100) -> list[str]:
    """The per-broker table in plain text (``status`` and the text plan), and a summary."""
    brokers = spread.get("brokers") or {}
    if not brokers:
        return []
    arrow = " -> "

    def cell(m: str, v: Sequence[int]) -> str:
        shown = human_bytes if m == "bytes" else str
        if not changes or v[0] == v[1]:
            return shown(v[1])
        return f"{shown(v[0])}{arrow}{shown(v[1])}"

    table: list[tuple[str, ...]] = [("broker", *(LABELS[m] for m in METRICS))]
    for b, v in list(brokers.items())[:rows]:
        table.append((str(b), *(cell(m, (_figure(v, m, 0), _figure(v, m, 1))) for m in METRICS)))
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    head = "Per broker (before -> after):" if changes else "Per broker:"
    lines = [head]
    lines += ["  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in table]
    if len(brokers) > rows:
        lines.append(f"  ... {len(brokers) - rows} more broker(s)")
    now = summary(spread, 1)
    was = summary(spread, 0)
    parts = [
        f"{LABELS[m]} {was[m]}{arrow}{now[m]}"
        if changes and was[m] != now[m]
        else f"{LABELS[m]} {now[m]}"
        for m in METRICS
        if m in now
    ]
    if not spread.get("bytesKnown", True):
        parts.append("some sizes unknown: bytes count only the known ones")
    lines.append("Spread: " + "; ".join(parts))
    return lines
