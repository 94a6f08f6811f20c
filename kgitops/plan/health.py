"""Cluster health from a ClusterState, in Kafka's vocabulary (AR, ISR, OSR; see
docs/simulated-cluster.md). Pure: no cluster access.

For each partition Kafka keeps the assigned replicas (AR), the in-sync ones (ISR: caught up
with the leader's log end offset, LEO, within ``replica.lag.time.max.ms``) and so the
out-of-sync ones (OSR = AR - ISR). The high watermark (HW, the smallest LEO in the ISR) is
what consumers can read up to, so a shrinking ISR is what a reader of ``status`` cares about:

- **offline**: no leader (every ISR replica is on a failed broker; unclean election is off);
- **under-replicated**: the ISR is smaller than the replication factor, counted as Kafka
  counts it during a reassignment (AR minus the removing replicas);
- **under min ISR**: fewer in-sync replicas than the topic's effective
  ``min.insync.replicas`` (its own value, else the brokers': ``ClusterState.min_insync_replicas``;
  from Kafka 3.7 at most the partition's replica count: ``versionrules.effective_min_isr``);
  producers with ``acks=all`` are refused;
- **leader off preferred**: the leader is not the first replica (a preferred-leader election
  moves it back);
- **reassigning**: adding / removing replicas in flight, **stalled** when an adding replica's
  broker is offline.

Two findings are about the cluster as kgitops leaves it, not about a partition:

- **throttles left**: a replication throttle (a broker's rate, a topic's throttled-replica
  entry) that no move in flight needs (``kgitops.plan.throttles``): it slows every follower
  that falls behind on that broker, and a plan removes it (``~ remove_throttles``);
- **decommissioned brokers holding replicas**: the drain is not done.

The cluster is healthy when no broker is offline, no partition is offline, under-replicated
or under min ISR, no throttle is left and no decommissioned broker holds a replica. Leaders
off preferred and reassignments in flight are reported, not failed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.jsonfields import camel
from kgitops.model import (
    ClusterState,
    PartitionOffsets,
    PartitionState,
    Reassignment,
    TopicPartition,
)
from kgitops.plan.throttles import Stale, stale_throttles
from kgitops.versionrules import effective_min_isr

PROBLEMS = ("offline", "under_replicated", "under_min_isr")
NOTES = ("leader_off_preferred", "reassigning", "stalled")


@dataclass(frozen=True)
class PartitionHealth:
    """One partition that has something to report. ``osr`` = AR - ISR."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int | None
    flags: tuple[str, ...]
    min_isr: int | None = None
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    progress: Mapping[int, tuple[float, int]] = field(default_factory=dict)
    offsets: PartitionOffsets | None = None  # HW, LEO per replica, epoch, where known

    @property
    def leader_leo(self) -> int | None:
        """The leader's log end offset, where the offsets are known."""
        if self.offsets is None or self.leader is None:
            return None
        return dict(self.offsets.log_end_offsets).get(self.leader)

    @property
    def osr(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas if b not in self.isr)

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas if b not in self.removing)

    @property
    def name(self) -> str:
        return str(TopicPartition(self.topic, self.partition))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "flags": list(self.flags),
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "osr": list(self.osr),
            "leader": self.leader,
        }
        if self.min_isr is not None:
            out["minInsyncReplicas"] = self.min_isr
        if self.adding or self.removing:
            out.update(
                target=list(self.target), adding=list(self.adding), removing=list(self.removing)
            )
        if self.offsets is not None:
            out["highWatermark"] = self.offsets.high_watermark
            out["logEndOffsets"] = {str(b): o for b, o in self.offsets.log_end_offsets}
            out["leaderEpoch"] = self.offsets.leader_epoch
        if self.progress:
            out["caughtUp"] = {
                str(b): {"copiedBytes": int(c), "sizeBytes": s}
                for b, (c, s) in sorted(self.progress.items())
            }
        return out


@dataclass(frozen=True)
class Health:
    brokers: int
    offline_brokers: tuple[int, ...]
    topics: int
    partitions: int
    findings: tuple[PartitionHealth, ...]
    isr_known: bool = True
    throttles: tuple[Stale, ...] = ()
    draining: Mapping[int, int] = field(default_factory=dict)
    retired: tuple[int, ...] = ()

    def count(self, flag: str) -> int:
        return sum(1 for f in self.findings if flag in f.flags)

    def of(self, flag: str) -> list[PartitionHealth]:
        return [f for f in self.findings if flag in f.flags]

    @property
    def healthy(self) -> bool:
        return (
            not self.offline_brokers
            and not any(self.count(f) for f in PROBLEMS)
            and not self.harmful_throttles
            and not self.draining
        )

    @property
    def harmful_throttles(self) -> tuple[Stale, ...]:
        """Leftover throttles that throttle something (an empty list does not)."""
        return tuple(t for t in self.throttles if t.broker is not None or any(t.keys.values()))

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "isrKnown": self.isr_known,
            "brokers": self.brokers,
            "offlineBrokers": list(self.offline_brokers),
            "topics": self.topics,
            "partitions": self.partitions,
            # a flag as a key in the camelCase of every other key (``underMinIsr``); the
            # flags themselves, values, keep their names
            "counts": {camel(flag): self.count(flag) for flag in PROBLEMS + NOTES},
            "findings": [f.to_json() for f in self.findings],
            "throttlesLeft": [
                {"topic": t.topic, "broker": t.broker, "keys": dict(t.keys), "reason": t.reason}
                for t in self.harmful_throttles
            ],
            "decommissionedReplicas": {str(b): n for b, n in sorted(self.draining.items())},
            "retiredBrokers": list(self.retired),
        }


def assess(
    state: ClusterState,
    progress: Mapping[TopicPartition, Mapping[int, tuple[float, int]]] | None = None,
    *,
    decommission: Collection[int] = (),
) -> Health:
    """Everything worth reporting about ``state``. ``progress`` optionally gives, per
    partition and catching-up replica, (bytes copied, partition size) (the simulated cluster
    knows it; a real cluster's admin API does not expose LEOs). ``decommission``: the
    brokers cluster.yaml drains; a replica left on one is unhealthy. A drained broker that
    is down and holds no replica is *retired*, not offline: the decommission is complete. Kafka
    still lists it, fenced, in DescribeCluster until someone unregisters it
    (``kafka-cluster.sh unregister --id N``); no partition depends on it, so it does not make
    the cluster unhealthy."""
    online = state.online_broker_ids
    findings: list[PartitionHealth] = []
    partitions = 0
    isr_known = True
    for name in sorted(state.topics):
        topic = state.topics[name]
        configured = state.min_insync_replicas(topic.config)
        moves = state.reassignments.get(name, {})
        for pid in sorted(topic.partitions):
            partitions += 1
            p = topic.partitions[pid]
            if p.isr is None:
                isr_known = False
            move = moves.get(pid)
            min_isr = effective_min_isr(configured, len(p.replicas), state.version)
            flags = partition_flags(p, move, min_isr, online)
            if flags:
                findings.append(
                    PartitionHealth(
                        topic=name,
                        partition=pid,
                        replicas=p.replicas,
                        isr=p.isr if p.isr is not None else p.replicas,
                        leader=p.leader,
                        flags=flags,
                        min_isr=min_isr,
                        adding=move.adding if move else (),
                        removing=move.removing if move else (),
                        progress=(progress or {}).get(TopicPartition(name, pid), {}),
                        offsets=state.offsets_of(name, pid),
                    )
                )
    drained = set(decommission)
    draining: dict[int, int] = {}
    holding: set[int] = set()
    for topic in state.topics.values():
        for p in topic.partitions.values():
            holding.update(p.replicas)
            for b in drained.intersection(p.replicas):
                draining[b] = draining.get(b, 0) + 1
    down = sorted(b.id for b in state.brokers if not b.online)
    retired = tuple(b for b in down if b in drained and b not in holding)
    offline = tuple(b for b in down if b not in retired)
    return Health(
        throttles=tuple(stale_throttles(state)),
        draining=draining,
        retired=retired,
        brokers=len(state.brokers),
        offline_brokers=offline,
        topics=len(state.topics),
        partitions=partitions,
        findings=tuple(findings),
        isr_known=isr_known,
    )


def is_offline(p: PartitionState, online: Collection[int]) -> bool:
    """No leader, or a leader on a broker that is down."""
    return p.leader is None or p.leader not in online


def is_under_replicated(p: PartitionState, move: Reassignment | None) -> bool:
    """Fewer in-sync replicas than the replication factor, counted as Kafka counts it during
    a reassignment (``Partition.isUnderReplicated``: the replication factor of an ongoing
    reassignment is AR minus the removing replicas), so a move whose new replica is still
    copying is not under-replicated while the replicas it replaces are in sync."""
    removing = move.removing if move else ()
    return p.isr is not None and len(p.isr) < len(p.replicas) - len(removing)


def is_under_min_isr(p: PartitionState, min_isr: int | None) -> bool:
    """Fewer in-sync replicas than the effective min ISR: acks=all writes are refused."""
    return p.isr is not None and min_isr is not None and len(p.isr) < min_isr


def partition_flags(
    p: PartitionState, move: Reassignment | None, min_isr: int | None, online: Collection[int]
) -> tuple[str, ...]:
    """The flags of one partition (``PROBLEMS`` and ``NOTES``): the one rule ``status``,
    ``get partitions`` and the plan all use. ``min_isr``: the effective one."""
    flags: list[str] = []
    if p.isr is not None:
        if is_offline(p, online):
            flags.append("offline")
        if is_under_replicated(p, move):
            flags.append("under_replicated")
        if is_under_min_isr(p, min_isr):
            flags.append("under_min_isr")
    if p.leader is not None and p.replicas and p.leader != p.replicas[0]:
        flags.append("leader_off_preferred")
    if move is not None and (move.adding or move.removing):
        flags.append("reassigning")
        if any(b not in online for b in move.adding):
            flags.append("stalled")
    return tuple(flags)


def topic_flags(state: ClusterState, name: str) -> dict[int, tuple[str, ...]]:
    """``partition_flags`` of every partition of topic ``name`` in ``state``."""
    topic = state.topics[name]
    online = state.online_broker_ids
    configured = state.min_insync_replicas(topic.config)
    moves = state.reassignments.get(name, {})
    return {
        pid: partition_flags(
            p,
            moves.get(pid),
            effective_min_isr(configured, len(p.replicas), state.version),
            online,
        )
        for pid, p in topic.partitions.items()
    }
