"""Consumer-group assignors: the examples of docs/algorithms.md and Kafka's own assignor tests,
exactly; hypothesis properties for the sticky assignor (balance, validity, minimal movement)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.placement.consumers import (
    assign_range,
    assign_round_robin,
    assign_sticky,
    is_balanced,
    java_hashmap_order,
    moved_partitions,
)

BOTH = {"C0": ["t0", "t1"], "C1": ["t0", "t1"]}
THREE_EACH = {"t0": 3, "t1": 3}


def test_seed_001_range_example() -> None:
    assert assign_range(BOTH, THREE_EACH) == {
        "C0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)],
        "C1": [("t0", 2), ("t1", 2)],
    }


def test_seed_001_round_robin_example() -> None:
    assert assign_round_robin(BOTH, THREE_EACH) == {
        "C0": [("t0", 0), ("t0", 2), ("t1", 1)],
        "C1": [("t0", 1), ("t1", 0), ("t1", 2)],
    }


def test_kafka_round_robin_skips_members_not_subscribed() -> None:
    members = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    assert assign_round_robin(members, {"t0": 1, "t1": 2, "t2": 3}) == {
        "C0": [("t0", 0)],
        "C1": [("t1", 0)],
        "C2": [("t1", 1), ("t2", 0), ("t2", 1), ("t2", 2)],
    }


def test_kafka_round_robin_three_members_two_topics() -> None:
    members = {c: ["t0", "t1"] for c in ["C0", "C1", "C2"]}
    assert assign_round_robin(members, THREE_EACH) == {
        "C0": [("t0", 0), ("t1", 0)],
        "C1": [("t0", 1), ("t1", 1)],
        "C2": [("t0", 2), ("t1", 2)],
    }


def test_kafka_range_only_subscribed_topics_and_missing_topics_ignored() -> None:
    members = {"c1": ["topic", "other"], "c2": ["topic"]}
    assert assign_range(members, {"topic": 3}) == {
        "c1": [("topic", 0), ("topic", 1)],
        "c2": [("topic", 2)],
    }


def test_kafka_range_more_consumers_than_partitions() -> None:
    members = {"consumer1": ["topic"], "consumer2": ["topic"]}
    assert assign_range(members, {"topic": 1}) == {
        "consumer1": [("topic", 0)],
        "consumer2": [],
    }


def test_members_sort_as_java_strings_not_as_python_code_points() -> None:
    # U+1F600 sorts after U+FF21 in Python, before it in Java (its UTF-16 form starts D83D)
    members = {"\U0001f600": ["t"], "\uff21": ["t"]}
    assert assign_range(members, {"t": 2}) == {"\U0001f600": [("t", 0)], "\uff21": [("t", 1)]}


# ---------------------------------------------------------------- sticky: Kafka's tests

T1, T2 = "topic1", "topic2"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"


def test_kafka_hashmap_order_of_the_test_members() -> None:
    assert java_hashmap_order([C1, C2, C3]) == [C3, C2, C1]


def test_kafka_sticky_two_consumers_two_topics_six_partitions() -> None:
    members = {C1: [T1, T2], C2: [T1, T2]}
    assert assign_sticky(members, {T1: 3, T2: 3}) == {
        C1: [(T1, 0), (T1, 2), (T2, 1)],
        C2: [(T1, 1), (T2, 0), (T2, 2)],
    }


def test_kafka_sticky_mixed_subscriptions() -> None:
    members = {C1: [T1], C2: [T1, T2], C3: [T1]}
    assert assign_sticky(members, {T1: 3, T2: 2}) == {
        C1: [(T1, 0), (T1, 2)],
        C2: [(T2, 0), (T2, 1)],
        C3: [(T1, 1)],
    }


def test_kafka_sticky_consumer_owning_min_quota_expected_max_quota() -> None:
    members = {C1: [T1, T2], C2: [T1, T2]}
    previous = {C1: [(T1, 0), (T2, 1)], C2: [(T1, 1), (T2, 2)]}
    assert assign_sticky(members, {T1: 2, T2: 3}, previous) == {
        C1: [(T1, 0), (T2, 1), (T2, 0)],
        C2: [(T1, 1), (T2, 2)],
    }


def test_kafka_sticky_max_quota_members_more_than_expected() -> None:
    members = {C1: [T1, T2], C2: [T1, T2], C3: [T1, T2]}
    previous = {C1: [(T1, 0), (T2, 0)], C2: [(T1, 1), (T2, 1)], C3: []}
    assert assign_sticky(members, {T1: 2, T2: 2}, previous) == {
        C1: [(T1, 0)],
        C2: [(T1, 1), (T2, 1)],
        C3: [(T2, 0)],
    }


def test_kafka_sticky_all_consumers_under_min_quota() -> None:
    members = {C1: [T1, T2], C2: [T1, T2], C3: [T1, T2]}
    previous = {C1: [(T1, 0)], C2: [(T1, 1)], C3: []}
    assert assign_sticky(members, {T1: 2, T2: 3}, previous) == {
        C1: [(T1, 0), (T2, 1)],
        C2: [(T1, 1), (T2, 2)],
        C3: [(T2, 0)],
    }


def test_kafka_sticky_add_then_remove_a_consumer() -> None:
    first = assign_sticky({C1: ["topic"]}, {"topic": 3})
    assert first == {C1: [("topic", 0), ("topic", 1), ("topic", 2)]}
    second = assign_sticky({C1: ["topic"], C2: ["topic"]}, {"topic": 3}, first)
    assert second == {C1: [("topic", 0), ("topic", 1)], C2: [("topic", 2)]}
    third = assign_sticky({C2: ["topic"]}, {"topic": 3}, second)
    assert sorted(third[C2]) == [("topic", 0), ("topic", 1), ("topic", 2)]


def test_kafka_sticky_topic_balance_after_reassignment() -> None:
    topics = {T1: 12, T2: 12}
    names = ["consumer1", "consumer2", "consumer3", "consumer4"]
    a = assign_sticky({names[0]: [T1, T2]}, topics)
    a = assign_sticky({n: [T1, T2] for n in names[:2]}, topics, a)
    assert all(sum(1 for t, _ in tps if t == T1) == 6 for tps in a.values())
    a = assign_sticky({n: [T1, T2] for n in names}, topics, a)
    assert all(sum(1 for t, _ in tps if t == T1) == 3 for tps in a.values())
    a = assign_sticky({n: [T1, T2] for n in names[2:]}, topics, a)
    assert all(sum(1 for t, _ in tps if t == T2) == 6 for tps in a.values())


def test_kafka_sticky_doubly_claimed_partition_is_owned_by_neither() -> None:
    members = {C1: ["t"], C2: ["t"]}
    previous = {C1: [("t", 0), ("t", 1)], C2: [("t", 0)]}
    result = assign_sticky(members, {"t": 2}, previous)
    assert result[C1][0] == ("t", 1)
    assert sorted(result[C1] + result[C2]) == [("t", 0), ("t", 1)]


def test_sticky_ignores_partitions_of_topics_no_longer_subscribed() -> None:
    result = assign_sticky({"c": ["topic"]}, {"topic": 2}, {"c": [("other", 0), ("topic", 1)]})
    assert result == {"c": [("topic", 1), ("topic", 0)]}


# ---------------------------------------------------------------- sticky: properties

names = st.lists(st.sampled_from([f"m{i}" for i in range(8)]), min_size=1, max_size=6, unique=True)
counts = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 9), min_size=1)


def _all(partitions: dict[str, int], members: dict[str, list[str]]) -> set[tuple[str, int]]:
    subscribed = {t for ts in members.values() for t in ts}
    return {(t, p) for t, n in partitions.items() if t in subscribed for p in range(n)}


def _check_valid(
    result: dict[str, list[tuple[str, int]]],
    members: dict[str, list[str]],
    partitions: dict[str, int],
) -> None:
    flat = [tp for tps in result.values() for tp in tps]
    assert len(flat) == len(set(flat))
    assert set(flat) == _all(partitions, members)
    for m, tps in result.items():
        assert all(t in members[m] for t, _ in tps)


@settings(max_examples=150, deadline=None)
@given(names, counts, st.data())
def test_sticky_with_equal_subscriptions_is_within_one_and_moves_the_minimum(
    group: list[str], partitions: dict[str, int], data: st.DataObject
) -> None:
    topics = sorted(partitions)
    members = {m: topics for m in group}
    universe = sorted(_all(partitions, members))
    owners = data.draw(
        st.lists(st.sampled_from([*group, None]), min_size=len(universe), max_size=len(universe))
    )
    previous: dict[str, list[tuple[str, int]]] = {m: [] for m in group}
    for tp, owner in zip(universe, owners, strict=True):
        if owner is not None:
            previous[owner].append(tp)
    result = assign_sticky(members, partitions, previous)
    _check_valid(result, members, partitions)
    sizes = [len(v) for v in result.values()]
    assert max(sizes) - min(sizes) <= 1
    # the fewest moves balance allows: each member keeps min(owned, its final size) at best
    hi = -(-len(universe) // len(group))
    lo = len(universe) // len(group)
    n_hi = len(universe) - lo * len(group)
    keep = sorted((len(previous[m]) for m in group), reverse=True)
    best_kept = sum(min(k, hi) for k in keep[:n_hi]) + sum(min(k, lo) for k in keep[n_hi:])
    owned = sum(keep)
    assert moved_partitions(previous, result) == owned - best_kept


@settings(max_examples=150, deadline=None)
@given(names, counts, st.data())
def test_sticky_with_any_subscriptions_is_balanced_by_kafkas_criterion(
    group: list[str], partitions: dict[str, int], data: st.DataObject
) -> None:
    topics = sorted(partitions)
    members = {
        m: data.draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for m in group
    }
    first = assign_sticky(members, partitions)
    _check_valid(first, members, partitions)
    assert is_balanced(first, members)
    # nothing changed: nothing moves
    again = assign_sticky(members, partitions, first)
    assert moved_partitions(first, again) == 0
    assert {m: sorted(v) for m, v in again.items()} == {m: sorted(v) for m, v in first.items()}


def test_range_and_round_robin_cover_every_partition_once() -> None:
    members = {"a": ["x", "y"], "b": ["y"], "c": ["x"]}
    partitions = {"x": 5, "y": 4}
    for result in (assign_range(members, partitions), assign_round_robin(members, partitions)):
        _check_valid(result, members, partitions)


def test_kafka_range_and_round_robin_multiple_consumers_mixed_topics() -> None:
    members = {C1: [T1], C2: [T1, T2], C3: [T1]}
    expected = {C1: [(T1, 0)], C2: [(T1, 1), (T2, 0), (T2, 1)], C3: [(T1, 2)]}
    assert assign_range(members, {T1: 3, T2: 2}) == expected
    assert assign_round_robin(members, {T1: 3, T2: 2}) == expected


def test_kafka_range_two_consumers_two_topics_six_partitions() -> None:
    members = {C1: [T1, T2], C2: [T1, T2]}
    assert assign_range(members, {T1: 3, T2: 3}) == {
        C1: [(T1, 0), (T1, 1), (T2, 0), (T2, 1)],
        C2: [(T1, 2), (T2, 2)],
    }


def test_sticky_member_gives_up_partitions_of_topics_it_left() -> None:
    members = {"a": ["x"], "b": ["x", "y"]}
    previous = {"a": [("x", 0), ("y", 0)], "b": [("x", 1)]}
    result = assign_sticky(members, {"x": 2, "y": 1}, previous)
    assert result == {"a": [("x", 0)], "b": [("x", 1), ("y", 0)]}


@settings(max_examples=150, deadline=None)
@given(names, counts, st.data())
def test_sticky_from_any_previous_ownership_is_valid_and_balanced(
    group: list[str], partitions: dict[str, int], data: st.DataObject
) -> None:
    topics = sorted(partitions)
    members = {
        m: data.draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for m in group
    }
    universe = sorted((t, p) for t, n in partitions.items() for p in range(n))
    previous: dict[str, list[tuple[str, int]]] = {m: [] for m in group}
    for tp in universe:
        for owner in data.draw(st.lists(st.sampled_from(group), max_size=2)):
            previous[owner].append(tp)
    result = assign_sticky(members, partitions, previous)
    _check_valid(result, members, partitions)
    assert is_balanced(result, members)
