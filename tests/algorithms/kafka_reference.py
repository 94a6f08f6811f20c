"""A direct, line-by-line Python translation of Kafka's ``AdminUtils.java`` (server-common),
uncached and unoptimised on purpose: the tests compare kgitops' placement with it, and
``benchmarks/assignment.py`` measures against it.

Brokers are ``(id, rack or None)`` pairs, in the order Kafka receives them (id-sorted).
"""

from __future__ import annotations


def replica_index(
    first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int
) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def get_inverse_map(broker_rack_map: dict[int, str]) -> dict[str, list[int]]:
    results: dict[str, list[int]] = {}
    for broker_id, rack in broker_rack_map.items():
        results.setdefault(rack, []).append(broker_id)
    for ids in results.values():
        ids.sort()
    return results


def get_rack_alternated_broker_list(broker_rack_map: dict[int, str]) -> list[int]:
    iterators = {rack: iter(ids) for rack, ids in get_inverse_map(broker_rack_map).items()}
    racks = sorted(iterators)
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_rack_map):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


def assign_replicas_to_brokers(
    broker_metadatas: list[tuple[int, str | None]],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition_id: int,
    next_replica_shift_override: int | None = None,
) -> dict[int, list[int]]:
    if n_partitions <= 0:
        raise ValueError("InvalidPartitionsException")
    if replication_factor <= 0:
        raise ValueError("InvalidReplicationFactorException")
    if replication_factor > len(broker_metadatas):
        raise ValueError("InvalidReplicationFactorException")
    if all(rack is None for _, rack in broker_metadatas):
        return _rack_unaware(
            n_partitions,
            replication_factor,
            [b for b, _ in broker_metadatas],
            fixed_start_index,
            start_partition_id,
            next_replica_shift_override,
        )
    return _rack_aware(
        n_partitions,
        replication_factor,
        broker_metadatas,
        fixed_start_index,
        start_partition_id,
        next_replica_shift_override,
    )


def _rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_list: list[int],
    fixed_start_index: int,
    start_partition_id: int,
    shift_override: int | None,
) -> dict[int, list[int]]:
    ret: dict[int, list[int]] = {}
    start_index = fixed_start_index
    current_partition_id = max(0, start_partition_id)
    next_replica_shift = fixed_start_index if shift_override is None else shift_override
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % len(broker_list) == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % len(broker_list)
        replica_buffer = [broker_list[first_replica_index]]
        for j in range(replication_factor - 1):
            replica_buffer.append(
                broker_list[
                    replica_index(first_replica_index, next_replica_shift, j, len(broker_list))
                ]
            )
        ret[current_partition_id] = replica_buffer
        current_partition_id += 1
    return ret


def _rack_aware(
    n_partitions: int,
    replication_factor: int,
    broker_metadatas: list[tuple[int, str | None]],
    fixed_start_index: int,
    start_partition_id: int,
    shift_override: int | None,
) -> dict[int, list[int]]:
    broker_rack_map: dict[int, str] = {}
    for broker_id, rack in broker_metadatas:
        if rack is None:
            raise ValueError("AdminOperationException")
        broker_rack_map[broker_id] = rack
    num_racks = len(set(broker_rack_map.values()))
    arranged_broker_list = get_rack_alternated_broker_list(broker_rack_map)
    num_brokers = len(arranged_broker_list)
    ret: dict[int, list[int]] = {}
    start_index = fixed_start_index
    current_partition_id = max(0, start_partition_id)
    next_replica_shift = fixed_start_index if shift_override is None else shift_override
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % len(arranged_broker_list) == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % len(arranged_broker_list)
        leader = arranged_broker_list[first_replica_index]
        replica_buffer = [leader]
        racks_with_replicas = {broker_rack_map[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _j in range(replication_factor - 1):
            done = False
            while not done:
                broker = arranged_broker_list[
                    replica_index(
                        first_replica_index,
                        next_replica_shift * num_racks,
                        k,
                        len(arranged_broker_list),
                    )
                ]
                rack = broker_rack_map[broker]
                if (rack not in racks_with_replicas or len(racks_with_replicas) == num_racks) and (
                    broker not in brokers_with_replicas or len(brokers_with_replicas) == num_brokers
                ):
                    replica_buffer.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    done = True
                k += 1
        ret[current_partition_id] = replica_buffer
        current_partition_id += 1
    return ret
