"""A drain with a dead broker, end to end on the simulated cluster, as docs/real-clusters.md
tells it: the moves, what status says afterwards, and moves kgitops did not start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from tests import helpers

BROKERS = [Broker(1, "az1"), Broker(2, "az2"), Broker(3, "az3"), Broker(4, "az1")]


def cluster_yaml(decommission: str = "") -> str:
    extra = "reassignment: {throttleBytesPerSec: 50000000, maxConcurrentMoves: 2}\n"
    return helpers.cluster_yaml(brokers=BROKERS, extra=extra + decommission)


TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 4\nreplicationFactor: 2\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    helpers.cluster_folder(tmp_path, cluster=cluster_yaml(), files={"orders.yaml": TOPIC})
    assert main(["apply", str(tmp_path), "--yes"]) == 0
    return tmp_path


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)


def test_a_completed_drain_of_a_dead_broker_leaves_status_healthy(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ReplicationControlManager.java (handleBrokerFenced, a fenced broker stays registered
    until UnregisterBroker) and KafkaApis.scala (DescribeCluster lists fenced brokers): a
    broker that died and was drained holds no replica but is still registered. status
    reports it as retired, not as an offline broker, once no partition depends on it."""
    s = sim(folder)
    s.set_size("orders", 10**8)
    s.fail_broker(3)
    assert main(["status", str(folder)]) == 2, "broker 3 is down and holds replicas"
    (folder / "cluster.yaml").write_text(cluster_yaml("decommission: [3]\n"))
    capsys.readouterr()
    assert main(["apply", str(folder), "--yes"]) == 0, capsys.readouterr()
    state = json.loads((folder / ".state" / "demo.json").read_text())
    parts = state["topics"]["orders"]["partitions"].values()
    assert all(3 not in p["replicas"] for p in parts), "the drain is complete"
    assert {b["id"] for b in state["brokers"]} == {1, 2, 3, 4}, "3 is still registered"
    assert not any(state.get("brokerConfigs", {}).values()), "no throttle left"
    capsys.readouterr()
    assert main(["status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "HEALTHY" in out.splitlines()[1]
    assert "broker 3: decommissioned, down and holding no replica" in out
    assert main(["status", str(folder), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["retiredBrokers"] == [3] and report["offlineBrokers"] == []


def test_a_move_another_tool_started_is_reported_never_waited_for_or_cancelled(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ReassignPartitionsCommand.java and the controller (ListPartitionReassignments in
    KafkaApis.scala) do not say who started a reassignment. kgitops records the moves it
    submits (cluster folder .kgitops/moves.json) and leaves every other one alone: on Ctrl-C
    it cancels its own moves only, and it never waits for the other one."""
    s = sim(folder)
    s.set_size("orders", 10**7)
    s.set_size("orders", 10**12, partition=0)  # the other tool's move takes hours
    p0 = s.describe(["orders"]).topics["orders"].partitions[0].replicas
    foreign_target = (p0[0], next(b for b in (1, 2, 3, 4) if b not in p0))
    assert s.alter_reassignments({("orders", 0): foreign_target}) == {("orders", 0): None}
    (folder / "orders.yaml").write_text(
        TOPIC.replace("replicationFactor: 2", "replicationFactor: 3")
    )

    real_sleep = SimulatedCluster.sleep

    def interrupted(self: SimulatedCluster, seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(SimulatedCluster, "sleep", interrupted)
    capsys.readouterr()
    code = main(["apply", str(folder), "--yes", "--poll-interval", "1"])
    out = "".join(capsys.readouterr())
    assert code == 3, out  # its moves were submitted (then cancelled): a change, not 130
    assert "reassignment(s) in flight that kgitops did not start (orders-0 -> " in out, out
    flying = s.list_reassignments()["orders"]
    assert list(flying) == [0], "its own moves were cancelled, the other tool's was not"
    assert flying[0][0][: len(foreign_target)] == foreign_target

    monkeypatch.setattr(SimulatedCluster, "sleep", real_sleep)
    start = s.state.clock
    capsys.readouterr()
    assert main(["apply", str(folder), "--yes", "--poll-interval", "1"]) == 0
    assert s.state.clock - start < 60, "it did not wait hours for the other tool's move"
    parts = s.describe(["orders"]).topics["orders"].partitions
    assert all(len(parts[p].replicas) == 3 for p in (1, 2, 3)), "kgitops' own moves ran"
    assert list(s.list_reassignments()["orders"]) == [0], "the other one is still moving"
    assert not (folder / ".kgitops" / "moves.json").exists(), "its own moves all ended"
