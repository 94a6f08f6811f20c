"""min.insync.replicas as Kafka applies it: where its value comes from, and when apply may
change it relative to the replication factor."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kgitops.apply.run import apply_plan
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import UnsafeReplication
from kgitops.model import ReassignmentSettings
from kgitops.plan.actions import AlterConfig, Move, Reassign
from kgitops.plan.diff import compute_plan
from kgitops.plan.health import assess
from kgitops.plan.value import Plan, min_isr_order
from tests.fidelity.conftest import BROKERS, make
from tests.planner.planner_builders import live, specs, state, topic

STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5


def entry(name: str, value: str, source: int) -> SimpleNamespace:
    return SimpleNamespace(name=name, value=value, config_source=source, synonyms=[])


def test_a_server_properties_min_isr_reaches_plan_and_status_from_describe_configs() -> None:
    """KafkaApis.scala / ConfigAdminManager: DescribeConfigs of a broker resource with no
    keys lists every config with its effective value and source; min.insync.replicas from
    server.properties is STATIC_BROKER_CONFIG. The adapter asks each broker for all its
    configs (no key filter) and keeps that value, so plan and status see 2, not 1."""
    from tests.fidelity.kraft_fakes import RecordingManager, adapter

    def answer(request: Any, node: int | None) -> Any:
        configs = [
            entry("min.insync.replicas", "2", STATIC_BROKER_CONFIG),
            entry("unclean.leader.election.enable", "false", DEFAULT_CONFIG),
            entry("leader.replication.throttled.rate", "100", 2),
        ]
        return SimpleNamespace(results=[SimpleNamespace(error_code=0, configs=configs)])

    manager = RecordingManager(answer)
    dynamic, inherited = adapter(manager)._reads._broker_config_reads([1, 2])
    sent = sorted((node, r.resources[0]) for r, node in manager.sent)
    assert [node for node, _ in sent] == [1, 2], "each broker is asked for its own configs"
    for node, resource in sent:
        assert resource.resource_type == 4 and resource.resource_name == str(node)
        assert resource.configuration_keys is None, "all configs, every source"
    assert inherited == {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
    assert dynamic == {b: {"leader.replication.throttled.rate": "100"} for b in (1, 2)}

    snap = state(
        BROKERS,
        live("t", {0: (1, 2), 1: (2, 3)}),
        broker_defaults=inherited,
    )
    assert snap.min_insync_replicas({}) == 2
    assert snap.min_insync_replicas({"min.insync.replicas": "1"}) == 1
    old = dataclasses.replace(snap, kafka_version=(3, 6))
    plan, _ = compute_plan(specs(topic("t", 2, 1)), old, None)
    with pytest.raises(UnsafeReplication):
        plan.raise_if_unsafe(allow_delete=False, state=old)
    # Kafka 3.7+ caps it at the replica count (Partition.effectiveMinIsr): a warning
    plan, _ = compute_plan(specs(topic("t", 2, 1)), snap, None)
    plan.raise_if_unsafe(allow_delete=False, state=snap)
    assert "MIN_ISR_ABOVE_RF" in {w.code for w in plan.warnings}
    degraded = state(BROKERS, live("t", {0: (1, 2)}), broker_defaults=inherited)
    p = degraded.topics["t"].partitions[0]
    shrunk = degraded.topics["t"].__class__(
        "t", {0: p.__class__(p.replicas, (1,), 1, p.size_bytes)}, {}
    )
    health = assess(state(BROKERS, shrunk, broker_defaults=inherited))
    assert health.count("under_min_isr") == 1


def test_the_simulated_cluster_reports_broker_defaults_as_a_broker_does(
    sim: SimulatedCluster,
) -> None:
    """ReplicationControlManager.java getTopicEffectiveMinIsr: a topic without its own value
    gets the broker's; the simulated cluster reports Kafka's defaults (min.insync.replicas 1,
    unclean.leader.election.enable false) unless its state file's brokerDefaults says
    otherwise, as server.properties would."""
    make(sim, "t", {0: (1, 2)})
    assert sim.describe().broker_defaults["min.insync.replicas"] == "1"
    path = Path(sim.path)
    data = json.loads(path.read_text())
    data["brokerDefaults"] = {"min.insync.replicas": "2"}
    path.write_text(json.dumps(data))
    reread = SimulatedCluster.open(sim.path, BROKERS).describe()
    assert reread.min_insync_replicas(reread.topics["t"].config) == 2


def test_min_isr_is_raised_after_the_replication_factor_and_lowered_before_it(
    sim: SimulatedCluster,
) -> None:
    """ReplicationControlManager.java / Partition.scala: acks=all needs ISR >= min ISR. So a
    plan raising both RF and min.insync.replicas runs the config after the moves (else the
    topic tolerates no failure meanwhile); lowering both runs the config first. The apply on
    the simulated cluster ends with both, and the config was never ahead of the RF."""
    assert min_isr_order([2], [3], 1, 2) == "after"
    assert min_isr_order([3], [2], 2, 1) == "before"
    assert min_isr_order([3], [3], 1, 2) == "before"

    make(sim, "up", {0: (1, 2), 1: (2, 3)})
    sim.set_size("up", 10**9)
    spec = topic("up", 2, 3, config={"min.insync.replicas": "2"})
    plan, _ = compute_plan(specs(spec), sim.describe(), None)
    [change] = plan.of_kind(AlterConfig)
    assert change.after_reassign  # type: ignore[attr-defined]
    assert change.to_json()["afterReassign"] is True
    plan.raise_if_unsafe(allow_delete=False, state=sim.describe())

    seen: list[tuple[int, str | None]] = []
    real = sim.alter_topic_configs

    def watch(changes: Any) -> Any:
        t = sim.describe(["up"]).topics["up"]
        seen.append((min(len(p.replicas) for p in t.partitions.values()), None))
        return real(changes)

    sim.alter_topic_configs = watch  # type: ignore[method-assign]
    apply_plan(plan, sim, ReassignmentSettings(), allow_delete=False, poll_seconds=5)
    final = sim.describe(["up"]).topics["up"]
    assert final.config["min.insync.replicas"] == "2"
    assert all(len(p.replicas) == 3 for p in final.partitions.values())
    assert seen and all(rf == 3 for rf, _ in seen), "min ISR 2 was set only once RF was 3"

    # the same change placed before the moves (a hand-edited plan) is refused
    wrong = Plan(
        plan.cluster,
        plan.state_fingerprint,
        (
            AlterConfig("t2", set={"min.insync.replicas": "2"}),
            Reassign("t2", {0: Move((1, 2), (1, 2, 3))}),
        ),
    )
    snap = state(BROKERS, live("t2", {0: (1, 2)}))
    with pytest.raises(UnsafeReplication) as err:
        wrong.raise_if_unsafe(allow_delete=False, state=snap)
    assert "before its moves" in str(err.value.lines())
