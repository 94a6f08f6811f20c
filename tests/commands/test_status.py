"""`kgitops status DIR`: health in Kafka's vocabulary (docs/simulated-cluster.md); exit 0
healthy, 2 unhealthy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import ConfigChange, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import write_state
from kgitops.model import Broker, ClusterState, PartitionState, Reassignment, TopicState
from kgitops.plan.health import assess
from tests.helpers import THREE_AZS, cluster_folder

BROKERS = THREE_AZS


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return cluster_folder(tmp_path, brokers=BROKERS)


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)


def test_a_healthy_cluster_exits_0(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim(folder).create_topics([NewTopic("a", {0: (0, 1, 2), 1: (1, 2, 0)})])
    assert main(["status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "cluster demo (simulated): 3 broker(s); 1 topic(s), 2 partition(s)",
        "HEALTHY",
    ]


def test_a_failed_broker_shows_under_replicated_partitions_and_exits_2(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1, 2), 1: (1, 2, 0)}, {"min.insync.replicas": "3"})])
    s.fail_broker(1)
    assert main(["status", str(folder)]) == 2
    out = capsys.readouterr().out
    assert "UNHEALTHY: 2 under-replicated, 2 under min ISR, 1 leader(s) off preferred" in out
    assert "  a-0  AR [0, 1*, 2]  ISR [0, 2]  OSR [1*]  leader 0" in out
    assert "  a-1  leader 2, preferred 1  (AR [1*, 2, 0]  ISR [2, 0]  OSR [1*])" in out
    assert "min.insync.replicas 3" in out


def test_an_offline_partition_is_reported_as_offline(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (1,)})])
    s.fail_broker(1)
    assert main(["status", str(folder)]) == 2
    out = capsys.readouterr().out
    assert "Offline partitions" in out
    assert "  a-0  AR [1*]  ISR []  OSR [1*]  leader none" in out  # ELR: the ISR empties


def test_reassignment_in_flight_with_progress_and_a_stall(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1)})])
    s.set_size("a", 1_000_000_000)
    s.alter_reassignments({("a", 0): (2, 1)})
    s.advance(4)
    assert main(["status", str(folder)]) == 0  # ISR 2 of target RF 2: not under-replicated
    out = capsys.readouterr().out
    assert "HEALTHY: 1 reassigning" in out
    assert (
        "  a-0  target [2, 1]  adding [2]  removing [0]  ISR [1, 0]  "
        "copied 2: 381.5 MiB of 953.7 MiB" in out
    )
    s.fail_broker(2)
    assert main(["status", str(folder), "--format", "json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["healthy"] is False
    assert data["offlineBrokers"] == [2]
    assert data["counts"] == {
        "offline": 0,
        "underReplicated": 0,
        "underMinIsr": 0,
        "leaderOffPreferred": 1,
        "reassigning": 1,
        "stalled": 1,
    }
    (finding,) = data["findings"]
    assert finding["adding"] == [2]
    assert finding["osr"] == [2]
    assert finding["caughtUp"] == {"2": {"copiedBytes": 400000000, "sizeBytes": 1000000000}}


def test_status_reads_a_saved_snapshot_without_a_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ClusterState(
        brokers=(Broker(1), Broker(2)),
        topics={"t": TopicState("t", {0: PartitionState((1, 2), (1,), 1)})},
    )
    write_state(str(tmp_path / "s.json"), state)
    assert main(["status", str(tmp_path), "--state", str(tmp_path / "s.json")]) == 2
    assert "t-0  AR [1, 2]  ISR [1]  OSR [2]  leader 1" in capsys.readouterr().out


def test_the_limit_keeps_long_sections_short(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {p: (0, 1) for p in range(30)})])
    s.fail_broker(1)
    main(["status", str(folder), "--limit", "5"])
    out = capsys.readouterr().out
    assert "  ... and 25 more (--limit 0 lists all)" in out


def test_a_folder_without_cluster_yaml_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", str(tmp_path)]) == 1
    assert "error" in capsys.readouterr().err


def test_unknown_isr_is_said_not_guessed() -> None:
    state = ClusterState(
        brokers=(Broker(1),), topics={"t": TopicState("t", {0: PartitionState((1,))})}
    )
    health = assess(state)
    assert not health.isr_known
    assert health.findings == ()


def test_under_replication_during_a_move_counts_the_target_factor() -> None:
    # AR [3, 1, 2] while moving 2 -> 3: target RF 2, ISR [1, 2] has 2: not under-replicated
    state = ClusterState(
        brokers=(Broker(1), Broker(2), Broker(3)),
        topics={"t": TopicState("t", {0: PartitionState((3, 1, 2), (1, 2), 1)})},
        reassignments={"t": {0: Reassignment((3,), (2,))}},
    )
    (finding,) = assess(state).findings
    assert finding.flags == ("leader_off_preferred", "reassigning")


def test_a_throttle_no_move_needs_makes_the_cluster_unhealthy(folder: Path) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1)})])
    s.alter_topic_configs({"a": ConfigChange(set={"leader.replication.throttled.replicas": "*"})})
    health = assess(s.describe())
    assert not health.healthy
    assert [(t.topic, dict(t.keys)) for t in health.harmful_throttles] == [
        ("a", {"leader.replication.throttled.replicas": "*"})
    ]
    s.alter_broker_configs({1: ConfigChange(set={"leader.replication.throttled.rate": "100"})})
    assert [t.name for t in assess(s.describe()).harmful_throttles] == ["broker 1", "a"]


def test_the_throttles_of_a_move_in_flight_keep_the_cluster_healthy(folder: Path) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1)})])
    s.set_size("a", 10**9)
    s.alter_reassignments({("a", 0): (0, 1, 2)})
    s.alter_topic_configs(
        {
            "a": ConfigChange(
                set={
                    "leader.replication.throttled.replicas": "0:0,0:1",
                    "follower.replication.throttled.replicas": "0:2",
                }
            )
        }
    )
    s.alter_broker_configs(
        {b: ConfigChange(set={"follower.replication.throttled.rate": "100"}) for b in (0, 1, 2)}
    )
    health = assess(s.describe())
    assert health.harmful_throttles == ()
    assert health.count("reassigning") == 1


def test_a_replica_left_on_a_decommissioned_broker_is_unhealthy(folder: Path) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1), 1: (1, 2)})])
    assert assess(s.describe(), decommission=[3]).healthy
    health = assess(s.describe(), decommission=[2])
    assert not health.healthy and health.draining == {2: 1}


def _rf2_under_broker_min_isr_3(folder: Path, version: str | None) -> None:
    if version is not None:
        cluster_folder(folder, brokers=BROKERS, extra=f'kafkaVersion: "{version}"\n')
    sim(folder).create_topics([NewTopic("a", {0: (0, 1), 1: (1, 2)})])
    path = folder / ".state" / "demo.json"
    data = json.loads(path.read_text())
    data["brokerDefaults"] = {"min.insync.replicas": "3"}
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("version", [None, "3.7", "4.1.2"])
def test_a_fully_in_sync_rf2_partition_under_a_broker_min_isr_of_3_is_healthy_from_3_7(
    folder: Path, capsys: pytest.CaptureFixture[str], version: str | None
) -> None:
    """Kafka 3.7+ (Partition.effectiveMinIsr, KAFKA-15583) needs min(3, RF 2) = 2 in-sync
    replicas for acks=all: every replica in sync is enough."""
    _rf2_under_broker_min_isr_3(folder, version)
    assert main(["status", str(folder), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["healthy"] is True
    assert report["counts"]["underMinIsr"] == 0


def test_the_same_partition_is_under_min_isr_before_kafka_3_7(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _rf2_under_broker_min_isr_3(folder, "3.6")
    assert main(["status", str(folder), "--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["underMinIsr"] == 2
    assert {f["minInsyncReplicas"] for f in report["findings"]} == {3}
