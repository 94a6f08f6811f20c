"""Kafka's consumer-group partition assignors: range, round-robin and sticky.

``members`` maps a member name to the topics it subscribes to; ``partitions`` maps a topic to
its partition count; a result maps every member to its ``(topic, partition)`` list. Topics
that nobody subscribes to, or that do not exist, are not assigned (as Kafka does). Names sort
as Java's ``String.compareTo`` does (UTF-16 code units), since that is Kafka's order.

Seed 001's example: members C0 and C1, topics t0 and t1 with 3 partitions each::

    range        C0: t0-0 t0-1 t1-0 t1-1     per topic, the first members take one extra
                 C1: t0-2 t1-2
    round-robin  C0: t0-0 t0-2 t1-1          all partitions sorted, members in a circle
                 C1: t0-1 t1-0 t1-2

The sticky assignor (``StickyAssignor`` / ``CooperativeStickyAssignor``) keeps what each member
owned and moves only what balance requires. When every member subscribes to the same topics
it is Kafka's constrained algorithm step for step (so members are visited in Java
``HashMap`` order, as the group leader does); otherwise a general algorithm brings the group to
Kafka's balance criterion (no partition could move to a subscribed member with at least two
fewer) while keeping every owned partition that criterion allows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

TopicPartition = tuple[str, int]
GroupAssignment = dict[str, list[TopicPartition]]


def java_order(text: str) -> bytes:
    """A sort key giving Java's ``String.compareTo`` order."""
    return text.encode("utf-16-be", "surrogatepass")


def _java_hash(text: str) -> int:
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(names: Sequence[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` into which ``names`` were put in order:
    by bucket (spread String hash & (capacity - 1)), then by insertion inside a bucket."""
    capacity = 16
    while len(names) > capacity * 3 // 4:
        capacity *= 2

    def bucket(name: str) -> int:
        h = _java_hash(name)
        return (h ^ (h >> 16)) & (capacity - 1)

    return [name for _, _, name in sorted((bucket(n), i, n) for i, n in enumerate(names))]


def _topics_in_play(
    members: Mapping[str, Collection[str]], partitions: Mapping[str, int]
) -> list[str]:
    subscribed = {t for topics in members.values() for t in topics}
    return sorted((t for t in subscribed if partitions.get(t, 0) > 0), key=java_order)


def assign_range(
    members: Mapping[str, Collection[str]], partitions: Mapping[str, int]
) -> GroupAssignment:
    """Kafka's ``RangeAssignor``: per topic, partitions in order are cut into contiguous
    ranges, one per subscribed member in name order; the first ``count % members`` members
    get one extra."""
    result: GroupAssignment = {m: [] for m in members}
    for topic in _topics_in_play(members, partitions):
        consumers = sorted((m for m, ts in members.items() if topic in ts), key=java_order)
        count = partitions[topic]
        per, extra = divmod(count, len(consumers))
        for i, consumer in enumerate(consumers):
            start = per * i + min(i, extra)
            length = per + (1 if i < extra else 0)
            result[consumer].extend((topic, p) for p in range(start, start + length))
    return result


def assign_round_robin(
    members: Mapping[str, Collection[str]], partitions: Mapping[str, int]
) -> GroupAssignment:
    """Kafka's ``RoundRobinAssignor``: every partition, sorted by topic then id, goes to the
    next member of the name-sorted circle, skipping members not subscribed to its topic."""
    result: GroupAssignment = {m: [] for m in members}
    circle = sorted(members, key=java_order)
    subscriptions = {m: set(members[m]) for m in circle}
    position = 0
    for topic in _topics_in_play(members, partitions):
        for p in range(partitions[topic]):
            while topic not in subscriptions[circle[position]]:
                position = (position + 1) % len(circle)
            result[circle[position]].append((topic, p))
            position = (position + 1) % len(circle)
    return result


def assign_sticky(
    members: Mapping[str, Collection[str]],
    partitions: Mapping[str, int],
    previous: Mapping[str, Iterable[TopicPartition]] | None = None,
) -> GroupAssignment:
    """A sticky assignment: balanced (within one partition when subscriptions are equal) and,
    given the ``previous`` assignment, moving as few partitions as that balance allows.

    A partition that two members both claim in ``previous`` is owned by neither (Kafka's rule
    for claims in one generation). Members keep Kafka's list order: kept partitions first.
    """
    previous = previous or {}
    names = list(members)
    if not names:
        return {}
    topics = _topics_in_play(members, partitions)
    universe = set(topics)

    claims: dict[TopicPartition, str] = {}
    doubly: set[TopicPartition] = set()
    owned: dict[str, list[TopicPartition]] = {m: [] for m in names}
    for member in names:
        for tp in previous.get(member, ()):
            topic, p = tp
            if topic not in universe or not 0 <= p < partitions[topic]:
                continue
            other = claims.get(tp)
            if other is None:
                owned[member].append(tp)
                claims[tp] = member
            elif other != member:
                doubly.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
    for member in names:
        subscribed = set(members[member])
        owned[member] = [tp for tp in owned[member] if tp not in doubly and tp[0] in subscribed]

    subscription_sets = [frozenset(members[m]) for m in names]
    if all(s == subscription_sets[0] for s in subscription_sets):
        return _constrained(names, topics, partitions, owned)
    return _general(names, members, topics, partitions, owned)


def _constrained(
    names: Sequence[str],
    topics: Sequence[str],
    partitions: Mapping[str, int],
    owned: Mapping[str, list[TopicPartition]],
) -> GroupAssignment:
    """Kafka's ``ConstrainedAssignmentBuilder`` (no racks), step for step."""
    total = sum(partitions[t] for t in topics)
    n_members = len(names)
    min_quota, expected_over = divmod(total, n_members)
    max_quota = min_quota + (1 if expected_over else 0)
    current_over = 0
    assignment: GroupAssignment = {m: [] for m in names}
    assigned: set[TopicPartition] = set()
    under: list[str] = []
    exact: list[str] = []

    for member in java_hashmap_order(names):
        mine = sorted(owned[member], key=lambda tp: (tp[1], java_order(tp[0])))
        if len(mine) < min_quota:
            kept = mine
            under.append(member)
        elif len(mine) >= max_quota and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exact.clear()
            kept = mine[:max_quota]
        else:
            kept = mine[:min_quota]
            if current_over < expected_over:
                exact.append(member)
        assignment[member].extend(kept)
        assigned.update(kept)

    unassigned = [(t, p) for t in topics for p in range(partitions[t]) if (t, p) not in assigned]
    under.sort(key=java_order)
    exact.sort(key=java_order)

    position = 0  # a java.util.Iterator over `under`, with remove()
    for tp in unassigned:
        if position < len(under):
            member = under[position]
            position += 1
        elif not under and not exact:
            raise AssertionError("sticky assignment: no member left to fill")  # pragma: no cover
        elif not under:
            member = exact.pop(0)
        else:
            position = 1
            member = under[0]
        assignment[member].append(tp)
        count = len(assignment[member])
        if count == min_quota:
            position -= 1
            del under[position]
            exact.append(member)
        elif count == max_quota:
            current_over += 1
    return assignment


def _general(
    names: Sequence[str],
    members: Mapping[str, Collection[str]],
    topics: Sequence[str],
    partitions: Mapping[str, int],
    owned: Mapping[str, list[TopicPartition]],
) -> GroupAssignment:
    """Differing subscriptions: keep owned partitions, give each free partition (those with
    the fewest candidate members first) to the least-loaded subscribed member, then move
    partitions from a member to a subscribed one with at least two fewer until none can."""
    order = {m: java_order(m) for m in names}
    subscribers = {t: [m for m in names if t in members[m]] for t in topics}
    assignment: GroupAssignment = {m: list(owned[m]) for m in names}
    taken = {tp for tps in assignment.values() for tp in tps}
    free = [(t, p) for t in topics for p in range(partitions[t]) if (t, p) not in taken]
    free.sort(key=lambda tp: (len(subscribers[tp[0]]), java_order(tp[0]), tp[1]))
    fresh: set[TopicPartition] = set()
    for tp in free:
        member = min(subscribers[tp[0]], key=lambda m: (len(assignment[m]), order[m]))
        assignment[member].append(tp)
        fresh.add(tp)

    while True:
        move = _one_balancing_move(names, order, subscribers, assignment, fresh)
        if move is None:
            break
        giver, taker, tp = move
        assignment[giver].remove(tp)
        assignment[taker].append(tp)
        fresh.add(tp)
    return assignment


def _one_balancing_move(
    names: Sequence[str],
    order: Mapping[str, bytes],
    subscribers: Mapping[str, Sequence[str]],
    assignment: GroupAssignment,
    fresh: set[TopicPartition],
) -> tuple[str, str, TopicPartition] | None:
    """The move that the most loaded possible giver can make to the least loaded subscribed
    member with at least two fewer, preferring partitions it did not own before."""
    for giver in sorted(names, key=lambda m: (-len(assignment[m]), order[m])):
        size = len(assignment[giver])
        takers: dict[str, str | None] = {}
        best: tuple[tuple[bool, bytes, int], str, TopicPartition] | None = None
        for tp in assignment[giver]:
            topic = tp[0]
            if topic not in takers:
                taker = min(subscribers[topic], key=lambda m: (len(assignment[m]), order[m]))
                takers[topic] = taker if len(assignment[taker]) < size - 1 else None
            chosen = takers[topic]
            if chosen is None:
                continue
            rank = (tp not in fresh, java_order(topic), tp[1])
            if best is None or rank < best[0]:
                best = (rank, chosen, tp)
        if best is not None:
            return giver, best[1], best[2]
    return None


def is_balanced(
    assignment: Mapping[str, Sequence[TopicPartition]], members: Mapping[str, Collection[str]]
) -> bool:
    """Kafka's balance criterion: no partition could move to a member subscribed to its topic
    that holds at least two fewer partitions."""
    sizes = {m: len(tps) for m, tps in assignment.items()}
    for member, tps in assignment.items():
        for topic, _ in tps:
            for other in members:
                if topic in members[other] and sizes[other] < sizes[member] - 1:
                    return False
    return True


def moved_partitions(
    before: Mapping[str, Iterable[TopicPartition]], after: Mapping[str, Iterable[TopicPartition]]
) -> int:
    """How many partitions that had an owner before now have a different one."""
    owner = {tp: m for m, tps in before.items() for tp in tps}
    return sum(1 for m, tps in after.items() for tp in tps if tp in owner and owner[tp] != m)
