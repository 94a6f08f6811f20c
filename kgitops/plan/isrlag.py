"""When writes push followers out of the ISR: the one rule the simulated cluster and the plan
share. Pure.

A follower stays in the ISR while it fetches everything the leader appends. Per broker, its
in-sync followers must fetch the write rate of every written partition they follow
(``follower_demand``); a broker whose link carries less than that (``network`` bytes/s into
the broker), or that has stopped, falls behind (``falling_behind``), and after
``replica.lag.time.max.ms`` of it (``lag_time_max``) the leaders drop it from the ISR of
every written partition it follows (``Partition.maybeShrinkIsr``). The simulated cluster
applies the rule as time passes (``cluster/replication.py``, ``cluster/clock_sim.py``); the
plan asks it of a placement at a topic's expected write rate (ISR_PRESSURE,
``isr_pressure``)::

    >>> demand = follower_demand([(1, [1, 2], 60e6), (1, [1, 2, 3], 60e6), (2, [2, 3], 0.0)])
    >>> demand
    {2: 120000000.0, 3: 60000000.0}
    >>> falling_behind(demand, 100e6)
    {2: 0.16666666666666663}

Broker 2 follows 120 MB/s on a 100 MB/s link: it fetches 5/6 of what is written, lacks 1/6,
and leaves the ISR of both partitions after ``replica.lag.time.max.ms``. Replication
throttles play no part: Kafka never holds an in-sync follower back (it charges its fetches
to the quota all the same: THROTTLE_BELOW_WRITE_RATE). A leader's outbound link is not
limited by the model.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kgitops.model import ClusterState, TopicSpec
from kgitops.names import LAG_TIME_MAX
from kgitops.plan.actions import (
    Action,
    AddPartitions,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Reassign,
)

#: ``replica.lag.time.max.ms``: Kafka's default.
LAG_TIME_MAX_MS = 30_000


def follower_demand(written: Iterable[tuple[int | None, Sequence[int], float]]) -> dict[int, float]:
    """Per broker, the bytes/s its in-sync followers must fetch to stay in sync: for each
    written partition ``(leader, isr, rate)`` with a leader, its write rate once for every
    ISR member but the leader."""
    out: dict[int, float] = {}
    for leader, isr, rate in written:
        if rate <= 0 or leader is None:
            continue
        for b in isr:
            if b != leader:
                out[b] = out.get(b, 0.0) + rate
    return out


def falling_behind(
    demand: Mapping[int, float], network: float, stopped: Collection[int] = ()
) -> dict[int, float]:
    """The brokers whose in-sync followers cannot keep up, each with the share of what is
    written that it lacks: 1 for a ``stopped`` broker (it fetches nothing); else, where its
    ``demand`` is above ``network``, ``1 - network / demand``. A broker just at its network
    keeps up. Sorted by broker id."""
    out: dict[int, float] = {}
    for b, d in sorted(demand.items()):
        if d <= 0:
            continue
        if b in stopped:
            out[b] = 1.0
        elif d > network:
            out[b] = 1.0 - network / d
    return out


def lag_time_max(broker_defaults: Mapping[str, str]) -> float:
    """``replica.lag.time.max.ms`` in seconds: the brokers' value, else Kafka's 30 s."""
    try:
        return max(0.0, int(broker_defaults.get(LAG_TIME_MAX, str(LAG_TIME_MAX_MS))) / 1000)
    except ValueError:
        return LAG_TIME_MAX_MS / 1000


# ---------------------------------------------------------------- the plan's check


@dataclass(frozen=True)
class Shrink:
    """What the rule predicts for one written topic in one placement (``now``: the live one;
    ``after``: once the plan's moves and new partitions are in place): its ``brokers`` that
    fall behind, each with the bytes/s it must follow (over every written topic), and the
    ISR each affected partition is left with."""

    topic: str
    placement: str
    rate: float  # the topic's write rate, bytes/s
    brokers: Mapping[int, float]
    isr: Mapping[int, tuple[int, ...]]  # partition -> the ISR once the laggards leave
    replicas: int  # the replication factor of that placement
    partitions: int  # how many partitions the topic has there


#: A partition at rest: (leader, the replicas in sync, every replica in assignment order).
Rest = tuple[int | None, tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Placement:
    """Per topic, per partition: (leader, the replicas assumed in sync, every replica)."""

    topics: Mapping[str, Mapping[int, Rest]]


def _in_sync(replicas: Sequence[int], leader: int | None, online: Collection[int]) -> Rest:
    """A placement at rest: every replica on an online broker in sync; the leader stays if it
    is one of them, else the first of them leads (KRaft elects in assignment order)."""
    isr = tuple(b for b in replicas if b in online)
    if leader not in isr:
        leader = isr[0] if isr else None
    return leader, isr, tuple(replicas)


def placements(state: ClusterState, actions: Sequence[Action]) -> tuple[Placement, Placement]:
    """The live placement and the one after ``actions`` (moves done, partitions added, topics
    created or deleted, preferred leaders elected), each at rest: every replica on an online
    broker in sync."""
    online = state.online_broker_ids
    now: dict[str, dict[int, Rest]] = {}
    for name, t in state.topics.items():
        now[name] = {
            p: _in_sync(ps.replicas, ps.leader, online) for p, ps in sorted(t.partitions.items())
        }
    after = {name: dict(parts) for name, parts in now.items()}
    for a in actions:
        if isinstance(a, DeleteTopic):
            after.pop(a.topic, None)
        elif isinstance(a, CreateTopic):
            after[a.topic] = {p: _in_sync(r, None, online) for p, r in sorted(a.assignment.items())}
        elif isinstance(a, AddPartitions):
            parts = after.setdefault(a.topic, {})
            for p, r in sorted((a.assignment or {}).items()):
                parts[p] = _in_sync(r, None, online)
        elif isinstance(a, Reassign):
            parts = after.setdefault(a.topic, {})
            for p, m in a.moves.items():
                leader = parts[p][0] if p in parts else None
                parts[p] = _in_sync(m.target, leader, online)
    for a in actions:  # after the moves, as apply runs them
        if isinstance(a, ElectLeaders) and a.topic in after:
            parts = after[a.topic]
            for p in a.partitions:
                if p in parts:
                    leader, isr, replicas = parts[p]
                    if replicas and replicas[0] in isr:  # else the election changes nothing
                        parts[p] = (replicas[0], isr, replicas)
    return Placement(now), Placement(after)


def partition_rates(parts: Mapping[int, Rest], rate: float) -> dict[int, float]:
    """A topic's ``rate`` spread evenly over its partitions that have a leader, as the
    producer's built-in partitioner spreads keyless records (and uniform keys all)."""
    led = [p for p, (leader, _, _) in parts.items() if leader is not None]
    return {p: rate / len(led) for p in led} if led else {}


def shrinks(
    placement: Placement, rates: Mapping[str, float], network: float, name: str
) -> list[Shrink]:
    """Apply the rule to one placement: the written topics whose ISR would shrink."""
    spread = {
        t: partition_rates(placement.topics[t], r)
        for t, r in sorted(rates.items())
        if r > 0 and t in placement.topics
    }
    demand = follower_demand(
        (placement.topics[t][p][0], placement.topics[t][p][1], rate)
        for t, per in spread.items()
        for p, rate in per.items()
    )
    behind = falling_behind(demand, network)
    out: list[Shrink] = []
    for t, per in spread.items():
        hit: dict[int, float] = {}
        isr: dict[int, tuple[int, ...]] = {}
        size = 0
        for p in sorted(per):
            leader, members, replicas = placement.topics[t][p]
            size = max(size, len(replicas))
            gone = [b for b in members if b != leader and b in behind]
            if gone:
                isr[p] = tuple(b for b in members if b not in gone)
                hit.update((b, demand[b]) for b in gone)
        if isr:
            hit = dict(sorted(hit.items()))
            count = len(placement.topics[t])
            out.append(Shrink(t, name, rates[t], hit, isr, size, count))
    return out


def write_rates(
    topics: Iterable[TopicSpec], measured: Mapping[str, float] | None
) -> dict[str, tuple[float, str]]:
    """Each written topic's rate in bytes/s and where it came from: the spec's
    ``expectedWriteBytesPerSec`` (``spec``), else the rate the cluster measures
    (``measured``: the simulated cluster's ``simulate produce``; Kafka's admin API has none)."""
    out = {t: (float(r), "measured") for t, r in (measured or {}).items() if r > 0}
    for spec in topics:
        if spec.expected_write_rate is not None and not spec.delete:
            out[spec.name] = (float(spec.expected_write_rate), "spec")
    return dict(sorted(out.items()))


def isr_pressure(
    state: ClusterState,
    actions: Sequence[Action],
    rates: Mapping[str, float],
    network: float,
) -> list[tuple[Shrink | None, Shrink | None]]:
    """Per written topic whose ISR would shrink now or after the plan: (now, after)."""
    now, after = placements(state, actions)
    before = {s.topic: s for s in shrinks(now, rates, network, "now")}
    later = {s.topic: s for s in shrinks(after, rates, network, "after")}
    return [(before.get(t), later.get(t)) for t in sorted(before.keys() | later.keys())]
