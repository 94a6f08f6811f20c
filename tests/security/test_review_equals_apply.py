"""What is applied is what was reviewed: a saved plan holds only what its specs produce.

``apply --plan`` and ``github check-plan`` check the file against schemas/plan.json, then plan
again from the same specs and the state the plan recorded, and refuse (naming each one) any
action the specs do not produce. Each test reads the simulated cluster back: nothing changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import THREE_RACKS, cluster_folder
from tests.helpers import run_cli_text as cli

ORDERS = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 2
config:
  retention.ms: "86400000"
"""
LIVE = {
    "format": "kgitops-state/v1",
    "clusterId": "sim",
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
    "topics": {
        "orders": {
            "partitions": {
                "0": {"replicas": [0, 1]},
                "1": {"replicas": [1, 2]},
                "2": {"replicas": [2, 0]},
            },
            "config": {"retention.ms": "3600000"},
        },
        "legacy.audit": {
            "partitions": {"0": {"replicas": [0, 1]}},
            "config": {"retention.ms": "604800000"},
        },
    },
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    files = {"orders.yaml": ORDERS}
    return cluster_folder(tmp_path / "demo", brokers=THREE_RACKS, files=files, state=LIVE)


def live(folder: Path) -> dict[str, Any]:
    return json.loads((folder / ".state" / "demo.json").read_text())  # type: ignore[no-any-return]


def saved(folder: Path) -> tuple[Path, dict[str, Any]]:
    path = folder.parent / "plan.json"
    code, out = cli("plan", str(folder), "--out", str(path))
    assert code == 0, out
    data = json.loads(path.read_text())
    assert [a["type"] for a in data["actions"]] == ["alter_config"]
    return path, data


def tamper(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data))


RUNS = {
    "apply --plan": lambda p: cli("apply", "--plan", str(p), "--yes"),
    "github check-plan": lambda p: cli("github", "check-plan", str(p)),
}


@pytest.fixture(params=sorted(RUNS))
def run(request: pytest.FixtureRequest) -> Any:
    return RUNS[request.param]


def test_the_reviewed_plan_passes_and_applies_exactly(folder: Path) -> None:
    path, _ = saved(folder)
    assert cli("github", "check-plan", str(path))[0] == 0
    code, out = cli("apply", "--plan", str(path), "--yes")
    assert code == 0, out
    assert live(folder)["topics"]["orders"]["config"] == {"retention.ms": "86400000"}
    assert live(folder)["topics"]["legacy.audit"]["config"] == {"retention.ms": "604800000"}


def test_an_appended_alter_config_on_an_unmanaged_topic_is_refused(folder: Path, run: Any) -> None:
    path, data = saved(folder)
    data["actions"].append(
        {
            "type": "alter_config",
            "topic": "legacy.audit",
            "set": {"retention.ms": "1"},
            "delete": [],
        }
    )
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert "~ alter_config legacy.audit: no spec asks for it" in out
    assert live(folder) == LIVE


def test_an_appended_create_of_a_topic_in_no_spec_is_refused(folder: Path, run: Any) -> None:
    path, data = saved(folder)
    data["actions"].insert(
        0,
        {
            "type": "create_topic",
            "topic": "exfil",
            "partitions": 1,
            "replicationFactor": 1,
            "startIndex": None,
            "placement": "static",
            "assignment": {"0": [0]},
            "config": {"retention.ms": "1"},
        },
    )
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert "+ create_topic exfil: no spec asks for it" in out
    assert live(folder) == LIVE


def test_a_create_whose_assignment_has_fewer_partitions_than_partitions_is_refused(
    folder: Path, run: Any
) -> None:
    (folder / "payments.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: payments\npartitions: 6\nreplicationFactor: 2\n"
    )
    path = folder.parent / "plan.json"
    assert cli("plan", str(folder), "--out", str(path))[0] == 0
    data = json.loads(path.read_text())
    create = next(a for a in data["actions"] if a["type"] == "create_topic")
    create["assignment"] = {p: r for p, r in create["assignment"].items() if int(p) < 3}
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert (
        "+ create_topic payments: not what the specs produce (assignment: 3 partition(s), "
        "the specs give 6)" in out
    )
    assert live(folder) == LIVE


def test_a_plan_file_that_breaks_its_schema_is_refused_before_anything_else(
    folder: Path, run: Any
) -> None:
    path, data = saved(folder)
    data["actions"][0]["set"]["retention.ms"] = 1  # a number, not Kafka's string
    data["actions"][0]["note"] = "x"
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert "not a valid kgitops plan (schemas/plan.json)" in out
    assert "/actions/0: Additional properties are not allowed ('note' was unexpected)" in out
    assert "/actions/0/set/retention.ms: 1 is not of type 'string'" in out
    assert live(folder) == LIVE


def test_a_plan_whose_recorded_state_was_edited_to_hide_a_change_is_refused(
    folder: Path, run: Any
) -> None:
    # the fork's trick: make the recorded state agree with the new spec, so the plan is empty
    path, data = saved(folder)
    data["recordedState"]["topics"]["orders"]["config"] = {"retention.ms": "86400000"}
    data["actions"] = []
    data["summary"] = {k: 0 for k in data["summary"]}
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert "the state fingerprint is not the fingerprint of the state the plan recorded" in out
    assert live(folder) == LIVE


def test_a_plan_that_records_no_state_is_refused(folder: Path, run: Any) -> None:
    path, data = saved(folder)
    del data["recordedState"]
    tamper(path, data)
    code, out = run(path)
    assert code == 1
    assert "the plan records no state" in out
    assert live(folder) == LIVE


SKEWED = {
    "format": "kgitops-state/v1",
    "clusterId": "sim",
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
    "topics": {
        "orders": {
            "partitions": {str(p): {"replicas": [0, 1]} for p in range(6)},
            "config": {"retention.ms": "86400000"},
        }
    },
}


@pytest.mark.parametrize("flag", ["--rebalance", "--leaders"])
def test_a_plan_made_with_an_option_is_checked_with_that_option(folder: Path, flag: str) -> None:
    (folder / "orders.yaml").write_text(ORDERS.replace("partitions: 3", "partitions: 6"))
    (folder / ".state" / "demo.json").write_text(json.dumps(SKEWED))
    path = folder.parent / "plan.json"
    code, out = cli("plan", str(folder), flag, "--out", str(path))
    assert code == 0, out
    data = json.loads(path.read_text())
    assert data["actions"], "the option moves replicas or leaders"
    assert cli("github", "check-plan", str(path))[0] == 0
    del data["options"]  # the same actions, as if planned without the option: not produced
    tamper(path, data)
    code, out = cli("github", "check-plan", str(path))
    assert code == 1 and "no spec asks for it" in out


def test_an_action_left_out_by_hand_is_refused_like_one_added(folder: Path) -> None:
    """A plan cut down by hand is a partial plan nobody reviewed: only ``plan --target``
    makes partial plans (and apply takes them only with --allow-targeted)."""
    (folder / "more.yaml").write_text(ORDERS.replace("name: orders", "name: more"))
    path = folder.parent / "plan.json"
    assert cli("plan", str(folder), "--out", str(path))[0] == 0
    data = json.loads(path.read_text())
    assert sorted(a["type"] for a in data["actions"]) == ["alter_config", "create_topic"]
    data["actions"] = [a for a in data["actions"] if a["type"] == "alter_config"]
    tamper(path, data)
    code, out = cli("apply", "--plan", str(path), "--yes")
    assert code == 1
    assert "+ create_topic more: the specs produce it, the plan leaves it out" in out
    assert live(folder) == LIVE
