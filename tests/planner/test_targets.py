"""``plan/apply --target``: a partial plan holds only what its selectors name, says so in
every format, and is checked like a whole one (stale, tampered); ``apply --plan`` runs a
targeted plan only with ``--allow-targeted``. Each test asserts the simulated state file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml, run_cli

CLUSTER = cluster_yaml(brokers=THREE_RACKS)


def topic(name: str, partitions: int = 3, labels: str = "") -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: {partitions}\n"
        f"replicationFactor: 3\n{labels}"
    )


ACL = """\
apiVersion: kgitops/v1
kind: ACL
principal: User:orders-app
rules:
  - {resourceType: topic, name: orders, operations: [read]}
---
apiVersion: kgitops/v1
kind: ACL
principal: User:audit
rules:
  - {resourceType: topic, name: audit, operations: [read]}
"""


class Folder:
    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        files = {
            "orders.yaml": topic("orders", labels="labels: {tier: 1}\n"),
            "audit.yaml": topic("audit"),
            "payments.orders.yaml": topic("payments.orders"),
        }
        self.dir = cluster_folder(root / "demo", cluster=CLUSTER, files=files)
        self.capsys = capsys
        self.state = self.dir / ".state" / "demo.json"
        self.plan_file = root / "plan.json"

    def run(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def plan(self, *targets: str, fmt: str = "json") -> dict[str, Any]:
        args = [a for t in targets for a in ("--target", t)]
        code, out, err = self.run("plan", str(self.dir), "--format", fmt, *args)
        assert code == 0, out + err
        return json.loads(out) if fmt == "json" else {"text": out}

    def live(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.state.read_text())
        return data


@pytest.fixture
def folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Folder:
    return Folder(tmp_path, capsys)


def subjects(plan: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["topic"]) for a in plan["actions"]]


def test_a_topic_glob_plans_only_the_topics_it_matches(folder: Folder) -> None:
    plan = folder.plan("payments.*")
    assert subjects(plan) == [("create_topic", "payments.orders")]
    assert plan["targets"] == ["payments.*"]
    assert sorted(plan["stateDigests"]) == ["payments.orders"]
    whole = folder.plan()
    assert "targets" not in whole and len(whole["actions"]) == 3


def test_a_label_selector_plans_the_labelled_topics(folder: Folder) -> None:
    assert subjects(folder.plan("label:tier=1")) == [("create_topic", "orders")]
    assert subjects(folder.plan("label:tier=1", "audit")) == [
        ("create_topic", "audit"),
        ("create_topic", "orders"),
    ]


def test_access_selectors_pick_a_principals_bindings(folder: Folder) -> None:
    (folder.dir / "acl.yaml").write_text(ACL)
    plan = folder.plan("acl:User:orders-app")
    assert subjects(plan) == [("create_acl", "User:orders-app allow read topic:orders")]
    assert "accessFingerprint" in plan
    topics_only = folder.plan("orders")
    assert [t for t, _ in subjects(topics_only)] == ["create_topic"]
    assert "accessFingerprint" not in topics_only


def test_the_text_and_markdown_plans_say_they_are_partial(folder: Folder) -> None:
    text = folder.plan("orders", fmt="text")["text"]
    assert "Partial plan: only --target orders" in text
    markdown = folder.plan("orders", "label:tier=1", fmt="markdown")["text"]
    assert "**Partial plan**: only `--target` `orders`, `label:tier=1`" in markdown


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("label:tier", "a label selector is label:KEY=VALUE"),
        ("acl:", "give what follows acl:"),
        ("nope.*", "--target nope.*: no topic in the specs or on cluster demo matches"),
    ],
)
def test_a_selector_that_cannot_select_is_one_line_and_changes_nothing(
    folder: Folder, selector: str, message: str
) -> None:
    code, out, err = folder.run("apply", str(folder.dir), "--yes", "--target", selector)
    assert code == 1
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not folder.state.exists() or folder.live()["topics"] == {}


def test_apply_with_a_target_creates_only_that_topic(folder: Folder) -> None:
    code, out, err = folder.run("apply", str(folder.dir), "--yes", "--target", "orders")
    assert code == 0, out + err
    assert set(folder.live()["topics"]) == {"orders"}


def test_a_saved_targeted_plan_needs_allow_targeted(folder: Folder) -> None:
    code, out, err = folder.run(
        "plan", str(folder.dir), "--target", "orders", "--out", str(folder.plan_file)
    )
    assert code == 0, out + err
    saved = json.loads(folder.plan_file.read_text())
    assert saved["options"]["targets"] == ["orders"] and saved["targets"] == ["orders"]
    code, out, err = folder.run("apply", "--plan", str(folder.plan_file), "--yes")
    assert code == 1
    assert "--allow-targeted" in err
    assert not folder.state.exists() or folder.live()["topics"] == {}
    code, out, err = folder.run(
        "apply", "--plan", str(folder.plan_file), "--yes", "--allow-targeted"
    )
    assert code == 0, out + err
    assert set(folder.live()["topics"]) == {"orders"}


def _save(folder: Folder, *targets: str) -> dict[str, Any]:
    args = [a for t in targets for a in ("--target", t)]
    code, out, err = folder.run("plan", str(folder.dir), "--out", str(folder.plan_file), *args)
    assert code == 0, out + err
    data: dict[str, Any] = json.loads(folder.plan_file.read_text())
    return data


def _apply_saved(folder: Folder) -> tuple[int, str]:
    code, out, err = folder.run(
        "apply", "--plan", str(folder.plan_file), "--yes", "--allow-targeted"
    )
    return code, out + err


def test_a_targeted_plan_with_an_action_added_is_refused(folder: Folder) -> None:
    whole = _save(folder)
    extra = next(a for a in whole["actions"] if a["topic"] == "audit")
    saved = _save(folder, "orders")
    saved["actions"].append(extra)
    folder.plan_file.write_text(json.dumps(saved))
    code, output = _apply_saved(folder)
    assert code == 1
    assert "create_topic audit" in output or "audit" in output
    assert not folder.state.exists() or folder.live()["topics"] == {}


def test_a_targeted_plan_passed_off_as_a_whole_one_is_refused(folder: Folder) -> None:
    saved = _save(folder, "orders")
    del saved["targets"]
    folder.plan_file.write_text(json.dumps(saved))
    code, output = _apply_saved(folder)
    assert code == 1 and "targets" in output
    saved = _save(folder, "orders")
    saved["options"]["targets"] = ["*"]
    saved["targets"] = ["*"]
    folder.plan_file.write_text(json.dumps(saved))
    code, output = _apply_saved(folder)
    assert code == 1
    assert not folder.state.exists() or folder.live()["topics"] == {}


def test_a_targeted_plan_is_stale_only_when_its_own_topics_change(folder: Folder) -> None:
    assert folder.run("apply", str(folder.dir), "--yes")[0] == 0
    (folder.dir / "orders.yaml").write_text(topic("orders", 6))
    (folder.dir / "audit.yaml").write_text(topic("audit", 6))
    _save(folder, "orders")
    # audit changes on the cluster: not this plan's business
    assert folder.run("apply", str(folder.dir), "--yes", "--target", "audit")[0] == 0
    code, output = _apply_saved(folder)
    assert code == 0, output
    assert len(folder.live()["topics"]["orders"]["partitions"]) == 6
    # orders changes under a saved plan for it: refused
    (folder.dir / "orders.yaml").write_text(topic("orders", 9))
    _save(folder, "orders")
    (folder.dir / "orders.yaml").write_text(topic("orders", 12))
    assert folder.run("apply", str(folder.dir), "--yes", "--target", "orders")[0] == 0
    code, output = _apply_saved(folder)
    assert code == 1 and "orders" in output
    assert len(folder.live()["topics"]["orders"]["partitions"]) == 12


def test_update_lock_with_a_target_writes_only_the_targeted_entries(folder: Folder) -> None:
    code, out, err = folder.run("plan", str(folder.dir), "--update-lock", "--target", "orders")
    assert code == 0, out + err
    lock = (folder.dir / "kgitops.lock").read_text()
    assert '"orders":' in lock and '"audit"' not in lock and '"payments.orders"' not in lock


LABELLED_ACL = """\
apiVersion: kgitops/v1
kind: ACL
labels: {team: audit}
principal: User:audit
rules:
  - {resourceType: topic, name: audit, operations: [read]}
"""


def test_a_label_selects_access_documents_too(folder: Folder) -> None:
    (folder.dir / "acl.yaml").write_text(LABELLED_ACL)
    plan = folder.plan("label:team=audit")
    assert subjects(plan) == [("create_acl", "User:audit allow read topic:audit")]
    assert "accessFingerprint" in plan  # access is part of this plan: checked at apply


def test_get_topics_shows_the_labels_of_the_specs(folder: Folder) -> None:
    assert folder.run("apply", str(folder.dir), "--yes", "--target", "orders")[0] == 0
    code, out, err = folder.run("get", str(folder.dir), "topics")
    assert code == 0, err
    assert out.splitlines()[0].split()[-1] == "LABELS"
    assert out.splitlines()[1].split()[-1] == "tier=1"
    code, out, err = folder.run("get", str(folder.dir), "topics", "--format", "json")
    assert json.loads(out)["topics"][0]["labels"] == {"tier": "1"}


def test_target_with_a_saved_plan_is_one_line_and_changes_nothing(folder: Folder) -> None:
    _save(folder, "orders")
    code, out, err = folder.run(
        "apply", "--plan", str(folder.plan_file), "--yes", "--target", "orders"
    )
    assert code == 1
    assert len((out + err).strip().splitlines()) == 1 and "--allow-targeted" in err
    assert not folder.state.exists() or folder.live()["topics"] == {}
