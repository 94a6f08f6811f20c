"""Kafka's replica placement, exactly: ``AdminUtils.assignReplicasToBrokers`` and friends.

Kafka places replicas with a random start index unless it is fixed; kgitops always fixes it,
so every assignment here is a pure function of its arguments and can be reproduced anywhere.

Rack-unaware (seed 000), 5 brokers, 10 partitions, RF 3, start index 0, replica shift 0::

    p  first  shift  replicas        the shift is bumped each time the partition id reaches
    0  0      0      [0, 1, 2]       a multiple of the broker count (p5: shift 1), so
    1  1      0      [1, 2, 3]       partitions 5..9 spread their followers differently
    4  4      0      [4, 0, 1]       from 0..4
    5  0      1      [0, 2, 3]
    9  4      1      [4, 1, 2]

Rack-aware (seed 001): brokers are first arranged rack by rack (racks sorted, brokers sorted
by id inside each rack) into the rack-alternated list, e.g. racks {r1: 0,1  r2: 2  r3: 3,4,5}
... and then the same walk, skipping a broker whose rack already has a replica while some rack
has none, and a broker that already has one while some broker has none.

Speed: a partition's replicas depend only on (first index, shift mod (n - 1)), so there are at
most n * (n - 1) distinct lists; they are computed once and shared (tuples are immutable).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgitops.errors import (
    BrokerMetadataError,
    InvalidPartitions,
    InvalidReplicationFactor,
)
from kgitops.model import Broker

Assignment = dict[int, tuple[int, ...]]


def _check(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    if n_partitions <= 0:
        raise InvalidPartitions("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactor("Replication factor must be larger than 0.")
    if replication_factor > n_brokers:
        raise InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{n_brokers}."
        )


def replica_index(first_index: int, second_shift: int, replica: int, n_brokers: int) -> int:
    """Kafka's ``replicaIndex``: where follower ``replica`` of a partition goes."""
    shift = 1 + (second_shift + replica) % (n_brokers - 1)
    return (first_index + shift) % n_brokers


def _shift_at(partition: int, start_partition: int, replica_shift: int, n: int) -> int:
    """The replica shift Kafka's loop holds when it places ``partition``.

    The loop starts at ``start_partition`` with ``replica_shift`` and adds one before placing
    every id > 0 that is a multiple of n (including the first one placed).
    """
    first = max(start_partition, 1)
    return replica_shift + partition // n - (first - 1) // n


def rack_alternated_brokers(broker_racks: dict[int, str]) -> list[int]:
    """Kafka's ``getRackAlternatedBrokerList``: one broker per rack in turn, racks sorted,
    brokers ascending inside a rack; a rack that runs out is skipped.

    >>> rack_alternated_brokers({0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2",
    ...                          4: "rack2", 5: "rack1"})
    [0, 3, 1, 5, 4, 2]
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack)
    queues = [sorted(by_rack[r]) for r in racks]
    result: list[int] = []
    depth = 0
    while len(result) < len(broker_racks):
        for q in queues:
            if depth < len(q):
                result.append(q[depth])
        depth += 1
    return result


def _rack_unaware_list(
    brokers: Sequence[int], rf: int, first_index: int, second_shift: int
) -> tuple[int, ...]:
    n = len(brokers)
    return (brokers[first_index],) + tuple(
        brokers[replica_index(first_index, second_shift, j, n)] for j in range(rf - 1)
    )


def _rack_aware_list(
    arranged: Sequence[int],
    racks: Sequence[str],
    n_racks: int,
    rf: int,
    first_index: int,
    second_shift: int,
) -> tuple[int, ...]:
    n = len(arranged)
    leader = arranged[first_index]
    replicas = [leader]
    racks_used = {racks[first_index]}
    brokers_used = {leader}
    k = 0
    for _ in range(rf - 1):
        while True:
            idx = replica_index(first_index, second_shift, k, n)
            k += 1
            broker = arranged[idx]
            rack = racks[idx]
            if (rack not in racks_used or len(racks_used) == n_racks) and (
                broker not in brokers_used or len(brokers_used) == n
            ):
                replicas.append(broker)
                racks_used.add(rack)
                brokers_used.add(broker)
                break
    return tuple(replicas)


def assign_replicas(
    brokers: Sequence[Broker],
    n_partitions: int,
    replication_factor: int,
    *,
    start_index: int,
    replica_shift: int | None = None,
    start_partition: int = 0,
    rack_aware: bool | None = None,
) -> Assignment:
    """Kafka's ``assignReplicasToBrokers`` with its randomness made explicit.

    ``start_index`` and ``replica_shift`` are Kafka's startIndex and nextReplicaShift; its
    ``fixedStartIndex`` sets both to the same value (the default here). ``start_partition`` is
    the first partition id placed (the existing count when partitions are added).

    ``rack_aware=None`` decides as Kafka does: rack-aware when every broker has a rack,
    rack-unaware when none has, and BrokerMetadataError when only some have. ``False`` forces
    rack-unaware placement even when racks are known (kgitops' ``placement: rack-unaware``).
    The result maps partition id to the replica tuple, first replica = preferred leader.
    """
    ordered = sorted(brokers, key=lambda b: b.id)
    n = len(ordered)
    _check(n_partitions, replication_factor, n)
    shift0 = start_index if replica_shift is None else replica_shift
    with_rack = [b for b in ordered if b.rack is not None]
    if rack_aware is None:
        if with_rack and len(with_rack) != n:
            raise BrokerMetadataError(
                "Not all brokers have rack information for replica rack aware assignment."
            )
        rack_aware = bool(with_rack)
    elif rack_aware and len(with_rack) != n:
        raise BrokerMetadataError(
            "Not all brokers have rack information for replica rack aware assignment."
        )

    if rack_aware:
        rack_of = {b.id: b.rack for b in ordered if b.rack is not None}
        arranged = rack_alternated_brokers(rack_of)
        arranged_racks = [rack_of[b] for b in arranged]
        n_racks = len(set(arranged_racks))
    else:
        arranged = [b.id for b in ordered]

    start_partition = max(0, start_partition)
    cache: dict[tuple[int, int], tuple[int, ...]] = {}
    result: Assignment = {}
    modulus = max(n - 1, 1)
    for p in range(start_partition, start_partition + n_partitions):
        shift = _shift_at(p, start_partition, shift0, n)
        first = (p + start_index) % n
        second = (shift * n_racks if rack_aware else shift) % modulus
        key = (first, second)
        replicas = cache.get(key)
        if replicas is None:
            if rack_aware:
                replicas = _rack_aware_list(
                    arranged, arranged_racks, n_racks, replication_factor, first, second
                )
            else:
                replicas = _rack_unaware_list(arranged, replication_factor, first, second)
            cache[key] = replicas
        result[p] = replicas
    return result


def added_partitions_start_index(brokers: Sequence[Broker], partition0: Sequence[int]) -> int:
    """Kafka's fixed start index for added partitions (seed 002): the position, in the
    id-sorted broker list, of the first broker whose id is >= partition 0's first replica,
    or 0 when there is none."""
    first = partition0[0]
    for i, broker_id in enumerate(sorted(b.id for b in brokers)):
        if broker_id >= first:
            return i
    return 0


def assign_added_partitions(
    brokers: Sequence[Broker],
    existing: dict[int, tuple[int, ...]],
    total: int,
    *,
    rack_aware: bool | None = None,
) -> Assignment:
    """Kafka's ``createNewPartitionsAssignment`` (0.10+): the new partitions only.

    RF is partition 0's replica count, the fixed start index comes from partition 0's first
    replica, the first new id is the existing count; existing partitions never move.
    """
    count = len(existing)
    if total <= count:
        raise InvalidPartitions(
            f"The number of partitions for a topic can only be increased. "
            f"Topic currently has {count} partitions, {total} would not be an increase."
        )
    p0 = existing[0]
    start = added_partitions_start_index(brokers, p0)
    return assign_replicas(
        brokers,
        total - count,
        len(p0),
        start_index=start,
        start_partition=count,
        rack_aware=rack_aware,
    )
