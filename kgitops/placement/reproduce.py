"""The AdminUtils calls that reproduce a live assignment: the start index, replica shift and
rack mode of the topic's creation, then of each time partitions were added (Kafka's
``createNewPartitionsAssignment``), or None when the assignment is not Kafka's. Replaying
them with a larger replication factor gives targets that only append replicas
(``kgitops.placement.rebalance``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from kgitops.errors import AssignmentError
from kgitops.model import Broker
from kgitops.placement.assignment import (
    Assignment,
    added_partitions_start_index,
    assign_replicas,
    placement_layout,
)


@dataclass(frozen=True, slots=True)
class PlacementParameters:
    """The AdminUtils arguments that reproduce a live assignment (see ``find_parameters``)."""

    start_index: int
    replica_shift: int
    rack_aware: bool


def _partition0_candidates(
    current: Mapping[int, Sequence[int]], brokers: Sequence[Broker], *, prefer_fixed: bool
) -> Iterator[tuple[bool, int, int, int]]:
    """Every (rack_aware, start index, replica shift, rf) whose AdminUtils placement gives
    partition 0 exactly its live replicas; nothing when ``current`` is not a whole,
    uniform-RF assignment these brokers could hold. Rack-aware layouts come first; with
    ``prefer_fixed`` the fixedStartIndex form (shift = start index) is tried first."""
    count = len(current)
    if not current or len(brokers) == 0 or any(p not in current for p in range(count)):
        return
    p0 = tuple(current[0])
    rf = len(p0)
    if rf == 0 or rf > len(brokers) or any(len(r) != rf for r in current.values()):
        return
    modes = ([True] if all(b.rack is not None for b in brokers) else []) + [False]
    for mode in modes:
        try:
            layout = placement_layout(brokers, mode)
        except AssignmentError:
            continue
        if p0[0] not in layout.arranged:
            continue
        first = layout.arranged.index(p0[0])
        modulus = max(layout.n - 1, 1)
        shifts = list(range(modulus))
        if prefer_fixed:
            preferred = first % modulus
            shifts = [preferred, *(s for s in shifts if s != preferred)]
        for shift in shifts:
            if layout.row(rf, layout.second_shift(shift))[first] == p0:
                yield mode, first, shift, rf


def find_parameters(
    current: Mapping[int, Sequence[int]], brokers: Sequence[Broker]
) -> PlacementParameters | None:
    """The AdminUtils arguments that produce exactly ``current`` on these brokers, or None.

    Kafka (before KRaft placement) and kgitops create topics with AdminUtils; when a live
    topic still matches such an assignment, raising its RF by recomputing with the larger RF
    only appends replicas. Cost: O(brokers) candidates checked on partition 0, then one full
    comparison. The fixedStartIndex form (shift = start index) is preferred among equals.
    """
    count = len(current)
    for mode, first, shift, rf in _partition0_candidates(current, brokers, prefer_fixed=True):
        candidate = assign_replicas(
            brokers, count, rf, start_index=first, replica_shift=shift, rack_aware=mode
        )
        if all(candidate[p] == tuple(current[p]) for p in range(count)):
            return PlacementParameters(first, shift, mode)
    return None


@dataclass(frozen=True, slots=True)
class PlacementSegment:
    """One AdminUtils call that placed partitions ``start_partition`` .. ``+ partitions - 1``."""

    start_partition: int
    partitions: int
    start_index: int
    replica_shift: int
    rack_aware: bool


def _first_mismatch(
    expected: Mapping[int, tuple[int, ...]], current: Mapping[int, Sequence[int]], start: int
) -> int:
    p = start
    while p in expected and expected[p] == tuple(current[p]):
        p += 1
    return p


def find_placement(
    current: Mapping[int, Sequence[int]], brokers: Sequence[Broker]
) -> tuple[PlacementSegment, ...] | None:
    """The AdminUtils calls that produce exactly ``current``: the topic's creation, then each
    time partitions were added (Kafka's rule: start index from partition 0's first replica,
    first id = the count at the time), or None when the assignment is not Kafka's.

    With these, the same calls with a larger RF give targets that only append replicas.
    """
    params = find_parameters(current, brokers)
    if params is not None:
        return (
            PlacementSegment(
                0, len(current), params.start_index, params.replica_shift, params.rack_aware
            ),
        )
    count = len(current)
    for mode, first, shift, rf in _partition0_candidates(current, brokers, prefer_fixed=False):
        added_start = added_partitions_start_index(brokers, current[0])
        created = assign_replicas(
            brokers, count, rf, start_index=first, replica_shift=shift, rack_aware=mode
        )
        end = _first_mismatch(created, current, 0)
        segments = [PlacementSegment(0, end, first, shift, mode)]
        while end < count:
            added = assign_replicas(
                brokers,
                count - end,
                rf,
                start_index=added_start,
                start_partition=end,
                rack_aware=mode,
            )
            stop = _first_mismatch(added, current, end)
            if stop == end:
                break
            segments.append(PlacementSegment(end, stop - end, added_start, added_start, mode))
            end = stop
        if end == count:
            return tuple(segments)
    return None


def place_segments(
    brokers: Sequence[Broker], segments: Sequence[PlacementSegment], replication_factor: int
) -> Assignment:
    """Replay ``segments`` (from ``find_placement``) with another replication factor."""
    result: Assignment = {}
    for seg in segments:
        result.update(
            assign_replicas(
                brokers,
                seg.partitions,
                replication_factor,
                start_index=seg.start_index,
                replica_shift=seg.replica_shift,
                start_partition=seg.start_partition,
                rack_aware=seg.rack_aware,
            )
        )
    return result
