"""ISR_PRESSURE: the plan warns when a topic's write rate would push followers out of the ISR,
by the rule the simulated cluster applies (kgitops/plan/isrlag.py), for the live placement and
the one after the plan's moves."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from planner_builders import brokers, live, specs, state, topic

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker, ClusterState, Owns, PartitionState, TopicState
from kgitops.plan.actions import ElectLeaders
from kgitops.plan.diff import compute_plan
from kgitops.plan.isrlag import (
    falling_behind,
    follower_demand,
    isr_pressure,
    lag_time_max,
    placements,
)
from kgitops.plan.value import PlanWarning

MB = 1_000_000
NET = 100 * MB


def _warnings(
    plan_specs: Any, st_: ClusterState, rates: Mapping[str, float] | None = None
) -> list[PlanWarning]:
    plan, _ = compute_plan(plan_specs, st_, None, write_rates=rates)
    return [w for w in plan.warnings if w.code == "ISR_PRESSURE"]


def _ring(n: int, rf: int) -> dict[int, tuple[int, ...]]:
    return {p: tuple((p + i) % n for i in range(rf)) for p in range(n)}


# ------------------------------------------------------------------ the pure rule


def test_demand_is_each_written_partitions_rate_once_per_in_sync_follower() -> None:
    demand = follower_demand(
        [(0, [0, 1, 2], 30.0), (1, [1, 2], 50.0), (2, [2, 0], 0.0), (None, [0, 1], 99.0)]
    )
    assert demand == {1: 30.0, 2: 80.0}


def test_a_broker_at_its_network_keeps_up_and_one_above_it_lacks_the_rest() -> None:
    assert falling_behind({1: 100.0, 2: 125.0, 3: 0.0}, 100.0) == {2: 1.0 - 100 / 125}
    assert falling_behind({1: 10.0, 3: 0.0}, 100.0, stopped={1, 3}) == {1: 1.0}


@given(
    st.dictionaries(st.integers(0, 9), st.floats(0, 1e9, allow_nan=False), max_size=8),
    st.floats(1, 1e9),
    st.frozensets(st.integers(0, 9)),
)
def test_falling_behind_properties(demand: dict[int, float], network: float, stopped: Any) -> None:
    got = falling_behind(demand, network, stopped)
    assert list(got) == sorted(got)
    for b, d in demand.items():
        expected = d > 0 and (b in stopped or d > network)
        assert (b in got) == expected
        if expected:
            assert 0 < got[b] <= 1
            assert got[b] == (1.0 if b in stopped else 1 - network / d)
    # more network never makes a broker fall behind that kept up
    assert set(falling_behind(demand, network * 2, stopped)) <= set(got)


@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),
            st.lists(st.integers(0, 4), unique=True, max_size=4),
            st.floats(0, 1e6, allow_nan=False),
        ),
        max_size=10,
    )
)
def test_demand_never_charges_a_leader_and_adds_up(
    written: list[tuple[int, list[int], float]],
) -> None:
    demand = follower_demand(written)
    expected = sum(r * len([b for b in isr if b != leader]) for leader, isr, r in written if r > 0)
    assert abs(sum(demand.values()) - expected) <= 1e-6 * max(1.0, expected)
    assert all(d > 0 for d in demand.values())


def test_the_lag_time_is_the_brokers_value_else_kafkas_30_s() -> None:
    assert lag_time_max({}) == 30.0
    assert lag_time_max({"replica.lag.time.max.ms": "10000"}) == 10.0
    assert lag_time_max({"replica.lag.time.max.ms": "soon"}) == 30.0


# ------------------------------------------------------------------ the planner


def _three(rate: int, rf: int = 3, min_isr: str = "2", network: float | None = NET) -> Any:
    """A three-partition topic on three brokers, RF 2 live, the spec at ``rf``."""
    t = live("t", _ring(3, 2), {"min.insync.replicas": min_isr})
    spec = topic("t", 3, rf, config={"min.insync.replicas": min_isr}, expected_write_rate=rate)
    return specs(spec), state(brokers(3), t, network_bytes_per_sec=network)


def test_an_rf_increase_that_doubles_each_followers_load_is_warned_after_the_plan() -> None:
    """180 MB/s over 3 partitions: each broker follows one (60 MB/s) at RF 2 and two
    (120 MB/s) at RF 3, on a 100 MB/s network."""
    (w,) = _warnings(*_three(180 * MB))
    assert w.topic == "t"
    assert w.data["placement"] == "after"
    assert w.data["brokers"] == {"0": 120 * MB, "1": 120 * MB, "2": 120 * MB}
    assert w.data["isr"] == {"0": [0], "1": [1], "2": [2]}
    assert w.data["rateSource"] == "spec" and w.data["rateBytesPerSec"] == 180 * MB
    assert (w.data["minIsr"], w.data["belowMinIsr"]) == (2, 3)
    assert w.data["lagTimeMaxMs"] == 30000 and w.data["networkBytesPerSec"] == NET
    assert w.message.startswith("after this plan: at 180 MB/s of writes (expectedWriteBytesPerSec)")
    assert "broker 0 must fetch 120 MB/s (broker 1: 120 MB/s, broker 2: 120 MB/s)" in w.message
    assert "more than the 100 MB/s network" in w.message
    assert "after replica.lag.time.max.ms (30s)" in w.message
    assert "the ISR of 3 of the topic's 3 partitions shrinks (partition 0 to [0], 1 to [1]" in (
        w.message
    )
    assert "3 of them fall below min.insync.replicas 2: acks=all producers are refused" in (
        w.message
    )


def test_a_follower_at_exactly_its_network_is_not_warned() -> None:
    assert _warnings(*_three(150 * MB)) == []


def test_the_isr_shrinking_above_min_isr_says_acks_all_goes_on() -> None:
    (w,) = _warnings(*_three(180 * MB, min_isr="1"))
    assert w.data["belowMinIsr"] == 0
    assert "min.insync.replicas 1 is still met: acks=all writes go on" in w.message


def test_a_real_cluster_has_no_network_figure_and_is_not_checked() -> None:
    assert _warnings(*_three(900 * MB, network=None)) == []


def test_a_slower_simulated_network_is_what_the_rule_compares_with() -> None:
    (w,) = _warnings(*_three(150 * MB, rf=2, network=40 * MB))
    assert w.data["placement"] == "both"
    assert w.message.startswith("now and after this plan:")


def test_the_measured_rate_counts_when_the_spec_names_none_and_the_spec_wins_over_it() -> None:
    _, st_ = _three(0, rf=2)
    s = specs(topic("t", 3, 2, config={"min.insync.replicas": "2"}))
    assert _warnings(s, st_, {"t": 300 * MB}) == []  # 100 MB/s per follower: keeps up
    (w,) = _warnings(s, st_, {"t": 330 * MB})
    assert w.data["rateSource"] == "measured"
    assert "(the rate `simulate produce` sends)" in w.message
    s = specs(topic("t", 3, 2, config={"min.insync.replicas": "2"}, expected_write_rate=30 * MB))
    assert _warnings(s, st_, {"t": 330 * MB}) == []


def test_another_topics_writes_count_on_the_broker_they_share() -> None:
    """a (in git, 60 MB/s) and b (not in git, measured 60 MB/s) both follow on broker 1."""
    a = live("a", {0: (0, 1)})
    b = live("b", {0: (2, 1)})
    s = specs(topic("a", 1, 2, expected_write_rate=60 * MB))
    found = _warnings(s, state(brokers(3), a, b, network_bytes_per_sec=NET), {"b": 60 * MB})
    assert [(w.topic, w.data["brokers"], w.data["isr"]) for w in found] == [
        ("a", {"1": 120 * MB}, {"0": [0]}),
        ("b", {"1": 120 * MB}, {"0": [2]}),
    ]
    assert [w.data["rateSource"] for w in found] == ["spec", "measured"]


def test_another_folders_topic_loads_the_broker_but_is_not_warned_about() -> None:
    a = live("a", {0: (0, 1)})
    b = live("b", {0: (2, 1)})
    s = specs(topic("a", 1, 2, expected_write_rate=60 * MB), owns=Owns(topics=("a*",)))
    found = _warnings(s, state(brokers(3), a, b, network_bytes_per_sec=NET), {"b": 60 * MB})
    assert [(w.topic, w.data["brokers"]) for w in found] == [("a", {"1": 120 * MB})]


def test_kafkas_own_topic_is_nobodys_so_a_folder_that_owns_names_still_warns_about_it() -> None:
    """``__consumer_offsets`` is in no folder's ``owns:`` and no folder may manage it: without
    this, a cluster whose every folder declares ``owns:`` would never hear of its ISR."""
    a = live("a", {0: (0, 1)})
    offsets = live("__consumer_offsets", {0: (2, 1)})
    s = specs(topic("a", 1, 2, expected_write_rate=60 * MB), owns=Owns(topics=("a*",)))
    found = _warnings(
        s, state(brokers(3), a, offsets, network_bytes_per_sec=NET), {"__consumer_offsets": 60 * MB}
    )
    assert [(w.topic, w.data["brokers"]) for w in found] == [
        ("__consumer_offsets", {"1": 120 * MB}),
        ("a", {"1": 120 * MB}),
    ]


def test_a_move_that_spreads_the_followers_is_warned_only_until_it_completes() -> None:
    """Both partitions' followers are on broker 1 now (140 MB/s); the static assignment
    moves partition 1's to broker 0."""
    t = live("t", {0: (0, 1), 1: (2, 1)})
    spec = topic(
        "t", 2, 2, placement="static", assignment=((0, 1), (2, 0)), expected_write_rate=140 * MB
    )
    (w,) = _warnings(specs(spec), state(brokers(3), t, network_bytes_per_sec=NET))
    assert w.data["placement"] == "now"
    assert w.message.startswith("now, not after this plan:")
    assert w.data["isr"] == {"0": [0], "1": [2]}


def test_a_preferred_leader_election_moves_the_follower_load_and_is_counted() -> None:
    """Partition 0 is led by broker 1, off its preferred replica 0: broker 0 follows it.
    The plan elects broker 0, and broker 1 then follows both partitions (140 MB/s)."""
    t = TopicState(
        "t",
        {0: PartitionState((0, 1), (0, 1), 1, 0), 1: PartitionState((2, 1), (2, 1), 2, 0)},
    )
    spec = topic("t", 2, 2, expected_write_rate=140 * MB)
    plan, _ = compute_plan(specs(spec), state(brokers(3), t, network_bytes_per_sec=NET), None)
    assert [a.kind for a in plan.actions] == ["elect_leaders"]
    (w,) = [w for w in plan.warnings if w.code == "ISR_PRESSURE"]
    assert (w.data["placement"], w.data["brokers"]) == ("after", {"1": 140 * MB})
    assert w.data["isr"] == {"0": [0], "1": [2]}


def test_a_preferred_leader_election_that_cannot_happen_changes_nothing() -> None:
    """The preferred replica's broker is offline: the leader stays."""
    t = TopicState("t", {0: PartitionState((0, 1, 2), (1, 2), 1, 0)})
    bs = (Broker(0, online=False), Broker(1), Broker(2))
    now, after = placements(state(bs, t), [ElectLeaders("t", (0,))])
    assert now == after
    assert after.topics["t"][0] == (1, (1, 2), (0, 1, 2))


def test_a_topic_to_delete_is_not_checked_after_the_plan() -> None:
    t = live("t", _ring(3, 2))
    spec = topic("t", 3, 2, delete=True, expected_write_rate=900 * MB)
    assert _warnings(specs(spec), state(brokers(3), t, network_bytes_per_sec=NET)) == []


def test_a_follower_on_an_offline_broker_is_not_counted() -> None:
    t = live("t", _ring(3, 3))
    bs = (Broker(0), Broker(1), Broker(2, online=False))
    spec = topic("t", 3, 3, expected_write_rate=180 * MB)
    (w,) = _warnings(specs(spec), state(bs, t, network_bytes_per_sec=NET))
    # broker 2 is in no ISR; broker 0 leads partition 2 in its place, so broker 1 follows
    # partitions 0 and 2 (120 MB/s) and broker 0 only partition 1 (60 MB/s)
    assert w.data["brokers"] == {"1": 120 * MB}
    assert w.data["isr"] == {"0": [0], "2": [0]}


# ------------------------------------------------------------------ the model agrees with itself


def _sim_isrs(
    assignment: Mapping[str, Mapping[int, tuple[int, ...]]], rates: Mapping[str, int], at: float
) -> dict[str, dict[int, tuple[int, ...]]]:
    with tempfile.TemporaryDirectory() as d:
        sim = SimulatedCluster.open(
            str(Path(d) / "s.json"), [Broker(i) for i in range(4)], leader_balance_seconds=None
        )
        assert sim.create_topics([NewTopic(t, dict(a), {}) for t, a in assignment.items()]) == {
            t: None for t in assignment
        }
        for t, r in rates.items():
            sim.set_produce_rate(t, r, acks="1")
        sim.advance(at)
        got = sim.describe()
    return {t: {p: ps.isr for p, ps in got.topics[t].partitions.items()} for t in assignment}


_PLACEMENT = st.dictionaries(
    st.sampled_from(["a", "b"]),
    st.integers(1, 3).flatmap(
        lambda rf: st.lists(
            st.permutations(range(4)).map(lambda p: tuple(p[:rf])), min_size=1, max_size=4
        )
    ),
    min_size=1,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PLACEMENT, st.lists(st.integers(1, 40), min_size=2, max_size=2))
def test_the_simulated_cluster_shrinks_the_isr_exactly_where_the_plan_says(
    placed: dict[str, list[tuple[int, ...]]], tens: Sequence[int]
) -> None:
    """Random placements and rates: the ISRs the plan predicts are the simulated cluster's
    after replica.lag.time.max.ms of writing, and none changes a second before."""
    assignment = {t: dict(enumerate(parts)) for t, parts in placed.items()}
    rates = {t: tens[i] * 10 * MB for i, t in enumerate(sorted(assignment))}
    topics = {
        t: TopicState(t, {p: PartitionState(r, r, r[0], 0) for p, r in a.items()})
        for t, a in assignment.items()
    }
    st_ = ClusterState(brokers=tuple(Broker(i) for i in range(4)), topics=topics)
    now, _ = placements(st_, ())
    demand = follower_demand(
        (lead, isr, rates[t] / len(per))
        for t, per in now.topics.items()
        for lead, isr, _ in per.values()
    )
    assume(all(abs(d - NET) > 1 for d in demand.values()))
    predicted = {t: dict(a) for t, a in assignment.items()}
    for before, after in isr_pressure(st_, (), rates, NET):
        assert before is not None and after is not None
        assert replace(before, placement="after") == after
        predicted[after.topic].update(after.isr)
    assert _sim_isrs(assignment, rates, 29.5) == assignment
    assert _sim_isrs(assignment, rates, 30) == predicted


def test_the_warning_reads_the_same_in_text_markdown_and_json_and_survives_a_saved_plan() -> None:
    import json

    from kgitops.plan.value import Plan
    from kgitops.render.markdown import render_markdown
    from kgitops.render.text import render_text

    plan, _ = compute_plan(*_three(180 * MB), None)
    data = json.loads(json.dumps(plan.to_json()))
    (w,) = [w for w in data["warnings"] if w["code"] == "ISR_PRESSURE"]
    assert w["data"]["isr"] == {"0": [0], "1": [1], "2": [2]}
    assert f"ISR_PRESSURE t: {w['message']}" in render_text(data)
    assert "**ISR_PRESSURE** `t`: after this plan: at 180 MB/s" in render_markdown(data)
    assert "(partition 0 to \\[0\\], 1 to \\[1\\], 2 to \\[2\\])" in render_markdown(data)
    assert Plan.from_json(data).to_json()["warnings"] == data["warnings"]
