"""Minimal-movement rebalancing: worked examples with exact answers, and hypothesis properties:
drain moves exactly the drained replicas, RF increase only adds, RF decrease only removes,
racks never fewer than before, no broker twice."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping
from itertools import chain
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kgitops.errors import InvalidReplicationFactor
from kgitops.model import Broker
from kgitops.placement.assignment import assign_added_partitions, assign_replicas
from kgitops.placement.rebalance import Target, rebalance
from kgitops.placement.reproduce import find_placement

ABAB = [Broker(0, "a"), Broker(1, "b"), Broker(2, "a"), Broker(3, "b")]
SIX = [Broker(i, f"r{i % 3}") for i in range(6)]


def apply(
    current: Mapping[int, tuple[int, ...]], targets: Mapping[int, Target]
) -> dict[int, tuple[int, ...]]:
    return {p: targets[p].replicas if p in targets else r for p, r in current.items()}


def test_docstring_example_drain_replaces_in_place_within_the_rack() -> None:
    assert rebalance({0: (0, 1), 1: (1, 2)}, ABAB, drain=[1]) == {
        0: Target((0, 3), "broker 1 is drained"),
        1: Target((3, 2), "broker 1 is drained"),
    }


def test_nothing_to_do_returns_nothing() -> None:
    current = assign_replicas(SIX, 12, 3, start_index=2)
    assert rebalance(current, SIX) == {}


def test_rf_increase_of_an_admin_utils_topic_is_kafkas_placement_extended() -> None:
    current = assign_replicas(SIX, 12, 2, start_index=4)
    targets = rebalance(current, SIX, replication_factor=3)
    assert apply(current, targets) == assign_replicas(SIX, 12, 3, start_index=4)
    assert all("Kafka's placement, extended" in t.reason for t in targets.values())


def test_rf_increase_uses_the_lock_broker_list_when_brokers_were_added() -> None:
    current = assign_replicas(SIX, 12, 2, start_index=1)
    grown = [*SIX, Broker(6, "r0"), Broker(7, "r1")]
    targets = rebalance(current, grown, replication_factor=3, placement_brokers=SIX)
    assert apply(current, targets) == assign_replicas(SIX, 12, 3, start_index=1)


def test_rf_increase_of_a_hand_made_topic_picks_the_least_loaded_new_rack() -> None:
    targets = rebalance({0: (0, 1), 1: (0, 1)}, SIX, replication_factor=3, load={5: 10})
    assert targets == {
        0: Target((0, 1, 2), "replication factor 2 -> 3"),
        1: Target((0, 1, 2), "replication factor 2 -> 3"),
    }


def test_rf_decrease_keeps_the_leader_and_the_rack_spread() -> None:
    # 0 (r0), 3 (r0), 1 (r1): removing 3 keeps two racks
    assert rebalance({0: (0, 3, 1)}, SIX, replication_factor=2) == {
        0: Target((0, 1), "replication factor 3 -> 2")
    }


def test_rf_decrease_removes_drained_replicas_first() -> None:
    targets = rebalance({0: (0, 1, 2)}, SIX, replication_factor=2, drain=[1])
    assert targets[0].replicas == (0, 2)


def test_rack_repair_moves_one_replica_to_the_missing_rack() -> None:
    targets = rebalance({0: (0, 3, 1)}, SIX)  # r0, r0, r1
    assert targets == {0: Target((0, 2, 1), "the partition is on 2 rack(s) and can be on 3")}


def test_rack_repair_can_be_turned_off() -> None:
    assert rebalance({0: (0, 3, 1)}, SIX, spread_racks=False) == {}


def test_new_replicas_avoid_offline_brokers() -> None:
    brokers = [Broker(0), Broker(1), Broker(2, online=False), Broker(3)]
    assert rebalance({0: (0, 1)}, brokers, replication_factor=3)[0].replicas == (0, 1, 3)


def test_draining_too_much_is_a_clear_error() -> None:
    with pytest.raises(InvalidReplicationFactor, match="only 1 are"):
        rebalance({0: (0, 1)}, [Broker(0), Broker(1), Broker(2)], drain=[0, 1])
    with pytest.raises(InvalidReplicationFactor, match="larger than available brokers: 3"):
        rebalance({0: (0, 1)}, [Broker(0), Broker(1), Broker(2)], replication_factor=4)


# ---------------------------------------------------------------- properties


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Broker], dict[int, tuple[int, ...]]]:
    n = draw(st.integers(2, 9))
    ids = sorted(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n, unique=True)))
    n_racks = draw(st.integers(0, 4))
    brokers = [
        Broker(i, None if n_racks == 0 else f"r{draw(st.integers(0, n_racks - 1))}") for i in ids
    ]
    rf = draw(st.integers(1, n))
    count = draw(st.integers(1, 30))
    if draw(st.booleans()):
        current = assign_replicas(brokers, count, rf, start_index=draw(st.integers(0, 20)))
    else:
        current = {p: tuple(draw(st.permutations(ids))[:rf]) for p in range(count)}
    return brokers, current


def racks_of(brokers: list[Broker], replicas: tuple[int, ...]) -> int:
    rack = {b.id: b.rack for b in brokers}
    return len({rack[b] for b in replicas if rack[b] is not None})


def check_shape(brokers: list[Broker], final: dict[int, tuple[int, ...]], rf: int | None) -> None:
    ids = {b.id for b in brokers}
    for reps in final.values():
        assert len(set(reps)) == len(reps)
        assert set(reps) <= ids
        if rf is not None:
            assert len(reps) == rf


@settings(max_examples=200, deadline=None)
@given(clusters(), st.data())
def test_drain_moves_exactly_the_replicas_on_drained_brokers(
    cluster: tuple[list[Broker], dict[int, tuple[int, ...]]], data: st.DataObject
) -> None:
    brokers, current = cluster
    rf = len(current[0])
    ids = [b.id for b in brokers]
    drain = set(data.draw(st.lists(st.sampled_from(ids), max_size=len(ids) - rf, unique=True)))
    targets = rebalance(current, brokers, drain=drain, spread_racks=False)
    final = apply(current, targets)
    check_shape(brokers, final, rf)
    eligible_racks = len({b.rack for b in brokers if b.id not in drain and b.rack})
    for p, before in current.items():
        after = final[p]
        assert not set(after) & drain
        kept = [b for b in before if b not in drain]
        assert [b for b in after if b in before] == kept  # survivors stay, in order
        assert sum(1 for b in after if b not in before) == len(before) - len(kept)
        assert racks_of(brokers, after) >= min(racks_of(brokers, before), eligible_racks)
        assert (p in targets) == bool(set(before) & drain)
        if p in targets:
            assert "drained" in targets[p].reason


@settings(max_examples=200, deadline=None)
@given(clusters(), st.data())
def test_rf_increase_only_adds(
    cluster: tuple[list[Broker], dict[int, tuple[int, ...]]], data: st.DataObject
) -> None:
    brokers, current = cluster
    rf = len(current[0])
    assume(rf < len(brokers))
    new_rf = data.draw(st.integers(rf + 1, len(brokers)))
    targets = rebalance(current, brokers, replication_factor=new_rf, spread_racks=False)
    final = apply(current, targets)
    check_shape(brokers, final, new_rf)
    for p, before in current.items():
        assert final[p][: len(before)] == before
        assert racks_of(brokers, final[p]) >= racks_of(brokers, before)


@settings(max_examples=200, deadline=None)
@given(clusters(), st.data())
def test_rf_decrease_only_removes_and_keeps_the_leader(
    cluster: tuple[list[Broker], dict[int, tuple[int, ...]]], data: st.DataObject
) -> None:
    brokers, current = cluster
    rf = len(current[0])
    assume(rf > 1)
    new_rf = data.draw(st.integers(1, rf - 1))
    targets = rebalance(current, brokers, replication_factor=new_rf, spread_racks=False)
    final = apply(current, targets)
    check_shape(brokers, final, new_rf)
    for p, before in current.items():
        assert set(final[p]) <= set(before)
        assert final[p][0] == before[0]
        assert racks_of(brokers, final[p]) >= min(racks_of(brokers, before), new_rf)


@settings(max_examples=200, deadline=None)
@given(clusters())
def test_rack_repair_reaches_the_most_racks_with_the_fewest_moves(
    cluster: tuple[list[Broker], dict[int, tuple[int, ...]]],
) -> None:
    brokers, current = cluster
    targets = rebalance(current, brokers)
    final = apply(current, targets)
    check_shape(brokers, final, len(current[0]))
    all_racks = len({b.rack for b in brokers if b.rack})
    racked = all(b.rack for b in brokers)
    for p, before in current.items():
        want = min(len(before), all_racks) if racked else 0
        had = racks_of(brokers, before)
        assert racks_of(brokers, final[p]) >= max(had, want) if racked else final[p] == before
        moved = sum(1 for b in final[p] if b not in before)
        assert moved == max(0, want - had)


def test_rebalance_is_deterministic() -> None:
    current = {p: (0, 1, 2) for p in range(50)}
    brokers = [Broker(i, f"r{i % 2}") for i in range(8)]
    first = rebalance(current, brokers, drain=[1])
    assert first == rebalance(dict(reversed(list(current.items()))), brokers, drain=[1])


def test_rf_increase_after_partition_increases_replays_each_kafka_call() -> None:
    brokers = [Broker(i, f"r{i % 3}") for i in (1, 2, 4, 5, 7, 9, 10)]
    current = assign_replicas(brokers, 8, 2, start_index=5)
    current.update(assign_added_partitions(brokers, current, 13))
    current.update(assign_added_partitions(brokers, current, 21))
    assert find_placement(current, brokers) is not None
    final = apply(current, rebalance(current, brokers, replication_factor=3))
    # what Kafka would have placed had the topic always had RF 3
    expected = assign_replicas(brokers, 8, 3, start_index=5)
    expected.update(assign_added_partitions(brokers, expected, 13))
    expected.update(assign_added_partitions(brokers, expected, 21))
    assert final == expected
    assert all(final[p][:2] == current[p] for p in current)


@given(
    clusters(),
    st.lists(st.integers(0, 2**31), min_size=1, max_size=6),
    st.data(),
)
@settings(max_examples=150, deadline=None)
def test_a_plan_s_running_load_and_shared_rack_verdicts_give_the_same_targets(
    cluster: tuple[list[Broker], dict[int, tuple[int, ...]]],
    seeds: list[int],
    data: st.DataObject,
) -> None:
    """How the plan calls rebalance topic after topic (plan/diff_topic.py ``_targets``): the
    plan's running load, which counts the topic already (``counted``), and one rack-verdict
    cache for the whole plan (``rack_fine``), give the targets the old call gave: a copy of
    the load less the topic's replicas, and a fresh cache per topic. The load then follows
    the moves, as the plan's does."""
    brokers, first = cluster
    ids = [b.id for b in brokers]
    topics = [first]
    for seed in seeds:  # more topics on the same brokers, some sharing replica lists
        rng = random.Random(seed)
        pool = list(first.values())
        rf = len(first[0])
        topics.append(
            {
                p: rng.choice(pool) if rng.random() < 0.5 else tuple(rng.sample(ids, rf))
                for p in range(rng.randint(1, 12))
            }
        )
    drain = data.draw(st.lists(st.sampled_from(ids), max_size=2, unique=True))
    spread = data.draw(st.booleans())
    load: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for topic in topics:
        load.update(chain.from_iterable(topic.values()))
        leaders.update(r[0] for r in topic.values())
    verdicts: dict[tuple[int, ...], bool] = {}
    for topic in topics:
        rf = data.draw(st.sampled_from([None, 1, 2, 3]))
        others, other_leaders = Counter(load), Counter(leaders)
        others.subtract(chain.from_iterable(topic.values()))
        other_leaders.subtract(r[0] for r in topic.values())
        kw: dict[str, Any] = {"replication_factor": rf, "drain": drain, "spread_racks": spread}
        try:
            want = rebalance(topic, brokers, load=others, leader_load=other_leaders, **kw)
        except InvalidReplicationFactor as exc:
            with pytest.raises(InvalidReplicationFactor, match=re.escape(str(exc))):
                rebalance(
                    topic,
                    brokers,
                    load=load,
                    leader_load=leaders,
                    counted=True,
                    rack_fine=verdicts,
                    **kw,
                )
            continue
        got = rebalance(
            topic, brokers, load=load, leader_load=leaders, counted=True, rack_fine=verdicts, **kw
        )
        assert got == want
        for p, target in got.items():
            load.subtract(topic[p])
            load.update(target.replicas)
            leaders[topic[p][0]] -= 1
            leaders[target.replicas[0]] += 1
