"""The replication model behind the simulated cluster: ISR, leaders, catch-up over time.

Seed 003's vocabulary: a partition's assigned replicas (AR) are its in-sync replicas (ISR)
plus the out-of-sync ones (OSR); the leader is an ISR member; a follower leaves the ISR when
it stops fetching (its broker fails) and joins it again once it has copied the leader's log.

The rules, as Kafka's KRaft controller applies them:

- leader = the first replica, in assignment order, that is in the ISR and online;
- a failed broker leaves every ISR, except, without ELR, the last ISR member (Kafka never
  empties an ISR then): the partition is offline (no leader) until that broker returns,
  because unclean leader election is off; with ELR (KIP-966) the ISR may empty and the
  replicas that left it below min.insync.replicas are eligible leaders (``Part.elr``);
- during a reassignment the assigned replicas are ``target + removing``; the ``adding`` ones
  copy the partition (``size`` bytes) from the leader and join the ISR; when every target
  replica is in the ISR the reassignment completes: the removing replicas leave, and if the
  leader was one of them the first target replica in the ISR becomes leader.

Catch-up speed. Every out-of-sync replica on an online broker whose partition has a leader
fetches at a rate shared equally among the fetches of its broker:

- ``network`` bytes/s per destination broker (unthrottled);
- if the replica is listed in the topic's ``follower.replication.throttled.replicas``
  (``partition:broker`` or ``*``) and its broker has ``follower.replication.throttled.rate``,
  that rate, shared among the throttled fetches into that broker;
- if the leader is listed in ``leader.replication.throttled.replicas`` and the leader's broker
  has ``leader.replication.throttled.rate``, that rate, shared among the throttled fetches
  served by that broker;
- a throttled rate is what Kafka's quota lets through of it on average, 23/24 of the
  configured figure (``versionrules.throttle_delivered``; the plan's ETA assumes the same).

The in-sync followers of a throttled partition are charged to the same quotas: they are never
held back (ReplicaManager.shouldLeaderThrottle and ReplicaFetcherThread.shouldFollowerThrottle
skip in-sync replicas, "to avoid ISR thrashing"), but the bytes they fetch -- the partition's
write rate each -- are recorded against ReplicationQuotaManager's rate all the same. So what
is left for catching up is ``rate - in-sync traffic``, and nothing when writes use it all: at
20 MB/s of writes, RF 3 and a 30 MB/s throttle, the leader's two in-sync followers take
40 MB/s of a 30 MB/s quota and a new replica never catches up (docs/real-clusters.md).

Time advances event by event (to the next replica that finishes), so the clock is exact:
a 1 GB partition moving under a 10 MB/s throttle (9.58 MB/s delivered) joins the ISR after
exactly 104.3 s.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)
from kgitops.plan import isrlag
from kgitops.versionrules import (
    DEFAULT_VERSION,
    KafkaVersion,
    effective_min_isr,
    hw_frozen_under_min_isr,
    throttle_delivered,
)

NETWORK_BYTES_PER_SEC = 100_000_000


#: The size of one simulated record: ``simulate produce`` writes one per RECORD_BYTES.
RECORD_BYTES = 1024


@dataclass(frozen=True)
class Loss:
    """What an election threw away: ``kind`` is ``unclean`` or ``elr`` (an eligible leader
    replica that lacked records written while the ISR was below min ISR)."""

    kind: str
    leader: int
    records: int
    bytes: int


@dataclass
class Part:
    """One partition, mutable. ``replicas`` is AR (target + removing while reassigning);
    ``copied`` holds, for each out-of-sync replica, the bytes it has of the leader's log."""

    replicas: list[int]
    isr: list[int]
    leader: int | None
    size: int = 0
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    copied: dict[int, float] = field(default_factory=dict)
    elr: list[int] = field(default_factory=list)
    min_isr_config: int = 1  # the topic's min.insync.replicas (its own, else the brokers')
    version: KafkaVersion = DEFAULT_VERSION  # the Kafka whose rules apply
    elr_enabled: bool = False
    end: float = 0.0  # the leader's log end offset (LEO), in records of RECORD_BYTES
    hw: float = 0.0  # the high watermark: what consumers can read up to
    epoch: int = 0  # the leader epoch: +1 at every leader change (bump_epoch)
    epoch_leader: int | None = None  # the leader the epoch was counted for
    losses: list[Loss] = field(default_factory=list)  # what elections threw away, unread

    def __post_init__(self) -> None:
        self.epoch_leader = self.leader

    @property
    def min_isr(self) -> int:
        """The effective min ISR (``versionrules.effective_min_isr``: from Kafka 3.7 at most
        the replica count, as ``Partition.effectiveMinIsr`` and the controller's
        ``getTopicEffectiveMinIsr`` cap it)."""
        return effective_min_isr(self.min_isr_config, len(self.replicas), self.version)

    @property
    def target(self) -> list[int]:
        return [r for r in self.replicas if r not in self.removing]

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def lagging(self) -> bool:
        return len(self.isr) < len(self.replicas)

    def leo(self, broker: int) -> int:
        """``broker``'s log end offset: the leader's own; for a replica whose copy is being
        tracked (out of sync, or in the ISR but stopped), the leader's minus the records of
        the bytes it lacks (the newest ones, RECORD_BYTES each), never below 0; else (an
        in-sync follower: it has fetched everything) the leader's."""
        if broker == self.leader or (broker in self.isr and broker not in self.copied):
            return int(self.end)
        lacking = max(0.0, self.size - self.copied.get(broker, 0.0))
        return max(0, math.floor(self.end - lacking / RECORD_BYTES + 1e-6))

    def under_min_isr(self) -> bool:
        return len(self.isr) < self.min_isr

    def update_hw(self) -> None:
        """``Partition.maybeIncrementLeaderHW``: the smallest LEO over the ISR, never lower;
        it does not move without a leader, nor (from Kafka 3.7,
        ``versionrules.hw_frozen_under_min_isr``) while the ISR is below min ISR."""
        top = int(self.end)
        if self.leader is None or self.hw >= top:
            return  # no leader, or nothing above the HW: the common case, kept cheap
        if self.under_min_isr() and hw_frozen_under_min_isr(self.version):
            return
        if self.copied:
            top = min((self.leo(b) for b in self.isr), default=0)
        self.hw = max(self.hw, float(top))

    def bump_epoch(self) -> None:
        """A new leader (or none) since the epoch was counted: KRaft's PartitionChangeRecord
        with a leader change raises the leader epoch by one (``PartitionRegistration.merge``)."""
        if self.leader != self.epoch_leader:
            self.epoch += 1
            self.epoch_leader = self.leader

    def truncate_to(self, leader: int, kind: str) -> None:
        """``leader`` takes over with the log it holds: the newer records (and their bytes)
        are gone -- from the other replicas too, once they follow it. Recorded in ``losses``
        when anything is lost."""
        kept_bytes = min(float(self.size), self.copied.get(leader, float(self.size)))
        kept_end = self.leo(leader)
        if kind == "elr":  # an eligible leader replica holds the HW (KIP-966): never below
            kept_end = min(int(self.end), max(kept_end, int(self.hw)))
        lost_bytes = int(self.size - kept_bytes)
        lost_records = int(self.end) - kept_end
        if lost_bytes > 0 or lost_records > 0:
            self.losses.append(Loss(kind, leader, lost_records, lost_bytes))
        self.size = int(kept_bytes)
        self.end = float(kept_end)
        self.hw = min(self.hw, self.end)
        self.copied = {b: min(v, kept_bytes) for b, v in self.copied.items() if b != leader}

    def order_isr(self) -> None:
        pos = {b: i for i, b in enumerate(self.replicas)}
        self.isr.sort(key=lambda b: pos.get(b, len(pos)))

    def elect(self, online: frozenset[int] | set[int]) -> None:
        """Keep a live leader in the ISR; else the first ISR replica in assignment order;
        else, with ELR and an empty ISR, the first live eligible leader replica, which
        becomes the ISR (``PartitionChangeBuilder.isValidNewLeader`` / ``tryElection``)."""
        if self.leader is not None and self.leader in self.isr and self.leader in online:
            return
        self.leader = next((b for b in self.replicas if b in self.isr and b in online), None)
        if self.leader is None and not self.isr and self.elr_enabled:
            chosen = next((b for b in self.replicas if b in self.elr and b in online), None)
            if chosen is not None:
                self.truncate_to(chosen, "elr")
                self.leader = chosen
                self.isr = [chosen]
                self.elr = [b for b in self.elr if b != chosen]
                self.copied.pop(chosen, None)

    def isr_changed(self, before: Sequence[int]) -> None:
        """Keep the eligible leader replicas as KRaft does after an ISR change
        (``PartitionChangeBuilder.maybePopulateTargetElr``): with an ISR of at least
        min.insync.replicas the ELR is empty; below it, the members that left the ISR join
        the ELR (the high watermark cannot have advanced without them). The leader then
        reconsiders its high watermark (``Partition.maybeIncrementLeaderHW``)."""
        if not self.elr_enabled or len(self.isr) >= self.min_isr:
            self.elr = []
        else:
            keep = (set(self.elr) | set(before)) - set(self.isr)
            self.elr = [b for b in self.replicas if b in keep]
        self.update_hw()

    def leave_isr(self, broker: int) -> None:
        """``broker`` is fenced: it leaves the ISR. Without ELR Kafka never empties an ISR
        (the last member stays and the partition goes offline); with ELR it may, and the
        members that left are the eligible leaders (``handleBrokerFenced``)."""
        if broker not in self.isr or (len(self.isr) == 1 and not self.elr_enabled):
            return
        before = list(self.isr)
        self.isr.remove(broker)
        self.copied.setdefault(broker, float(self.size))  # a stopped one has less
        self.isr_changed(before)


class Topic(NamedTuple):
    """One simulated topic: its partitions, in partition order, and its topic configs."""

    parts: list[Part]
    config: dict[str, str]


def follower_demand(
    topics: Mapping[str, Topic],
    serving: Collection[int],
    growth: Mapping[str, Sequence[float]],
) -> dict[int, float]:
    """Per broker, the bytes/s its in-sync followers must fetch to stay in sync: the write
    rate of every written partition it follows in the ISR whose leader serves
    (``isrlag.follower_demand``, the rule the plan's ISR_PRESSURE asks too)."""
    return isrlag.follower_demand(
        (part.leader, part.isr, rate)
        for name, rates in growth.items()
        for part, rate in zip(topics[name].parts, rates, strict=True)
        if part.leader in serving
    )


def drop_lagging(
    topics: Mapping[str, Topic],
    brokers: Mapping[int, float],
    growth: Mapping[str, Sequence[float]],
    behind: float,
) -> int:
    """The leader's ISR shrink (``Partition.maybeShrinkIsr``): each of ``brokers`` has not
    caught up with a written partition for ``replica.lag.time.max.ms`` (``behind`` seconds):
    it leaves the ISR of each, lacking its share (``brokers[b]``) of what was written
    meanwhile (1: it fetched nothing, a stalled broker; else the part its network could not
    carry). One ISR change per partition, as the leader sends one AlterPartition (so the ELR
    gets every replica that left). Returns how many replicas left."""
    dropped = 0
    for name, rates in growth.items():
        for part, rate in zip(topics[name].parts, rates, strict=True):
            gone = [b for b in part.isr if b in brokers and b != part.leader]
            if rate <= 0 or not gone:
                continue
            before = list(part.isr)
            for b in gone:
                part.isr.remove(b)
                part.copied.setdefault(b, max(0.0, part.size - rate * behind * brokers[b]))
            part.isr_changed(before)
            dropped += len(gone)
    return dropped


def reassign(part: Part, target: Sequence[int], online: frozenset[int]) -> None:
    """Start (or re-target) moving ``part`` to ``target`` as KRaft does
    (``ReplicationControlManager.changePartitionReassignment`` with
    ``PartitionReassignmentReplicas``): the difference is taken against the *current full*
    replica list, with no revert first; ``removing`` and ``adding`` are sorted (Java TreeSet)
    and AR becomes ``target + removing``. An empty new ``adding`` or ``removing`` leaves the
    old one in place (the builder only overrides non-empty lists). What needs no copying (a
    reorder, a pure removal of in-sync replicas) completes at once.

    Worked example: [3, 1] -> [4, 5] gives AR [4, 5, 1, 3], adding [4, 5], removing [1, 3];
    re-targeting that move to [1, 2] gives AR [1, 2, 3, 4, 5], adding [2], removing
    [3, 4, 5] (4 and 5, half copied, are dropped)."""
    current = list(part.replicas)
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    part.replicas = [*target, *removing]
    if removing:
        part.removing = removing
    if adding:
        part.adding = adding
    part.removing = [b for b in part.removing if b in part.replicas]
    part.adding = [b for b in part.adding if b in part.replicas]
    part.copied = {b: v for b, v in part.copied.items() if b in part.replicas}
    for b in part.adding:
        if b not in part.isr:
            part.copied.setdefault(b, 0.0)
    part.isr = [b for b in part.isr if b in part.replicas]
    part.order_isr()
    settle([part], online)


def revert_needs_unclean(part: Part) -> bool:
    """Whether cancelling would need an unclean election (``PartitionReassignmentRevert``):
    every in-sync replica is one the reassignment was adding."""
    return not [b for b in part.isr if b not in part.adding]


def revert(part: Part, online: frozenset[int]) -> None:
    """Cancel a reassignment as KRaft does (``PartitionReassignmentRevert``): AR minus the
    adding replicas, in AR's order (so the removing ones come back sorted); the ISR minus
    the adding replicas, or, when that leaves it empty, the first remaining replica (an
    unclean election: the caller refuses it unless the topic allows unclean elections)."""
    adding = set(part.adding)
    original = [b for b in part.replicas if b not in adding]
    for b in adding:
        part.copied.pop(b, None)
    before = list(part.isr)
    part.replicas = original
    part.isr = [b for b in part.isr if b not in adding]
    if not part.isr:
        part.isr = [original[0]]
    part.elr = [b for b in part.elr if b in original]
    part.isr_changed(before)
    part.adding = []
    part.removing = []
    part.order_isr()
    if part.leader not in part.isr:
        part.leader = None
    part.elect(online)


def elect_unclean(part: Part, online: frozenset[int]) -> bool:
    """``unclean.leader.election.enable``: an offline partition takes its first online
    replica as leader although it is out of sync. The bytes that replica lacks are lost: the
    log is cut to what it holds, and the ISR restarts from it alone. True if it elected."""
    if part.leader is not None or any(b in online for b in part.isr):
        return False
    if not part.isr and any(b in online for b in part.elr):
        return False  # an eligible leader replica is a clean choice (elect does it)
    leader = next((b for b in part.replicas if b in online), None)
    if leader is None:
        return False
    part.copied.setdefault(leader, 0.0)
    part.truncate_to(leader, "unclean")
    part.isr = [leader]
    part.leader = leader
    part.elr = []  # an unclean election clears the ELR (PartitionChangeBuilder)
    for b in part.replicas:
        if b != leader:
            part.copied.setdefault(b, float(part.size))
    return True


@dataclass
class Flow:
    """One replica catching up: ``part``'s replica on ``broker`` fetching from ``leader``."""

    key: tuple[str, int]
    part: Part
    broker: int
    leader: int
    follower_throttled: bool
    leader_throttled: bool
    rate: float = 0.0

    @property
    def left(self) -> float:
        return max(0.0, self.part.size - self.part.copied.get(self.broker, 0.0))


def throttled(config: Mapping[str, str], name: str, partition: int, broker: int) -> bool:
    """Whether ``partition:broker`` is listed in a throttled-replicas config (or ``*``)."""
    value = config.get(name, "").strip()
    if not value:
        return False
    if value == "*":
        return True
    return f"{partition}:{broker}" in {item.strip() for item in value.split(",")}


def settle(parts: Iterable[Part], online: frozenset[int]) -> None:
    """Apply what needs no time: caught-up replicas join the ISR, reassignments whose target
    replicas are all in sync complete, and leaderless partitions elect a leader."""
    for part in parts:
        part.elect(online)
        if part.leader is not None:
            before = list(part.isr)
            for b in part.replicas:
                if b not in part.isr and b in online and part.copied.get(b, 0.0) >= part.size:
                    part.isr.append(b)
                    part.copied.pop(b, None)
            part.order_isr()
            if part.isr != before:
                part.isr_changed(before)
        if part.reassigning:
            complete(part, online)
        part.elect(online)
        part.update_hw()


def complete(part: Part, online: frozenset[int]) -> bool:
    """Finish a reassignment if KRaft would (``maybeCompleteReassignment``): without the
    removing replicas, the ISR is not empty and holds every remaining replica."""
    removing = set(part.removing)
    target = [b for b in part.replicas if b not in removing]
    isr = [b for b in part.isr if b not in removing]
    if not target or not isr or not all(b in isr for b in target):
        return False
    before = list(part.isr)
    part.replicas = target
    part.isr = isr
    part.elr = [b for b in part.elr if b in target]
    part.isr_changed(before)
    for b in removing:
        part.copied.pop(b, None)
    part.adding = []
    part.removing = []
    part.order_isr()
    if part.leader not in target:
        part.leader = None
    part.elect(online)
    return True


def in_sync_charges(
    topics: Mapping[str, Topic],
    online: frozenset[int],
    growth: Mapping[str, Sequence[float]],
) -> tuple[dict[int, float], dict[int, float]]:
    """The bytes/s in-sync followers of throttled partitions take from the quotas: per
    leader broker (leader side) and per follower broker (follower side). ``growth`` is the
    write rate of each partition of each written topic (``write_rates``)."""
    leader: dict[int, float] = {}
    follower: dict[int, float] = {}
    for name, rates in growth.items():
        parts, config = topics[name]
        if not (config.get(THROTTLE_LEADER_REPLICAS) or config.get(THROTTLE_FOLLOWER_REPLICAS)):
            continue
        for pid, part in enumerate(parts):
            rate = rates[pid]
            if part.leader is None or rate <= 0:
                continue
            followers = [b for b in part.isr if b != part.leader and b in online]
            if throttled(config, THROTTLE_LEADER_REPLICAS, pid, part.leader):
                leader[part.leader] = leader.get(part.leader, 0.0) + rate * len(followers)
            for b in followers:
                if throttled(config, THROTTLE_FOLLOWER_REPLICAS, pid, b):
                    follower[b] = follower.get(b, 0.0) + rate
    return leader, follower


@dataclass(frozen=True)
class Producer:
    """``simulate produce TOPIC RATE --acks A --keys K``: ``rate`` bytes/s sent; ``acks`` is
    ``all``, ``1`` or ``0``; ``keys`` ``none`` (keyless records) or ``uniform`` (keys
    hashing evenly over every partition)."""

    rate: float
    acks: str = "all"
    keys: str = "none"


def write_rates(
    parts: Sequence[Part], producer: Producer, serving: Collection[int] | None = None
) -> tuple[list[float], float]:
    """The bytes/s each partition's leader appends, and the bytes/s refused, as Kafka's
    producer and brokers decide:

    - keyless records go to the partitions that have a leader (the built-in partitioner
      skips the others: ``BuiltInPartitioner``, ``partitionsWithLeader``), evenly; keyed
      ones to every partition, and those for a partition without a leader fail;
    - acks=all to a partition whose ISR is below the effective min ISR is refused
      (``Partition.appendRecordsToLeader``: NOT_ENOUGH_REPLICAS): nothing is written;
      acks=1 and acks=0 are appended all the same (readable once the HW passes them);
    - a leader on a broker that has stopped but is not fenced yet (not in ``serving``)
      still is the leader clients are told of: its records fail too.

    >>> parts = [Part([1, 2], [1, 2], 1, min_isr_config=2), Part([2, 1], [2], 2, min_isr_config=2),
    ...          Part([1, 2], [1], None)]
    >>> write_rates(parts, Producer(300.0))
    ([150.0, 0.0, 0.0], 150.0)
    >>> write_rates(parts, Producer(300.0, acks="1"))
    ([150.0, 150.0, 0.0], 0.0)
    >>> write_rates(parts, Producer(300.0, acks="1", keys="uniform"))
    ([100.0, 100.0, 0.0], 100.0)
    """
    if producer.rate <= 0 or not parts:
        return [0.0] * len(parts), 0.0
    if producer.keys == "none":
        targets = [i for i, p in enumerate(parts) if p.leader is not None]
    else:
        targets = list(range(len(parts)))
    out = [0.0] * len(parts)
    if not targets:
        return out, producer.rate
    share = producer.rate / len(targets)
    refused = 0.0
    for i in targets:
        p = parts[i]
        stopped = serving is not None and p.leader not in serving
        if p.leader is None or stopped or (producer.acks == "all" and p.under_min_isr()):
            refused += share
        else:
            out[i] = share
    return out, refused


def flows(
    topics: Mapping[str, Topic],
    online: frozenset[int],
    broker_configs: Mapping[int, Mapping[str, str]],
    network: float,
    charges: tuple[Mapping[int, float], Mapping[int, float]] = ({}, {}),
) -> list[Flow]:
    """Every replica fetching now, with its rate (see the module docstring); ``charges`` is
    what in-sync traffic takes from each broker's leader and follower quotas."""
    out: list[Flow] = []
    for name, (parts, config) in topics.items():
        for pid, part in enumerate(parts):
            if part.leader is None or part.leader not in online or not part.lagging():
                continue
            for b in part.replicas:
                if b in part.isr or b not in online:
                    continue
                out.append(
                    Flow(
                        key=(name, pid),
                        part=part,
                        broker=b,
                        leader=part.leader,
                        follower_throttled=throttled(config, THROTTLE_FOLLOWER_REPLICAS, pid, b),
                        leader_throttled=throttled(
                            config, THROTTLE_LEADER_REPLICAS, pid, part.leader
                        ),
                    )
                )
    into: dict[int, int] = {}
    into_throttled: dict[int, int] = {}
    out_throttled: dict[int, int] = {}
    for f in out:
        into[f.broker] = into.get(f.broker, 0) + 1
        if f.follower_throttled:
            into_throttled[f.broker] = into_throttled.get(f.broker, 0) + 1
        if f.leader_throttled:
            out_throttled[f.leader] = out_throttled.get(f.leader, 0) + 1
    leader_charge, follower_charge = charges
    for f in out:
        rate = network / into[f.broker]
        share = throttle_delivered(f.part.version)
        follower_rate = _rate(broker_configs.get(f.broker, {}), THROTTLE_FOLLOWER_RATE)
        if f.follower_throttled and follower_rate is not None:
            left = max(0.0, follower_rate * share - follower_charge.get(f.broker, 0.0))
            rate = min(rate, left / into_throttled[f.broker])
        leader_rate = _rate(broker_configs.get(f.leader, {}), THROTTLE_LEADER_RATE)
        if f.leader_throttled and leader_rate is not None:
            left = max(0.0, leader_rate * share - leader_charge.get(f.leader, 0.0))
            rate = min(rate, left / out_throttled[f.leader])
        f.rate = rate
    return out


def _rate(config: Mapping[str, str], name: str) -> float | None:
    value = config.get(name)
    if value is None:
        return None
    try:
        return float(int(value))
    except ValueError:
        return None


def advance(
    topics: Mapping[str, Topic],
    online: frozenset[int],
    broker_configs: Mapping[int, Mapping[str, str]],
    seconds: float,
    network: float = NETWORK_BYTES_PER_SEC,
    produce: Mapping[str, Producer] | None = None,
    *,
    until_event: bool = False,
    refused: dict[str, float] | None = None,
    serving: frozenset[int] | None = None,
) -> float:
    """Let ``seconds`` pass: replicas copy at their rates, join the ISR when done, and
    reassignments complete. ``produce`` gives topics a producer (``write_rates`` says which
    partitions take its records): their logs grow (bytes and offsets, one record per
    RECORD_BYTES), so a replica catches up only if it copies faster than the partition
    grows, and one whose broker is down falls further behind; the high watermark follows
    (``Part.update_hw``). ``refused`` adds up the bytes each topic's producer had refused.
    ``serving``: the brokers that work (default ``online``); a stopped one not fenced yet is
    online (still a leader, still in ISRs) but neither serves writes nor fetches.
    Returns the time simulated: ``seconds``, or with ``until_event`` the time of the first
    copy that completes (a replica may then join an ISR, a reassignment end), if earlier.
    The loop takes one step per completed copy or ISR change, never one per unit of time."""
    writes = {t: p for t, p in (produce or {}).items() if p.rate > 0 and t in topics}
    working = online if serving is None else serving
    all_parts = [p for parts, _ in topics.values() for p in parts]
    settle(all_parts, online)
    lagging = {name: t for name, t in topics.items() if any(p.lagging() for p in t.parts)}
    remaining = max(0.0, seconds)
    while remaining > 0:
        growth: dict[str, list[float]] = {}
        lost: dict[str, float] = {}
        for t, producer in writes.items():
            growth[t], lost[t] = write_rates(topics[t].parts, producer, working)
        charges = in_sync_charges(topics, working, growth) if growth else ({}, {})
        current = [
            f
            for f in flows(lagging, working, broker_configs, network, charges)
            if f.rate > 0 and f.left > 0
        ]
        if not current and not writes:
            break
        grows = [growth[f.key[0]][f.key[1]] if f.key[0] in growth else 0.0 for f in current]
        ends = [f.left / (f.rate - g) for f, g in zip(current, grows, strict=True) if f.rate > g]
        step = min([remaining, *ends])
        for f in current:
            f.part.copied[f.broker] = f.part.copied.get(f.broker, 0.0) + f.rate * step
        for name, rates in growth.items():
            for part, rate in zip(topics[name].parts, rates, strict=True):
                if rate > 0:
                    part.size = round(part.size + rate * step)
                    part.end += rate * step / RECORD_BYTES
                    part.update_hw()
            if refused is not None and lost[name] > 0:
                refused[name] = refused.get(name, 0.0) + lost[name] * step
        for f in current:
            # float dust must not leave a replica a byte short forever
            if f.part.copied[f.broker] >= f.part.size - 1:
                f.part.copied[f.broker] = float(f.part.size)
        remaining -= step
        settle({id(f.part): f.part for f in current}.values(), online)
        if until_event and remaining > 0:
            return seconds - remaining
    return seconds
