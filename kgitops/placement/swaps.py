"""Goal 3 of ``plan --rebalance`` by swaps: when no single replica move may go (each topic
already holds its even share on both brokers), two replicas change places, as Cruise Control
does. Partition A's replica on a broker above the band goes to one below it and partition B's
replica comes back, A larger than B: the pair moves ``size(A) - size(B)`` towards the mean and
every replica count stays as it was::

    broker 0: a-0 (8 GiB), b-0 (8 GiB) = 16 GiB      a-0 <-> a-1      broker 0: 10 GiB
    broker 1: a-1 (2 GiB), b-1 (2 GiB) =  4 GiB      (one swap)       broker 1: 10 GiB

A swap is made only when the pair's distance outside the band strictly shrinks, by at least
half the bytes it copies (two large partitions exchanged for a sliver of balance are not
worth copying); the best first, the fewest bytes copied among equals, with the rack rule and
both topics' shares kept. ``kgitops.placement.balance`` tries single moves again after each
round. The search stops after ``SWAP_CHECKS`` candidates in all.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from kgitops.placement.layout import P_BITS, P_MASK, S_MASK, Cluster, Topic, move_replica

SWAP_PASSES = 100
"""Rounds of swaps, then single moves again, at most (each round ends when nothing helps)."""
SWAP_CHECKS = 1_000_000
"""Candidate swaps one plan looks at, at most, over all its rounds: about 2 s of CPU. Below
it the search is exhaustive for the best size match of every replica of the light broker; a
cluster of a million partitions whose band cannot be reached stops there (and warns)."""
SWAP_NEIGHBOURS = 4
"""Replicas of the heavy broker looked at on each side of the best size, per replica."""
COST_PER_GAIN = 2
"""A swap copies at most this many bytes per byte it brings the pair closer to the band (a
single move of a replica of size s copies s and gains up to 2s)."""
PAIRS = 8
"""Heaviest brokers x lightest brokers tried per round."""

Sized = list[tuple[int, int, int]]  # (size, topic number, partition), by size


class Budget:
    def __init__(self, checks: int = SWAP_CHECKS) -> None:
        self.left = checks


def outside_band(cluster: Cluster, low: float, high: float) -> tuple[list[int], list[int]]:
    """The brokers above the byte band, heaviest first, and those below it, lightest first."""
    load = cluster.load
    heavy = sorted(
        (b for b in cluster.eligible if load[b].bytes > high), key=lambda b: -load[b].bytes
    )
    light = sorted(
        (b for b in cluster.eligible if load[b].bytes < low), key=lambda b: load[b].bytes
    )
    return heavy, light


def _outside(value: float, low: float, high: float) -> float:
    """How far ``value`` lies outside the band [low, high] (0 inside)."""
    return max(0.0, value - high, low - value)


def swap_bytes(
    cluster: Cluster,
    topics: Sequence[Topic],
    tolerance: float,
    budget: Budget | None = None,
    rounds: int = 10_000,
) -> bool:
    """Exchange replicas between a broker above the band and one below it when no single move
    can (Cruise Control's swap): partition A's replica on the heavy broker goes to the light
    one and partition B's replica on the light broker comes back, A larger than B, so the
    pair moves ``size(A) - size(B)`` towards the mean while both brokers keep their replica
    counts -- which is what a topic's even share or a full broker blocked. A swap is made only
    when it brings the pair strictly closer to the band, the best such first, the fewest
    bytes copied among equals. True when it made one."""
    n = len(cluster.eligible)
    load = cluster.load
    mean = sum(load[b].bytes for b in cluster.eligible) / n if n else 0.0
    if n < 2 or mean <= 0 or not topics:
        return False
    budget = budget if budget is not None else Budget()
    low, high = (1 - tolerance) * mean, (1 + tolerance) * mean
    sized: dict[int, Sized] = {}
    made = False
    for _ in range(rounds):
        heavy, light = outside_band(cluster, low, high)
        if not heavy and not light:
            return made
        givers = heavy[:PAIRS] or sorted(cluster.eligible, key=lambda b: -load[b].bytes)[:PAIRS]
        takers = light[:PAIRS] or sorted(cluster.eligible, key=lambda b: load[b].bytes)[:PAIRS]
        done = False
        for d in givers:
            for r in takers:
                if budget.left <= 0:
                    return made
                if d == r or load[d].bytes <= load[r].bytes:
                    continue
                for b in (d, r):
                    if b not in sized:
                        sized[b] = _sized(topics, b)
                if _swap_one(cluster, topics, sized, d, r, (mean, low, high), budget):
                    sized.pop(d)
                    sized.pop(r)
                    done = made = True
                    break
            if done:
                break
        if not done:
            return made
    return made


def _sized(topics: Sequence[Topic], broker: int) -> Sized:
    """``broker``'s movable replicas of every topic as (size, topic number, partition), by
    size: the same order whether or not this plan placed them, so a second plan searches as
    the first did."""
    return sorted(
        ((k >> P_BITS) & S_MASK, i, k & P_MASK)
        for i, t in enumerate(topics)
        for k in t.index().get(broker, ())
    )


def _swap_one(
    cluster: Cluster,
    topics: Sequence[Topic],
    sized: dict[int, Sized],
    d: int,
    r: int,
    band: tuple[float, float, float],
    budget: Budget,
) -> bool:
    mean, low, high = band
    load = cluster.load
    before = _outside(load[d].bytes, low, high) + _outside(load[r].bytes, low, high)
    gap = load[d].bytes - load[r].bytes
    want = min(load[d].bytes - mean, mean - load[r].bytes)
    if want <= 0:
        want = gap / 2
    cross_rack = cluster.rack_of.get(d) != cluster.rack_of.get(r)
    on_d, on_r = sized[d], sized[r]
    best: tuple[float, int, int, int, int, int] | None = None
    for size_b, tb_i, pb in on_r:
        tb = topics[tb_i]
        if cross_rack and tb.per_rack:
            continue
        reps_b = tb.layout.replicas[pb]
        if d in reps_b or not cluster.can_swap(reps_b, reps_b.index(r), d, tb.layout.rack_aware):
            continue
        i = bisect_left(on_d, (size_b + int(want), -1, -1))
        for j in range(max(0, i - SWAP_NEIGHBOURS), min(len(on_d), i + SWAP_NEIGHBOURS)):
            budget.left -= 1
            size_a, ta_i, pa = on_d[j]
            delta = size_a - size_b
            if delta <= 0 or delta >= gap or (ta_i == tb_i and pa == pb):
                continue
            ta = topics[ta_i]
            if cross_rack and ta.per_rack:
                continue
            reps_a = ta.layout.replicas[pa]
            if r in reps_a or (ta_i != tb_i and not _shares_allow(ta, tb, d, r)):
                continue
            after = _outside(load[d].bytes - delta, low, high) + _outside(
                load[r].bytes + delta, low, high
            )
            if after >= before:
                continue
            cost = size_a * ta.paid(pa, d) + size_b * tb.paid(pb, r)
            if cost > COST_PER_GAIN * (before - after):
                continue  # two big partitions for a sliver of balance: not worth copying
            key = (after, cost, ta_i, pa, tb_i, pb)
            if best is not None and key >= best:
                continue
            if cluster.can_swap(reps_a, reps_a.index(d), r, ta.layout.rack_aware):
                best = key
        if budget.left <= 0:
            break
    if best is None:
        return False
    _, _, ta_i, pa, tb_i, pb = best
    ta, tb = topics[ta_i], topics[tb_i]
    why = (
        f"goal 3, bytes (a swap): broker {d} held {cluster.amount(load[d].bytes)} and "
        f"broker {r} {cluster.amount(load[r].bytes)}, mean {cluster.amount(round(mean))}; "
        f"{ta.layout.name}-{pa} and {tb.layout.name}-{pb} change places"
    )
    move_replica(ta, pa, ta.layout.replicas[pa].index(d), r, why)
    move_replica(tb, pb, tb.layout.replicas[pb].index(r), d, why)
    return True


def _shares_allow(ta: Topic, tb: Topic, d: int, r: int) -> bool:
    """Whether A's topic may have one replica fewer on ``d`` and one more on ``r``, and B's
    topic the other way round, each inside its even share."""
    return (
        ta.count[d] - 1 >= ta.shares[d][0]
        and ta.count[r] + 1 <= ta.shares[r][1]
        and tb.count[r] - 1 >= tb.shares[r][0]
        and tb.count[d] + 1 <= tb.shares[d][1]
    )
