"""``plan --rebalance``: the cluster-wide goals, in order, and the fewest bytes that reach them.

The goals (each rack-aware: a move never leaves a partition on fewer racks):

1. the rack rule holds and drained brokers empty -- ``kgitops.placement.rebalance`` does this
   per topic before ``balance`` runs; its new replicas are *placed* here (goal 2's quota, then
   bytes), so a drain spreads over every eligible broker of the rack;
2. each topic is spread evenly: per topic, replicas per broker and preferred leaders per broker
   within the even share ``floor(T / N)`` .. ``ceil(T / N)`` (per rack when every partition
   must span every rack, RF >= racks: then a rack's share is fixed and is spread over its
   brokers);
3. bytes per broker within 10 % of the mean (replica counts when a size is unknown), by moves
   the per-topic shares leave room for, then by swaps (two replicas change places between a
   heavy and a light broker: counts stay, bytes even out) where the shares block every move;
   ``balance`` returns where it ended (``Band``: the plan's ``BALANCE_BAND_UNREACHED``);
4. preferred leaders balanced cluster-wide (reordering replicas: no data moves);
5. the fewest bytes: a replica this plan places anyway moves for free and is used first; a
   paid move is chosen by the size that brings the receiver closest to the mean, so a new
   empty broker takes what the mean needs and no more; a move that ends where it started is
   no move. Every move carries the goal it serves.

Scale-out and scale-in are the same: a new empty broker is below every topic's share, a
drained broker's replicas have to be placed; both are filled by goals 2 and 3.

Modes: ``all`` (``--rebalance``: goals 2-4), ``placed`` (a plan without ``--rebalance``: only
replicas goal 1 placed are moved again, to where goals 2 and 3 want them), ``leaders``
(``--leaders``: goals 2 and 4 for preferred leaders only, no data moves).

Example, brokers 0, 1 and 2 (2 is new, all in rack a), one topic ``t`` of 3 partitions of
100 bytes on brokers 0 and 1: the even share is 2 replicas per broker and 1 preferred leader::

    t-0: (0, 1) -> (1, 2)   goal 2: broker 0 held 3 replicas, 2 none (then 1 takes the lead)
    t-1: (1, 0) -> (2, 0)   goal 2: broker 1 held 3 replicas
    t-2: (0, 1)             stays: 200 bytes moved, the least that gives broker 2 its share

Work: O(replicas) to index, then per move O(log n) plus a short scan. The model (layouts,
counters, indexes) is ``kgitops.placement.layout``; the leader goals are
``kgitops.placement.leaders``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from kgitops.model import Broker
from kgitops.placement.layout import (
    P_BITS,
    P_MASK,
    PAID,
    S_MASK,
    Cluster,
    Topic,
    TopicLayout,
    move_replica,
)
from kgitops.placement.leaders import even_leaders, spread_leaders
from kgitops.placement.swaps import SWAP_PASSES, Budget, outside_band, swap_bytes

Mode = Literal["all", "placed", "leaders"]
PICK_TRIES = 512
"""How many of a donor's replicas a move looks at before trying another donor."""
BYTES_TOLERANCE = 0.10
RECEIVER_AIM = 0.92
"""A receiver is filled towards this share of the mean: inside goal 3's band with a margin,
and no further (every byte above it would be a byte moved that no goal asks for)."""


@dataclass(frozen=True)
class Band:
    """Goal 3 as the balancer left it: each eligible broker's bytes (its replica count when a
    size is unknown, ``by_count``) against the mean +- ``BYTES_TOLERANCE``. ``outside``: the
    brokers the moves could not bring inside (a partition larger than the band, every
    candidate move blocked by a topic's even share or the rack rule)."""

    loads: Mapping[int, int]
    mean: float
    by_count: bool

    @property
    def low(self) -> float:
        return (1 - BYTES_TOLERANCE) * self.mean

    @property
    def high(self) -> float:
        return (1 + BYTES_TOLERANCE) * self.mean

    @property
    def outside(self) -> dict[int, int]:
        if self.mean <= 0:
            return {}
        return {b: v for b, v in sorted(self.loads.items()) if not self.low <= v <= self.high}


def balance(
    layouts: Sequence[TopicLayout],
    brokers: Sequence[Broker],
    *,
    drain: Collection[int] = (),
    mode: Mode = "all",
    fixed: Sequence[tuple[Sequence[int], int | None]] = (),
    swaps: bool = True,
) -> Band | None:
    """Move replicas and preferred leaders of ``layouts`` (in place; reasons in each layout's
    ``reasons``) towards goals 2-4. ``fixed``: (replicas, size) of every other partition the
    cluster holds (other topics, new topics), counted but never moved. ``swaps``: goal 3 may
    exchange two replicas when single moves stop outside the band (False: single moves only,
    for comparison). Returns where goal 3 ended (mode ``all``, two eligible brokers or more),
    else None."""
    by_count = any(s is None for lay in layouts for s in lay.sizes.values()) or any(
        s is None for _, s in fixed
    )
    cluster = Cluster(brokers, drain, by_count)
    if not cluster.eligible:
        return None
    for reps, size in fixed:
        for i, b in enumerate(reps):
            load = cluster.load.get(b)
            if load is not None:
                load.bytes += cluster.weight(size)
                load.replicas += 1
                load.leaders += i == 0
    topics = [Topic(lay, cluster) for lay in layouts]
    n = len(cluster.eligible)
    cluster.mean = sum(v.bytes for v in cluster.load.values()) / n
    cluster.replicas_mean = sum(v.replicas for v in cluster.load.values()) / n
    movable = [t for t in topics if t.layout.movable]
    if mode != "leaders":
        for t in movable:
            _place_fresh(t)
        if mode == "all":
            for t in movable:
                _spread_topic(t)
            _even_bytes(cluster, movable)
            if swaps and not by_count:
                budget = Budget()
                for _ in range(SWAP_PASSES):
                    if not swap_bytes(cluster, movable, BYTES_TOLERANCE, budget):
                        break
                    if not _even_bytes(cluster, movable):
                        break
    if mode != "placed":
        for t in movable:
            spread_leaders(t)
        even_leaders(cluster, movable)
    if mode != "all" or n < 2:
        return None
    loads = {b: cluster.load[b].bytes for b in cluster.eligible}
    return Band(loads, sum(loads.values()) / n, by_count)


# ------------------------------------------------------------------------ goal 2


def _place_fresh(topic: Topic) -> None:
    """Replicas this plan places anyway (drains, RF changes, rack repair) go where the topic's
    share and then the bytes want them: moving them again copies nothing more."""
    cluster, layout = topic.cluster, topic.layout
    count, shares, load = topic.count, topic.shares, cluster.load
    only = layout.replaceable
    for p in sorted(layout.replicas) if only is None else sorted(set(only)):
        if p in layout.frozen or p not in layout.replicas:
            continue
        reps = layout.replicas[p]
        for slot, b in enumerate(reps):
            if topic.paid(p, b) or b not in cluster.eligible_set:
                continue
            # a receiver's key: below its share first, then the fewest bytes, then the id
            # (every key ends with its broker's id: the least names one broker)
            keys = [
                (count[n] - shares[n][1], load[n].bytes, n)
                for n in cluster.receivers(reps, slot, layout.rack_aware)
            ]
            keys.append(_stay_key(topic, b))
            best = min(keys)[2]
            if best != b:
                move_replica(topic, p, slot, best, _spread_reason(topic, b, best))


def _stay_key(topic: Topic, b: int) -> tuple[int, int, int]:
    """A replica compared with the brokers it could go to, as if it were not there yet."""
    load = topic.cluster.load[b]
    return (topic.count[b] - 1 - topic.shares[b][1], load.bytes - 1, b)


def _spread_reason(topic: Topic, donor: int, taker: int) -> str:
    lo, hi = topic.shares[taker]
    even = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return (
        f"goal 2, topic spread: {topic.layout.name} had {topic.count[donor]} replica(s) on "
        f"broker {donor} and {topic.count[taker]} on broker {taker}, even is {even}"
    )


def _spread_topic(topic: Topic) -> None:
    """Move replicas from brokers above the topic's share to brokers below it: first every
    broker above its upper share gives, then every broker below its lower share takes. When
    every partition spans every rack the shares are per rack and moves stay inside a rack."""
    cluster = topic.cluster
    count, shares = topic.count, topic.shares
    if all(shares[b][0] <= count[b] <= shares[b][1] for b in cluster.eligible):
        return
    groups: list[list[int]] = (
        [[b for b in cluster.eligible if cluster.rack_of[b] == r] for r in cluster.racks]
        if topic.per_rack
        else [cluster.eligible]
    )
    for group in groups:
        for strict in (True, False):
            side = 1 if strict else 0
            donors = deque(b for b in group if count[b] > shares[b][side])
            takers = [b for b in group if count[b] < shares[b][side]]
            while donors and takers:
                taker = min(
                    takers, key=lambda b: (count[b] - shares[b][0], cluster.load[b].bytes, b)
                )
                aim = _aim(topic, taker)
                moved = False
                for _ in range(len(donors)):
                    donor = donors.popleft()
                    if _move_one(topic, donor, taker, aim):
                        moved = True
                        if count[donor] > shares[donor][side]:
                            donors.append(donor)
                        break
                    donors.append(donor)
                if not moved or count[taker] >= shares[taker][side]:
                    takers.remove(taker)


def _aim(topic: Topic, b: int) -> float:
    """The size of this topic's partition that brings broker ``b`` towards ``RECEIVER_AIM``
    of the mean: the topic's average size scaled by how far ``b`` is from it, per replica
    it still has room for (an empty broker asks for 0.92 of the average)."""
    cluster = topic.cluster
    load = cluster.load[b]
    room = max(1.0, cluster.replicas_mean - load.replicas)
    per_replica = cluster.mean / cluster.replicas_mean if cluster.replicas_mean else 0.0
    if per_replica <= 0:
        return 0.0
    need = (RECEIVER_AIM * cluster.mean - load.bytes) / (room * per_replica)
    return max(0.0, need * topic.avg)


def _move_one(topic: Topic, donor: int, taker: int, aim: float) -> bool:
    """Move the donor's best replica for ``taker`` there; False if none can go."""
    entries = topic.index().get(donor, [])
    p = _pick(topic, entries, donor, taker, aim)
    if p is None:
        return False
    reps = topic.layout.replicas[p]
    move_replica(topic, p, reps.index(donor), taker, _spread_reason(topic, donor, taker))
    return True


def _pick(topic: Topic, entries: list[int], donor: int, taker: int, aim: float) -> int | None:
    """The donor's replica (partition) to move to ``taker``: a free one if any can go, else
    the paid one whose size is closest to ``aim``."""
    cluster, layout = topic.cluster, topic.layout
    free_end = bisect_left(entries, PAID)
    for i in range(free_end):
        p = entries[i] & P_MASK
        reps = layout.replicas[p]
        if cluster.can_swap(reps, reps.index(donor), taker, layout.rack_aware):
            return p
    if free_end == len(entries):
        return None
    mid = bisect_left(entries, PAID | (min(int(aim), S_MASK) << P_BITS), free_end)
    lo, hi = mid - 1, mid
    tries = 0
    while (lo >= free_end or hi < len(entries)) and tries < PICK_TRIES:
        tries += 1
        take_hi = hi < len(entries) and (
            lo < free_end
            or abs(((entries[hi] >> P_BITS) & S_MASK) - aim)
            <= abs(((entries[lo] >> P_BITS) & S_MASK) - aim)
        )
        i = hi if take_hi else lo
        if take_hi:
            hi += 1
        else:
            lo -= 1
        p = entries[i] & P_MASK
        reps = layout.replicas[p]
        if cluster.can_swap(reps, reps.index(donor), taker, layout.rack_aware):
            return p
    return None


# ------------------------------------------------------------------------ goal 3


def _even_bytes(cluster: Cluster, topics: Sequence[Topic], rounds: int = 100_000) -> bool:
    """Move replicas from brokers above the mean + 10 % to brokers below the mean - 10 %,
    only where both brokers stay inside the topic's share. True when it moved one."""
    n = len(cluster.eligible)
    if n < 2 or not topics:
        return False
    load = cluster.load
    mean = sum(v.bytes for v in load.values()) / n
    if mean <= 0:
        return False
    any_moved = False
    high, low = (1 + BYTES_TOLERANCE) * mean, (1 - BYTES_TOLERANCE) * mean
    stuck: set[tuple[int, int]] = set()
    for _ in range(rounds):
        heavy, light = outside_band(cluster, low, high)
        if not heavy and not light:
            return any_moved
        givers = heavy or sorted(cluster.eligible, key=lambda b: -load[b].bytes)
        takers = (light or sorted(cluster.eligible, key=lambda b: load[b].bytes))[:8]
        rack_of = cluster.rack_of
        pairs = [
            (d, r)
            for r in takers
            # the rack's own heaviest first: a partition on every rack moves inside its rack
            for d in [g for g in givers if rack_of.get(g) == rack_of.get(r)][:8] + givers[:8]
            if d != r and (d, r) not in stuck
        ]
        moved = False
        for d, r in pairs:
            want = min(load[d].bytes - mean, mean - load[r].bytes)
            if want <= 0:
                stuck.add((d, r))
                continue
            if _bytes_move(cluster, topics, d, r, want, mean):
                moved = any_moved = True
                stuck.clear()  # the move may have opened a pair that was stuck
                break
            stuck.add((d, r))
        if not moved:
            return any_moved
    return any_moved


def _bytes_move(
    cluster: Cluster,
    topics: Sequence[Topic],
    donor: int,
    taker: int,
    want: float,
    mean: float,
) -> bool:
    """One replica from ``donor`` to ``taker`` of size at most ``want`` -- the largest such,
    a free one (placed by this plan) before one that copies data -- keeping both brokers
    inside the topic's share."""
    same_rack = cluster.rack_of.get(donor) == cluster.rack_of.get(taker)
    limit = min(int(want), S_MASK)
    best: tuple[int, int, Topic, int] | None = None  # (free, size, topic, partition)
    for t in topics:
        if t.per_rack and not same_rack:
            continue
        if t.count[donor] - 1 < t.shares[donor][0] or t.count[taker] + 1 > t.shares[taker][1]:
            continue
        entries = t.index().get(donor)
        if not entries:
            continue
        reps_of = t.layout.replicas
        for paid in (0, PAID):
            i = bisect_right(entries, paid | (limit << P_BITS) | P_MASK) - 1
            floor = bisect_left(entries, paid)
            for j in range(i, max(floor, i - 16) - 1, -1):
                key = entries[j]
                size = (key >> P_BITS) & S_MASK
                if size <= 0:
                    break
                p = key & P_MASK
                reps = reps_of[p]
                if not t.cluster.can_swap(reps, reps.index(donor), taker, t.layout.rack_aware):
                    continue
                found = (0 if paid else 1, size, t, p)
                if best is None or found[:2] > best[:2]:
                    best = found
                break
    if best is None:
        return False
    _, _, t, p = best
    load = cluster.load
    why = (
        f"goal 3, bytes: broker {donor} held {cluster.amount(load[donor].bytes)} and "
        f"broker {taker} {cluster.amount(load[taker].bytes)}, mean "
        f"{cluster.amount(round(mean))}"
    )
    move_replica(t, p, t.layout.replicas[p].index(donor), taker, why)
    return True
