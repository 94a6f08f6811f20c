"""Kafka's replica placement, exactly: ``AdminUtils.assignReplicasToBrokers`` and friends.

Kafka places replicas with a random start index unless it is fixed; kgitops always fixes it,
so every assignment here is a pure function of its arguments and can be reproduced anywhere.

Rack-unaware (docs/algorithms.md), 5 brokers, 10 partitions, RF 3, start index 0, replica shift 0::

    p  first  shift  replicas        the shift is bumped each time the partition id reaches
    0  0      0      [0, 1, 2]       a multiple of the broker count (p5: shift 1), so
    1  1      0      [1, 2, 3]       partitions 5..9 spread their followers differently
    4  4      0      [4, 0, 1]       from 0..4
    5  0      1      [0, 2, 3]
    9  4      1      [4, 1, 2]

Rack-aware (docs/algorithms.md): brokers are first arranged rack by rack (racks sorted, brokers
sorted by id inside each rack) into the rack-alternated list, e.g. racks {rack1: 0,5 rack2: 3,4
rack3: 1,2} give ``0, 3, 1, 5, 4, 2``; then the same walk runs over that list, skipping a broker
whose rack already has a replica while some rack has none, and a broker that already has one
while some broker has none. 6 partitions, RF 3, start index 0 give ``0 -> 0,3,1`` ... ``5 ->
2,0,3``, and partition 6 (shift bumped) ``0,4,2``.

Speed: a partition's replicas depend only on (first index, replica shift mod (n - 1)), and the
shift is constant over each run of n consecutive partition ids, so a whole run is a rotation of
one precomputed row of replica tuples (tuples are immutable and shared). A whole topic depends
only on (brokers, partitions, RF, start index, shift, start partition), so equal topics share
one computed result as well. Every result is still exactly Kafka's: the tests compare it with a
line-by-line translation of ``AdminUtils.java`` and with Kafka 3.9.1's own AdminUtils run in a
JVM (tests/algorithms/kafka_oracle.py), including where Kafka's 32-bit ints wrap.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NoReturn

from kgitops.errors import (
    AssignmentError,
    BrokerMetadataError,
    InvalidPartitions,
    InvalidReplicaAssignment,
    InvalidReplicationFactor,
    PlacementOverflow,
)
from kgitops.model import Broker
from kgitops.names import INT32_MAX

Assignment = dict[int, tuple[int, ...]]

# Kafka's own random start index and replica shift are below the broker count; kgitops takes
# any value up to this bound (a fixedStartIndex may be larger than the broker count).
MAX_START_INDEX = 1 << 24
# Kafka computes placement in Java ints: past this, AdminUtils' arithmetic wraps around
# (``_java_list``).
INT_MAX = INT32_MAX


def _check(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    if n_partitions <= 0:
        raise InvalidPartitions("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactor("Replication factor must be larger than 0.")
    if replication_factor > n_brokers:
        raise InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: {n_brokers}."
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


def rack_alternated_brokers(broker_racks: Mapping[int, str]) -> list[int]:
    """Kafka's ``getRackAlternatedBrokerList``: one broker per rack in turn, racks sorted,
    brokers ascending inside a rack; a rack that runs out is skipped.

    >>> rack_alternated_brokers({0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2",
    ...                          4: "rack2", 5: "rack1"})
    [0, 3, 1, 5, 4, 2]
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack, key=_java_order)
    queues = [sorted(by_rack[r]) for r in racks]
    result: list[int] = []
    depth = 0
    while len(result) < len(broker_racks):
        for q in queues:
            if depth < len(q):
                result.append(q[depth])
        depth += 1
    return result


def _java_order(text: str) -> bytes:
    """Java's ``String.compareTo`` order (UTF-16 code units), which Kafka sorts racks by."""
    return text.encode("utf-16-be", "surrogatepass")


class _Layout:
    """The broker list one placement walks (rack-alternated when rack-aware), with a cache of
    rows: for an (RF, second shift) pair, the replica tuple of every first index."""

    __slots__ = ("arranged", "n", "n_racks", "rack_aware", "racks", "rows")

    def __init__(self, arranged: Sequence[int], racks: Sequence[str] | None) -> None:
        self.arranged = tuple(arranged)
        self.n = len(self.arranged)
        self.racks = tuple(racks) if racks is not None else None
        self.rack_aware = racks is not None
        self.n_racks = len(set(racks)) if racks is not None else 0
        self.rows: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {}

    def second_shift(self, shift: int) -> int:
        modulus = self.n - 1 if self.n > 1 else 1
        return (shift * self.n_racks if self.rack_aware else shift) % modulus

    def row(self, rf: int, second: int) -> tuple[tuple[int, ...], ...]:
        key = (rf, second)
        row = self.rows.get(key)
        if row is None:
            if self.racks is None:
                row = tuple(
                    _rack_unaware_list(self.arranged, rf, first, second) for first in range(self.n)
                )
            else:
                row = tuple(
                    _rack_aware_list(self.arranged, self.racks, self.n_racks, rf, first, second)
                    for first in range(self.n)
                )
            self.rows[key] = row
        return row


_LAYOUTS: dict[tuple[tuple[Broker, ...], bool | None, bool], _Layout] = {}
_TOPICS: dict[tuple[_Layout, int, int, int, int, int], Assignment] = {}
_TOPIC_CACHE_PARTITIONS = 250_000  # about 20 MB at most
_topic_cache_size = 0


_LAST: list[Any] = [None, None, None, None]  # the last (brokers, rack_aware, keep_order, layout)


def placement_layout(
    brokers: Sequence[Broker], rack_aware: bool | None, keep_order: bool = False
) -> _Layout:
    last = _LAST
    if brokers is last[0] and rack_aware is last[1] and keep_order is last[2]:
        return last[3]  # type: ignore[no-any-return]  # the same tuple as the last call's
    key = (tuple(brokers), rack_aware, keep_order)
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = _build_layout(key[0], rack_aware, keep_order)
        if len(_LAYOUTS) >= 256:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    if type(brokers) is tuple:  # immutable, of frozen brokers: the same object, the same layout
        _LAST[:] = [brokers, rack_aware, keep_order, layout]
    return layout


def _build_layout(
    brokers: Sequence[Broker], rack_aware: bool | None, keep_order: bool = False
) -> _Layout:
    ordered = sorted(brokers, key=lambda b: b.id)
    for a, b in itertools.pairwise(ordered):
        if a.id == b.id:
            raise AssignmentError(f"Broker {a.id} is listed more than once.")
    if keep_order:
        ordered = list(brokers)
    with_rack = [b for b in ordered if b.rack is not None]
    if rack_aware is None:
        rack_aware = bool(with_rack)
    if rack_aware and len(with_rack) != len(ordered):
        raise BrokerMetadataError(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    if not rack_aware:
        return _Layout([b.id for b in ordered], None)
    rack_of = {b.id: b.rack for b in ordered if b.rack is not None}
    arranged = rack_alternated_brokers(rack_of)
    return _Layout(arranged, [rack_of[b] for b in arranged])


def _rack_unaware_list(
    brokers: Sequence[int], rf: int, first_index: int, second_shift: int
) -> tuple[int, ...]:
    n = len(brokers)
    followers = (brokers[replica_index(first_index, second_shift, j, n)] for j in range(rf - 1))
    return (brokers[first_index], *followers)


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


def _i32(value: int) -> int:
    """A Java int: ``value`` wrapped to 32 bits, as Java's int arithmetic does."""
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _jrem(a: int, b: int) -> int:
    """Java's ``a % b`` (b > 0): the remainder keeps the sign of ``a``."""
    r = abs(a) % b
    return -r if a < 0 else r


def _wraps(layout: _Layout, rf: int, partition: int, start_index: int, shift: int) -> bool:
    """Whether Kafka's ints could wrap placing this partition: ``partition + startIndex`` past
    2^31 - 1, or (rack-aware) ``shift * racks + attempt`` near it (the attempt counter stays
    below (RF - 1) * (n - 1) while nothing wraps)."""
    n = layout.n
    if partition + start_index > INT_MAX:
        return True
    return (
        layout.rack_aware
        and rf > 1
        and n > 1
        and shift * layout.n_racks + (rf - 1) * (n - 1) - 1 > INT_MAX
    )


def _overflow(partition: int, start_index: int, shift: int, n: int, index: int) -> NoReturn:
    raise PlacementOverflow(
        f"Kafka cannot place partition {partition} with start index {start_index} and replica "
        f"shift {shift} on {n} brokers: its 32-bit arithmetic wraps around and AdminUtils "
        f"fails (index {index} out of bounds); use a start index below the broker count."
    )


def _java_list(
    layout: _Layout, rf: int, partition: int, start_index: int, shift: int
) -> tuple[int, ...]:
    """One partition's replicas computed as AdminUtils computes them in Java ints.

    Kafka 3.9 ``AdminUtils.java``: ``firstReplicaIndex = (currentPartitionId + startIndex) %
    n`` and, rack-aware, ``replicaIndex(first, nextReplicaShift * numRacks, k, n)`` with
    ``1 + (secondReplicaShift + k) % (n - 1)``, all in ints. A sum past 2^31 - 1 turns
    negative and Java's ``%`` keeps the sign: a negative index makes Kafka throw
    IndexOutOfBoundsException (PlacementOverflow here); otherwise Kafka places the replicas
    where the wrapped numbers say, even off its own rule, and so does this. Start index 7 on
    5 brokers: partition 2^31 - 8 is the last one placed without a wrap; 2^31 - 7 sums to
    -2^31, and -2^31 % 5 = -3 in Java: Kafka throws.
    """
    n = layout.n
    first = _jrem(_i32(partition + start_index), n)
    if first < 0:
        _overflow(partition, start_index, shift, n, first)
    if not layout.rack_aware or not _wraps(layout, rf, 0, 0, shift):
        return layout.row(rf, layout.second_shift(shift))[first]
    arranged, racks = layout.arranged, layout.racks or ()
    second = _i32(shift * layout.n_racks)
    replicas = [arranged[first]]
    racks_used = {racks[first]}
    brokers_used = {arranged[first]}
    k = 0
    for _ in range(rf - 1):
        misses = 0
        sign = 0
        while True:
            total = _i32(second + k)
            if (total < 0) != (sign < 0):
                misses, sign = 0, total
            idx = _jrem(first + 1 + _jrem(total, n - 1), n)
            if idx < 0:
                _overflow(partition, start_index, shift, n, idx)
            k += 1
            broker, rack = arranged[idx], racks[idx]
            if (rack not in racks_used or len(racks_used) == layout.n_racks) and (
                broker not in brokers_used or len(brokers_used) == n
            ):
                replicas.append(broker)
                racks_used.add(rack)
                brokers_used.add(broker)
                break
            misses += 1
            if misses >= n - 1 and total < 0:
                # A negative sum visits the same n - 1 positions over and over until it
                # reaches 0 (Kafka's loop runs that long): go straight there.
                k += -_i32(second + k)
                misses = 0
    return tuple(replicas)


def _check_index(name: str, value: int) -> None:
    if not 0 <= value < MAX_START_INDEX:
        raise AssignmentError(f"{name} must be between 0 and {MAX_START_INDEX - 1}, not {value}.")


def assign_replicas(
    brokers: Sequence[Broker],
    n_partitions: int,
    replication_factor: int,
    *,
    start_index: int,
    replica_shift: int | None = None,
    start_partition: int = 0,
    rack_aware: bool | None = None,
    keep_order: bool = False,
) -> Assignment:
    """Kafka's ``assignReplicasToBrokers`` with its randomness made explicit.

    ``start_index`` and ``replica_shift`` are Kafka's startIndex and nextReplicaShift; its
    ``fixedStartIndex`` sets both to the same value (the default here). ``start_partition`` is
    the first partition id placed (the existing count when partitions are added).

    ``rack_aware=None`` decides as Kafka does: rack-aware when any broker has a rack (then
    every broker must have one: BrokerMetadataError otherwise), rack-unaware when none has.
    ``False`` forces rack-unaware placement even when racks are known (kgitops'
    ``placement: rack-unaware``). The result maps partition id to the replica tuple, first
    replica = preferred leader.

    ``keep_order``: AdminUtils itself walks the broker list in the order it is given; Kafka's
    tools (``kafka-reassign-partitions.sh``, topic creation) sort it by id first, which is the
    default here. Only rack-unaware placement depends on it: the rack-aware walk sorts racks
    and the ids inside each rack itself. With ``[3, 1, 2]``, RF 1, start index 0: partition 0
    goes to broker 3 in the given order, to broker 1 sorted.

    >>> from kgitops.model import Broker
    >>> assign_replicas([Broker(i) for i in range(5)], 10, 3, start_index=0)[5]
    (0, 2, 3)
    """
    _check(n_partitions, replication_factor, len(brokers))
    shift0 = start_index if replica_shift is None else replica_shift
    _check_index("The start index", start_index)
    _check_index("The replica shift", shift0)
    start_partition = max(0, start_partition)
    layout = placement_layout(brokers, rack_aware, keep_order)
    if start_partition + n_partitions - 1 > INT_MAX:
        raise PlacementOverflow(
            f"Partition ids {start_partition}..{start_partition + n_partitions - 1} pass "
            "2^31 - 1: Kafka's partition ids are 32-bit."
        )
    n = layout.n
    key = (layout, n_partitions, replication_factor, start_index, shift0, start_partition)
    cached = _TOPICS.get(key)
    if cached is not None:
        return cached.copy()

    result: Assignment = {}
    p = start_partition
    end = start_partition + n_partitions
    while p < end:
        block_end = min(end, (p // n + 1) * n)
        shift = _shift_at(p, start_partition, shift0, n)
        if _wraps(layout, replication_factor, block_end - 1, start_index, shift):
            for q in range(p, block_end):
                result[q] = _java_list(layout, replication_factor, q, start_index, shift)
            p = block_end
            continue
        row = layout.row(replication_factor, layout.second_shift(shift))
        first = (p + start_index) % n
        count = block_end - p
        if first + count <= n:
            run = row[first : first + count]
        else:
            run = row[first:] + row[: first + count - n]
        result.update(zip(range(p, block_end), run, strict=True))
        p = block_end

    global _topic_cache_size
    if n_partitions <= _TOPIC_CACHE_PARTITIONS // 25:
        if _topic_cache_size + n_partitions > _TOPIC_CACHE_PARTITIONS:
            _TOPICS.clear()
            _topic_cache_size = 0
        _TOPICS[key] = result.copy()
        _topic_cache_size += n_partitions
    return result


def added_partitions_start_index(brokers: Sequence[Broker], partition0: Sequence[int]) -> int:
    """Kafka's fixed start index for added partitions (docs/algorithms.md, "Added
    partitions"): the position, in the id-sorted broker list, of the first broker whose id
    is >= partition 0's first replica, or 0 when there is none."""
    first = partition0[0]
    for i, broker_id in enumerate(sorted(b.id for b in brokers)):
        if broker_id >= first:
            return i
    return 0


def assign_added_partitions(
    brokers: Sequence[Broker],
    existing: Mapping[int, Sequence[int]],
    total: int,
    *,
    rack_aware: bool | None = None,
) -> Assignment:
    """Kafka's ``createNewPartitionsAssignment`` (0.10+): the new partitions only.

    RF is partition 0's replica count, the fixed start index comes from partition 0's first
    replica, the first new id is the existing count; existing partitions never move. The
    refusals come in Kafka's order (3.9 ``AdminZkClient.createNewPartitionsAssignment``):
    partition 0 missing, then a count that does not grow, then partition 0 without replicas
    (then AdminUtils' own checks: with no brokers at all, RF 0 is refused first).

    >>> from kgitops.model import Broker
    >>> five = [Broker(i) for i in range(5)]
    >>> assign_added_partitions(five, {0: (3, 4, 0), 1: (4, 0, 1)}, 4)
    {2: (0, 4, 1), 3: (1, 0, 2)}
    """
    count = len(existing)
    p0 = existing.get(0)
    if p0 is None:
        raise AssignmentError("Unexpected existing replica assignment: partition id 0 is missing.")
    if total <= count:
        raise InvalidPartitions(
            f"The number of partitions for a topic can only be increased. "
            f"Topic currently has {count} partitions, {total} would not be an increase."
        )
    if not p0 and brokers:
        raise AssignmentError("Unexpected existing replica assignment: partition id 0 is empty.")
    start = added_partitions_start_index(brokers, p0) if brokers else 0
    return assign_replicas(
        brokers,
        total - count,
        len(p0),
        start_index=start,
        start_partition=count,
        rack_aware=rack_aware,
    )


def validate_static_assignment(
    assignment: Sequence[Sequence[int]] | Mapping[int, Sequence[int]],
    broker_ids: Collection[int],
    *,
    replication_factor: int | None = None,
    start_partition: int = 0,
    online: Collection[int] | None = None,
) -> None:
    """The checks Kafka's controller makes on a manual assignment, with its messages.

    ``assignment`` is one replica list per partition (ids ``start_partition, ...``) or a
    mapping partition id -> replicas. Every partition must have at least one replica, only
    registered brokers (``broker_ids``), no broker twice, and the same replica count as the
    first partition (or ``replication_factor``, the topic's RF when partitions are added);
    partition ids must be consecutive. With ``online`` given, a partition whose brokers are
    all offline is refused too. Raises InvalidReplicaAssignment naming the partition.

    >>> validate_static_assignment([[0, 1], [1, 1]], [0, 1])
    Traceback (most recent call last):
    ...
    kgitops.errors.InvalidReplicaAssignment: partition 1: The manual partition assignment \
includes the broker 1 more than once.
    """
    if isinstance(assignment, Mapping):
        items = sorted(assignment.items())
        for i, (pid, _) in enumerate(items):
            if pid != start_partition + i:
                raise InvalidReplicaAssignment(
                    "partitions should be a consecutive 0-based integer sequence"
                    + (f" starting at {start_partition}" if start_partition else "")
                    + f"; partition {start_partition + i} is missing."
                )
    else:
        items = [(start_partition + i, r) for i, r in enumerate(assignment)]
    if not items:
        raise InvalidReplicaAssignment("The manual partition assignment includes no partitions.")
    registered = set(broker_ids)
    alive = None if online is None else set(online)
    expected = replication_factor
    for pid, replicas in items:
        where = f"partition {pid}: "
        if len(replicas) == 0:
            raise InvalidReplicaAssignment(
                where + "The manual partition assignment includes an empty replica list."
            )
        previous: int | None = None
        for broker in sorted(replicas):
            if broker not in registered:
                raise InvalidReplicaAssignment(
                    where + f"The manual partition assignment includes broker {broker}, "
                    "but no such broker is registered."
                )
            if broker == previous:
                raise InvalidReplicaAssignment(
                    where + f"The manual partition assignment includes the broker {broker} "
                    "more than once."
                )
            previous = broker
        if expected is not None and len(replicas) != expected:
            raise InvalidReplicaAssignment(
                where + f"The manual partition assignment includes a partition with "
                f"{len(replicas)} replica(s), but this is not consistent with previous "
                f"partitions, which have {expected} replica(s)."
            )
        expected = len(replicas)
        if alive is not None and not any(b in alive for b in replicas):
            raise InvalidReplicaAssignment(
                f"All brokers specified in the manual partition assignment for partition {pid} "
                "are fenced or in controlled shutdown."
            )
