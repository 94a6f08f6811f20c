"""The start index chooser: the worked example of kgitops.placement.startindex, ties, and cost."""

from __future__ import annotations

import time
from collections import Counter

from kgitops.placement.startindex import Load, choose_start_index

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
