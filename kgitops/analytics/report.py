"""The kgitops-keys/v1 report from the job's aggregates: pure Python, no Spark.

The Spark job hands over two small tables (see ``transforms``): one row per (partition
count, partition) and the top-N hot keys. Everything here is arithmetic on those, plus the
placement views that need no data at all beyond per-partition totals::

    per partition     messages[p], bytes[p]              (from Spark)
    per broker        sum over partitions it leads / holds a replica of
    per rack          the same, grouped by the brokers' racks
    per consumer      sum over the partitions the assignor gives each member

Worked example, 2 brokers, partitions 0 -> [1, 2] and 1 -> [2, 1] carrying 10 and 30
messages: broker 1 leads 10 and holds 40 (every replica), broker 2 leads 30 and holds 40.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgitops.model import Broker

FORMAT = "kgitops-keys/v1"


@dataclass(frozen=True)
class LoadRow:
    """One (partition count, partition) row of the job; ``p`` None = the null keys."""

    n: int
    p: int | None
    keys: int
    messages: int
    bytes: int
    moved_keys: int = 0
    moved_messages: int = 0
    moved_bytes: int = 0


@dataclass(frozen=True)
class HotKey:
    key: bytes
    messages: int
    bytes: int
    partitions: Mapping[int, int]


@dataclass(frozen=True)
class Placement:
    """Where each partition's replicas live, for one partition count. ``source`` says
    whether it is the live assignment (``state``) or the one Kafka would add (``computed``)."""

    assignment: Mapping[int, tuple[int, ...]]
    brokers: tuple[Broker, ...]
    source: str = "state"


@dataclass(frozen=True)
class ReportInput:
    counts: tuple[int, ...]
    base: int
    rows: tuple[LoadRow, ...]
    hot: tuple[HotKey, ...]
    sizes: bool = False
    placements: Mapping[int, Placement] = field(default_factory=dict)
    consumers: int | None = None
    topic: str = "topic"
    meta: Mapping[str, Any] = field(default_factory=dict)


def skew(values: Sequence[int]) -> tuple[float, float]:
    """(max / mean, coefficient of variation) of a load vector; (0, 0) when it is empty
    or all zero. ``skew([10, 30]) == (1.5, 0.5)``."""
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    if mean == 0:
        return 0.0, 0.0
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return round(max(values) / mean, 6), round(math.sqrt(var) / mean, 6)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 0.0


def display_key(key: bytes) -> dict[str, str]:
    """``{"key": text}`` for a UTF-8 key, else ``{"keyHex": hex}``."""
    try:
        return {"key": key.decode("utf-8")}
    except UnicodeDecodeError:
        return {"keyHex": key.hex()}


def _vector(rows: Sequence[LoadRow], n: int, attr: str) -> list[int]:
    out = [0] * n
    for r in rows:
        if r.n == n and r.p is not None:
            out[r.p] = int(getattr(r, attr))
    return out


def broker_load(
    placement: Placement, messages: Sequence[int], sizes: Sequence[int] | None
) -> dict[str, Any]:
    """Load per broker and per rack: as leader (first replica) and over all replicas."""
    racks = {b.id: b.rack for b in placement.brokers}
    ids = sorted(set(racks) | {b for r in placement.assignment.values() for b in r})
    per: dict[int, dict[str, int]] = {
        b: {"leaderPartitions": 0, "replicas": 0, "leaderMessages": 0, "replicaMessages": 0}
        for b in ids
    }
    if sizes is not None:
        for v in per.values():
            v.update(leaderBytes=0, replicaBytes=0)
    for p, replicas in sorted(placement.assignment.items()):
        if p >= len(messages):
            continue
        for i, b in enumerate(replicas):
            entry = per[b]
            entry["replicas"] += 1
            entry["replicaMessages"] += messages[p]
            if sizes is not None:
                entry["replicaBytes"] += sizes[p]
            if i == 0:
                entry["leaderPartitions"] += 1
                entry["leaderMessages"] += messages[p]
                if sizes is not None:
                    entry["leaderBytes"] += sizes[p]
    brokers: list[dict[str, Any]] = [{"id": b, "rack": racks.get(b), **per[b]} for b in ids]
    by_rack: list[dict[str, Any]] = []
    for rack in sorted({r for r in racks.values() if r is not None}):
        members = [b for b in ids if racks.get(b) == rack]
        totals: dict[str, Any] = {"rack": rack, "brokers": members}
        for k in per[members[0]]:
            totals[k] = sum(per[b][k] for b in members)
        by_rack.append(totals)
    leader_skew = skew([per[b]["leaderMessages"] for b in ids])
    replica_skew = skew([per[b]["replicaMessages"] for b in ids])
    return {
        "source": placement.source,
        "brokers": brokers,
        "racks": by_rack,
        "leaderMaxOverMean": leader_skew[0],
        "replicaMaxOverMean": replica_skew[0],
    }


def consumer_load(
    topic: str, n_partitions: int, members: int, messages: Sequence[int]
) -> dict[str, Any]:
    """Per-member load for ``members`` consumers (c0, c1, ...) of one group subscribed to
    the topic, under Kafka's range and round-robin assignors."""
    from kgitops.placement.consumers import assign_range, assign_round_robin

    subs = {f"c{i}": [topic] for i in range(members)}
    out: dict[str, Any] = {"members": members}
    for name, assignor in (("range", assign_range), ("roundrobin", assign_round_robin)):
        result = assignor(subs, {topic: n_partitions})
        rows: list[dict[str, Any]] = []
        loads: list[int] = []
        for member in sorted(result, key=lambda m: int(m[1:])):
            parts = sorted(p for t, p in result[member] if t == topic)
            loads.append(sum(messages[p] for p in parts))
            rows.append({"member": member, "partitions": parts, "messages": loads[-1]})
        out[name] = {"assignment": rows, "maxOverMean": skew(loads)[0]}
    return out


def build_report(data: ReportInput) -> dict[str, Any]:
    """The kgitops-keys/v1 JSON (see schemas/keys-report.json)."""
    first = data.counts[0]
    rows_n = [r for r in data.rows if r.n == first]
    null_rows = [r for r in rows_n if r.p is None]
    null_messages = sum(r.messages for r in null_rows)
    keyed_messages = sum(r.messages for r in rows_n if r.p is not None)
    keyed_bytes = sum(r.bytes for r in rows_n if r.p is not None)
    distinct = sum(r.keys for r in rows_n if r.p is not None)

    counts: dict[str, Any] = {}
    for n in data.counts:
        msgs = _vector(data.rows, n, "messages")
        mo, cv = skew(msgs)
        entry: dict[str, Any] = {
            "messages": msgs,
            "keys": _vector(data.rows, n, "keys"),
            "maxOverMean": mo,
            "coefficientOfVariation": cv,
            "emptyPartitions": sum(1 for m in msgs if m == 0),
        }
        sizes = _vector(data.rows, n, "bytes") if data.sizes else None
        if sizes is not None:
            bmo, bcv = skew(sizes)
            entry.update(bytes=sizes, bytesMaxOverMean=bmo, bytesCoefficientOfVariation=bcv)
        if n in data.placements:
            entry["placement"] = broker_load(data.placements[n], msgs, sizes)
        if data.consumers:
            entry["consumers"] = consumer_load(data.topic, n, data.consumers, msgs)
        counts[str(n)] = entry

    moves = []
    for n in data.counts:
        if n == data.base:
            continue
        rows = [r for r in data.rows if r.n == n and r.p is not None]
        move: dict[str, Any] = {
            "from": data.base,
            "to": n,
            "keyShare": _share(sum(r.moved_keys for r in rows), distinct),
            "messageShare": _share(sum(r.moved_messages for r in rows), keyed_messages),
            "movedKeys": sum(r.moved_keys for r in rows),
            "movedMessages": sum(r.moved_messages for r in rows),
        }
        if data.sizes:
            move["byteShare"] = _share(sum(r.moved_bytes for r in rows), keyed_bytes)
        moves.append(move)

    hot = []
    for k in data.hot:
        item: dict[str, Any] = display_key(k.key)
        item.update(messages=k.messages, share=_share(k.messages, keyed_messages))
        if data.sizes:
            item["bytes"] = k.bytes
        item["partitions"] = {str(n): p for n, p in sorted(k.partitions.items())}
        hot.append(item)

    report: dict[str, Any] = {
        "format": FORMAT,
        "messages": keyed_messages + null_messages,
        "nullKeys": null_messages,
        "distinctKeys": distinct,
        "base": data.base,
        "partitionCounts": counts,
        "moves": moves,
        "hotKeys": hot,
    }
    if data.sizes:
        report["bytes"] = keyed_bytes + sum(r.bytes for r in null_rows)
    report.update(data.meta)
    return report


def placements_for(
    current: Mapping[int, tuple[int, ...]], brokers: Sequence[Broker], counts: Sequence[int]
) -> dict[int, Placement]:
    """The placement of each count that can follow ``current``: the live assignment for the
    current count, and for a larger count the live one plus Kafka's assignment of the added
    partitions (docs/algorithms.md: existing partitions never move). A smaller count has none (Kafka
    cannot remove partitions)."""
    from kgitops.placement.assignment import assign_added_partitions

    existing = {int(p): tuple(r) for p, r in current.items()}
    out: dict[int, Placement] = {}
    if not existing or 0 not in existing:
        return out
    live = tuple(brokers)
    for n in counts:
        if n == len(existing):
            out[n] = Placement(existing, live, "state")
        elif n > len(existing):
            added = assign_added_partitions(live, dict(existing), n)
            out[n] = Placement({**existing, **added}, live, "computed")
    return out
