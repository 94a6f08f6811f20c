"""The KRaft controller's own background work in the simulated cluster: automatic
preferred-leader election and eligible leader replicas, as cluster.yaml settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cluster.port import ConfigChange
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.spec.load import load_specs
from tests.fidelity.conftest import BROKERS, make
from tests.helpers import cluster_folder


def leader(sim: SimulatedCluster, name: str, pid: int = 0) -> int | None:
    return sim.describe([name]).topics[name].partitions[pid].leader


def test_the_controller_moves_leaders_back_to_the_preferred_replica_every_300_seconds(
    tmp_path: Path,
) -> None:
    """QuorumController.java maybeScheduleNextBalancePartitionLeaders +
    ReplicationControlManager.java maybeBalancePartitionLeaders: with
    auto.leader.rebalance.enable (default true) the controller, an interval
    (leader.imbalance.check.interval.seconds, 300) after leaders become imbalanced, elects the
    preferred replica of every partition whose preferred replica is in the ISR and alive. KRaft
    has no per-broker threshold (leader.imbalance.per.broker.percentage is ZooKeeper-only,
    removed in 4.0)."""
    sim = SimulatedCluster.open(str(tmp_path / "on.json"), BROKERS)
    off = SimulatedCluster.open(str(tmp_path / "off.json"), BROKERS, leader_balance_seconds=None)
    for s in (sim, off):
        make(s, "t", {0: (1, 2), 1: (2, 3)})
        s.fail_broker(1)
        s.advance(10)
        s.restore_broker(1)  # 1 is back in the ISR, but 2 still leads partition 0
        assert leader(s, "t") == 2
    # scheduled when the imbalance appeared (the failure, t=0): the check runs at t=300
    sim.advance(289)
    assert leader(sim, "t") == 2, "not before the interval"
    sim.advance(1)
    assert leader(sim, "t") == 1
    sim.fail_broker(1)  # imbalanced again at t=300, preferred down at the next check (t=600)
    sim.advance(300)
    assert leader(sim, "t") == 2
    sim.restore_broker(1)
    sim.advance(299)
    assert leader(sim, "t") == 2, "rescheduled a whole interval after the check at t=600"
    sim.advance(1)
    assert leader(sim, "t") == 1
    off.advance(3600)
    assert leader(off, "t") == 2, "auto.leader.rebalance.enable=false leaves it"


def test_eligible_leader_replicas_let_a_returning_replica_lead_cleanly(tmp_path: Path) -> None:
    """PartitionChangeBuilder.java maybePopulateTargetElr / isValidNewLeader (KIP-966, on by
    default for new Kafka 4.1+ clusters): replicas leaving an ISR that is below
    min.insync.replicas become eligible leaders, the ISR may empty, and an eligible replica
    that returns is elected without an unclean election. Without ELR the last ISR member
    stays in the ISR and only it can bring the partition back."""
    for elr in (True, False):
        sim = SimulatedCluster.open(
            str(tmp_path / f"{elr}.json"), BROKERS, eligible_leader_replicas=elr
        )
        make(sim, "t", {0: (1, 2, 3)})
        sim.alter_topic_configs({"t": ConfigChange(set={"min.insync.replicas": "2"})})
        sim.set_size("t", 10**6)
        for b in (3, 2, 1):
            sim.fail_broker(b)
        p = sim.describe(["t"]).topics["t"].partitions[0]
        assert p.leader is None
        sim.restore_broker(2)
        p = sim.describe(["t"]).topics["t"].partitions[0]
        if elr:
            assert sim.state.topics["t"].parts[0].elr == [1], "2 was elected from the ELR [1, 2]"
            assert (p.leader, p.isr, p.size_bytes) == (2, (2,), 10**6), "clean: no data lost"
        else:
            assert (p.leader, p.isr) == (None, (1,)), "offline until broker 1 returns"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("", (True, 300.0, True)),
        ("  autoLeaderRebalance: false\n  eligibleLeaderReplicas: false\n", (False, 300.0, False)),
        ("  autoLeaderRebalance: {intervalSeconds: 60}\n", (True, 60.0, True)),
    ],
)
def test_cluster_yaml_sets_the_simulated_controller_with_kafkas_defaults(
    tmp_path: Path, block: str, expected: tuple[bool, float, bool]
) -> None:
    """ReplicationConfigs.java: auto.leader.rebalance.enable=true,
    leader.imbalance.check.interval.seconds=300; ELR on for new 4.1+ clusters."""
    cluster_folder(tmp_path, brokers=[Broker(1), Broker(2)], state_file="s.json", extra=block)
    specs = load_specs(str(tmp_path))
    assert not specs.errors, specs.errors
    sim = specs.cluster.simulated  # type: ignore[union-attr]
    assert sim is not None
    got = (sim.auto_leader_rebalance, sim.leader_imbalance_check_seconds)
    assert (*got, sim.eligible_leader_replicas) == expected


def test_a_bad_simulated_setting_is_a_validation_error(tmp_path: Path) -> None:
    block = "  autoLeaderRebalance: {intervalSeconds: 0}\n"
    cluster_folder(tmp_path, brokers=[Broker(1)], state_file="s.json", extra=block)
    errors = load_specs(str(tmp_path)).errors
    assert errors and "cluster.yaml:7" in str(errors[0].mark), errors
