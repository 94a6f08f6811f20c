"""status, snapshot and import against the local Kafka-protocol broker (Tansu), through the
real kafka-python adapter: the same commands as on the simulated cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder


def _folder(tmp_path: Path, bootstrap: str) -> Path:
    return cluster_folder(tmp_path, "local", bootstrap=bootstrap, extra="unmanagedTopics: ignore\n")


def _create(bootstrap: str, name: str) -> None:
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewTopic
    from kgitops.model import ClusterSpec

    admin = KafkaAdmin(ClusterSpec(name="local", directory=".", bootstrap_servers=(bootstrap,)))
    try:
        broker = admin.describe([]).broker_ids[0]
        (result,) = admin.create_topics([NewTopic(name, {0: (broker,)})]).values()
        assert result is None, result
    finally:
        admin.close()


def test_status_of_the_local_broker_is_healthy(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, local_broker)
    _create(local_broker, f"{topic_prefix}a")
    assert main(["status", str(folder), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["healthy"] is True
    assert data["brokers"] == 1
    assert data["partitions"] >= 1


def test_snapshot_and_import_from_the_local_broker(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, local_broker)
    name = f"{topic_prefix}b"
    _create(local_broker, name)
    snap = tmp_path / "snap.json"
    assert main(["snapshot", str(folder), "--out", str(snap), "--topic", name]) == 0
    state = json.loads(snap.read_text())
    assert list(state["topics"]) == [name]
    assert main(["import", str(folder), "--topic", name]) == 0
    assert (folder / f"{name}.yaml").exists()
    capsys.readouterr()
    assert main(["plan", str(folder), "--detailed-exitcode"]) == 0
