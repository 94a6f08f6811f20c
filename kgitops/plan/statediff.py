"""What changed between two cluster states: one readable line per change, positioned by broker,
topic, partition and config. Pure. deepdiff does the deep comparison; this module names what
it found in the words ``kgitops status`` uses::

    broker 4: online true -> false
    topic orders: created (3 partition(s))
    topic orders partition 0: replicas [1, 2, 3] -> [1, 2, 4]
    topic orders partition 0: isr [1, 2, 3] -> [1, 2]
    topic orders config retention.ms: "604800000" -> "86400000"
    topic orders config cleanup.policy: set to "compact"
    topic payments: deleted

Used by ``kgitops snapshot diff A B`` (every field) and by a stale plan's explanation (only
what a plan depends on: broker ids, racks and liveness, replicas, topic configs; see
``Plan.raise_if_stale``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from kgitops.model import ClusterState, PartitionState
from kgitops.names import THROTTLED_REPLICAS_CONFIGS

View = dict[str, Any]


def state_view(
    state: ClusterState, topics: Collection[str] | None = None, *, plan_only: bool = False
) -> View:
    """The state as nested dicts keyed by broker id, topic, partition and config, for
    comparison. ``topics``: only these (absent ones as None); ``plan_only``: only what a plan
    depends on (no ISR, leaders, sizes, reassignments or throttle configs)."""
    names = sorted(state.topics) if topics is None else sorted(set(topics))
    return {
        "brokers": {str(b.id): {"rack": b.rack, "online": b.online} for b in state.brokers},
        "topics": {
            name: _topic_view(state, name, plan_only) if name in state.topics else None
            for name in names
        },
    }


def _topic_view(state: ClusterState, name: str, plan_only: bool) -> View:
    topic = state.topics[name]
    moving = state.reassignments.get(name, {})
    partitions: dict[str, View] = {}
    for p, ps in sorted(topic.partitions.items()):
        partitions[str(p)] = _partition_view(ps, moving.get(p), plan_only)
    config = {
        k: v
        for k, v in sorted(topic.config.items())
        if not (plan_only and k in THROTTLED_REPLICAS_CONFIGS)
    }
    return {"partitions": partitions, "config": config}


def _partition_view(ps: PartitionState, move: Any, plan_only: bool) -> View:
    out: View = {"replicas": list(ps.replicas)}
    if plan_only:
        return out
    out["isr"] = None if ps.isr is None else list(ps.isr)
    out["leader"] = ps.leader
    out["sizeBytes"] = ps.size_bytes
    if move is not None:
        out["reassigning"] = {"adding": list(move.adding), "removing": list(move.removing)}
    return out


def changes(before: View, after: View) -> list[str]:
    """Every difference between two views, one line each, sorted by what it concerns."""
    lines = _brokers(before.get("brokers", {}), after.get("brokers", {}))
    old_topics, new_topics = before.get("topics", {}), after.get("topics", {})
    for name in sorted(set(old_topics) | set(new_topics)):
        old, new = old_topics.get(name), new_topics.get(name)
        if old == new:
            continue  # the cheap test first: most topics of a large cluster are unchanged
        if old is None:
            lines.append(f"topic {name}: created ({len(new['partitions'])} partition(s))")
        elif new is None:
            lines.append(f"topic {name}: deleted")
        else:
            lines += [f"topic {name}{line}" for line in _fields(old, new)]
    return lines


def describe_changes(
    before: ClusterState,
    after: ClusterState,
    topics: Collection[str] | None = None,
    *,
    plan_only: bool = False,
) -> list[str]:
    """``changes`` of the two states' views (see ``state_view``)."""
    return changes(
        state_view(before, topics, plan_only=plan_only),
        state_view(after, topics, plan_only=plan_only),
    )


def _brokers(old: Mapping[str, View], new: Mapping[str, View]) -> list[str]:
    lines = []
    for b in sorted(set(old) | set(new), key=int):
        if b not in old:
            lines.append(f"broker {b}: added{_rack(new[b])}")
        elif b not in new:
            lines.append(f"broker {b}: removed{_rack(old[b])}")
        else:
            lines += [f"broker {b}{line}" for line in _fields(old[b], new[b])]
    return lines


def _rack(broker: View) -> str:
    return f" (rack {broker['rack']})" if broker.get("rack") is not None else ""


def _fields(old: View, new: View) -> list[str]:
    """The changed fields, each named by its position below the topic or broker:
    ``partition 0: replicas [1, 2] -> [1, 3]``, ``config retention.ms: "1" -> "2"``."""
    from deepdiff import DeepDiff  # 0.7 s to import: only when something did change

    found = DeepDiff(old, new, view="tree", verbose_level=2)
    fields: set[tuple[str, ...]] = set()
    for level in found.tree.values():
        for item in level:
            path = [str(p) for p in item.path(output_format="list")]
            fields.add(tuple(path[:3] if path and path[0] == "partitions" else path[:2]))
    out = []
    for field in sorted(fields, key=_order):
        before, after = _at(old, field), _at(new, field)
        out.append(_line(field, before, after))
    return out


_PARTITION_FIELDS = ("replicas", "isr", "leader", "sizeBytes", "reassigning")


def _order(field: tuple[str, ...]) -> tuple[Any, ...]:
    if field[0] == "partitions" and len(field) > 1:
        rank = _PARTITION_FIELDS.index(field[2]) if len(field) > 2 else -1
        return (0, int(field[1]), rank)
    return (1, field)


_MISSING = object()


def _at(view: Any, field: tuple[str, ...]) -> Any:
    for key in field:
        if not isinstance(view, Mapping) or key not in view:
            return _MISSING
        view = view[key]
    return view


def _line(field: tuple[str, ...], before: Any, after: Any) -> str:
    if field[0] == "partitions" and len(field) == 2:
        if before is _MISSING:
            return f" partition {field[1]}: added (replicas {_show(after['replicas'])})"
        if after is _MISSING:
            return f" partition {field[1]}: removed"
    if field[0] == "partitions":
        head = f" partition {field[1]}: {field[2]}"
    elif field[0] == "config":
        head = f" config {field[1]}:"
    else:
        head = f": {' '.join(field)}"
    if before is _MISSING:
        return f"{head} set to {_show(after)}"
    if after is _MISSING:
        return f"{head} removed (was {_show(before)})"
    return f"{head} {_show(before)} -> {_show(after)}"


def _show(value: Any) -> str:
    if value is _MISSING or value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True)
    return str(value)
