"""ACL, User and Quota documents and the topic ``access`` short form: what loads, what each
expands to, and the exact line kgitops prints for each mistake."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgitops.access import Acl, QuotaEntity
from kgitops.spec.load import Specs, load_specs
from kgitops.spec.schemacheck import schema
from tests.helpers import THREE_BROKERS, cluster_folder

TOPIC_WITH_ACCESS = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 3
access:
  produce: [User:a]
  consume: [{principal: User:b, group: b-}, User:c, {principal: User:d, group: d-app}]
"""


def load(tmp_path: Path, files: dict[str, str]) -> tuple[Specs, list[str]]:
    cluster_folder(tmp_path, "test", brokers=THREE_BROKERS, files=files)
    specs = load_specs(str(tmp_path))
    prefix = str(tmp_path) + os.sep
    return specs, [str(d).replace(prefix, "") for d in specs.diagnostics]


def test_topic_access_expands_to_the_acls_producers_and_consumers_need(tmp_path: Path) -> None:
    specs, problems = load(tmp_path, {"orders.yaml": TOPIC_WITH_ACCESS})
    assert problems == []
    got = {s.acl for s in specs.access.acls}
    assert got == {
        Acl("User:a", "topic", "orders", "literal", "write"),
        Acl("User:a", "topic", "orders", "literal", "describe"),
        Acl("User:a", "cluster", "kafka-cluster", "literal", "idempotent_write"),
        Acl("User:b", "topic", "orders", "literal", "read"),
        Acl("User:b", "topic", "orders", "literal", "describe"),
        Acl("User:b", "group", "b-", "prefixed", "read"),
        Acl("User:c", "topic", "orders", "literal", "read"),
        Acl("User:c", "topic", "orders", "literal", "describe"),
        Acl("User:d", "topic", "orders", "literal", "read"),
        Acl("User:d", "topic", "orders", "literal", "describe"),
        Acl("User:d", "group", "d-app", "literal", "read"),
    }
    assert specs.access.used


def test_acl_user_and_quota_documents_load_as_the_issue_shows(tmp_path: Path) -> None:
    text = """\
apiVersion: kgitops/v1
kind: ACL
principal: User:orders-app
host: "*"
rules:
  - resourceType: topic
    name: orders.
    patternType: prefixed
    operations: [read, describe]
    permission: allow
  - resourceType: cluster
    operations: [describe_configs]
---
apiVersion: kgitops/v1
kind: User
name: orders-app
mechanism: SCRAM-SHA-512
passwordEnv: KGITOPS_ORDERS_APP_PASSWORD
iterations: 8192
passwordVersion: 2
---
apiVersion: kgitops/v1
kind: Quota
user: orders-app
producerByteRate: 10485760
consumerByteRate: 20971520
requestPercentage: 200
"""
    specs, problems = load(tmp_path, {"access.yaml": text})
    assert problems == []
    assert {s.acl for s in specs.access.acls} == {
        Acl("User:orders-app", "topic", "orders.", "prefixed", "read"),
        Acl("User:orders-app", "topic", "orders.", "prefixed", "describe"),
        Acl("User:orders-app", "cluster", "kafka-cluster", "literal", "describe_configs"),
    }
    (user,) = specs.access.users
    assert (user.name, user.mechanism, user.password_env, user.iterations) == (
        "orders-app",
        "SCRAM-SHA-512",
        "KGITOPS_ORDERS_APP_PASSWORD",
        8192,
    )
    assert user.password_version == 2
    (quota,) = specs.access.quotas
    assert quota.entity == QuotaEntity(user="orders-app")
    assert quota.values == {
        "producer_byte_rate": 10485760.0,
        "consumer_byte_rate": 20971520.0,
        "request_percentage": 200.0,
    }


def test_a_folder_without_access_documents_does_not_read_access(tmp_path: Path) -> None:
    specs, _ = load(tmp_path, {"t.yaml": TOPIC_WITH_ACCESS.split("access:")[0]})
    assert not specs.access.used


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kind: ACL\nprincipal: User:a\nrules:\n  - resourceType: group\n    name: g\n"
            "    operations: [write]\n",
            "a.yaml:7:18: error: operation 'write' does not apply to a group "
            "(Kafka allows all, delete, describe, read)",
        ),
        (
            "kind: ACL\nprincipal: orders-app\nrules:\n  - resourceType: topic\n    name: t\n"
            "    operations: [read]\n",
            "a.yaml:3:12: error: principal 'orders-app' must be 'User:<name>' (a type, ':', a "
            "name)",
        ),
        (
            "kind: ACL\nprincipal: User:a\nrules:\n  - resourceType: topic\n"
            "    operations: [read]\n",
            "a.yaml:5:5: error: rules.0: a topic rule needs a name",
        ),
        (
            "kind: ACL\nprincipal: User:a\nrules:\n  - resourceType: cluster\n    name: c\n"
            "    operations: [alter]\n",
            "a.yaml:6:11: error: the cluster resource is named 'kafka-cluster'; leave name out",
        ),
        (
            "kind: ACL\nprincipal: User:a\nrules:\n  - resourceType: topic\n    name: t\n"
            "    operations: [reed]\n",
            "a.yaml:7:18: error: rules.0.operations.0 must be one of all, read, write, create, "
            "delete, alter, describe, cluster_action, describe_configs, alter_configs, "
            "idempotent_write, create_tokens, describe_tokens, not 'reed' (did you mean 'read'?)",
        ),
        (
            "kind: User\nname: a\nmechanism: SCRAM-SHA-1\npasswordEnv: P\n",
            "a.yaml:4:12: error: mechanism must be one of SCRAM-SHA-256, SCRAM-SHA-512, not "
            "'SCRAM-SHA-1' (did you mean 'SCRAM-SHA-512'?)",
        ),
        (
            "kind: User\nname: a\nmechanism: SCRAM-SHA-256\npassword: hunter2\n",
            "a.yaml:5:1: error: unknown field 'password': secrets never go in a file; name the "
            "environment variable that holds it with passwordEnv",
        ),
        (
            "kind: User\nname: a\nmechanism: SCRAM-SHA-256\npasswordEnv: P\niterations: 1000\n",
            "a.yaml:6:13: error: iterations must be at least 4096, not 1000",
        ),
        (
            "kind: Quota\nproducerByteRate: 100\n",
            "a.yaml:1:1: error: a Quota names its entity: user, clientId, or both",
        ),
        (
            f"kind: User\nname: {'u' * 100_000}\nmechanism: SCRAM-SHA-256\npasswordEnv: P\n",
            "a.yaml:3:7: error: user name is 100000 characters long; at most 1000",
        ),
    ],
)
def test_each_access_mistake_is_one_positioned_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    _, problems = load(tmp_path, {"a.yaml": "apiVersion: kgitops/v1\n" + text})
    assert expected in problems, problems


def test_two_credentials_for_one_user_and_mechanism_are_an_error_at_the_second(
    tmp_path: Path,
) -> None:
    user = "apiVersion: kgitops/v1\nkind: User\nname: a\nmechanism: SCRAM-SHA-256\npasswordEnv: P\n"
    _, problems = load(tmp_path, {"a.yaml": user + "---\n" + user})
    assert [p.replace(f"{tmp_path}/", "") for p in problems] == [
        "a.yaml:9:7: error: a second SCRAM-SHA-256 credential for user 'a' (the first is at "
        "a.yaml:3:7)"
    ]


def test_an_allow_and_a_deny_of_the_same_binding_warns_that_deny_wins(tmp_path: Path) -> None:
    acl = (
        "apiVersion: kgitops/v1\nkind: ACL\nprincipal: User:a\nrules:\n"
        "  - {resourceType: topic, name: t, operations: [read], permission: %s}\n"
    )
    _, problems = load(tmp_path, {"a.yaml": acl % "allow" + "---\n" + acl % "deny"})
    assert len(problems) == 1 and "warning: User:a deny read topic:t also allowed" in problems[0]


@pytest.mark.parametrize("name", ["acl.json", "user.json", "quota.json"])
def test_access_schemas_are_closed_and_every_field_is_described(name: str) -> None:
    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                assert node.get("additionalProperties") is False, path
                for key, sub in node["properties"].items():
                    assert sub.get("description"), f"{path}.{key}"
                    walk(sub, f"{path}.{key}")
            for key in ("items",):
                if key in node:
                    walk(node[key], f"{path}[]")

    data = schema(name)
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    walk(data, name)
