"""Access on the local Tansu broker, which advertises DescribeAcls, CreateAcls and the SCRAM
APIs but implements none of them (nothing is stored; CreateAcls and
DescribeUserScramCredentials are never answered; AlterUserScramCredentials answers success).
kgitops must never report such a change as done, must name the operation, and a new plan
must still show the change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.access import Acl, scram_salted_password
from kgitops.cli import main
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.port import ScramUpsert
from kgitops.errors import ClusterTimeout, UnsupportedOperation
from kgitops.model import ClusterSpec

TIMEOUT_MS = 2500


def _cluster(bootstrap: str) -> str:
    return (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: local\n"
        f'bootstrapServers: ["{bootstrap}"]\nunmanagedTopics: ignore\n'
        f"requestTimeoutMs: {TIMEOUT_MS}\n"
    )


@pytest.mark.slow
def test_acls_on_tansu_are_never_reported_done_and_a_replan_still_shows_them(
    local_broker: str, topic_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_prefix + "acl"
    (tmp_path / "cluster.yaml").write_text(_cluster(local_broker))
    (tmp_path / "t.yaml").write_text(
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {topic}\npartitions: 1\n"
        "replicationFactor: 1\naccess:\n  consume: [User:b]\n"
    )
    code = main(["plan", str(tmp_path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    kinds = sorted(a["type"] for a in json.loads(out)["actions"])
    assert kinds == ["create_acl", "create_acl", "create_topic"]

    code = main(["apply", str(tmp_path), "--yes"])
    out, err = capsys.readouterr()
    assert code == 3, out + err  # the topic was created, the ACLs were not
    text = out + err
    assert "done: + create_topic" in text
    assert text.count("NOT done: + create_acl") == 2
    assert "CreateAcls" in text and "done: + create_acl" not in text.replace("NOT done", "")

    code = main(["plan", str(tmp_path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(a["type"] for a in json.loads(out)["actions"]) == ["create_acl", "create_acl"]


@pytest.mark.slow
def test_tansus_stubs_are_errors_or_unsupported_never_success(local_broker: str) -> None:
    spec = ClusterSpec(
        name="local",
        directory=".",
        bootstrap_servers=(local_broker,),
        request_timeout_ms=TIMEOUT_MS,
    )
    admin = KafkaAdmin(spec)
    try:
        assert admin.describe_acls() == frozenset()
        with pytest.raises(ClusterTimeout, match="CreateAcls"):
            admin.create_acls([Acl("User:a", "topic", "t", "literal", "read")])
        assert admin.describe_acls() == frozenset()  # nothing was stored
        with pytest.raises(UnsupportedOperation, match="DescribeClientQuotas"):
            admin.describe_client_quotas()
        with pytest.raises(UnsupportedOperation, match="DeleteAcls"):
            admin.delete_acls([Acl("User:a", "topic", "t", "literal", "read")])
        salted = scram_salted_password("SCRAM-SHA-256", "pw", b"s" * 16, 4096)
        # Tansu answers success and keeps nothing: what apply's read-back exists for
        upsert = ScramUpsert("a", "SCRAM-SHA-256", 4096, b"s" * 16, salted)
        assert admin.upsert_scram_users([upsert]) == {"a SCRAM-SHA-256": None}
        with pytest.raises(ClusterTimeout, match="DescribeUserScramCredentials"):
            admin.describe_scram_users()
    finally:
        admin.close()
