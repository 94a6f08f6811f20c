"""Access as code on the simulated cluster, end to end through the CLI, asserting the state
file: create, re-plan empty, drift, deletion only with the opt-in, passwordVersion rotation,
quota change, secrets nowhere, stale plans refused, the cluster identity guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgitops.cli import main
from kgitops.errors import scrub_secrets
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml, run_cli_text

PASSWORD = "pw-Zq8!s3cret-never-printed"

CLUSTER = cluster_yaml(brokers=THREE_RACKS)
TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 3
access:
  produce: [User:a]
  consume: [{principal: User:b, group: b-}]
"""
ACCESS = """\
apiVersion: kgitops/v1
kind: User
name: orders-app
mechanism: SCRAM-SHA-512
passwordEnv: ORDERS_PW
iterations: 8192
passwordVersion: %(version)d
---
apiVersion: kgitops/v1
kind: Quota
user: orders-app
producerByteRate: %(rate)d
"""


class Folder:
    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys
        self.write(cluster=CLUSTER, version=1, rate=1048576)

    def write(self, *, cluster: str = CLUSTER, version: int = 1, rate: int = 1048576) -> None:
        access = ACCESS % {"version": version, "rate": rate}
        cluster_folder(
            self.root, cluster=cluster, files={"orders.yaml": TOPIC, "access.yaml": access}
        )

    def run(self, *args: str) -> tuple[int, str]:
        return run_cli_text(*args)

    def plan(self, *extra: str) -> dict[str, Any]:
        code = main(["plan", str(self.root), "--format", "json", *extra])
        out, err = self.capsys.readouterr()
        assert code == 0, out + err
        data: dict[str, Any] = json.loads(out)  # stdout only: stderr may hold a hint
        return data

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / ".state/demo.json").read_text())
        return data

    def access(self) -> dict[str, Any]:
        return dict(self.state()["access"])


@pytest.fixture
def folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Folder:
    monkeypatch.setenv("ORDERS_PW", PASSWORD)
    return Folder(tmp_path, capsys)


def kinds(plan: dict[str, Any]) -> list[str]:
    return [f"{a['type']} {a['topic']}" for a in plan["actions"]]


def test_apply_creates_acls_user_and_quota_and_a_replan_is_empty(folder: Folder) -> None:
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 0, out
    access = folder.access()
    assert {
        (a["principal"], a["resourceType"], a["name"], a["patternType"], a["operation"])
        for a in access["acls"]
    } == {
        ("User:a", "topic", "orders", "literal", "write"),
        ("User:a", "topic", "orders", "literal", "describe"),
        ("User:a", "cluster", "kafka-cluster", "literal", "idempotent_write"),
        ("User:b", "topic", "orders", "literal", "read"),
        ("User:b", "topic", "orders", "literal", "describe"),
        ("User:b", "group", "b-", "prefixed", "read"),
    }
    (user,) = access["users"]
    assert (user["name"], user["mechanism"], user["iterations"], user["passwordVersion"]) == (
        "orders-app",
        "SCRAM-SHA-512",
        8192,
        1,
    )
    assert user["salt"] and user["storedKey"]
    assert access["quotas"] == [
        {"entity": {"user": "orders-app"}, "values": {"producer_byte_rate": 1048576}}
    ]
    assert folder.plan()["actions"] == []
    code, out = folder.run("plan", str(folder.root), "--detailed-exitcode")
    assert code == 0, out


def test_the_password_is_in_no_plan_state_or_output(folder: Folder) -> None:
    plan_text = json.dumps(folder.plan())
    root = str(folder.root)
    _, comment = folder.run("plan", root, "--format", "markdown", "--update-lock")
    _, saved = folder.run("plan", root, "--out", str(folder.root / "plan.json"))
    code, out = folder.run("apply", root, "--yes")
    assert code == 0
    _, dry = folder.run("apply", root, "--dry-run")
    _, snap = folder.run("snapshot", root, "--out", str(folder.root / "snap.json"))
    files = "".join(p.read_text() for p in sorted(folder.root.rglob("*")) if p.is_file())
    assert "kgitops.lock" in {p.name for p in folder.root.iterdir()}
    assert "snap.json" in {p.name for p in folder.root.iterdir()}
    everything = plan_text + comment + saved + out + dry + snap + files
    assert PASSWORD not in everything
    assert "ORDERS_PW" in plan_text  # the variable's name is what the plan carries
    # read by apply, the password is a secret of this run: no message may show it
    assert scrub_secrets(f"broker said: bad password {PASSWORD}") == "broker said: bad password ***"


def test_stored_key_is_kafkas_scram_stored_key_of_the_password(folder: Folder) -> None:
    import base64

    from kgitops.access import scram_stored_key

    folder.run("apply", str(folder.root), "--yes")
    (user,) = folder.access()["users"]
    salt = base64.b64decode(user["salt"])
    expected = scram_stored_key("SCRAM-SHA-512", PASSWORD, salt, 8192)
    assert base64.b64decode(user["storedKey"]) == expected


def test_a_password_version_bump_rotates_the_credential_once(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    before = folder.access()["users"][0]
    folder.write(version=2)
    plan = folder.plan()
    assert kinds(plan) == ["upsert_user orders-app SCRAM-SHA-512"]
    assert plan["actions"][0]["reason"] == "passwordVersion 1 -> 2"
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 0, out
    after = folder.access()["users"][0]
    assert after["passwordVersion"] == 2 and after["salt"] != before["salt"]
    assert folder.plan()["actions"] == []


def test_a_quota_change_alters_only_that_key(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    folder.write(rate=2097152)
    plan = folder.plan()
    assert kinds(plan) == ["alter_quota user=orders-app"]
    assert plan["actions"][0]["previous"] == {"producer_byte_rate": 1048576}
    folder.run("apply", str(folder.root), "--yes")
    assert folder.access()["quotas"][0]["values"] == {"producer_byte_rate": 2097152}


def _add_live_acl(folder: Folder, principal: str) -> None:
    data = folder.state()
    data["access"]["acls"].append(
        {
            "principal": principal,
            "host": "*",
            "resourceType": "topic",
            "name": "orders",
            "patternType": "literal",
            "operation": "read",
            "permission": "allow",
        }
    )
    (folder.root / ".state/demo.json").write_text(json.dumps(data))


def test_drift_an_acl_removed_on_the_cluster_is_created_again(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    data = folder.state()
    data["access"]["acls"] = [a for a in data["access"]["acls"] if a["principal"] != "User:b"]
    (folder.root / ".state/demo.json").write_text(json.dumps(data))
    assert kinds(folder.plan()) == [
        "create_acl User:b allow describe topic:orders",
        "create_acl User:b allow read group:b-*",
        "create_acl User:b allow read topic:orders",
    ]


def test_an_acl_not_in_git_is_only_warned_about_by_default(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    _add_live_acl(folder, "User:intruder")
    plan = folder.plan()
    assert plan["actions"] == []
    assert [w["code"] for w in plan["warnings"]] == ["UNMANAGED_ACLS"]
    assert "User:intruder allow read topic:orders" in plan["warnings"][0]["message"]


def test_no_changes_under_an_unmanaged_acls_warning_never_says_the_cluster_matches(
    folder: Folder,
) -> None:
    folder.run("apply", str(folder.root), "--yes")
    _add_live_acl(folder, "User:intruder")
    code, text = folder.run("plan", str(folder.root))
    assert code == 0
    lines = text.splitlines()
    assert lines[2].startswith("! UNMANAGED_ACLS ")
    assert lines[-1] == (
        "No changes to apply, but see the warning above: applying does not resolve it."
    )
    assert "matches the specs" not in text
    code, md = folder.run("plan", str(folder.root), "--format", "markdown")
    assert "**No changes to apply**, but see the warning above" in md
    assert "matches the specs" not in md
    assert md.index("UNMANAGED_ACLS") < md.index("No changes to apply")  # warnings first


def test_an_acl_not_in_git_is_deleted_only_with_the_opt_in_and_allow_delete(
    folder: Folder,
) -> None:
    folder.run("apply", str(folder.root), "--yes")
    _add_live_acl(folder, "User:intruder")
    folder.write(cluster=CLUSTER + "unmanagedAcls: delete\n")
    assert kinds(folder.plan()) == ["delete_acl User:intruder allow read topic:orders"]
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 1 and "--allow-delete" in out
    assert any(a["principal"] == "User:intruder" for a in folder.access()["acls"])
    code, out = folder.run("apply", str(folder.root), "--yes", "--allow-delete")
    assert code == 0, out
    assert not any(a["principal"] == "User:intruder" for a in folder.access()["acls"])


def test_a_missing_password_variable_changes_nothing(
    folder: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORDERS_PW")
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 1
    assert "ORDERS_PW (the password of user orders-app)" in out and "nothing was changed" in out
    state_file = folder.root / ".state/demo.json"
    assert not state_file.exists() or folder.state()["access"] == {
        "acls": [],
        "users": [],
        "quotas": [],
    }
    assert folder.state()["topics"] == {}


def test_a_saved_plan_is_refused_when_the_acls_changed_since(folder: Folder) -> None:
    code, out = folder.run("plan", str(folder.root), "--out", str(folder.root / "plan.json"))
    assert code == 0, out
    folder.run("simulate", str(folder.root), "show")  # creates nothing
    _add_live_acl(folder, "User:someone")
    code, out = folder.run("apply", "--plan", str(folder.root / "plan.json"), "--yes")
    assert code == 1
    assert "stale" in out and "ACL bindings, SCRAM users or client quotas changed" in out
    assert folder.state()["topics"] == {}


@pytest.mark.parametrize("drop", [("accessFingerprint",), ("accessFingerprint", "accessParts")])
def test_a_saved_plan_without_its_access_fingerprint_is_refused(
    folder: Folder, drop: tuple[str, ...]
) -> None:
    """Issue 26: deleting ``accessFingerprint`` (and ``accessParts``) from a saved plan turned
    its access staleness check off; the plan had them when made, so it must keep them."""
    path = folder.root / "plan.json"
    code, out = folder.run("plan", str(folder.root), "--out", str(path))
    assert code == 0, out
    data = json.loads(path.read_text())
    for key in drop:
        del data[key]
    path.write_text(json.dumps(data))
    folder.run("simulate", str(folder.root), "show")  # creates nothing
    _add_live_acl(folder, "User:someone")
    code, out = folder.run("apply", "--plan", str(path), "--yes")
    assert code == 1, out
    assert "accessFingerprint" in out, out
    assert folder.state()["topics"] == {}
    assert [a["principal"] for a in folder.access()["acls"]] == ["User:someone"]


def test_markdown_shows_access_changes_in_their_own_section(folder: Folder) -> None:
    code, out = folder.run("plan", str(folder.root), "--format", "markdown")
    assert code == 0
    section = out[out.index("#### Access changes") :]
    assert "| `+` | `User:b` | allow read | group `b-` (prefixed) |" in section
    assert "| `+` | create_acl | " in out and " ACLs |" in out  # counted as ACLs, not topics
    assert "<b>User:b" not in out  # not repeated as a topic-style details block


def test_plan_refuses_a_cluster_whose_id_is_not_the_pinned_one(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    folder.write(cluster=CLUSTER + "clusterId: lkc-prod-1\n")
    for command in (["plan", str(folder.root)], ["apply", str(folder.root), "--yes"]):
        code, out = folder.run(*command)
        assert code == 1
        assert "pins clusterId 'lkc-prod-1'" in out and "'simulated-demo'" in out
    folder.write(cluster=CLUSTER + "clusterId: simulated-demo\n")
    assert folder.plan()["actions"] == []


def test_import_adopts_acls_users_and_quotas_and_records_the_cluster_id(
    folder: Folder, tmp_path_factory: pytest.TempPathFactory
) -> None:
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 0, out
    _add_live_acl(folder, "User:legacy")
    data = folder.state()
    data["access"]["acls"].append(
        {
            "principal": "User:legacy",
            "host": "10.0.0.1",
            "resourceType": "group",
            "name": "legacy-",
            "patternType": "prefixed",
            "operation": "read",
            "permission": "deny",
        }
    )
    (folder.root / ".state/demo.json").write_text(json.dumps(data))
    # a fresh folder on the same cluster: only cluster.yaml, no documents at all
    state = (folder.root / ".state/demo.json").read_text()
    fresh = cluster_folder(
        tmp_path_factory.mktemp("fresh"), cluster=CLUSTER, files={".state/demo.json": state}
    )
    code, out = folder.run("import", str(fresh))
    assert code == 0, out
    text = (fresh / "access.yaml").read_text()
    assert 'principal: User:legacy\nhost: "10.0.0.1"\n' in text
    assert "passwordEnv: KGITOPS_ORDERS_APP_PASSWORD" in text
    assert "producerByteRate: 1048576" in text
    assert PASSWORD not in text
    assert 'clusterId: "simulated-demo"' in (fresh / "cluster.yaml").read_text()
    code, out = folder.run("plan", str(fresh), "--format", "json")
    assert code == 0, out
    assert json.loads(out)["actions"] == []
    code, out = folder.run("import", str(fresh))
    assert code == 0 and "already in git" not in out and "is in git" in out


def test_import_refuses_to_overwrite_an_access_file_and_writes_nothing(folder: Folder) -> None:
    folder.run("apply", str(folder.root), "--yes")
    _add_live_acl(folder, "User:legacy")
    (folder.root / "access.yaml").rename(folder.root / "users.yaml")
    mine = "apiVersion: kgitops/v1\nkind: Quota\nclientId: mine\nproducerByteRate: 5\n"
    (folder.root / "access.yaml").write_text(mine)
    code, out = folder.run("import", str(folder.root))
    assert code == 1 and "access.yaml exists" in out
    assert (folder.root / "access.yaml").read_text() == mine
    assert "clusterId" not in (folder.root / "cluster.yaml").read_text()


def test_access_plans_offline_from_a_snapshot_and_an_old_snapshot_is_refused(
    folder: Folder,
) -> None:
    folder.run("apply", str(folder.root), "--yes")
    snap = folder.root / "snap.json"
    code, out = folder.run("snapshot", str(folder.root), "--out", str(snap))
    assert code == 0, out
    assert PASSWORD not in snap.read_text()
    code, out = folder.run("plan", str(folder.root), "--state", str(snap), "--format", "json")
    assert code == 0, out
    assert json.loads(out)["actions"] == []
    old = json.loads(snap.read_text())
    del old["access"]
    snap.write_text(json.dumps(old))
    code, out = folder.run("plan", str(folder.root), "--state", str(snap))
    assert code == 1 and "no ACLs, users or quotas" in out and "take a new snapshot" in out


def test_a_hostile_principal_cannot_break_the_pull_request_comment(folder: Folder) -> None:
    (folder.root / "evil.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: ACL\n"
        "principal: 'User:x|y`@acme/admins ![i](http://e)</details>'\n"
        "rules:\n  - {resourceType: topic, name: 'a|b', operations: [read]}\n"
    )
    code, out = folder.run("plan", str(folder.root), "--format", "markdown")
    assert code == 0, out
    row = next(line for line in out.splitlines() if "acme" in line)
    # in a code span nothing is markup (no mention, link or HTML), and the span cannot close
    assert "| ``User:x\\|y`@acme/admins ![i](http://e)</details>`` |" in row
    # in plain text the mention, the image and the HTML are defused
    assert "@<!-- -->acme" in row and "&lt;/details" in row and "\\!\\[i\\]" in row
    assert row.count(" | ") == 4  # 5 cells: the table's columns hold: every | inside is escaped


def test_apply_of_a_saved_plan_refuses_another_cluster_behind_the_address(
    folder: Folder,
) -> None:
    folder.write(cluster=CLUSTER + "clusterId: simulated-demo\n")
    plan = folder.root / "plan.json"
    code, out = folder.run("plan", str(folder.root), "--out", str(plan))
    assert code == 0, out
    data = folder.state()
    data["clusterId"] = "rebuilt-cluster"  # the same address now serves another cluster
    (folder.root / ".state/demo.json").write_text(json.dumps(data))
    code, out = folder.run("apply", "--plan", str(plan), "--yes")
    assert code == 1
    assert "'simulated-demo'" in out and "'rebuilt-cluster'" in out
    assert folder.state()["topics"] == {} and folder.access()["acls"] == []


def test_export_secrets_knows_user_passwords_and_bearer_token_variables(folder: Folder) -> None:
    from kgitops.commands.github import credential_envs

    folder.write(
        cluster=CLUSTER.replace("simulated:", "bootstrapServers: [k:9093]\nsimulatedX:").split(
            "simulatedX:"
        )[0]
        + "security:\n  protocol: SASL_SSL\n"
        "  sasl: {mechanism: OAUTHBEARER, tokenEnv: KGITOPS_KAFKA_TOKEN}\n"
    )
    assert credential_envs(str(folder.root)) == [
        ("KGITOPS_KAFKA_TOKEN", "security.sasl.tokenEnv"),
        ("ORDERS_PW", "passwordEnv of User orders-app"),
    ]


def test_a_topic_marked_delete_grants_no_access(folder: Folder) -> None:
    """``delete: true`` with ``access:``: the ACLs of a topic being deleted are never created
    (they would outlive it and grant access to any later topic of that name); its live ones
    are unmanaged, deleted with the opt-in as the topic is."""
    deleted = TOPIC.replace("replicationFactor: 3\n", "replicationFactor: 3\ndelete: true\n")
    (folder.root / "orders.yaml").write_text(deleted)
    code, out = folder.run("validate", str(folder.root))
    assert code == 0, out
    assert "orders.yaml:7:1: warning: the topic is marked delete: true" in out
    assert not any(a["type"] == "create_acl" for a in folder.plan()["actions"])
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 0, out
    assert folder.access()["acls"] == []
    folder.write(cluster=CLUSTER + "unmanagedAcls: delete\n")
    code, out = folder.run("apply", str(folder.root), "--yes")
    assert code == 0, out
    assert len(folder.access()["acls"]) == 6
    (folder.root / "orders.yaml").write_text(deleted)
    assert sorted(kinds(folder.plan()))[-1] == "delete_topic orders"
    assert sum(k.startswith("delete_acl") for k in kinds(folder.plan())) == 6
    code, out = folder.run("apply", str(folder.root), "--yes", "--allow-delete")
    assert code == 0, out
    assert folder.access()["acls"] == []
    assert "orders" not in folder.state()["topics"]
