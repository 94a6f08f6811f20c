"""The transfer estimate: the replica data a plan's reassignments copy, and how long it takes.

A new replica copies the partition from its leader: the leader sends, the new broker
receives. The time is ``kgitops.plan.schedule``: apply's own windowing (at most
``maxConcurrentMoves`` in flight, the per-broker throttle shared by the copies into and out of
each broker) run on Kafka's replication model, at the share of the throttle Kafka's quota lets
through (``versionrules.throttle_delivered``: 23/24); ``windows`` are the batches apply submits. A
plan carries it as the typed field ``Plan.transfer`` (JSON ``transfer``, see
kgitops/schemas/plan.json)::

    "transfer": {"brokers": {"3": {"in": 9, "out": 0}, "1": {"in": 0, "out": 9}},
                 "racks": {}, "crossRackBytes": null, "totalBytes": 9,
                 "clusterBytes": 100, "throttleBytesPerSec": 1000, "maxConcurrentMoves": 10,
                 "estimatedSeconds": 5.0, "windowCount": 1,
                 "windows": [{"moves": 1, "bytes": 9, "startSeconds": 0.0, "seconds": 5.0}]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.model import ClusterState, ReassignmentSettings, partition_row, replicas_and_sizes
from kgitops.plan.actions import Action, Reassign
from kgitops.plan.schedule import NETWORK_BYTES_PER_SEC, MoveJob, Window, schedule
from kgitops.versionrules import throttle_delivered

WINDOWS_SHOWN = 100


@dataclass(frozen=True)
class Traffic:
    """Bytes a broker (or a rack's brokers) receives and sends."""

    received: int = 0
    sent: int = 0

    def to_json(self) -> dict[str, int]:
        return {"in": self.received, "out": self.sent}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Traffic:
        return cls(int(data.get("in") or 0), int(data.get("out") or 0))


@dataclass(frozen=True)
class Transfer:
    """Per broker and per rack traffic, totals and the time at the throttle.

    ``racks`` and ``cross_rack_bytes`` are known only when every broker involved has a rack
    (``cross_rack_bytes`` is None otherwise); ``estimated_seconds`` is None without a throttle.
    """

    brokers: Mapping[int, Traffic] = field(default_factory=dict)
    racks: Mapping[str, Traffic] = field(default_factory=dict)
    cross_rack_bytes: int | None = None
    total_bytes: int = 0
    cluster_bytes: int = 0
    throttle_bytes_per_sec: int | None = None
    estimated_seconds: float | None = None
    max_concurrent_moves: int | None = None
    window_count: int = 0
    windows: tuple[Window, ...] = ()

    def to_json(self) -> dict[str, Any]:
        schedule_fields: dict[str, Any] = (
            {
                "maxConcurrentMoves": self.max_concurrent_moves,
                "windowCount": self.window_count,
                "windows": [w.to_json() for w in self.windows],
            }
            if self.max_concurrent_moves is not None
            else {}
        )
        return {
            "brokers": {str(b): self.brokers[b].to_json() for b in sorted(self.brokers)},
            "racks": {r: self.racks[r].to_json() for r in sorted(self.racks)},
            "crossRackBytes": self.cross_rack_bytes,
            "totalBytes": self.total_bytes,
            "clusterBytes": self.cluster_bytes,
            "throttleBytesPerSec": self.throttle_bytes_per_sec,
            "estimatedSeconds": self.estimated_seconds,
            **schedule_fields,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transfer:
        """Reads every plan written so far: fields absent from older plans take defaults."""
        cross = data.get("crossRackBytes")
        rate = data.get("throttleBytesPerSec")
        secs = data.get("estimatedSeconds")
        most = data.get("maxConcurrentMoves")
        return cls(
            brokers={int(b): Traffic.from_json(v) for b, v in data.get("brokers", {}).items()},
            racks={str(r): Traffic.from_json(v) for r, v in (data.get("racks") or {}).items()},
            cross_rack_bytes=None if cross is None else int(cross),
            total_bytes=int(data.get("totalBytes") or 0),
            cluster_bytes=int(data.get("clusterBytes") or 0),
            throttle_bytes_per_sec=None if rate is None else int(rate),
            estimated_seconds=None if secs is None else float(secs),
            max_concurrent_moves=None if most is None else int(most),
            window_count=int(data.get("windowCount") or 0),
            windows=tuple(Window.from_json(w) for w in data.get("windows") or ()),
        )


def estimate_transfer(
    actions: Iterable[Action],
    state: ClusterState,
    throttle_bytes_per_sec: int | None,
    max_concurrent_moves: int = ReassignmentSettings().max_concurrent_moves,
) -> Transfer | None:
    """The transfer of the reassignments among ``actions``; None when nothing is copied."""
    per: dict[int, list[int]] = {}
    jobs: list[MoveJob] = []
    racks: dict[str, list[int]] = {}
    rack_of = {b.id: b.rack for b in state.brokers}
    total = cross = 0
    for a in actions:
        if not isinstance(a, Reassign):
            continue
        live = state.topics.get(a.topic)
        for p, m in a.moves.items():
            row = partition_row(live.partitions, p) if live is not None else None
            leader = row[2] if row is not None else None
            sender = leader if leader is not None else m.source[0]
            jobs.append(MoveJob((a.topic, p), sender, m.adding, m.size_bytes))
            for b in m.adding:
                per.setdefault(b, [0, 0])[0] += m.size_bytes
                per.setdefault(sender, [0, 0])[1] += m.size_bytes
                total += m.size_bytes
                to_rack, from_rack = rack_of.get(b), rack_of.get(sender)
                if to_rack is not None and from_rack is not None:
                    racks.setdefault(to_rack, [0, 0])[0] += m.size_bytes
                    racks.setdefault(from_rack, [0, 0])[1] += m.size_bytes
                    if to_rack != from_rack:
                        cross += m.size_bytes
    if not per:
        return None
    cluster_bytes = sum(
        (size or 0) * len(reps)
        for t in state.topics.values()
        for reps, size in replicas_and_sizes(t.partitions)
    )
    rate = throttle_bytes_per_sec
    jobs.sort(key=lambda j: j.key)  # apply's queue order: topic, then partition
    timing = schedule(
        jobs,
        max_concurrent_moves=max_concurrent_moves,
        # what Kafka's quota lets through of the configured rate, on average
        throttle_bytes_per_sec=rate * throttle_delivered(state.version) if rate else rate,
        network_bytes_per_sec=state.network_bytes_per_sec or NETWORK_BYTES_PER_SEC,
    )
    return Transfer(
        brokers={b: Traffic(*per[b]) for b in sorted(per)},
        racks={r: Traffic(*racks[r]) for r in sorted(racks)},
        cross_rack_bytes=cross if racks else None,
        total_bytes=total,
        cluster_bytes=cluster_bytes,
        throttle_bytes_per_sec=rate,
        estimated_seconds=round(timing.total_seconds, 1),
        max_concurrent_moves=max_concurrent_moves,
        window_count=len(timing.windows),
        windows=timing.windows[:WINDOWS_SHOWN],
    )
