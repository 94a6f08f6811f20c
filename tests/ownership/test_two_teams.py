"""Two teams, one cluster: two cluster folders of one repository share a simulated cluster
(``stateFile: ../../shared-state.json``), each owning its names (cluster.yaml ``owns:``).
Every test runs the CLI and asserts the shared state file: nothing of one team is ever
touched by the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from tests import helpers
from tests.helpers import THREE_RACKS, run_cli

BROKERS = (*THREE_RACKS, Broker(3, "a"))


def cluster_yaml(team: str, extra: str = "", owns: str | None = None) -> str:
    owns_block = (
        owns
        if owns is not None
        else f"owns:\n  topics: ['{team}.*']\n  principals: ['User:{team}-*']\n"
        f"  groups: ['{team}-*']\n"
    )
    return helpers.cluster_yaml(
        "shared", brokers=BROKERS, state_file="../../shared-state.json", extra=owns_block + extra
    )


def topic_yaml(name: str, rf: int = 3) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 3\n"
        f"replicationFactor: {rf}\n"
    )


def acl_yaml(principal: str, topic: str) -> str:
    return (
        "apiVersion: kgitops/v1\nkind: ACL\n"
        f"principal: {principal}\n"
        "rules:\n"
        f"  - {{resourceType: topic, name: {topic}, operations: [read]}}\n"
    )


class Repo:
    """A repository (it has a ``.git``) with ``topics/payments`` and ``topics/shipping``."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys
        (root / ".git").mkdir(parents=True)
        self.state = root / "shared-state.json"
        for team, topic in (("payments", "payments.orders"), ("shipping", "shipping.parcels")):
            files = {"topics.yaml": topic_yaml(topic)}
            helpers.cluster_folder(self.dir(team), cluster=cluster_yaml(team), files=files)

    def dir(self, team: str) -> Path:
        return self.root / "topics" / team

    def run(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def apply(self, team: str, *extra: str) -> str:
        code, out, err = self.run("apply", str(self.dir(team)), "--yes", *extra)
        assert code == 0, out + err
        return out

    def plan_json(self, team: str) -> dict[str, Any]:
        code, out, err = self.run("plan", str(self.dir(team)), "--format", "json")
        assert code == 0, out + err
        data: dict[str, Any] = json.loads(out)
        return data

    def live(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.state.read_text())
        return data


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Repo:
    r = Repo(tmp_path / "repo", capsys)
    r.apply("payments")
    r.apply("shipping")
    return r


def codes(plan: dict[str, Any]) -> list[tuple[str, str]]:
    return [(w.get("topic", ""), w["code"]) for w in plan["warnings"]]


def test_both_teams_topics_live_in_the_one_shared_state_file(repo: Repo) -> None:
    assert set(repo.live()["topics"]) == {"payments.orders", "shipping.parcels"}
    assert not (repo.dir("payments") / ".state").exists()


def test_a_topic_another_folder_owns_is_no_unmanaged_warning(repo: Repo) -> None:
    plan = repo.plan_json("payments")
    assert plan["actions"] == []
    assert all(code != "UNMANAGED_TOPIC" for _, code in codes(plan)), codes(plan)


def test_an_owned_topic_not_in_git_is_still_unmanaged(repo: Repo) -> None:
    (repo.dir("payments") / "topics.yaml").write_text(topic_yaml("payments.orders"))
    (repo.dir("payments") / "refunds.yaml").write_text(topic_yaml("payments.refunds"))
    repo.apply("payments")
    (repo.dir("payments") / "refunds.yaml").unlink()
    plan = repo.plan_json("payments")
    assert ("payments.refunds", "UNMANAGED_TOPIC") in codes(plan)
    assert ("shipping.parcels", "UNMANAGED_TOPIC") not in codes(plan)


def test_unmanaged_topics_error_counts_only_owned_topics(repo: Repo) -> None:
    (repo.dir("payments") / "cluster.yaml").write_text(
        cluster_yaml("payments", "unmanagedTopics: error\n")
    )
    code, out, err = repo.run("plan", str(repo.dir("payments")))
    assert code == 0, out + err


def test_a_spec_outside_what_the_folder_owns_is_an_error_at_its_position(repo: Repo) -> None:
    before = repo.state.read_bytes()
    (repo.dir("payments") / "stolen.yaml").write_text(topic_yaml("shipping.parcels", rf=2))
    for command in ("validate", "plan", "apply"):
        argv = [command, str(repo.dir("payments"))] + (["--yes"] if command == "apply" else [])
        code, out, err = repo.run(*argv)
        assert code == 1
        lines = [line for line in (out + err).splitlines() if "error:" in line]
        assert lines == [
            f"{repo.dir('payments')}/stolen.yaml:3:7: error: topic shipping.parcels is not "
            f"this folder's: owns.topics is payments.* ({repo.dir('payments')}/cluster.yaml:8:3)"
        ], out + err
    assert repo.state.read_bytes() == before


def test_a_drain_moves_every_replica_and_names_the_topics_of_others(repo: Repo) -> None:
    (repo.dir("payments") / "cluster.yaml").write_text(
        cluster_yaml("payments", "decommission: [2]\n")
    )
    plan = repo.plan_json("payments")
    moved = {a["topic"] for a in plan["actions"] if a["type"] == "reassign"}
    assert moved == {"payments.orders", "shipping.parcels"}
    (others,) = [w for w in plan["warnings"] if w["code"] == "DRAIN_MOVES_OTHERS"]
    assert "shipping.parcels" in others["message"]
    assert others["data"]["topics"] == ["shipping.parcels"]
    shipping = next(a for a in plan["actions"] if a["topic"] == "shipping.parcels")
    assert "does not own" in json.dumps(shipping)
    repo.apply("payments")
    for topic in repo.live()["topics"].values():
        for replicas in topic["partitions"].values():
            assert 2 not in replicas["replicas"]


def test_a_drain_names_another_folders_topic_whose_name_starts_with_two_underscores(
    repo: Repo,
) -> None:
    """A ``__`` name is for internal topics, yet a folder may manage one (with a warning):
    Connect's or Streams' topics kept by their team. The drain moves it like any topic and
    names it for its owners; Kafka's own ``__consumer_offsets``, which no folder may manage,
    is moved too but named for nobody."""
    (repo.dir("shipping") / "changelog.yaml").write_text(topic_yaml("__shipping.changelog"))
    (repo.dir("shipping") / "cluster.yaml").write_text(
        cluster_yaml(
            "shipping",
            owns="owns:\n  topics: ['shipping.*', '__shipping.*']\n"
            "  principals: ['User:shipping-*']\n  groups: ['shipping-*']\n",
        )
    )
    repo.apply("shipping")
    SimulatedCluster.open(str(repo.state), BROKERS).create_topics(
        [NewTopic("__consumer_offsets", {0: (0, 1, 2)}, {"cleanup.policy": "compact"})]
    )
    (repo.dir("payments") / "cluster.yaml").write_text(
        cluster_yaml("payments", "decommission: [2]\n")
    )
    plan = repo.plan_json("payments")
    moved = {a["topic"] for a in plan["actions"] if a["type"] == "reassign"}
    assert moved == {
        "__consumer_offsets",
        "__shipping.changelog",
        "payments.orders",
        "shipping.parcels",
    }
    (others,) = [w for w in plan["warnings"] if w["code"] == "DRAIN_MOVES_OTHERS"]
    assert others["data"]["topics"] == ["__shipping.changelog", "shipping.parcels"]
    assert "__consumer_offsets" not in others["message"]
    # each move says whose the topic is, as the warning does: another folder's, or Kafka's
    reasons = {
        a["topic"]: {m["reason"] for m in a["moves"].values()}
        for a in plan["actions"]
        if a["type"] == "reassign"
    }
    assert reasons["__shipping.changelog"] and reasons["__consumer_offsets"]
    assert all("a topic this folder does not own" in r for r in reasons["__shipping.changelog"])
    assert all("an internal topic" in r for r in reasons["__consumer_offsets"])


def test_rebalance_never_moves_a_topic_of_another_folder(repo: Repo) -> None:
    before = repo.live()["topics"]["shipping.parcels"]
    code, out, err = repo.run("plan", str(repo.dir("payments")), "--rebalance", "--format", "json")
    assert code == 0, out + err
    assert all(a["topic"] != "shipping.parcels" for a in json.loads(out)["actions"])
    repo.apply("payments", "--rebalance")
    assert repo.live()["topics"]["shipping.parcels"] == before


def test_unmanaged_acls_delete_touches_only_owned_bindings(repo: Repo) -> None:
    (repo.dir("shipping") / "acl.yaml").write_text(
        acl_yaml("User:shipping-app", "shipping.parcels")
    )
    repo.apply("shipping")
    (repo.dir("payments") / "acl.yaml").write_text(acl_yaml("User:payments-app", "payments.orders"))
    repo.apply("payments")
    assert len(repo.live()["access"]["acls"]) == 2
    # payments turns deletion on and drops its binding from git: only its own goes
    (repo.dir("payments") / "acl.yaml").unlink()
    (repo.dir("payments") / "cluster.yaml").write_text(
        cluster_yaml("payments", "unmanagedAcls: delete\n")
    )
    plan = repo.plan_json("payments")
    deletes = [a for a in plan["actions"] if a["type"] == "delete_acl"]
    assert [a["topic"] for a in deletes] == ["User:payments-app allow read topic:payments.orders"]
    repo.apply("payments", "--allow-delete")
    acls = repo.live()["access"]["acls"]
    assert [a["principal"] for a in acls] == ["User:shipping-app"]
    assert repo.plan_json("payments")["actions"] == []
    assert all(w["code"] != "UNMANAGED_ACLS" for w in repo.plan_json("payments")["warnings"])


def test_an_acl_for_a_principal_the_folder_does_not_own_is_an_error(repo: Repo) -> None:
    before = repo.state.read_bytes()
    (repo.dir("payments") / "acl.yaml").write_text(acl_yaml("User:shipping-app", "payments.orders"))
    code, out, _ = repo.run("validate", str(repo.dir("payments")))
    assert code == 1
    assert (
        f"{repo.dir('payments')}/acl.yaml:5:63: error: ACL User:shipping-app allow read "
        "topic:payments.orders: principal User:shipping-app is not this folder's"
    ) in out
    code, out, _err = repo.run("apply", str(repo.dir("payments")), "--yes")
    assert code == 1
    assert repo.state.read_bytes() == before


def test_validate_finds_two_folders_owning_one_name_of_the_same_cluster(repo: Repo) -> None:
    (repo.dir("shipping") / "cluster.yaml").write_text(
        cluster_yaml("shipping", owns="owns:\n  topics: ['shipping.*', '*.refunds']\n")
    )
    code, out, _err = repo.run("validate", str(repo.root / "topics"))
    assert code == 1
    errors = [line for line in out.splitlines() if "error:" in line]
    assert len(errors) == 2, out
    assert errors[0].startswith(f"{repo.root}/topics/payments/cluster.yaml:8:3: error: ")
    assert "can own topics payments.* and *.refunds; give each name one owner" in errors[0]
    assert errors[1].startswith(f"{repo.root}/topics/shipping/cluster.yaml:8:3: error: ")
    # validating one folder alone still compares it with the repository's others
    code, out, _ = repo.run("validate", str(repo.dir("payments")))
    assert code == 1 and "both point at the same cluster and can own topics" in out


def test_a_folder_without_owns_beside_another_on_the_same_cluster_is_an_overlap(
    repo: Repo,
) -> None:
    (repo.dir("shipping") / "cluster.yaml").write_text(cluster_yaml("shipping", owns=""))
    code, out, _ = repo.run("validate", str(repo.dir("shipping")))
    assert code == 1
    assert "no owns: here, so this folder owns everything" in out


def test_folders_of_other_clusters_may_own_the_same_names(tmp_path: Path, repo: Repo) -> None:
    (repo.dir("shipping") / "cluster.yaml").write_text(
        cluster_yaml("shipping", owns="owns:\n  topics: ['*']\n").replace(
            "../../shared-state.json", "../../other-state.json"
        )
    )
    code, out, err = repo.run("validate", str(repo.root / "topics"))
    assert code == 0, out + err


def test_import_adopts_only_owned_topics(repo: Repo) -> None:
    (repo.dir("payments") / "topics.yaml").unlink()
    code, out, err = repo.run("import", str(repo.dir("payments")))
    assert code == 0, out + err
    files = sorted(p.name for p in repo.dir("payments").glob("*.yaml"))
    assert files == ["cluster.yaml", "payments.orders.yaml"]
    code, out, err = repo.run("import", str(repo.dir("payments")), "--topic", "shipping.parcels")
    assert code == 1
    assert "shipping.parcels: not this folder's" in err


def test_import_adopts_only_the_owned_bindings(repo: Repo) -> None:
    (repo.dir("shipping") / "acl.yaml").write_text(
        acl_yaml("User:shipping-app", "shipping.parcels")
    )
    repo.apply("shipping")
    (repo.dir("payments") / "acl.yaml").write_text(acl_yaml("User:payments-app", "payments.orders"))
    repo.apply("payments")
    (repo.dir("payments") / "acl.yaml").unlink()
    code, out, err = repo.run("import", str(repo.dir("payments")))
    assert code == 0, out + err
    adopted = (repo.dir("payments") / "access.yaml").read_text()
    assert "User:payments-app" in adopted and "shipping" not in adopted


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        (
            "{resourceType: topic, name: pay, patternType: prefixed, operations: [read]}",
            "resource topic:pay* is not this folder's",
        ),
        (
            "{resourceType: group, name: shipping-g, operations: [read]}",
            "resource group:shipping-g is not this folder's: owns.groups is payments-*",
        ),
        (
            "{resourceType: topic, name: '*', operations: [read]}",
            "resource topic:* is not this folder's",
        ),
    ],
)
def test_a_binding_on_a_resource_the_folder_does_not_own_is_an_error(
    repo: Repo, rule: str, why: str
) -> None:
    (repo.dir("payments") / "acl.yaml").write_text(
        f"apiVersion: kgitops/v1\nkind: ACL\nprincipal: User:payments-app\nrules:\n  - {rule}\n"
    )
    code, out, _ = repo.run("validate", str(repo.dir("payments")))
    assert code == 1
    assert why in out, out


def test_topic_access_to_a_group_the_folder_does_not_own_is_an_error(repo: Repo) -> None:
    (repo.dir("payments") / "topics.yaml").write_text(
        topic_yaml("payments.orders")
        + "access:\n  consume: [{principal: User:payments-app, group: shipping-}]\n"
    )
    code, out, _ = repo.run("validate", str(repo.dir("payments")))
    assert code == 1
    assert "resource group:shipping-* is not this folder's" in out, out


def test_another_teams_acl_change_does_not_make_a_saved_plan_stale(repo: Repo) -> None:
    (repo.dir("payments") / "acl.yaml").write_text(acl_yaml("User:payments-app", "payments.orders"))
    plan = repo.root / "plan.json"
    code, out, err = repo.run("plan", str(repo.dir("payments")), "--out", str(plan))
    assert code == 0, out + err
    (repo.dir("shipping") / "acl.yaml").write_text(
        acl_yaml("User:shipping-app", "shipping.parcels")
    )
    repo.apply("shipping")
    code, out, err = repo.run("apply", "--plan", str(plan), "--yes")
    assert code == 0, out + err
    assert sorted(a["principal"] for a in repo.live()["access"]["acls"]) == [
        "User:payments-app",
        "User:shipping-app",
    ]


def test_a_leftover_throttle_on_another_teams_topic_is_theirs_to_remove(repo: Repo) -> None:
    data = repo.live()
    data["topics"]["shipping.parcels"]["config"] = {"leader.replication.throttled.replicas": "*"}
    repo.state.write_text(json.dumps(data))
    payments = repo.plan_json("payments")
    assert all(a["topic"] != "shipping.parcels" for a in payments["actions"]), payments
    shipping = repo.plan_json("shipping")
    assert [(a["type"], a["topic"]) for a in shipping["actions"]] == [
        ("remove_throttles", "shipping.parcels")
    ]
    repo.apply("payments")
    assert repo.live()["topics"]["shipping.parcels"]["config"] != {}
    repo.apply("shipping")
    assert repo.live()["topics"]["shipping.parcels"]["config"] == {}


def test_a_leftover_throttle_on_kafkas_own_topic_is_any_folders_to_remove(repo: Repo) -> None:
    """``__consumer_offsets`` is no folder's (no spec may name it), so no owner's plan would
    ever remove a throttle a killed drain left on it: every folder's plan does."""
    SimulatedCluster.open(str(repo.state), BROKERS).create_topics(
        [NewTopic("__consumer_offsets", {0: (0, 1, 2)}, {"cleanup.policy": "compact"})]
    )
    data = repo.live()
    data["topics"]["__consumer_offsets"]["config"]["leader.replication.throttled.replicas"] = "*"
    repo.state.write_text(json.dumps(data))
    for team in ("payments", "shipping"):
        plan = repo.plan_json(team)
        assert [(a["type"], a["topic"]) for a in plan["actions"]] == [
            ("remove_throttles", "__consumer_offsets")
        ], plan["actions"]
    repo.apply("payments")
    assert repo.live()["topics"]["__consumer_offsets"]["config"] == {"cleanup.policy": "compact"}
