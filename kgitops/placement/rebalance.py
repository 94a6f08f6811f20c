"""Minimal-movement target assignments for existing partitions.

Given a topic's live assignment and a goal, ``rebalance`` returns new replica lists for only
the partitions that must change, each with a human reason. Every replica that can stay,
stays; what the goal requires moves, and nothing else:

==================  ==========================================================================
goal                what changes
==================  ==========================================================================
drain [4]           exactly the replicas on broker 4, each replaced in its own slot
RF 2 -> 3           one replica added per partition, nothing removed; when the topic still
                    has its AdminUtils assignment, Kafka's placement with RF 3 (which only
                    appends: each placement is a prefix of the next) is used
RF 3 -> 2           one replica removed per partition, keeping the leader and the rack spread
rack repair         the fewest replicas moved to put a partition on min(RF, racks) racks
==================  ==========================================================================

This is goal 1 of a rebalance; ``kgitops.placement.balance`` then places the new replicas of
a drain over every eligible broker of the rack and, for ``plan --rebalance``, pursues the
other goals (per-topic spread, bytes, leaders).

New replicas go to online, non-drained brokers: first a rack the partition lacks, then the
broker with the fewest replicas (``load`` says what the rest of the cluster already puts on
each broker), then for a leader slot the fewest preferred leaders, then the lowest id. A
partition never ends on fewer racks than it had, unless too few racks are left. Work is
O(partitions x RF) with per-broker counters, plus a scan of the brokers per replica placed.

Example, brokers 0..3 with racks a, b, a, b and ``{0: (0, 1), 1: (1, 2)}``, drain broker 1::

    0: (0, 3)   "broker 1 is drained"      3 is in rack b like 1, and has no replica yet
    1: (3, 2)   "broker 1 is drained"      the slot keeps its place: 3 is the new leader
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from kgitops.errors import AssignmentError, InvalidReplicationFactor
from kgitops.model import Broker
from kgitops.placement.racks import RackRule
from kgitops.placement.reproduce import find_placement, place_segments


@dataclass(frozen=True, slots=True)
class Target:
    """A partition's new replica list (first = preferred leader) and why it changes."""

    replicas: tuple[int, ...]
    reason: str


class _State:
    """Per-broker replica and leader counters, and the placement rules that read them."""

    def __init__(
        self,
        brokers: Sequence[Broker],
        drain: Collection[int],
        load: Mapping[int, int] | None,
        leader_load: Mapping[int, int] | None,
    ) -> None:
        self.drained = frozenset(drain)
        self.eligible = sorted(b.id for b in brokers if b.online and b.id not in self.drained)
        self.eligible_set = frozenset(self.eligible)
        self.rule = RackRule.of(brokers, self.drained)
        self.rack_of: Mapping[int, str] = self.rule.rack_of
        self.racked = self.rule.applies
        self.replicas: dict[int, int] = dict(load or {})
        self.leaders: dict[int, int] = dict(leader_load or {})
        self._orders: dict[str | None, list[tuple[int, int]]] | None = None

    def racks(self, replicas: Sequence[int]) -> set[str]:
        return self.rule.racks(replicas)

    def bump(self, broker: int, delta: int) -> None:
        """Change a broker's replica count, keeping the by-count order of eligible brokers."""
        count = self.replicas.get(broker, 0)
        self.replicas[broker] = count + delta
        if self._orders is not None and broker in self.eligible_set:
            order = self._orders[self.rack_of.get(broker)]
            order.remove((count, broker))
            insort(order, (count + delta, broker))

    def move(self, replicas: list[int], slot: int, new: int) -> None:
        old = replicas[slot]
        self.bump(old, -1)
        self.bump(new, +1)
        if slot == 0:
            self.leaders[old] = self.leaders.get(old, 0) - 1
            self.leaders[new] = self.leaders.get(new, 0) + 1
        replicas[slot] = new

    def choose(self, others: Sequence[int], leader_slot: bool) -> int | None:
        """The best broker for a new replica next to ``others``, or None if none is left:
        by (adds no new rack, replica count, leader count for a leader slot, id)."""
        if self._orders is None:
            self._orders = {}
            for b in self.eligible:
                self._orders.setdefault(self.rack_of.get(b), []).append(
                    (self.replicas.get(b, 0), b)
                )
            for order in self._orders.values():
                order.sort()
        taken = set(others)
        present = self.racks(others) if self.racked else set()
        best: tuple[int, int, int] | None = None
        for new_rack in (True, False):
            for rack, order in self._orders.items():
                if (rack in present) == new_rack:
                    continue
                found = self._first(order, taken, leader_slot)
                if found is not None and (best is None or found < best):
                    best = found
            if best is not None:
                return best[2]
        return None

    def _first(
        self, order: list[tuple[int, int]], taken: set[int], leader_slot: bool
    ) -> tuple[int, int, int] | None:
        """The least loaded broker of one rack's by-count order not in ``taken``."""
        leaders = self.leaders
        found: tuple[int, int, int] | None = None
        for count, b in order:  # by count, then id: the first of equals wins
            if found is not None and (count > found[0] or not leader_slot):
                break
            if b in taken:
                continue
            lead = leaders.get(b, 0) if leader_slot else 0
            if found is None or lead < found[1]:
                found = (count, lead, b)
        return found


def _no_broker(partition: int, state: _State, rf: int) -> AssignmentError:
    return InvalidReplicationFactor(
        f"partition {partition}: no broker left for a replica: replication factor {rf} needs "
        f"{rf} brokers that are online and not drained, and only {len(state.eligible)} are "
        f"({', '.join(map(str, state.eligible)) or 'none'})."
    )


def rebalance(
    current: Mapping[int, Sequence[int]],
    brokers: Sequence[Broker],
    *,
    replication_factor: int | None = None,
    drain: Collection[int] = (),
    spread_racks: bool = True,
    load: Mapping[int, int] | None = None,
    leader_load: Mapping[int, int] | None = None,
    counted: bool = False,
    placement_brokers: Sequence[Broker] | None = None,
    rack_fine: dict[tuple[int, ...], bool] | None = None,
) -> dict[int, Target]:
    """Targets for the partitions of one topic that must change; the rest keep their replicas.

    ``current`` maps partition id to its live replicas (first = preferred leader).
    ``replication_factor`` is the new RF (None keeps each partition's own); ``drain`` lists
    brokers every replica must leave; ``spread_racks`` repairs partitions on fewer than
    min(RF, racks) racks (only when every broker has a rack). Evening out the cluster
    (``plan --rebalance``) is ``kgitops.placement.balance``. ``load`` / ``leader_load`` are
    the replicas / preferred leaders each broker carries for *other* topics, so that this
    topic's new replicas go where the cluster has room; ``counted``: they count ``current``'s
    replicas and preferred leaders too (not added again). ``placement_brokers`` is the broker
    list the topic was placed with (the lock's), for recognising its AdminUtils assignment;
    it defaults to ``brokers``. ``rack_fine`` remembers, per replica tuple, whether it keeps
    the rack rule of these ``brokers`` and ``drain``: a caller asking for topic after topic
    with the same two (one plan) passes the same dict, and each distinct tuple is judged once.
    """
    if replication_factor is not None and replication_factor < 1:
        raise InvalidReplicationFactor("Replication factor must be larger than 0.")
    state = _State(brokers, drain, load, leader_load)
    growing = replication_factor is not None and any(
        len(r) < replication_factor for r in current.values()
    )
    if growing and replication_factor is not None and replication_factor > len(state.eligible):
        raise InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{len(state.eligible)}."
        )
    drained = state.drained
    rack_ok: dict[tuple[int, ...], bool] = {} if rack_fine is None else rack_fine
    check_racks = spread_racks and state.racked
    todo: list[tuple[int, tuple[int, ...]]] = []
    for p, live in sorted(current.items()):
        before = live if type(live) is tuple else tuple(live)
        if (
            (replication_factor is None or len(before) == replication_factor)
            and drained.isdisjoint(before)
            and (not check_racks or _racks_fine(state, before, rack_ok))
        ):
            continue
        todo.append((p, before))
    if not todo:
        return {}

    if not counted:
        values = current.values()
        for b, n in Counter(chain.from_iterable(values)).items():
            state.replicas[b] = state.replicas.get(b, 0) + n
        for b, n in Counter(r[0] for r in values if r).items():
            state.leaders[b] = state.leaders.get(b, 0) + n

    extension = _admin_utils_extension(current, placement_brokers or brokers, replication_factor)

    result: dict[int, list[int]] = {}
    reasons: dict[int, list[str]] = {}
    rf_reason: dict[tuple[int, int, bool], str] = {}
    eligible_set = state.eligible_set
    for p, before in todo:
        reps = list(before)
        why: list[str] = []
        rf = replication_factor if replication_factor is not None else len(reps)
        if len(reps) > rf:
            _shrink(state, reps, rf)
            why.append(f"replication factor {len(before)} -> {rf}")
        if not drained.isdisjoint(reps):
            for slot, b in enumerate(reps):
                if b in drained:
                    others = reps[:slot] + reps[slot + 1 :]
                    new = state.choose(others, slot == 0)
                    if new is None:
                        raise _no_broker(p, state, len(reps))
                    state.move(reps, slot, new)
                    why.append(f"broker {b} is drained")
        if len(reps) < rf:
            have = len(reps)
            tail = extension.get(p) if extension is not None else None
            if tail is not None and tail[:have] == tuple(reps):
                added = [b for b in tail[have:] if b in eligible_set]
            else:
                added = []
            if have + len(added) != rf or (
                check_racks and not _racks_fine(state, (*reps, *added), rack_ok)
            ):
                added = []
            for b in added:
                reps.append(b)
                state.bump(b, +1)
            while len(reps) < rf:
                new = state.choose(reps, not reps)
                if new is None:
                    raise _no_broker(p, state, rf)
                reps.append(new)
                state.bump(new, +1)
                if len(reps) == 1:
                    state.leaders[new] = state.leaders.get(new, 0) + 1
            key = (len(before), rf, bool(added))
            text = rf_reason.get(key)
            if text is None:
                text = f"replication factor {len(before)} -> {rf}" + (
                    " (Kafka's placement, extended)" if added else ""
                )
                rf_reason[key] = text
            why.append(text)
        if check_racks and not _racks_fine(state, tuple(reps), rack_ok):
            repaired = _spread(state, reps, before)
            if repaired:
                why.append(repaired)
        if tuple(reps) != before:
            result[p] = reps
            reasons[p] = why

    return {
        p: Target(
            tuple(reps),
            reasons[p][0] if len(reasons[p]) == 1 else "; ".join(dict.fromkeys(reasons[p])),
        )
        for p, reps in sorted(result.items())
        if tuple(reps) != tuple(current[p])
    }


def _racks_fine(
    state: _State, replicas: tuple[int, ...], cache: dict[tuple[int, ...], bool]
) -> bool:
    """Whether the partition keeps the rack rule (placement/racks.py), cached per tuple."""
    fine = cache.get(replicas)
    if fine is None:
        fine = cache[replicas] = not state.rule.broken(replicas)
    return fine


def _admin_utils_extension(
    current: Mapping[int, Sequence[int]],
    brokers: Sequence[Broker],
    replication_factor: int | None,
) -> dict[int, tuple[int, ...]] | None:
    """Kafka's placement of this topic with the larger RF, when the live assignment is still
    exactly what AdminUtils gave it (at creation and at each partition increase)."""
    if replication_factor is None or not current:
        return None
    if any(len(r) >= replication_factor for r in current.values()):
        return None
    if replication_factor > len(brokers):
        return None
    segments = find_placement(current, brokers)
    if segments is None:
        return None
    return place_segments(brokers, segments, replication_factor)


def _shrink(state: _State, reps: list[int], rf: int) -> None:
    """Remove replicas down to ``rf``: drained ones first, then followers whose rack another
    replica also covers, from the most loaded broker (ties: lowest id); never the leader
    unless it is drained."""
    while len(reps) > rf:
        drained = [i for i, b in enumerate(reps) if b in state.drained]
        if drained:
            slot = drained[-1]
        else:
            rack_of = state.rack_of
            racks = [rack_of.get(b) for b in reps]
            best: tuple[int, int, int] | None = None
            slot = len(reps) - 1
            for i in range(1, len(reps)):  # the leader stays
                b = reps[i]
                rack = racks[i]
                alone = rack is not None and racks.count(rack) == 1
                key = (1 if alone else 0, -state.replicas.get(b, 0), b)
                if best is None or key < best:
                    best, slot = key, i
        b = reps.pop(slot)
        state.bump(b, -1)
        if slot == 0:
            state.leaders[b] = state.leaders.get(b, 0) - 1
            if reps:
                state.leaders[reps[0]] = state.leaders.get(reps[0], 0) + 1


def _spread(state: _State, reps: list[int], before: tuple[int, ...]) -> str:
    """Move the fewest replicas so the partition covers min(RF, racks) racks; a replica this
    plan adds anyway moves before one that holds data."""
    racks = state.racks(reps)
    need = state.rule.needed(reps, racks)
    if len(racks) >= need:
        return ""
    had = len(racks)
    while len(racks) < need:
        per_rack: dict[str, int] = {}
        for b in reps:
            if b in state.rack_of:
                per_rack[state.rack_of[b]] = per_rack.get(state.rack_of[b], 0) + 1
        best: tuple[int, int, int, int] | None = None
        slot = -1
        for i, b in enumerate(reps):
            if per_rack.get(state.rack_of.get(b, ""), 0) < 2:
                continue
            key = (1 if i == 0 else 0, 1 if b in before else 0, -state.replicas.get(b, 0), b)
            if best is None or key < best:
                best, slot = key, i
        if slot < 0:
            break
        others = reps[:slot] + reps[slot + 1 :]
        new = state.choose(others, slot == 0)
        if new is None or state.rack_of[new] in state.racks(others):
            break
        state.move(reps, slot, new)
        racks = state.racks(reps)
    return f"the partition is on {had} rack(s) and can be on {need}"
