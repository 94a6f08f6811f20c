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
   the per-topic shares leave room for;
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

Work: O(replicas) to index, then per move O(log n) plus a short scan.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections import Counter, deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kgitops.model import Broker
from kgitops.placement.racks import RackRule
from kgitops.units import human_bytes

Mode = Literal["all", "placed", "leaders"]
PICK_TRIES = 512
"""How many of a donor's replicas a move looks at before trying another donor."""
BYTES_TOLERANCE = 0.10
RECEIVER_AIM = 0.92
"""A receiver is filled towards this share of the mean: inside goal 3's band with a margin,
and no further (every byte above it would be a byte moved that no goal asks for)."""


@dataclass
class TopicLayout:
    """One topic as the balancer sees it. ``replicas``: after goal 1 (mutable lists);
    ``original``: live replicas; ``sizes``: bytes per partition (None: unknown);
    ``movable``: False for a static topic (it counts, never moves); ``frozen``: partitions
    that never move (in flight); ``replaceable``: the partitions whose new replicas may be
    placed again (None: all)."""

    name: str
    replicas: dict[int, list[int]]
    original: Mapping[int, Sequence[int]]
    sizes: Mapping[int, int | None]
    rack_aware: bool
    movable: bool = True
    frozen: Collection[int] = ()
    replaceable: Collection[int] | None = None
    reasons: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class _Broker:
    bytes: int = 0
    replicas: int = 0
    leaders: int = 0


class _Cluster:
    def __init__(self, brokers: Sequence[Broker], drain: Collection[int], by_count: bool) -> None:
        self.eligible = sorted(b.id for b in brokers if b.online and b.id not in set(drain))
        self.eligible_set = frozenset(self.eligible)
        racked = bool(brokers) and all(b.rack is not None for b in brokers)
        self.rack_of: dict[int, str] = {b.id: str(b.rack) for b in brokers} if racked else {}
        self.racked = racked
        self.racks = sorted({self.rack_of[b] for b in self.eligible}) if racked else []
        self.rule = RackRule.of(brokers, drain)
        self.by_count = by_count
        self.load: dict[int, _Broker] = {b: _Broker() for b in self.eligible}
        self.mean = 0.0
        self.replicas_mean = 0.0

    def weight(self, size: int | None) -> int:
        return 1 if self.by_count else (size or 0)

    def can_swap(self, replicas: Sequence[int], slot: int, new: int, rack_aware: bool) -> bool:
        """Whether ``replicas[slot]`` may become ``new``: not already there, and (rack-aware)
        the partition keeps as many racks and does not break the rack rule
        (``kgitops.placement.racks``)."""
        if new in replicas:
            return False
        if not rack_aware or not self.racked:
            return True
        old = replicas[slot]
        if self.rack_of.get(old) == self.rack_of.get(new):
            return True
        rule = self.rule
        after = [new if i == slot else b for i, b in enumerate(replicas)]
        if len(rule.racks(after)) < len(rule.racks(replicas)):
            return False
        return not rule.broken(after) or rule.broken(replicas)


def _quota(total: int, holders: Sequence[int]) -> tuple[int, int]:
    n = len(holders)
    if n == 0:
        return 0, 0
    return total // n, -(-total // n)


P_BITS, S_BITS = 40, 60
P_MASK, S_MASK = (1 << P_BITS) - 1, (1 << S_BITS) - 1
PAID = 1 << (P_BITS + S_BITS)


def _key(paid: bool, size: int, p: int) -> int:
    """A replica in a broker's index as one int, so that sorting and bisecting are fast:
    free replicas (placed by this plan) first, then by size, then partition."""
    return (PAID if paid else 0) | (min(size, S_MASK) << P_BITS) | p


class _Topic:
    """Per-topic counters and shares for one ``TopicLayout``; adds its load to the cluster."""

    def __init__(self, layout: TopicLayout, cluster: _Cluster) -> None:
        self.layout = layout
        self.cluster = cluster
        by_count, sizes = cluster.by_count, layout.sizes
        count: Counter[int] = Counter()
        leads: Counter[int] = Counter()
        weight_on: Counter[int] = Counter()
        weights: dict[int, int] = {}
        for p, reps in layout.replicas.items():
            w = 1 if by_count else (sizes.get(p) or 0)
            weights[p] = w
            for b in reps:
                count[b] += 1
                weight_on[b] += w
            if reps:
                leads[reps[0]] += 1
        self.weights = weights
        for b, load in cluster.load.items():
            load.bytes += weight_on[b]
            load.replicas += count[b]
            load.leaders += leads[b]
        self.count: dict[int, int] = {b: count[b] for b in cluster.eligible}
        self.leads: dict[int, int] = {b: leads[b] for b in cluster.eligible}
        self.shares: dict[int, tuple[int, int]] = {}
        self.avg = sum(weights.values()) / max(1, len(weights))
        self._index: dict[int, list[int]] | None = None
        self._set_shares()

    def _set_shares(self) -> None:
        cluster, layout = self.cluster, self.layout
        total = sum(self.count.values())
        parts = len(layout.replicas)
        rf = max((len(r) for r in layout.replicas.values()), default=0)
        per_rack = layout.rack_aware and cluster.racked and rf >= len(cluster.racks) > 0
        self.per_rack = per_rack
        if per_rack:
            for rack in cluster.racks:
                members = [b for b in cluster.eligible if cluster.rack_of[b] == rack]
                share = _quota(sum(self.count[b] for b in members), members)
                for b in members:
                    self.shares[b] = share
        else:
            share = _quota(total, cluster.eligible)
            self.shares = dict.fromkeys(cluster.eligible, share)
        lead_share = _quota(parts, cluster.eligible)
        self.lead_shares = dict.fromkeys(cluster.eligible, lead_share)

    def size(self, p: int) -> int:
        return self.weights[p]

    def paid(self, p: int, broker: int) -> bool:
        """Moving ``broker``'s replica of ``p`` copies data (it was there before this plan)."""
        return broker in self.layout.original.get(p, ())

    def index(self) -> dict[int, list[int]]:
        """Per broker, its movable replicas of the topic as sorted ``_key`` ints."""
        if self._index is None:
            layout = self.layout
            original, weights, frozen = layout.original, self.weights, layout.frozen
            out: dict[int, list[int]] = {}
            for p, reps in layout.replicas.items():
                if frozen and p in frozen:
                    continue
                before = original.get(p, ())
                base = (min(weights[p], S_MASK) << P_BITS) | p
                for b in reps:
                    entries = out.get(b)
                    if entries is None:
                        entries = out[b] = []
                    entries.append(base | PAID if b in before else base)
            for entries in out.values():
                entries.sort()
            self._index = out
        return self._index

    def reindex(self, p: int, old: int, new: int) -> None:
        """Keep the index true after ``p``'s replica moved from ``old`` to ``new``."""
        if self._index is None:
            return
        size = self.weights[p]
        entries = self._index.get(old, [])
        key = _key(self.paid(p, old), size, p)
        i = bisect_left(entries, key)
        if i < len(entries) and entries[i] == key:
            entries.pop(i)
        insort(self._index.setdefault(new, []), _key(self.paid(p, new), size, p))


def _note(layout: TopicLayout, p: int, why: str) -> None:
    layout.reasons.setdefault(p, []).append(why)


def _move(topic: _Topic, p: int, slot: int, new: int, why: str) -> None:
    cluster = topic.cluster
    reps = topic.layout.replicas[p]
    old = reps[slot]
    size = topic.size(p)
    reps[slot] = new
    topic.reindex(p, old, new)
    for b, sign in ((old, -1), (new, +1)):
        if b in topic.count:
            topic.count[b] += sign
            load = cluster.load[b]
            load.bytes += sign * size
            load.replicas += sign
            if slot == 0:
                topic.leads[b] += sign
                load.leaders += sign
    _note(topic.layout, p, why)


def balance(
    layouts: Sequence[TopicLayout],
    brokers: Sequence[Broker],
    *,
    drain: Collection[int] = (),
    mode: Mode = "all",
    fixed: Sequence[tuple[Sequence[int], int | None]] = (),
) -> None:
    """Move replicas and preferred leaders of ``layouts`` (in place; reasons in each layout's
    ``reasons``) towards goals 2-4. ``fixed``: (replicas, size) of every other partition the
    cluster holds (other topics, new topics), counted but never moved."""
    by_count = any(s is None for lay in layouts for s in lay.sizes.values()) or any(
        s is None for _, s in fixed
    )
    cluster = _Cluster(brokers, drain, by_count)
    if not cluster.eligible:
        return
    for reps, size in fixed:
        for i, b in enumerate(reps):
            load = cluster.load.get(b)
            if load is not None:
                load.bytes += cluster.weight(size)
                load.replicas += 1
                load.leaders += i == 0
    topics = [_Topic(lay, cluster) for lay in layouts]
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
    if mode != "placed":
        for t in movable:
            _spread_leaders(t)
        _even_leaders(cluster, movable)


# ------------------------------------------------------------------------ goal 2


def _receiver_key(topic: _Topic, b: int) -> tuple[int, int, int]:
    load = topic.cluster.load[b]
    return (topic.count[b] - topic.shares[b][1], load.bytes, b)


def _place_fresh(topic: _Topic) -> None:
    """Replicas this plan places anyway (drains, RF changes, rack repair) go where the topic's
    share and then the bytes want them: moving them again copies nothing more."""
    cluster, layout = topic.cluster, topic.layout
    only = layout.replaceable
    for p in sorted(layout.replicas) if only is None else sorted(set(only)):
        if p in layout.frozen or p not in layout.replicas:
            continue
        reps = layout.replicas[p]
        for slot, b in enumerate(reps):
            if topic.paid(p, b) or b not in cluster.eligible_set:
                continue
            best = min(
                (
                    n
                    for n in cluster.eligible
                    if n == b or cluster.can_swap(reps, slot, n, layout.rack_aware)
                ),
                key=lambda n: _receiver_key(topic, n) if n != b else _stay_key(topic, b),
            )
            if best != b:
                _move(topic, p, slot, best, _spread_reason(topic, b, best))


def _stay_key(topic: _Topic, b: int) -> tuple[int, int, int]:
    """A replica compared with the brokers it could go to, as if it were not there yet."""
    load = topic.cluster.load[b]
    return (topic.count[b] - 1 - topic.shares[b][1], load.bytes - 1, b)


def _spread_reason(topic: _Topic, donor: int, taker: int) -> str:
    lo, hi = topic.shares[taker]
    even = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return (
        f"goal 2, topic spread: {topic.layout.name} had {topic.count[donor]} replica(s) on "
        f"broker {donor} and {topic.count[taker]} on broker {taker}, even is {even}"
    )


def _spread_topic(topic: _Topic) -> None:
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


def _aim(topic: _Topic, b: int) -> float:
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


def _move_one(topic: _Topic, donor: int, taker: int, aim: float) -> bool:
    """Move the donor's best replica for ``taker`` there; False if none can go."""
    entries = topic.index().get(donor, [])
    p = _pick(topic, entries, donor, taker, aim)
    if p is None:
        return False
    reps = topic.layout.replicas[p]
    _move(topic, p, reps.index(donor), taker, _spread_reason(topic, donor, taker))
    return True


def _pick(topic: _Topic, entries: list[int], donor: int, taker: int, aim: float) -> int | None:
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


def _even_bytes(cluster: _Cluster, topics: Sequence[_Topic], rounds: int = 100_000) -> None:
    """Move replicas from brokers above the mean + 10 % to brokers below the mean - 10 %,
    only where both brokers stay inside the topic's share."""
    n = len(cluster.eligible)
    if n < 2 or not topics:
        return
    load = cluster.load
    mean = sum(v.bytes for v in load.values()) / n
    if mean <= 0:
        return
    high, low = (1 + BYTES_TOLERANCE) * mean, (1 - BYTES_TOLERANCE) * mean
    stuck: set[tuple[int, int]] = set()
    for _ in range(rounds):
        heavy = sorted(
            (b for b in cluster.eligible if load[b].bytes > high), key=lambda b: -load[b].bytes
        )
        light = sorted(
            (b for b in cluster.eligible if load[b].bytes < low), key=lambda b: load[b].bytes
        )
        if not heavy and not light:
            return
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
                moved = True
                stuck.clear()  # the move may have opened a pair that was stuck
                break
            stuck.add((d, r))
        if not moved:
            return


def _bytes_move(
    cluster: _Cluster,
    topics: Sequence[_Topic],
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
    best: tuple[int, int, _Topic, int] | None = None  # (free, size, topic, partition)
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
        f"goal 3, bytes: broker {donor} held {_amount(cluster, load[donor].bytes)} and "
        f"broker {taker} {_amount(cluster, load[taker].bytes)}, mean "
        f"{_amount(cluster, round(mean))}"
    )
    _move(t, p, t.layout.replicas[p].index(donor), taker, why)
    return True


def _amount(cluster: _Cluster, value: int) -> str:
    return f"{value} replicas" if cluster.by_count else human_bytes(value)


# ------------------------------------------------------------- goals 2 and 4: leaders


def _lead_swap(topic: _Topic, p: int, slot: int, why: str) -> None:
    reps = topic.layout.replicas[p]
    old, new = reps[0], reps[slot]
    reps[0], reps[slot] = new, old
    load = topic.cluster.load
    for b, sign in ((old, -1), (new, +1)):
        if b in topic.leads:
            topic.leads[b] += sign
            load[b].leaders += sign
    _note(topic.layout, p, why)


def _spread_leaders(topic: _Topic) -> None:
    """Per topic, preferred leaders per broker inside the even share: a follower of a
    partition takes its leadership, or a chain of such swaps through brokers at their share
    (A leads p where B follows, B leads q where C follows...), C being below it."""
    cluster, layout = topic.cluster, topic.layout
    leads = topic.leads
    led: dict[int, list[int]] = {b: [] for b in cluster.eligible}
    for p in sorted(layout.replicas):
        reps = layout.replicas[p]
        if reps and reps[0] in led and p not in layout.frozen:
            led[reps[0]].append(p)
    stuck: set[int] = set()
    for strict in (True, False):
        while True:
            under_any = any(leads[b] < topic.lead_shares[b][0] for b in cluster.eligible)
            donors = [
                b
                for b in cluster.eligible
                if b not in stuck
                and (
                    leads[b] > topic.lead_shares[b][1]
                    or (not strict and under_any and leads[b] > topic.lead_shares[b][0])
                )
            ]
            if not donors or (not strict and not under_any):
                break
            donor = max(donors, key=lambda b: (leads[b], cluster.load[b].leaders, -b))
            path = _lead_path(topic, led, donor, strict)
            if path is None:
                stuck.add(donor)
                continue
            for giver, p, taker in path:
                lo, hi = topic.lead_shares[taker]
                even = f"{lo}" if lo == hi else f"{lo}-{hi}"
                _lead_swap(
                    topic,
                    p,
                    layout.replicas[p].index(taker),
                    f"goal 2, leader spread: {layout.name} had {leads[giver]} preferred "
                    f"leader(s) on broker {giver} and {leads[taker]} on broker {taker}, "
                    f"even is {even}",
                )
                led[giver].remove(p)
                led[taker].append(p)
            stuck.clear()
        stuck.clear()


def _lead_path(
    topic: _Topic, led: Mapping[int, list[int]], donor: int, strict: bool
) -> list[tuple[int, int, int]] | None:
    """The shortest chain of leadership hand-overs from ``donor`` to a broker below the
    share, as (giver, partition, taker) from the end back to the donor."""
    cluster, layout, leads = topic.cluster, topic.layout, topic.leads
    eligible = cluster.eligible_set
    parent: dict[int, tuple[int, int]] = {donor: (-1, -1)}
    queue = [donor]
    for b in queue:
        for p in led.get(b, ()):
            for f in layout.replicas[p][1:]:
                if f in parent or f not in eligible:
                    continue
                parent[f] = (b, p)
                lo, hi = topic.lead_shares[f]
                if leads[f] < (hi if strict else lo):
                    path = []
                    node = f
                    while node != donor:
                        giver, q = parent[node]
                        path.append((giver, q, node))
                        node = giver
                    return path
                queue.append(f)
    return None


def _even_leaders(cluster: _Cluster, topics: Sequence[_Topic], rounds: int = 1_000_000) -> None:
    """Goal 4: hand preferred leadership from brokers above the cluster's even share to
    followers below it, where both stay inside the topic's leader share."""
    load = cluster.load
    n = len(cluster.eligible)
    total = sum(v.leaders for v in load.values())
    lo, hi = total // n, -(-total // n)
    if all(lo <= load[b].leaders <= hi for b in cluster.eligible):
        return
    led: dict[int, list[tuple[int, int]]] = {b: [] for b in cluster.eligible}
    for ti, t in enumerate(topics):
        for p, reps in t.layout.replicas.items():
            if reps and reps[0] in led and p not in t.layout.frozen:
                led[reps[0]].append((ti, p))
    even = f"{lo}" if lo == hi else f"{lo}-{hi}"
    stuck: set[int] = set()
    for _ in range(rounds):
        over = [b for b in cluster.eligible if load[b].leaders > hi and b not in stuck]
        under = {b for b in cluster.eligible if load[b].leaders < lo}
        if not over and not under:
            return
        donors = over or [b for b in cluster.eligible if load[b].leaders > lo and b not in stuck]
        takers = under or {b for b in cluster.eligible if load[b].leaders < hi}
        if not donors or not takers:
            return
        donor = max(donors, key=lambda b: (load[b].leaders, -b))
        found = _lead_candidate(topics, led[donor], donor, takers)
        if found is None:
            stuck.add(donor)
            continue
        i, slot = found
        ti, p = led[donor].pop(i)
        t = topics[ti]
        taker = t.layout.replicas[p][slot]
        _lead_swap(
            t,
            p,
            slot,
            f"goal 4, leaders: broker {donor} led {load[donor].leaders} partitions and broker "
            f"{taker} {load[taker].leaders}, even is {even}",
        )
        led[taker].append((ti, p))
        stuck.clear()


def _lead_candidate(
    topics: Sequence[_Topic], led: Sequence[tuple[int, int]], donor: int, takers: Collection[int]
) -> tuple[int, int] | None:
    """(index in ``led``, follower slot) of a partition the donor leads whose follower in
    ``takers`` may take it, both staying inside the topic's leader share."""
    for i, (ti, p) in enumerate(led):
        t = topics[ti]
        if t.leads[donor] - 1 < t.lead_shares[donor][0]:
            continue
        reps = t.layout.replicas[p]
        for slot in range(1, len(reps)):
            b = reps[slot]
            if b in takers and t.leads[b] + 1 <= t.lead_shares[b][1]:
                return i, slot
    return None
