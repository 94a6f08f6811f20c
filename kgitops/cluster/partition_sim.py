"""The simulated cluster's partitions and the controller's rules for them: ISR, leaders,
elections, reassignments (``replication.py`` lets time pass over them: catch-up, traffic).

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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kgitops.versionrules import (
    DEFAULT_VERSION,
    KafkaVersion,
    effective_min_isr,
    hw_frozen_under_min_isr,
)

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
