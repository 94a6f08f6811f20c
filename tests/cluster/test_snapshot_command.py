"""`kgitops snapshot DIR --out FILE`, and `plan --state FILE` reading what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import read_state
from kgitops.model import Broker
from tests.helpers import cluster_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    brokers = [Broker(0, "az1"), Broker(1, "az2")]
    cluster_folder(tmp_path, brokers=brokers)
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), brokers)
    sim.create_topics([NewTopic("orders", {0: (0, 1), 1: (1, 0)}, {"retention.ms": "1000"})])
    sim.set_size("orders", 4096)
    return tmp_path


def test_snapshot_writes_the_live_state(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    assert main(["snapshot", str(folder), "--out", str(out)]) == 0
    state = read_state(str(out))
    assert state.broker_ids == (0, 1)
    topic = state.topics["orders"]
    assert topic.partitions[1].replicas == (1, 0)
    assert topic.partitions[1].size_bytes == 4096
    assert topic.config == {"retention.ms": "1000"}
    data = json.loads(out.read_text())
    assert data["format"] == "kgitops-state/v1"
    assert "simulation" not in data  # a snapshot holds the state, not the simulator's clock


def test_snapshot_to_stdout(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", str(folder), "--out", "-", "--topic", "orders"]) == 0
    assert list(json.loads(capsys.readouterr().out)["topics"]) == ["orders"]


def test_plan_runs_offline_from_a_snapshot(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    main(["snapshot", str(folder), "--out", str(out)])
    (folder / "orders.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 2\n"
        "replicationFactor: 2\nconfig: {retention.ms: 1000}\n"
    )
    (folder / ".state" / "demo.json").unlink()  # no cluster: only the snapshot
    assert main(["plan", str(folder), "--state", str(out), "--detailed-exitcode"]) == 0


def test_an_unwritable_out_path_is_a_clear_error(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "file").write_text("")
    assert main(["snapshot", str(folder), "--out", str(folder / "file" / "x.json")]) == 1
    assert capsys.readouterr().err.endswith("/file is not a folder\n")
