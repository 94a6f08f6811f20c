"""Access on a real Apache Kafka cluster (the ``kafka_cluster`` fixture): what ``kgitops
apply`` writes is what Kafka enforces. kgitops logs in over SASL_PLAINTEXT as the admin super
user; the SCRAM user it creates logs in with its own password (kafka-python), writes the
topic its ACLs allow and no other, loses that right when the ACL goes, and loses its old
password when ``passwordVersion`` is bumped; Kafka's own ``kafka-configs`` reads the quota
and the credential back; ``kgitops import`` adopts everything with nothing left to plan.
Also kgitops' own SASL PLAIN and SCRAM-SHA-512 logins, right and wrong.

The tests of the first part share one folder and build on each other (module scope: a
rotation, then an import and a removal), to keep the number of applies small."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder, eventually, run_cli

if TYPE_CHECKING:
    from kgitops.cluster.kafka.localcluster import KafkaCluster


ADMIN_USER_ENV = "KGITOPS_RK_ADMIN_USER"
ADMIN_PASSWORD_ENV = "KGITOPS_RK_ADMIN_PASSWORD"
APP_PASSWORD_ENV = "KGITOPS_RK_APP_PASSWORD"
RUN = os.urandom(3).hex()  # a cluster reused across sessions keeps earlier runs' names


def write_cluster_yaml(
    folder: Path,
    bootstrap: str,
    *,
    mechanism: str = "SCRAM-SHA-512",
    password_env: str = ADMIN_PASSWORD_ENV,
) -> None:
    """The one cluster.yaml of these tests: kgitops logs in over SASL_PLAINTEXT as the
    cluster's admin super user (user name and password from the variables the tests set
    from ``cluster.credentials()``). PLAIN over a plaintext listener is opted in to, as
    docs/real-clusters.md requires, and so are SCRAM credentials written over it (a loopback
    test cluster has no TLS listener)."""
    plain = "  allowPlaintextPassword: true\n" if mechanism == "PLAIN" else ""
    extra = (
        "unmanagedTopics: ignore\n"  # the cluster is shared: other tests' topics are not ours
        "requestTimeoutMs: 30000\n"
        "security:\n  protocol: SASL_PLAINTEXT\n"
        f"  sasl: {{mechanism: {mechanism}, usernameEnv: {ADMIN_USER_ENV}, "
        f"passwordEnv: {password_env}}}\n"
        + plain
        # SCRAM credentials over a plaintext loopback listener: the opt-in docs/access.md names
        + "  allowCleartextCredentials: true\n"
    )
    cluster_folder(folder, "real", bootstrap=bootstrap, extra=extra)


def produce(bootstrap: str, user: str, password: str, topic: str) -> str:
    """Log in as ``user`` over SASL_PLAINTEXT (SCRAM-SHA-512) and write one record to
    ``topic`` with kafka-python: "ok", or the name of the error that stopped it.

    A wrong password shows as a bootstrap that never completes (KafkaTimeoutError):
    kafka-python 3.0 drops the SaslAuthenticate error Kafka sends just before it closes the
    connection (docs/real-clusters.md, logins)."""
    import kafka

    producer = None
    try:
        producer = kafka.KafkaProducer(
            bootstrap_servers=bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            sasl_plain_username=user,
            sasl_plain_password=password,
            bootstrap_timeout_ms=3000,
            max_block_ms=5000,
            request_timeout_ms=5000,
            delivery_timeout_ms=8000,
        )
        producer.send(topic, b"written by " + user.encode()).get(timeout=10)
        return "ok"
    except Exception as exc:  # the error's name is the observation
        return type(exc).__name__
    finally:
        if producer is not None:
            producer.close(timeout=1)


def kafka_configs(cluster: KafkaCluster, user: str) -> str:
    """What Kafka's own ``kafka-configs --describe --entity-type users`` says of ``user``
    (its quotas and SCRAM credentials), over the PLAINTEXT listener."""
    from kgitops.cluster.kafka.runtime import ensure_runtime

    runtime = ensure_runtime()
    done = subprocess.run(
        [
            runtime.java,
            "-cp",
            runtime.classpath,
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            cluster.bootstrap,
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            user,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def changes(folder: str) -> list[dict[str, Any]]:
    """What ``kgitops plan`` would change for ``folder``: its actions, less the removal of
    broker throttle rates no move needs (the cluster is shared: another test's leftovers,
    which any apply would remove, docs/apply.md)."""
    code, out, err = run_cli("plan", folder, "--format", "json")
    assert code == 0, err
    actions: list[dict[str, Any]] = json.loads(out)["actions"]
    return [
        a for a in actions if not (a["type"] == "remove_throttles" and a.get("broker") is not None)
    ]


@dataclass
class Access:
    """The module's folder and what it made on the cluster."""

    folder: Path
    bootstrap: str
    written: str  # the topic the user may write
    other: str  # a topic it may not
    user: str
    password: str
    extra: dict[str, Any] = field(default_factory=dict)


def _documents(a: Access, password_version: int) -> str:
    return f"""apiVersion: kgitops/v1
kind: Topic
name: {a.written}
partitions: 1
replicationFactor: 3
access:
  produce: [User:{a.user}]
---
apiVersion: kgitops/v1
kind: Topic
name: {a.other}
partitions: 1
replicationFactor: 3
---
apiVersion: kgitops/v1
kind: User
name: {a.user}
mechanism: SCRAM-SHA-512
passwordEnv: {APP_PASSWORD_ENV}
iterations: 4096
passwordVersion: {password_version}
---
apiVersion: kgitops/v1
kind: Quota
user: {a.user}
producerByteRate: 1048576
consumerByteRate: 2097152
requestPercentage: 200
"""


@pytest.fixture(scope="module")
def admin_env(kafka_cluster: KafkaCluster) -> Iterator[pytest.MonkeyPatch]:
    user, password = kafka_cluster.credentials()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ADMIN_USER_ENV, user)
        mp.setenv(ADMIN_PASSWORD_ENV, password)
        yield mp


@pytest.fixture(scope="module")
def applied(
    kafka_cluster: KafkaCluster,
    admin_env: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> Access:
    """Topics ``written`` (the user may produce: the topic short form) and ``other``, a SCRAM
    user and its quota, applied by ``kgitops apply`` over SASL_PLAINTEXT."""
    folder = tmp_path_factory.mktemp("access")
    a = Access(
        folder=folder,
        bootstrap=kafka_cluster.sasl_bootstrap,
        written=f"rk-access-{RUN}.orders",
        other=f"rk-access-{RUN}.payments",
        user=f"rk-app-{RUN}",
        password=secrets.token_urlsafe(12),
    )
    write_cluster_yaml(folder, a.bootstrap)
    (folder / "access.yaml").write_text(_documents(a, 1))
    admin_env.setenv(APP_PASSWORD_ENV, a.password)
    assert main(["apply", str(folder), "--yes"]) == 0
    return a


def test_the_user_apply_creates_logs_in_and_writes_only_the_topic_its_acl_allows(
    applied: Access,
) -> None:
    a = applied
    assert eventually(lambda: produce(a.bootstrap, a.user, a.password, a.written), "ok".__eq__) == (
        "ok"
    )
    assert produce(a.bootstrap, a.user, a.password, a.other) == "TopicAuthorizationFailedError"
    assert produce(a.bootstrap, a.user, a.password + "x", a.written) == "KafkaTimeoutError"


def test_kafka_reads_the_quota_and_the_credential_back_as_set_and_a_replan_is_empty(
    applied: Access, kafka_cluster: KafkaCluster
) -> None:
    said = kafka_configs(kafka_cluster, applied.user)
    quotas = re.search(r"Quota configs for user-principal '[^']+' are (.*)", said)
    assert quotas is not None, said
    assert dict(kv.split("=") for kv in quotas.group(1).split(", ")) == {
        "producer_byte_rate": "1048576.0",
        "consumer_byte_rate": "2097152.0",
        "request_percentage": "200.0",
    }
    scram = f"SCRAM credential configs for user-principal '{applied.user}' are "
    assert scram + "SCRAM-SHA-512=iterations=4096" in said
    assert changes(str(applied.folder)) == []


def test_a_password_version_bump_rotates_the_password(
    applied: Access, admin_env: pytest.MonkeyPatch
) -> None:
    a = applied
    old, new = a.password, secrets.token_urlsafe(12)
    (a.folder / "access.yaml").write_text(_documents(a, 2))
    admin_env.setenv(APP_PASSWORD_ENV, new)
    code, out, err = run_cli("apply", str(a.folder), "--yes")
    assert code == 0, out + err
    assert f"done: + upsert_user {a.user}" in out
    assert old not in out + err and new not in out + err
    a.password = new
    assert eventually(lambda: produce(a.bootstrap, a.user, new, a.written), "ok".__eq__) == "ok"
    assert produce(a.bootstrap, a.user, old, a.written) == "KafkaTimeoutError"
    assert changes(str(a.folder)) == []  # version 2 is recorded: no rotation on every merge


def test_import_adopts_the_access_and_a_removed_acl_takes_the_right_away(
    applied: Access,
    kafka_cluster: KafkaCluster,
    tmp_path: Path,
) -> None:
    a = applied
    write_cluster_yaml(tmp_path, a.bootstrap)
    code, out, err = run_cli("import", str(tmp_path), "--topic", a.written, "--topic", a.other)
    assert code == 0, out + err
    docs = (tmp_path / "access.yaml").read_text().split("---\n")
    mine = [d for d in docs if f"principal: User:{a.user}\n" in d]
    assert len(mine) == 1, docs
    assert "resourceType: topic\n    name: " + a.written in mine[0]
    assert "operations: [describe, write]" in mine[0]
    assert "operations: [idempotent_write]" in mine[0]
    user = [d for d in docs if "kind: User" in d and f"name: {a.user}\n" in d]
    assert len(user) == 1 and "passwordVersion: 2\n" in user[0], docs  # the recorded version
    quota = [d for d in docs if "kind: Quota" in d and f"user: {a.user}\n" in d]
    assert len(quota) == 1 and "producerByteRate: 1048576\n" in quota[0], docs
    assert changes(str(tmp_path)) == []  # adopted: nothing to change

    # Remove the user's ACL from git and let kgitops delete what git no longer names. The
    # saved plan must delete exactly the user's bindings (the cluster is shared); apply
    # --plan refuses it should the cluster's ACLs change in between.
    (tmp_path / "access.yaml").write_text("---\n".join(d for d in docs if d not in mine))
    with (tmp_path / "cluster.yaml").open("a") as fh:
        fh.write("unmanagedAcls: delete\n")
    saved = tmp_path / "plan.json"
    code, out, err = run_cli("plan", str(tmp_path), "--out", str(saved))
    assert code == 0, out + err
    plan = json.loads(saved.read_text())
    # leftover broker throttle rates another test left on the shared cluster go too
    ours = [
        x
        for x in plan["actions"]
        if not (x["type"] == "remove_throttles" and x.get("broker") is not None)
    ]
    assert sorted(x["type"] for x in ours) == ["delete_acl"] * 3, plan["actions"]
    assert all(a.user in json.dumps(x) for x in ours)
    code, out, err = run_cli("apply", "--plan", str(saved), "--yes", "--allow-delete")
    assert code == 0, out + err
    assert (
        eventually(
            lambda: produce(a.bootstrap, a.user, a.password, a.written),
            "TopicAuthorizationFailedError".__eq__,
        )
        == "TopicAuthorizationFailedError"
    )
    assert changes(str(tmp_path)) == []


def test_a_user_with_two_mechanisms_is_written_in_one_apply(
    kafka_cluster: KafkaCluster,
    admin_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Kafka takes a user once per AlterUserScramCredentials, whatever the mechanisms
    (``ScramControlManager``: DUPLICATE_RESOURCE "A user credential cannot be altered twice
    in the same request"): apply writes the second credential in a second request."""
    user, password = f"rk-two-{RUN}", secrets.token_urlsafe(12)
    write_cluster_yaml(tmp_path, kafka_cluster.sasl_bootstrap)
    (tmp_path / "users.yaml").write_text(
        "".join(
            f"---\napiVersion: kgitops/v1\nkind: User\nname: {user}\nmechanism: {m}\n"
            f"passwordEnv: {APP_PASSWORD_ENV}\niterations: {n}\n"
            for m, n in (("SCRAM-SHA-256", 8192), ("SCRAM-SHA-512", 4096))
        )
    )
    admin_env.setenv(APP_PASSWORD_ENV, password)
    code, out, err = run_cli("apply", str(tmp_path), "--yes")
    assert code == 0, out + err
    assert out.count(f"done: + upsert_user {user}\n") == 2, out
    assert "NOT done" not in out
    assert changes(str(tmp_path)) == []
    # the SASL listener takes SCRAM-SHA-512 logins: the credential is the password's
    assert (
        eventually(
            lambda: produce(kafka_cluster.sasl_bootstrap, user, password, f"rk-none-{RUN}"),
            lambda r: r != "KafkaTimeoutError",
        )
        == "TopicAuthorizationFailedError"  # logged in; no ACL lets it write
    )


def test_every_shape_of_acl_and_quota_reads_back_as_written(
    kafka_cluster: KafkaCluster,
    admin_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Prefixed, literal and wildcard names, deny, a host, every resource type, cluster
    operations; quotas of a user and client id, of a client id alone, of a user's default
    client id, a fractional request percentage: applied, then a plan with nothing to do
    (each binding and value Kafka answers is the one git holds)."""
    p = f"rk-shapes-{RUN}"
    write_cluster_yaml(tmp_path, kafka_cluster.sasl_bootstrap)
    (tmp_path / "access.yaml").write_text(f"""apiVersion: kgitops/v1
kind: ACL
principal: User:{p}-a
host: 10.0.0.7
rules:
  - resourceType: topic
    name: {p}.
    patternType: prefixed
    operations: [alter, alter_configs, create, delete, describe, describe_configs, read]
  - resourceType: group
    name: {p}-g-
    patternType: prefixed
    operations: [delete, describe, read]
  - resourceType: transactional_id
    name: {p}-tx
    operations: [describe, write]
  - resourceType: cluster
    operations: [alter, alter_configs, cluster_action, create, describe, describe_configs,
                 idempotent_write]
  - resourceType: topic
    name: {p}.secret
    operations: [read]
    permission: deny
---
apiVersion: kgitops/v1
kind: ACL
principal: User:{p}-b
rules:
  - resourceType: topic
    name: "*"
    operations: [all]
---
apiVersion: kgitops/v1
kind: Quota
user: {p}-a
clientId: {p}-c
producerByteRate: 1000
requestPercentage: 12.5
---
apiVersion: kgitops/v1
kind: Quota
clientId: {p}-c2
consumerByteRate: 2048
---
apiVersion: kgitops/v1
kind: Quota
user: {p}-a
clientId: "<default>"
producerByteRate: 3000
""")
    code, out, err = run_cli("apply", str(tmp_path), "--yes")
    assert code == 0, out + err
    assert out.count("done: + create_acl") == 21 and out.count("done: ~ alter_quota") == 3, out
    assert "NOT done" not in out
    assert changes(str(tmp_path)) == []


# ------------------------------------------------------------------ kgitops' own logins


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_kgitops_logs_in_with_each_mechanism(
    mechanism: str,
    kafka_cluster: KafkaCluster,
    admin_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    write_cluster_yaml(tmp_path, kafka_cluster.sasl_bootstrap, mechanism=mechanism)
    code, out, err = run_cli("get", str(tmp_path), "brokers", "--format", "json")
    assert code == 0, err
    brokers = json.loads(out)["brokers"]
    assert sorted(b["id"] for b in brokers) == sorted(n.id for n in kafka_cluster.brokers)
    code, out, err = run_cli("plan", str(tmp_path))
    assert code == 0, err
    _user, password = kafka_cluster.credentials()
    assert password not in out + err


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_a_wrong_password_is_one_line_naming_the_login(
    mechanism: str,
    kafka_cluster: KafkaCluster,
    admin_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    wrong = "Wr0ng-" + secrets.token_urlsafe(9)
    admin_env.setenv("KGITOPS_RK_WRONG_PASSWORD", wrong)
    try:
        write_cluster_yaml(
            tmp_path,
            kafka_cluster.sasl_bootstrap,
            mechanism=mechanism,
            password_env="KGITOPS_RK_WRONG_PASSWORD",
        )
        started = time.monotonic()
        code, out, err = run_cli("get", str(tmp_path), "brokers")
        took = time.monotonic() - started
    finally:
        admin_env.delenv("KGITOPS_RK_WRONG_PASSWORD")
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "Traceback" not in err
    assert f"SASL {mechanism}" in lines[0] and "authentication failed" in lines[0], lines[0]
    assert "the broker said" in lines[0] and "invalid" in lines[0].lower()  # Kafka's words
    assert "$KGITOPS_RK_WRONG_PASSWORD" in lines[0]  # the setting to check, not its value
    assert wrong not in err
    assert took < 8, took  # the first refusal ends it, not the 10 s connection budget
