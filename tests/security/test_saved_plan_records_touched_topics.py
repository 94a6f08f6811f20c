"""A saved plan records the state of the topics its actions touch, not the whole state.

The topics the plan names (``stateDigests``) that no action touches are proven unchanged by
the stale check, so ``plan --out`` leaves them out of ``recordedState``; ``apply --plan`` reads
them from the live cluster and ``check-plan --state`` from the state file, each checked
against its digest before the plan is made again from the specs. Each test reads the
simulated cluster back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml
from tests.helpers import run_cli_text as cli

CLUSTER = cluster_yaml(brokers=THREE_RACKS)


def topic(name: str, retention: str) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 3\n"
        f'replicationFactor: 2\nconfig:\n  retention.ms: "{retention}"\n'
    )


PARTS = {"0": {"replicas": [0, 1]}, "1": {"replicas": [1, 2]}, "2": {"replicas": [2, 0]}}
LIVE = {
    "format": "kgitops-state/v1",
    "clusterId": "sim",
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
    "topics": {
        "orders": {"partitions": PARTS, "config": {"retention.ms": "3600000"}},
        "payments": {"partitions": PARTS, "config": {"retention.ms": "3600000"}},
        "legacy.audit": {
            "partitions": {"0": {"replicas": [0, 1]}},
            "config": {"retention.ms": "604800000"},
        },
    },
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    files = {
        "orders.yaml": topic("orders", "86400000"),  # changes
        "payments.yaml": topic("payments", "3600000"),  # as it is
    }
    return cluster_folder(tmp_path / "demo", brokers=THREE_RACKS, files=files, state=LIVE)


def live(folder: Path) -> dict[str, Any]:
    return json.loads((folder / ".state" / "demo.json").read_text())  # type: ignore[no-any-return]


def saved(folder: Path) -> tuple[Path, dict[str, Any]]:
    path = folder.parent / "plan.json"
    code, out = cli("plan", str(folder), "--out", str(path))
    assert code == 0, out
    return path, json.loads(path.read_text())


def test_the_saved_plan_records_the_touched_topic_and_not_the_untouched_one(
    folder: Path,
) -> None:
    _, data = saved(folder)
    assert [(a["type"], a["topic"]) for a in data["actions"]] == [("alter_config", "orders")]
    assert sorted(data["stateDigests"]) == ["orders", "payments"]
    recorded = data["recordedState"]
    # legacy.audit is named by no digest: it stays, as brokers do
    assert sorted(recorded["topics"]) == ["legacy.audit", "orders"]
    assert recorded["topics"]["orders"]["config"] == {"retention.ms": "3600000"}
    assert [b["id"] for b in recorded["brokers"]] == [0, 1, 2]


def test_apply_reads_the_unrecorded_topic_live_and_applies_exactly(folder: Path) -> None:
    path, data = saved(folder)
    assert "payments" not in data["recordedState"]["topics"]
    code, out = cli("apply", "--plan", str(path), "--yes")
    assert code == 0, out
    after = live(folder)["topics"]
    assert after["orders"]["config"] == {"retention.ms": "86400000"}
    assert after["payments"]["config"] == {"retention.ms": "3600000"}
    assert {p: v["replicas"] for p, v in after["payments"]["partitions"].items()} == {
        p: v["replicas"] for p, v in PARTS.items()
    }


def test_apply_refuses_a_plan_whose_unrecorded_topic_changed_since(folder: Path) -> None:
    path, _ = saved(folder)
    changed = json.loads(json.dumps(LIVE))
    changed["topics"]["payments"]["config"] = {"retention.ms": "1000"}
    (folder / ".state" / "demo.json").write_text(json.dumps(changed))
    code, out = cli("apply", "--plan", str(path), "--yes")
    assert code == 1
    assert "is stale" in out
    assert "topic payments: its replicas or configs changed since the plan was made" in out
    assert live(folder) == changed


@pytest.mark.parametrize("how", ["apply", "check-plan", "check-plan --state"])
def test_an_action_on_a_topic_the_plan_does_not_record_is_refused(folder: Path, how: str) -> None:
    path, data = saved(folder)
    data["actions"].append(
        {"type": "alter_config", "topic": "payments", "set": {"retention.ms": "1"}, "delete": []}
    )
    path.write_text(json.dumps(data))
    state = folder.parent / "state.json"
    state.write_text(json.dumps(LIVE))
    argv = {
        "apply": ["apply", "--plan", str(path), "--yes"],
        "check-plan": ["github", "check-plan", str(path)],
        "check-plan --state": ["github", "check-plan", str(path), "--state", str(state)],
    }[how]
    code, out = cli(*argv)
    assert code == 1
    assert "~ alter_config payments: its topic is not in recordedState" in out
    assert live(folder) == LIVE


def test_check_plan_with_the_state_plans_again_and_refuses_a_forged_action(
    folder: Path,
) -> None:
    path, data = saved(folder)
    assert "payments" not in data["recordedState"]["topics"]  # taken from --state
    data["actions"][0]["set"]["retention.ms"] = "1"  # on the recorded topic
    path.write_text(json.dumps(data))
    state = folder.parent / "state.json"
    state.write_text(json.dumps(LIVE))
    code, out = cli("github", "check-plan", str(path), "--state", str(state))
    assert code == 1
    assert "~ alter_config orders: not what the specs produce (set: retention.ms)" in out
    code, out = cli("apply", "--plan", str(path), "--yes")
    assert code == 1 and "~ alter_config orders: not what the specs produce" in out
    assert live(folder) == LIVE


def test_check_plan_without_the_state_checks_the_fingerprint_against_the_digests(
    folder: Path,
) -> None:
    path, data = saved(folder)
    code, out = cli("github", "check-plan", str(path))
    assert code == 0, out
    assert "does not record the topics its actions leave alone" in out
    data["stateDigests"]["payments"] = "sha256:" + "0" * 64  # hides a change of payments
    path.write_text(json.dumps(data))
    code, out = cli("github", "check-plan", str(path))
    assert code == 1
    assert "the state fingerprint is not the fingerprint of the state the plan recorded" in out


def test_check_plan_with_a_state_that_is_not_the_planned_one_says_it_is_stale(
    folder: Path,
) -> None:
    path, _ = saved(folder)
    changed = json.loads(json.dumps(LIVE))
    changed["topics"]["payments"]["partitions"]["0"]["replicas"] = [1, 0]
    state = folder.parent / "state.json"
    state.write_text(json.dumps(changed))
    code, out = cli("github", "check-plan", str(path), "--state", str(state))
    assert code == 1
    assert "topic payments: its replicas or configs changed since the plan was made" in out


def test_a_plan_that_moves_replicas_records_the_whole_state(folder: Path) -> None:
    _, data = saved(folder)
    assert "payments" not in data["recordedState"]["topics"]
    (folder / "cluster.yaml").write_text(CLUSTER + "decommission: [2]\n")
    _, data = saved(folder)
    assert any(a["type"] == "reassign" for a in data["actions"])
    assert sorted(data["recordedState"]["topics"]) == ["legacy.audit", "orders", "payments"]
