"""The replication model behind the simulated cluster: catch-up and traffic over time.

The partitions and the controller's rules for them (ISR, leaders, elections, reassignments)
are ``partition_sim.py``; this module moves data between them as time passes.

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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kgitops.cluster.partition_sim import RECORD_BYTES, Part, Topic, settle
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)
from kgitops.plan import isrlag
from kgitops.versionrules import (
    throttle_delivered,
)

NETWORK_BYTES_PER_SEC = 100_000_000


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


#: A ``Producer``'s ``acks`` and ``keys`` (``simulate produce --acks`` and ``--keys``).
ACKS = ("all", "1", "0")
KEYS = ("none", "uniform")


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
