"""The plan's ETA is apply's time: both run ``kgitops.plan.schedule`` (issue 14).

Each case plans a change against a simulated cluster, applies it with the simulated clock,
and compares the clock with the plan's ``estimatedSeconds``: within 10 %."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kgitops.apply.run import apply_plan
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import write_state
from kgitops.model import ClusterState, ReassignmentSettings
from kgitops.plan.diff import compute_plan
from kgitops.plan.schedule import MoveJob, next_batch, schedule
from tests.planner.planner_builders import brokers, live, specs, topic

MB = 1_000_000


def _apply_seconds(
    tmp: Path, state: ClusterState, plan_settings: ReassignmentSettings, **cluster: object
) -> tuple[float, float, ClusterState] | None:
    """(the plan's ETA, the simulated clock after apply, the cluster after apply); None when
    the plan copies nothing."""
    path = str(tmp / "state.json")
    write_state(path, state)
    wanted = [
        topic(n, len(t.partitions), len(t.partitions[0].replicas)) for n, t in state.topics.items()
    ]
    plan, _ = compute_plan(specs(*wanted, reassignment=plan_settings, **cluster), state, None)
    if plan.transfer is None or plan.transfer.estimated_seconds is None:
        return None
    eta = plan.transfer.estimated_seconds
    admin = SimulatedCluster.open(path, state.brokers)
    apply_plan(plan, admin, plan_settings, allow_delete=False)
    after = SimulatedCluster.open(path, state.brokers)
    return eta, after.clock, after.describe(None)


def test_drain_eta_is_within_ten_percent_of_the_simulated_apply(tmp_path: Path) -> None:
    bs = brokers(6, ["a", "b", "c"])
    sizes = {0: 400 * MB, 1: 50 * MB, 2: 900 * MB, 3: 120 * MB, 4: 300 * MB, 5: 10 * MB}
    t = live("t", {p: (p % 6, (p + 1) % 6, (p + 2) % 6) for p in range(12)})
    t = type(t)(
        t.name,
        {
            p: type(ps)(ps.replicas, ps.isr, ps.leader, sizes[p % 6])
            for p, ps in t.partitions.items()
        },
        t.config,
    )
    st_ = ClusterState(brokers=bs, topics={"t": t})
    rules = ReassignmentSettings(throttle_bytes_per_sec=10 * MB, max_concurrent_moves=3)
    measured = _apply_seconds(tmp_path, st_, rules, decommission=(3,))
    assert measured is not None
    eta, took, after = measured
    assert all(3 not in ps.replicas for ps in after.topics["t"].partitions.values())
    assert took > 0
    assert abs(eta - took) <= 0.10 * took, (eta, took)


@settings(max_examples=12)
@given(
    n=st.integers(4, 7),
    partitions=st.integers(2, 10),
    drained=st.integers(0, 3),
    concurrent=st.integers(1, 5),
    throttle=st.sampled_from([None, 5 * MB, 20 * MB]),
    sizes=st.lists(st.integers(0, 800), min_size=10, max_size=10),
)
def test_eta_matches_the_simulated_apply(
    n: int,
    partitions: int,
    drained: int,
    concurrent: int,
    throttle: int | None,
    sizes: list[int],
) -> None:
    bs = brokers(n, ["a", "b"])
    t = live("t", {p: (p % n, (p + 1) % n) for p in range(partitions)})
    t = type(t)(
        t.name,
        {
            p: type(ps)(ps.replicas, ps.isr, ps.leader, sizes[p] * MB)
            for p, ps in t.partitions.items()
        },
        t.config,
    )
    st_ = ClusterState(brokers=bs, topics={"t": t})
    rules = ReassignmentSettings(throttle_bytes_per_sec=throttle, max_concurrent_moves=concurrent)
    with tempfile.TemporaryDirectory() as tmp:
        measured = _apply_seconds(Path(tmp), st_, rules, decommission=(drained,))
    assume(measured is not None)  # the drained broker held a replica
    assert measured is not None
    eta, took, after = measured
    assert all(drained not in ps.replicas for ps in after.topics["t"].partitions.values())
    assert abs(eta - took) <= 0.10 * took + 1e-9, (eta, took)


def test_next_batch_prefers_moves_onto_idle_brokers() -> None:
    queue = [
        MoveJob(("t", 0), 0, (6,), 100),
        MoveJob(("t", 1), 1, (6,), 100),
        MoveJob(("t", 2), 2, (7,), 100),
    ]
    assert next_batch(queue, (), 2) == [0, 2]
    assert next_batch(queue, (6,), 1) == [2]
    assert next_batch(queue, (6, 7), 2) == [0, 1]  # nothing idle: queue order
    assert next_batch(queue, (), 0) == []


def test_schedule_worked_example_from_the_docstring() -> None:
    jobs = [
        MoveJob(("t", 0), 0, (6,), 100 * MB),
        MoveJob(("t", 1), 1, (6,), 100 * MB),
        MoveJob(("t", 2), 2, (7,), 100 * MB),
    ]
    s = schedule(jobs, max_concurrent_moves=2, throttle_bytes_per_sec=10 * MB)
    assert s.total_seconds == pytest.approx(20.0)
    assert [(w.moves, w.start_seconds, w.end_seconds) for w in s.windows] == [
        (2, 0.0, pytest.approx(10.0)),
        (1, pytest.approx(10.0), pytest.approx(20.0)),
    ]


def test_concurrency_cap_slows_the_estimate_as_it_slows_apply() -> None:
    jobs = [MoveJob(("t", p), p, (10 + p,), 100 * MB) for p in range(8)]
    four = schedule(jobs, max_concurrent_moves=4, throttle_bytes_per_sec=10 * MB)
    eight = schedule(jobs, max_concurrent_moves=8, throttle_bytes_per_sec=10 * MB)
    assert four.total_seconds == pytest.approx(20.0)
    assert eight.total_seconds == pytest.approx(10.0)


def test_a_leaders_plan_applied_moves_no_bytes_and_evens_the_elected_leaders(
    tmp_path: Path,
) -> None:
    bs = brokers(6, ["a", "b", "c"])
    t = live("t", {p: (0, 1, 2) if p % 2 else (3, 4, 5) for p in range(12)}, size=100 * MB)
    st_ = ClusterState(brokers=bs, topics={"t": t})
    path = str(tmp_path / "state.json")
    write_state(path, st_)
    rules = ReassignmentSettings(throttle_bytes_per_sec=10 * MB, max_concurrent_moves=4)
    wanted = specs(topic("t", 12, 3, placement="rack-aware"), reassignment=rules)
    plan, _ = compute_plan(wanted, st_, None, leaders=True)
    assert plan.transfer is None  # nothing to copy
    admin = SimulatedCluster.open(path, bs)
    apply_plan(plan, admin, rules, allow_delete=False)
    after = SimulatedCluster.open(path, bs).describe(None).topics["t"]
    leaders = Counter(ps.leader for ps in after.partitions.values())
    assert leaders == dict.fromkeys(range(6), 2)  # elected, not only preferred
    for p, ps in after.partitions.items():
        assert sorted(ps.replicas) == sorted(t.partitions[p].replicas)
        assert ps.leader == ps.replicas[0]
