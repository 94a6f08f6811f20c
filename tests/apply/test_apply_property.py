"""Property: for any valid specs and simulated cluster state, applying the plan and planning
again gives no changes -- and leaves no throttle and no move in flight behind."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgitops.apply.run import apply_plan
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import (
    Broker,
    ClusterSpec,
    ReassignmentSettings,
    SimulatedSpec,
    TopicSpec,
)
from kgitops.names import THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS
from kgitops.placement.assignment import assign_replicas
from kgitops.plan.diff import compute_plan

BROKERS = tuple(Broker(i, f"az{(i - 1) % 3 + 1}") for i in range(1, 7))
CONFIGS = st.dictionaries(
    st.sampled_from(["retention.ms", "segment.ms", "cleanup.policy"]),
    st.sampled_from(["60000", "120000"]),
    max_size=3,
).map(lambda d: {k: ("compact" if k == "cleanup.policy" else v) for k, v in d.items()})


@dataclass(frozen=True)
class Desired:
    cluster: ClusterSpec
    topics: tuple[TopicSpec, ...]


@st.composite
def scenario(draw: st.DrawFn) -> tuple[dict[str, Any], Desired, str]:
    live: dict[str, Any] = {}
    desired: list[TopicSpec] = []
    for i in range(draw(st.integers(0, 3))):
        name = f"live{i}"
        n, rf = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        start = draw(st.integers(0, 5))
        size = draw(st.sampled_from([0, 1_000_000, 30_000_000]))
        replicas = assign_replicas(BROKERS, n, rf, start_index=start, rack_aware=True)
        live[name] = {
            "partitions": {
                str(p): {"replicas": list(r), "isr": list(r), "leader": r[0], "sizeBytes": size}
                for p, r in replicas.items()
            },
            "config": draw(CONFIGS),
        }
        change = draw(st.sampled_from(["keep", "expand", "rf", "config", "delete"]))
        desired.append(
            TopicSpec(
                name=name,
                partitions=n + (draw(st.integers(1, 3)) if change == "expand" else 0),
                replication_factor=draw(st.integers(1, 3)) if change == "rf" else rf,
                config=draw(CONFIGS) if change == "config" else live[name]["config"],
                delete=change == "delete",
            )
        )
    for i in range(draw(st.integers(0, 2))):
        desired.append(
            TopicSpec(
                name=f"new{i}",
                partitions=draw(st.integers(1, 4)),
                replication_factor=draw(st.integers(1, 3)),
                config=draw(CONFIGS),
            )
        )
    drain = draw(st.sampled_from([(), (6,), (2,)]))
    state = {
        "format": "kgitops-state/v1",
        "clusterId": "prop",
        "brokers": [{"id": b.id, "rack": b.rack} for b in BROKERS],
        "topics": live,
    }
    directory = tempfile.mkdtemp(prefix="kgitops-prop-")
    state_file = os.path.join(directory, "state.json")
    cluster = ClusterSpec(
        name="prop",
        directory=directory,
        decommission=drain,
        simulated=SimulatedSpec(state_file, BROKERS),
        reassignment=ReassignmentSettings(
            throttle_bytes_per_sec=10_000_000, max_concurrent_moves=3
        ),
    )
    return state, Desired(cluster, tuple(desired)), state_file


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_apply_then_plan_again_shows_no_changes(case: tuple[dict[str, Any], Desired, str]) -> None:
    state_json, desired, state_file = case
    try:
        check(state_json, desired, state_file)
    finally:
        shutil.rmtree(os.path.dirname(state_file), ignore_errors=True)


def check(state_json: dict[str, Any], desired: Desired, state_file: str) -> None:
    with open(state_file, "w") as f:
        json.dump(state_json, f)
    sim = SimulatedCluster.open(state_file, BROKERS)
    plan, _ = compute_plan(desired, sim.describe(), None)
    assert desired.cluster.simulated is not None
    apply_plan(plan, sim, desired.cluster.reassignment, allow_delete=True, poll_seconds=5)
    after = sim.describe()
    again, _ = compute_plan(desired, after, None)
    assert [a.to_json() for a in again.actions] == []
    assert not sim.list_reassignments()
    assert not any(after.broker_configs.values())
    for t in after.topics.values():
        assert not set(t.config) & {THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS}
    for b in desired.cluster.decommission:
        assert all(
            b not in p.replicas for t in after.topics.values() for p in t.partitions.values()
        )
