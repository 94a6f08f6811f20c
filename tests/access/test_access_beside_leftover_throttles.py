"""Found on a real Kafka cluster shared with other tests (tests/access/test_access_real.py):
a folder with access documents and no topic, on a cluster whose brokers keep throttle rates
no move needs (``~ remove_throttles broker N``), and a user with two SCRAM mechanisms.
Checked here on the simulated cluster, deterministically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import ConfigChange
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.names import THROTTLE_FOLLOWER_RATE, THROTTLE_LEADER_RATE
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml

CLUSTER = cluster_yaml(brokers=THREE_RACKS)
USERS = """\
apiVersion: kgitops/v1
kind: User
name: orders-app
mechanism: SCRAM-SHA-256
passwordEnv: ORDERS_PW
---
apiVersion: kgitops/v1
kind: User
name: orders-app
mechanism: SCRAM-SHA-512
passwordEnv: ORDERS_PW
iterations: 4096
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cluster_folder(tmp_path, cluster=CLUSTER, files={"users.yaml": USERS})
    monkeypatch.setenv("ORDERS_PW", "s3cret-pw")
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), THREE_RACKS)
    rates = {THROTTLE_LEADER_RATE: "50000", THROTTLE_FOLLOWER_RATE: "50000"}
    assert all(
        e is None
        for e in sim.alter_broker_configs({b: ConfigChange(set=rates) for b in (0, 1)}).values()
    )
    sim.close()
    return tmp_path


def _users(folder: Path) -> set[tuple[str, str]]:
    state = json.loads((folder / ".state" / "demo.json").read_text())
    return {(u["name"], u["mechanism"]) for u in state["access"]["users"]}


def test_apply_of_a_topicless_folder_beside_leftover_broker_throttles_is_not_stale(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plan depends on no topic; its broker actions name none (was: the topic "",
    whose digest was not the plan's: "the brokers changed" at every apply)."""
    assert main(["apply", str(folder), "--yes"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "done: ~ remove_throttles broker 0" in out and "done: ~ remove_throttles broker 1" in out
    assert _users(folder) == {("orders-app", "SCRAM-SHA-256"), ("orders-app", "SCRAM-SHA-512")}
    assert main(["plan", str(folder), "--detailed-exitcode"]) == 0


def test_a_saved_plan_with_two_brokers_throttle_removals_is_applied(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ``remove_throttles`` of brokers are two actions, not one listed twice."""
    saved = tmp_path / "plan.json"
    assert main(["plan", str(folder), "--out", str(saved)]) == 0
    capsys.readouterr()
    assert main(["apply", "--plan", str(saved), "--yes"]) == 0, capsys.readouterr().err
    assert _users(folder) == {("orders-app", "SCRAM-SHA-256"), ("orders-app", "SCRAM-SHA-512")}
    state = json.loads((folder / ".state" / "demo.json").read_text())
    assert not any(state.get("brokerConfigs", {}).values())
