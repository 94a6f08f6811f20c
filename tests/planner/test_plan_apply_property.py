"""A property: for any valid specs and simulated state, applying the plan on the simulated
cluster and planning again gives no changes."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_builders import FakeSpecs

from kgitops.apply.run import apply_plan
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import write_state
from kgitops.model import (
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionState,
    ReassignmentSettings,
    TopicSpec,
    TopicState,
)
from kgitops.plan.diff import compute_plan

CONFIGS = [{}, {"retention.ms": "3600000"}, {"cleanup.policy": "compact"}]


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 6))
    racked = draw(st.booleans())
    brokers = tuple(Broker(i, f"r{i % 3}" if racked else None) for i in range(n))
    drain = draw(st.sampled_from([(), (n - 1,)])) if n > 2 else ()
    usable = n - len(drain)
    live: dict[str, TopicState] = {}
    specs: list[TopicSpec] = []
    for i in range(draw(st.integers(0, 4))):
        name = f"live{i}"
        rf = draw(st.integers(1, n))
        count = draw(st.integers(1, 6))
        parts = {}
        for p in range(count):
            replicas = tuple(draw(st.permutations(range(n)))[:rf])
            parts[p] = PartitionState(replicas, replicas, replicas[0], draw(st.integers(0, 10**6)))
        live[name] = TopicState(name, parts, draw(st.sampled_from(CONFIGS)))
        if draw(st.booleans()):
            specs.append(
                TopicSpec(
                    name,
                    partitions=count + draw(st.integers(0, 3)),
                    replication_factor=draw(st.integers(1, usable)),
                    config=draw(st.sampled_from(CONFIGS)),
                    delete=draw(st.booleans()) and draw(st.booleans()),
                )
            )
    for i in range(draw(st.integers(0, 3))):
        specs.append(
            TopicSpec(
                f"new{i}",
                partitions=draw(st.integers(1, 8)),
                replication_factor=draw(st.integers(1, usable)),
                config=draw(st.sampled_from(CONFIGS)),
            )
        )
    return {
        "brokers": brokers,
        "live": live,
        "specs": tuple(specs),
        "drain": drain,
        "rebalance": draw(st.booleans()),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_apply_then_plan_again_gives_no_changes(s: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "state.json")
        write_state(path, ClusterState(brokers=s["brokers"], topics=s["live"]))
        cluster = SimulatedCluster.open(path, s["brokers"])
        spec = FakeSpecs(
            cluster=ClusterSpec(
                name="sim", directory=tmp, decommission=s["drain"], unmanaged_topics="ignore"
            ),
            topics=s["specs"],
        )
        plan, lock = compute_plan(spec, cluster.describe(), None, rebalance=s["rebalance"])
        # apply must succeed in full (no PartialApply) and the cluster must converge:
        # planning again finds nothing to do.
        apply_plan(plan, cluster, ReassignmentSettings(), allow_delete=True, poll_seconds=1.0)
        # --rebalance is a one-off request, not part of the specs: what it moved must still
        # satisfy the specs, so a plain plan afterwards finds nothing to do.
        again, lock2 = compute_plan(spec, cluster.describe(), lock)
        assert again.actions == (), [a.to_json() for a in again.actions]
        assert lock2 == lock
