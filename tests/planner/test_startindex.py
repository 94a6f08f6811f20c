"""The start index chooser: the worked example of kgitops.placement.startindex, ties, and cost."""

from __future__ import annotations

import time
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.placement.startindex import Counts, Load, choose_start_index

ARRANGED = [0, 3, 1, 4, 2, 5]


def test_the_worked_example_picks_the_window_with_fewest_leaders() -> None:
    load = Load(leaders=Counter({0: 5, 3: 5, 1: 4, 4: 3, 2: 3, 5: 5}))
    assert choose_start_index(ARRANGED, 8, load) == 3


def test_ties_go_to_fewer_replicas_then_to_the_lowest_index() -> None:
    assert choose_start_index(ARRANGED, 7, Load()) == 0
    load = Load(replicas=Counter({0: 9, 3: 9}))
    assert choose_start_index(ARRANGED, 7, load) == 2  # first position not loaded


def test_a_partition_count_that_fills_every_broker_evenly_starts_at_zero() -> None:
    load = Load(leaders=Counter({0: 100}))
    assert choose_start_index(ARRANGED, 12, load) == 0


def test_load_counts_leaders_and_replicas_and_can_take_them_back() -> None:
    load = Load()
    load.add([(0, 1), (1, 2), (0, 2)])
    assert load.leaders == Counter({0: 2, 1: 1})
    assert load.replicas == Counter({0: 2, 1: 2, 2: 2})
    load.add([(0, 1)], -1)
    assert +load.leaders == Counter({0: 1, 1: 1})


def test_choosing_for_ten_thousand_topics_on_sixty_brokers_is_cheap() -> None:
    arranged = list(range(60))
    load = Load(leaders=Counter({b: b % 7 for b in arranged}))
    t = time.process_time()
    for _ in range(10_000):
        choose_start_index(arranged, 100, load)
    assert time.process_time() - t < 5.0  # about 0.3 s on a 2-core machine


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), max_size=4, unique=True).map(tuple), max_size=30),
    st.lists(st.lists(st.integers(0, 12), max_size=3, unique=True).map(tuple), max_size=30),
)
def test_adding_counts_is_adding_the_assignment(
    before: list[tuple[int, ...]], assignment: list[tuple[int, ...]]
) -> None:
    """The counts of an assignment, counted once (what a plan creating many topics of one
    shape adds per topic), change the load exactly as the assignment would: the same
    totals, in the same key order."""
    counted, added = Load(), Load()
    counted.add(before)
    added.add(before)
    counted.add_counts(Counts.of(assignment))
    added.add(assignment)
    assert list(counted.leaders.items()) == list(added.leaders.items())
    assert list(counted.replicas.items()) == list(added.replicas.items())
