"""What ``kgitops get`` shows: a ``ClusterState`` as the ``kgitops-get/v1`` JSON (schema:
``kgitops/schemas/console.json``), and that JSON as aligned text tables. Pure.

The text is rendered from the JSON, so the two can never disagree. Every view is sorted
(topics by name, partitions by topic then id, brokers by id, racks by name) and every cell
passes through ``safe_text``: a config value or rack read from a cluster cannot move the
cursor, clear the screen or forge a line of the table::

    >>> safe_text("a\\x1b[2Jb\\n")
    'a\\\\x1b[2Jb\\\\n'

``balance`` holds the figures the rebalance works on (``plan --rebalance``): per broker and
per rack the replicas, the preferred leaders (first replicas) and the bytes, and per figure a
``spread``: min, max, mean and max/mean (1.0 is perfectly even).
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgitops.model import ClusterState, TopicState
from kgitops.names import is_internal_topic
from kgitops.plan.health import is_offline, is_under_replicated, topic_flags
from kgitops.plan.spread import broker_spread
from kgitops.safetext import safe_text
from kgitops.units import human_bytes

FORMAT = "kgitops-get/v1"
VIEWS = ("topics", "partitions", "brokers", "config", "balance")


def matches(topic: str, patterns: Sequence[str] = ()) -> bool:
    """Whether ``topic`` matches any of the shell globs of ``--topic`` (true when none):
    case-sensitive, as Kafka's names are.

    >>> matches("payments.orders", ["payments.*"]), matches("Payments", ["payments*"])
    (True, False)
    """
    return not patterns or any(fnmatch.fnmatchcase(topic, p) for p in patterns)


def select(
    state: ClusterState,
    patterns: Sequence[str] = (),
    *,
    internal: bool = True,
    own: Collection[str] = (),
) -> dict[str, TopicState]:
    """The topics whose name matches any of the shell globs (all when none), by name.

    ``internal=False`` (``get topics|partitions`` without ``--include-internal``) leaves out
    internal topics (``__consumer_offsets``...) unless a glob that matches them starts with
    ``__`` (``--topic '__consumer_offsets'`` asks for one by name). kgitops' own topics
    (``own``: the passwordVersion records) are internal too, listed when named exactly::

        >>> state = ClusterState(brokers=(), topics={"__consumer_offsets": TopicState(
        ...     "__consumer_offsets", {}), "orders": TopicState("orders", {})})
        >>> list(select(state, internal=False)), list(select(state, ["*"], internal=False))
        (['orders'], ['orders'])
        >>> list(select(state, ["__*"], internal=False)), list(select(state))
        (['__consumer_offsets'], ['__consumer_offsets', 'orders'])
    """
    asked = [p for p in patterns if p.startswith("__") or p in own]
    return {
        n: t
        for n, t in sorted(state.topics.items())
        if matches(n, patterns)
        and (internal or not is_internal_topic(n, own) or (bool(asked) and matches(n, asked)))
    }


@dataclass(frozen=True)
class Selection:
    """The topics a view shows: ``--topic``'s globs, ``--include-internal`` and kgitops' own
    topics (see :func:`select`); by default every topic but the internal ones."""

    patterns: Sequence[str] = ()
    internal: bool = False
    own: Collection[str] = ()

    def of(self, state: ClusterState) -> dict[str, TopicState]:
        return select(state, self.patterns, internal=self.internal, own=self.own)


NOT_INTERNAL = Selection()


def _size(t: TopicState) -> int | None:
    sizes = [p.size_bytes for p in t.partitions.values()]
    return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)


def _under(state: ClusterState, name: str) -> int | None:
    t = state.topics[name]
    if any(p.isr is None for p in t.partitions.values()):
        return None
    moves = state.reassignments.get(name, {})
    return sum(1 for pid, p in t.partitions.items() if is_under_replicated(p, moves.get(pid)))


def topics_view(
    state: ClusterState,
    chosen: Selection = NOT_INTERNAL,
    labels: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """``labels``: each topic's ``labels:`` from the folder's specs (shown when any has some)."""
    online = state.online_broker_ids
    rows = [
        {
            "name": n,
            "partitions": t.partition_count,
            "replicationFactor": t.replication_factor,
            "bytes": _size(t),
            "underReplicated": _under(state, n),
            "offline": sum(1 for p in t.partitions.values() if is_offline(p, online)),
            "configOverrides": len(t.config),
            **({"labels": dict(labels[n])} if labels and n in labels else {}),
        }
        for n, t in chosen.of(state).items()
    ]
    return {"format": FORMAT, "view": "topics", "topics": rows}


def partitions_view(state: ClusterState, chosen: Selection = NOT_INTERNAL) -> dict[str, Any]:
    rows = []
    for n, t in chosen.of(state).items():
        moving = state.reassignments.get(n, {})
        flags = topic_flags(state, n)  # status's rule (plan/health.py)
        for p, ps in sorted(t.partitions.items()):
            r = moving.get(p)
            row: dict[str, Any] = {
                "topic": n,
                "partition": p,
                "leader": ps.leader,
                "replicas": list(ps.replicas),
                "isr": None if ps.isr is None else list(ps.isr),
                "bytes": ps.size_bytes,
                "preferredLeader": bool(ps.replicas) and ps.leader == ps.replicas[0],
                "reassigning": r is not None,
                "flags": list(flags[p]),
            }
            offsets = state.offsets_of(n, p)
            if offsets is not None:
                row["highWatermark"] = offsets.high_watermark
                row["logEndOffsets"] = {str(b): o for b, o in offsets.log_end_offsets}
                row["leaderEpoch"] = offsets.leader_epoch
            rows.append(row)
    return {"format": FORMAT, "view": "partitions", "partitions": rows}


def _leading(topics: Iterable[TopicState]) -> Counter[int]:
    return Counter(p.leader for t in topics for p in t.partitions.values() if p.leader is not None)


def brokers_view(state: ClusterState, patterns: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "view": "brokers",
        "controllerId": state.controller_id,
        "brokers": _broker_rows(state, patterns),
    }


def _broker_rows(state: ClusterState, patterns: Sequence[str]) -> list[dict[str, Any]]:
    chosen = select(state, patterns)
    sub = ClusterState(brokers=state.brokers, topics=chosen)
    spread = broker_spread(sub)["brokers"]
    leading = _leading(chosen.values())
    racks = {b.id: b for b in state.brokers}
    rows = []
    for key, figures in spread.items():
        b = int(key)
        broker = racks.get(b)
        rows.append(
            {
                "id": b,
                "rack": broker.rack if broker else None,
                "online": broker.online if broker else False,
                "known": broker is not None,
                "replicas": figures["replicas"][1],
                "preferredLeaders": figures["leaders"][1],
                "leaders": leading[b],
                "bytes": figures["bytes"][1],
            }
        )
    return rows


def config_view(state: ClusterState, topic: str) -> dict[str, Any]:
    t = state.topics[topic]
    return {
        "format": FORMAT,
        "view": "config",
        "topic": topic,
        "configs": [{"name": k, "value": v} for k, v in sorted(t.config.items())],
    }


_BALANCED = ("replicas", "preferredLeaders", "leaders", "bytes")


def _spread(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in _BALANCED:
        values = [int(r[m]) for r in rows]
        if not values:
            continue
        mean = sum(values) / len(values)
        out[m] = {
            "min": min(values),
            "max": max(values),
            "mean": round(mean, 3),
            "maxOverMean": round(max(values) / mean, 3) if mean else None,
        }
    return out


def balance_view(state: ClusterState, patterns: Sequence[str] = ()) -> dict[str, Any]:
    """Per broker and per rack: replicas, preferred leaders, leaders, bytes, and the spread.

    Only known brokers that are online count in the broker spread (an offline broker's
    replicas are listed but it cannot take new ones); the rack spread sums its brokers."""
    brokers = [r for r in _broker_rows(state, patterns) if r["known"]]
    racks: dict[str, dict[str, Any]] = {}
    for r in brokers:
        if r["rack"] is None:
            continue
        row = racks.setdefault(
            r["rack"], {"rack": r["rack"], "brokers": 0, **dict.fromkeys(_BALANCED, 0)}
        )
        row["brokers"] += 1
        for m in _BALANCED:
            row[m] += r[m]
    rack_rows = [racks[k] for k in sorted(racks)]
    chosen = select(state, patterns)
    return {
        "format": FORMAT,
        "view": "balance",
        "bytesKnown": all(_size(t) is not None for t in chosen.values()),
        "brokers": [{k: v for k, v in r.items() if k != "known"} for r in brokers],
        "racks": rack_rows,
        "spread": {
            "brokers": _spread([r for r in brokers if r["online"]]),
            "racks": _spread(rack_rows),
        },
    }


# ------------------------------------------------------------------------------------ text


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    numbers: bool = True,
    escaped: bool = False,
) -> list[str]:
    """Aligned columns, two spaces apart; columns of numbers right-aligned (unless
    ``numbers`` is false); every cell made safe (``escaped``: the caller already did, with
    ``safe_text``, and string cells are taken as they are)."""
    body = [[c if escaped and isinstance(c, str) else _cell(c) for c in r] for r in rows]
    numeric = [
        numbers and bool(body) and all(_numeric(r[i]) for r in body) for i in range(len(header))
    ]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        out = [
            c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "  ".join(out).rstrip()

    return [line([h.upper() for h in header])] + [line(r) for r in body]


def _numeric(cell: str) -> bool:
    return cell.replace(".", "", 1).isdigit() or cell == "-"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return safe_text(str(value))


def _bytes(n: object) -> str:
    return "-" if n is None else human_bytes(int(str(n)))


def render_text(view: Mapping[str, Any]) -> list[str]:
    """The text form of a ``kgitops-get/v1`` view (one of ``VIEWS``)."""
    kind = view["view"]
    if kind == "topics":
        labelled = any(t.get("labels") for t in view["topics"])
        return table(
            ("topic", "partitions", "rf", "bytes", "under-replicated", "offline", "overrides")
            + (("labels",) if labelled else ()),
            (
                (
                    t["name"],
                    t["partitions"],
                    t["replicationFactor"],
                    _bytes(t["bytes"]),
                    t["underReplicated"],
                    t["offline"],
                    t["configOverrides"],
                )
                + (
                    (",".join(f"{k}={v}" for k, v in sorted(t.get("labels", {}).items())),)
                    if labelled
                    else ()
                )
                for t in view["topics"]
            ),
        )
    if kind == "partitions":
        rows = view["partitions"]
        if any(p.get("highWatermark") or p.get("leaderEpoch") for p in rows):  # offsets known
            return table(
                _OFFSET_COLUMNS,
                (
                    (
                        p["topic"],
                        p["partition"],
                        p["leader"],
                        p["leaderEpoch"],
                        p["replicas"],
                        p["isr"],
                        [p["logEndOffsets"].get(str(b), "-") for b in p["replicas"]],
                        p["highWatermark"],
                        _bytes(p["bytes"]),
                        _flags(p),
                    )
                    for p in rows
                ),
            )
        return table(
            ("topic", "partition", "leader", "replicas", "isr", "bytes", "flags"),
            (
                (
                    p["topic"],
                    p["partition"],
                    p["leader"],
                    p["replicas"],
                    p["isr"],
                    _bytes(p["bytes"]),
                    _flags(p),
                )
                for p in rows
            ),
        )
    if kind == "brokers":
        controller = view.get("controllerId")
        return table(
            ("broker", "rack", "online", "replicas", "leaders", "preferred", "bytes", "role"),
            (
                (*_broker_cells(b), "controller" if b["id"] == controller else "")
                for b in view["brokers"]
            ),
        )
    if kind == "config":
        if not view["configs"]:
            return [f"{safe_text(view['topic'])}: no config set on the topic (broker defaults)"]
        return table(
            ("config", "value"),
            ((c["name"], c["value"]) for c in view["configs"]),
            numbers=False,
        )
    if kind == "balance":
        return _balance_text(view)
    raise ValueError(f"unknown view {kind!r}")


_OFFSET_COLUMNS: tuple[str, ...] = ("topic", "partition", "leader", "epoch", "replicas")
_OFFSET_COLUMNS += ("isr", "leo", "hw", "bytes", "flags")

#: The text form of health's partition flags, in the order ``get partitions`` lists them.
_FLAG_WORDS = (
    ("offline", "offline"),
    ("leader_off_preferred", "leader-off-preferred"),
    ("under_replicated", "under-replicated"),
    ("under_min_isr", "under-min-isr"),
    ("reassigning", "reassigning"),
)


def _flags(p: Mapping[str, Any]) -> str:
    flags = set(p["flags"])
    return ",".join(word for flag, word in _FLAG_WORDS if flag in flags)


def _load_cells(row: Mapping[str, Any]) -> tuple[object, ...]:
    """A broker's or a rack's replicas, leaders, preferred leaders and bytes cells."""
    return (row["replicas"], row["leaders"], row["preferredLeaders"], _bytes(row["bytes"]))


def _broker_cells(b: Mapping[str, Any]) -> tuple[object, ...]:
    """A broker's cells, as `get brokers` and `get balance` list them."""
    return (b["id"], b["rack"], b["online"], *_load_cells(b))


def _balance_text(view: Mapping[str, Any]) -> list[str]:
    # leaders (led now) before preferred, as in `get brokers`: side by side, "PREFERRED
    # LEADERS" would read as one heading over the current leaders' column
    cols = ("replicas", "leaders", "preferred", "bytes")
    lines = table(
        ("broker", "rack", "online", *cols),
        (_broker_cells(b) for b in view["brokers"]),
    )
    if view["racks"]:
        lines.append("")
        lines += table(
            ("rack", "brokers", *cols),
            ((r["rack"], r["brokers"], *_load_cells(r)) for r in view["racks"]),
        )
    lines.append("")
    for scope in ("brokers", "racks"):
        spread = view["spread"][scope]
        if not spread:
            continue
        parts = []
        for m in _BALANCED:
            s = spread[m]
            shown = _bytes if m == "bytes" else str
            ratio = f" ({s['maxOverMean']:.2f}x the mean)" if s["maxOverMean"] else ""
            parts.append(f"{_LABEL[m]} {shown(s['min'])}-{shown(s['max'])}{ratio}")
        who = "online brokers" if scope == "brokers" else "racks"
        lines.append(f"Spread over {who}: " + "; ".join(parts))
    if not view["bytesKnown"]:
        lines.append("some sizes unknown: bytes count only the known ones")
    return lines


_LABEL = {
    "replicas": "replicas",
    "preferredLeaders": "preferred leaders",
    "leaders": "leaders",
    "bytes": "bytes",
}
