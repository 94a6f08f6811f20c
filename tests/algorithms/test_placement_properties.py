"""Hypothesis properties of replica placement: identical to a line-by-line translation of
Kafka's AdminUtils on any input, no broker twice, rack spread, and Kafka's balance guarantees."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_reference import assign_replicas_to_brokers

from kgitops.model import Broker
from kgitops.placement.assignment import assign_replicas


@st.composite
def brokers(draw: st.DrawFn, racks: bool | None = None) -> list[Broker]:
    n = draw(st.integers(1, 12))
    ids = sorted(draw(st.lists(st.integers(0, 100), min_size=n, max_size=n, unique=True)))
    with_racks = draw(st.booleans()) if racks is None else racks
    n_racks = draw(st.integers(1, 5))
    return [
        Broker(i, f"rack{draw(st.integers(0, n_racks - 1))}" if with_racks else None) for i in ids
    ]


@settings(max_examples=400, deadline=None)
@given(brokers(), st.data())
def test_placement_equals_kafkas_admin_utils_translation(
    cluster: list[Broker], data: st.DataObject
) -> None:
    n = len(cluster)
    partitions = data.draw(st.integers(1, 3 * n + 5))
    rf = data.draw(st.integers(1, n))
    start = data.draw(st.integers(0, 4 * n))
    shift = data.draw(st.one_of(st.none(), st.integers(0, 4 * n)))
    first_id = data.draw(st.integers(-1, 40))
    ours = assign_replicas(
        cluster, partitions, rf, start_index=start, replica_shift=shift, start_partition=first_id
    )
    kafka = assign_replicas_to_brokers(
        [(b.id, b.rack) for b in cluster], partitions, rf, start, first_id, shift
    )
    assert ours == {p: tuple(r) for p, r in kafka.items()}


@settings(max_examples=200, deadline=None)
@given(brokers(), st.data())
def test_keep_order_equals_admin_utils_on_the_list_as_given(
    cluster: list[Broker], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(cluster))
    n = len(cluster)
    rf = data.draw(st.integers(1, n))
    start = data.draw(st.integers(0, 2 * n))
    ours = assign_replicas(order, 2 * n + 1, rf, start_index=start, keep_order=True)
    # the translation takes the list as given; it sorts only inside the rack-aware walk
    kafka = assign_replicas_to_brokers([(b.id, b.rack) for b in order], 2 * n + 1, rf, start, 0)
    assert ours == {p: tuple(r) for p, r in kafka.items()}


@settings(max_examples=300, deadline=None)
@given(brokers(racks=True), st.data())
def test_rack_aware_spreads_every_partition_over_min_rf_racks(
    cluster: list[Broker], data: st.DataObject
) -> None:
    n = len(cluster)
    rf = data.draw(st.integers(1, n))
    a = assign_replicas(cluster, data.draw(st.integers(1, 40)), rf, start_index=data.draw(
        st.integers(0, n)))  # fmt: skip
    rack = {b.id: b.rack for b in cluster}
    n_racks = len(set(rack.values()))
    for replicas in a.values():
        assert len(set(replicas)) == len(replicas) == rf
        assert len({rack[b] for b in replicas}) == min(rf, n_racks)


@settings(max_examples=300, deadline=None)
@given(brokers(racks=False), st.data())
def test_rack_unaware_counts_are_even_over_whole_rounds(
    cluster: list[Broker], data: st.DataObject
) -> None:
    n = len(cluster)
    rounds = data.draw(st.integers(1, 4))
    rf = data.draw(st.integers(1, n))
    a = assign_replicas(cluster, rounds * n, rf, start_index=data.draw(st.integers(0, 3 * n)))
    leaders = Counter(r[0] for r in a.values())
    replicas = Counter(b for r in a.values() for b in r)
    assert set(leaders.values()) == {rounds}
    assert set(replicas.values()) == {rounds * rf}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_rack_aware_is_even_when_racks_are_equal_and_rf_equals_racks(
    n_racks: int, per_rack: int, data: st.DataObject
) -> None:
    cluster = [Broker(i, f"r{i % n_racks}") for i in range(n_racks * per_rack)]
    n = len(cluster)
    rounds = data.draw(st.integers(1, 3))
    a = assign_replicas(cluster, rounds * n, n_racks, start_index=data.draw(st.integers(0, n)))
    leaders = Counter(r[0] for r in a.values())
    replicas = Counter(b for r in a.values() for b in r)
    assert set(leaders.values()) == {rounds}
    assert set(replicas.values()) == {rounds * n_racks}


@settings(max_examples=200, deadline=None)
@given(brokers(), st.data())
def test_leader_counts_differ_by_at_most_one(cluster: list[Broker], data: st.DataObject) -> None:
    n = len(cluster)
    a = assign_replicas(
        cluster, data.draw(st.integers(1, 50)), 1, start_index=data.draw(st.integers(0, n))
    )
    counts = Counter(r[0] for r in a.values())
    values = [counts.get(b.id, 0) for b in cluster]
    assert max(values) - min(values) <= 1


@settings(max_examples=200, deadline=None)
@given(brokers(), st.data())
def test_each_placement_is_a_prefix_of_the_one_with_a_larger_rf(
    cluster: list[Broker], data: st.DataObject
) -> None:
    n = len(cluster)
    partitions = data.draw(st.integers(1, 30))
    start = data.draw(st.integers(0, 2 * n))
    rf = data.draw(st.integers(1, n))
    small = assign_replicas(cluster, partitions, rf, start_index=start)
    big = assign_replicas(cluster, partitions, n, start_index=start)
    assert all(big[p][:rf] == small[p] for p in small)
