"""The transfer estimate: the replica data a plan's reassignments copy, and how long it takes.

A new replica copies the partition from its leader: the leader sends, the new broker
receives. Kafka's replication throttle is a per-broker rate, so the busiest broker sets the
pace: ``estimated_seconds = max(in, out over brokers) / throttle``. A plan carries it as the
typed field ``Plan.transfer`` (JSON ``transfer``, see kgitops/schemas/plan.json)::

    "transfer": {"brokers": {"3": {"in": 9, "out": 0}, "1": {"in": 0, "out": 9}},
                 "racks": {}, "crossRackBytes": null, "totalBytes": 9,
                 "clusterBytes": 100, "throttleBytesPerSec": 1000, "estimatedSeconds": 0.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.model import ClusterState
from kgitops.plan.actions import Action, Reassign


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

    def to_json(self) -> dict[str, Any]:
        return {
            "brokers": {str(b): self.brokers[b].to_json() for b in sorted(self.brokers)},
            "racks": {r: self.racks[r].to_json() for r in sorted(self.racks)},
            "crossRackBytes": self.cross_rack_bytes,
            "totalBytes": self.total_bytes,
            "clusterBytes": self.cluster_bytes,
            "throttleBytesPerSec": self.throttle_bytes_per_sec,
            "estimatedSeconds": self.estimated_seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transfer:
        """Reads every plan written so far: fields absent from older plans take defaults."""
        cross = data.get("crossRackBytes")
        rate = data.get("throttleBytesPerSec")
        secs = data.get("estimatedSeconds")
        return cls(
            brokers={int(b): Traffic.from_json(v) for b, v in data.get("brokers", {}).items()},
            racks={str(r): Traffic.from_json(v) for r, v in (data.get("racks") or {}).items()},
            cross_rack_bytes=None if cross is None else int(cross),
            total_bytes=int(data.get("totalBytes") or 0),
            cluster_bytes=int(data.get("clusterBytes") or 0),
            throttle_bytes_per_sec=None if rate is None else int(rate),
            estimated_seconds=None if secs is None else float(secs),
        )


def estimate_transfer(
    actions: Iterable[Action], state: ClusterState, throttle_bytes_per_sec: int | None
) -> Transfer | None:
    """The transfer of the reassignments among ``actions``; None when nothing is copied."""
    per: dict[int, list[int]] = {}
    racks: dict[str, list[int]] = {}
    rack_of = {b.id: b.rack for b in state.brokers}
    total = cross = 0
    for a in actions:
        if not isinstance(a, Reassign):
            continue
        live = state.topics.get(a.topic)
        for p, m in a.moves.items():
            ps = live.partitions.get(p) if live is not None else None
            sender = ps.leader if ps is not None and ps.leader is not None else m.source[0]
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
        (ps.size_bytes or 0) * len(ps.replicas)
        for t in state.topics.values()
        for ps in t.partitions.values()
    )
    rate = throttle_bytes_per_sec
    worst = max(max(v) for v in per.values())
    return Transfer(
        brokers={b: Traffic(*per[b]) for b in sorted(per)},
        racks={r: Traffic(*racks[r]) for r in sorted(racks)},
        cross_rack_bytes=cross if racks else None,
        total_bytes=total,
        cluster_bytes=cluster_bytes,
        throttle_bytes_per_sec=rate,
        estimated_seconds=round(worst / rate, 1) if rate else None,
    )
