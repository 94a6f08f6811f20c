"""Two repositories, one real Kafka cluster (the ``kafka_cluster`` fixture): the owner record
(kgitops/plan/owners.py, topic ``_kgitops-owners``) is what keeps them apart, since neither
repository sees the other's files.

Repository A applies its topic and its ACL; repository B's plan claiming an overlapping
pattern is refused in one line naming both owners, nothing created; B with its own disjoint
``owns:`` applies, and everything of A (topic layout, configs, ACL bindings, read with
kafka-python) is as it was; neither plan sees the other's topics as unmanaged.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import cluster_folder, run_cli

if TYPE_CHECKING:
    from kgitops.cluster.kafka.localcluster import KafkaCluster

RUN = os.urandom(3).hex()  # a cluster reused across sessions keeps earlier runs' records


def repository(root: Path, origin: str, bootstrap: str, owns: str, *docs: str) -> Path:
    """A git checkout with an ``origin`` remote and one cluster folder ``topics/team``."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", origin], check=True)
    return cluster_folder(
        root / "topics" / "team",
        "real",
        bootstrap=bootstrap,
        extra="requestTimeoutMs: 30000\nunmanagedAcls: delete\n" + owns,
        files={f"doc{n}.yaml": doc for n, doc in enumerate(docs)},
    )


def topic(name: str, principal: str | None = None) -> str:
    """A topic, and an ACL document granting ``principal`` read and write on it (topic
    ``access: produce`` also grants idempotent_write on the cluster, which only a folder
    without ``owns:`` may declare)."""
    doc = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 2\n"
        "replicationFactor: 2\nconfig: {retention.ms: 3600000}\n"
    )
    if principal is None:
        return doc
    return (
        doc + "---\napiVersion: kgitops/v1\nkind: ACL\n"
        f"principal: {principal}\nrules:\n"
        f"  - {{resourceType: topic, name: {name}, operations: [read, write]}}\n"
    )


class View:
    """Topics, their configs and the ACL bindings, as kafka-python's admin client reads them."""

    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaAdminClient

        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)

    def topics(self, prefix: str) -> dict[str, Any]:
        from kafka.admin import ConfigResource, ConfigResourceType

        names = sorted(t for t in self.admin.list_topics() if t.startswith(prefix))
        out: dict[str, Any] = {}
        if not names:
            return out
        described = {t["name"]: t for t in self.admin.describe_topics(names)}
        configs = self.admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, n) for n in names]
        )
        for n in names:
            parts = {
                p["partition_index"]: tuple(p["replica_nodes"]) for p in described[n]["partitions"]
            }
            set_here = {
                k: e["value"]
                for k, e in configs.get("topic", {}).get(n, {}).items()
                if e.get("config_source") == "DYNAMIC_TOPIC_CONFIG"
            }
            out[n] = (parts, set_here)
        return out

    def acls(self, prefix: str) -> set[tuple[str, str, str]]:
        from kafka.admin import (
            ACLFilter,
            ACLOperation,
            ACLPermissionType,
            ACLResourcePatternType,
            ResourcePatternFilter,
            ResourceType,
        )

        pattern = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
        found, _ = self.admin.describe_acls(
            ACLFilter(None, "*", ACLOperation.ANY, ACLPermissionType.ANY, pattern)
        )
        return {
            (a.principal, a.resource_pattern.resource_name, a.operation.name)
            for a in found
            if a.resource_pattern.resource_name.startswith(prefix)
        }

    def close(self) -> None:
        self.admin.close()


@pytest.fixture
def view(kafka_cluster: KafkaCluster) -> Iterator[View]:
    v = View(kafka_cluster.bootstrap)
    yield v
    v.close()


def test_kafka_refuses_an_owner_config_on_a_topic(
    kafka_cluster: KafkaCluster, topic_prefix: str
) -> None:
    """Why the record is a topic of its own: Kafka knows no ``kgitops.owner`` topic config
    (and the simulated cluster answers the same)."""
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import ConfigChange, NewTopic
    from kgitops.model import ClusterSpec

    admin = KafkaAdmin(
        ClusterSpec(
            name="k", directory=".", bootstrap_servers=tuple(kafka_cluster.bootstrap.split(","))
        )
    )
    name = f"{topic_prefix}owned"
    try:
        assert admin.create_topics([NewTopic(name, {0: (1,)})]) == {name: None}
        err = admin.alter_topic_configs({name: ConfigChange(set={"kgitops.owner": "a"})})[name]
        assert getattr(err, "code", None) == "INVALID_CONFIG"
        assert "Unknown topic config name: kgitops.owner" in str(err)
        assert "kgitops.owner" not in admin.describe([name]).topics[name].config
    finally:
        admin.delete_topics([name])
        admin.close()


def test_two_repositories_share_a_cluster_and_neither_touches_the_other(
    kafka_cluster: KafkaCluster,
    topic_prefix: str,
    tmp_path: Path,
    view: View,
) -> None:
    p = topic_prefix
    boot = kafka_cluster.bootstrap
    a = repository(
        tmp_path / "a",
        f"git@example.com:acme/a-{RUN}.git",
        boot,
        f"owns:\n  topics: ['{p}a.*']\n  principals: ['User:{p}a-*']\n",
        topic(f"{p}a.orders", f"User:{p}a-app"),
    )
    me_a = f"example.com/acme/a-{RUN} topics/team"
    try:
        code, out, err = run_cli("apply", str(a), "--yes")
        assert code == 0, out + err
        assert f"recorded what {json.dumps(me_a)} owns in topic _kgitops-owners" in err
        a_topics, a_acls = view.topics(f"{p}a."), view.acls(p)
        assert set(a_topics) == {f"{p}a.orders"}
        assert a_topics[f"{p}a.orders"][1] == {"retention.ms": "3600000"}
        assert a_acls and all(who == f"User:{p}a-app" for who, _, _ in a_acls)

        # B claims *.orders over https (another repository): refused, naming both owners
        greedy = repository(
            tmp_path / "b1",
            f"https://example.com/acme/b-{RUN}",
            boot,
            f"owns:\n  topics: ['{p}*.orders']\n",
            topic(f"{p}b.orders"),
        )
        me_b = f"example.com/acme/b-{RUN} topics/team"
        for command in ("plan", "apply"):
            code, out, err = run_cli(
                command, str(greedy), *(["--yes"] if command == "apply" else [])
            )
            lines = [line for line in (out + err).splitlines() if line.strip()]
            assert code == 1 and len(lines) == 1, lines
            assert lines[0].startswith(f"{greedy}/cluster.yaml:")
            assert f'owns of "{me_b}" overlaps what "{me_a}" owns on this cluster' in lines[0]
            assert f"both can own topics {p}*.orders and {p}a.*" in lines[0]
        assert view.topics(f"{p}b.") == {}

        # B with its own names applies; A's topic, configs and bindings are as they were
        b = repository(
            tmp_path / "b2",
            f"https://example.com/acme/b-{RUN}",
            boot,
            f"owns:\n  topics: ['{p}b.*']\n  principals: ['User:{p}b-*']\n",
            topic(f"{p}b.parcels", f"User:{p}b-app"),
        )
        code, out, err = run_cli("apply", str(b), "--yes")
        assert code == 0, out + err
        assert set(view.topics(f"{p}b.")) == {f"{p}b.parcels"}
        assert view.topics(f"{p}a.") == a_topics
        assert {x for x in view.acls(p) if x[0] == f"User:{p}a-app"} == a_acls

        for folder in (a, b):
            code, out, err = run_cli("plan", str(folder))
            assert code == 0, out + err
            assert "No changes" in out and "UNMANAGED" not in out + err

        code, out, _ = run_cli("owners", str(b))
        assert code == 0
        assert f"{me_b}  (this folder)  topics: {p}b.*; principals: User:{p}b-*" in out
        assert f"{me_a}  topics: {p}a.*; principals: User:{p}a-*" in out
    finally:
        for folder in (tmp_path / "a" / "topics" / "team", tmp_path / "b2" / "topics" / "team"):
            if folder.is_dir():
                run_cli("owners", str(folder), "--release")


def test_one_owner_name_two_folders_a_folder_without_owns_and_two_applies_at_once(
    kafka_cluster: KafkaCluster,
    topic_prefix: str,
    tmp_path: Path,
    view: View,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On real Kafka: a second folder under A's ``owns.owner`` is refused (until
    ``--take-over-owner``); a folder without ``owns:`` may not touch A's topic; of two
    overlapping records written at once the one at the lower offset stands, and the later
    writer takes its record back and creates nothing."""
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.model import Owns
    from kgitops.plan.owners import OwnerRecord

    p = topic_prefix
    boot = kafka_cluster.bootstrap
    owner = f"team-{RUN}-{p.strip('.-_')}"
    a = repository(
        tmp_path / "a",
        f"https://example.com/acme/a-{RUN}",
        boot,
        f"owns:\n  owner: {owner}\n  topics: ['{p}a.*']\n",
        topic(f"{p}a.orders"),
    )
    rival = f"rival-{RUN}-{p.strip('.-_')}"
    released = [owner, rival]
    try:
        code, out, err = run_cli("apply", str(a), "--yes")
        assert code == 0, out + err
        a_topics = view.topics(f"{p}a.")
        # the same owns.owner from another repository: refused, naming both folders
        b = repository(
            tmp_path / "b",
            f"https://example.com/acme/b-{RUN}",
            boot,
            f"owns:\n  owner: {owner}\n  topics: ['{p}*']\n",
            topic(f"{p}b.x"),
        )
        code, out, err = run_cli("apply", str(b), "--yes")
        assert code == 1
        assert (
            f'the owner "{owner}" is recorded on this cluster (topic _kgitops-owners) from '
            f'"example.com/acme/a-{RUN} topics/team", not from this folder '
            f'("example.com/acme/b-{RUN} topics/team")' in err
        )
        assert view.topics(f"{p}b.") == {}
        # a folder without owns: declaring A's topic (with a change): refused
        c = repository(
            tmp_path / "c",
            f"https://example.com/acme/c-{RUN}",
            boot,
            "",
            topic(f"{p}a.orders").replace("retention.ms: 3600000", "retention.ms: 7200000"),
        )
        code, out, err = run_cli("plan", str(c))
        assert code == 1 and f'topic {p}a.orders of its plan is owned by "{owner}"' in err
        assert view.topics(f"{p}a.") == a_topics

        # two first applies at once: the rival's record lands between d's check and d's write
        real = KafkaAdmin.record_owners
        raced: list[bool] = []

        def racing(self: KafkaAdmin, records: Any) -> None:
            if not raced:
                raced.append(True)
                claim = Owns((f"{p}d.orders",), (), (), (), declared=True)
                real(self, {rival: OwnerRecord(claim, "elsewhere")})
            real(self, records)

        monkeypatch.setattr(KafkaAdmin, "record_owners", racing)
        d = repository(
            tmp_path / "d",
            f"https://example.com/acme/d-{RUN}",
            boot,
            f"owns:\n  topics: ['{p}d.*']\n",
            topic(f"{p}d.orders"),
        )
        me_d = f"example.com/acme/d-{RUN} topics/team"
        code, out, err = run_cli("apply", str(d), "--yes")
        assert code == 1, out + err
        assert (
            f'while this apply recorded what "{me_d}" owns, "{rival}" (elsewhere) recorded an '
            "overlapping claim first" in err
        )
        assert view.topics(f"{p}d.") == {}
        monkeypatch.undo()
        code, out, _ = run_cli("owners", str(a))
        assert rival in out and me_d not in out  # d's record taken back (a tombstone)
    finally:
        for name in released:
            run_cli("owners", str(a), "--release", name)
