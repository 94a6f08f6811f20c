"""kgitops.jsonfields, and the JSON of the values written through it: a field left out only
when its own rule says unset (``0`` and ``""`` are values where the rule is ``is_none``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.jsonfields import camel, empty, is_none, json_of, optional, pruned
from kgitops.plan.access_actions import create_acl
from kgitops.plan.actions import AlterConfig, action_from_json
from kgitops.plan.fields import PlanOptions


@dataclass(frozen=True)
class _Row:
    replication_factor: int
    name: str
    start_index: int | None


def test_json_of_writes_the_named_fields_in_the_order_given_under_camel_case_keys() -> None:
    row = _Row(3, "a", None)
    assert json.dumps(json_of(row, "start_index", "name", "replication_factor")) == (
        '{"startIndex": null, "name": "a", "replicationFactor": 3}'
    )
    assert camel("under_min_isr") == "underMinIsr" and camel("name") == "name"


def test_pruned_drops_only_the_entries_its_rules_name_and_keeps_the_order() -> None:
    out = {"a": 0, "b": "", "c": None, "d": 0, "e": []}
    assert list(pruned(out, {"b": empty, "c": is_none, "d": is_none})) == ["a", "d", "e"]
    assert pruned({}, {"x": empty}) == {}
    assert optional(int, None) is None and optional(int, "7") == 7


def test_unset_fields_are_left_out_and_zero_or_empty_values_kept_where_the_rule_says() -> None:
    cred = ScramCredential("a", "SCRAM-SHA-256", 4096, password_version=0)
    assert json.dumps(cred.to_json()) == (
        '{"name": "a", "mechanism": "SCRAM-SHA-256", "iterations": 4096, "passwordVersion": 0}'
    )
    full = ScramCredential("a", "SCRAM-SHA-512", 8192, "c2FsdA==", "a2V5", 2)
    assert list(full.to_json()) == [
        "name",
        "mechanism",
        "iterations",
        "salt",
        "storedKey",
        "passwordVersion",
    ]
    assert ScramCredential.from_json(full.to_json()) == full
    assert ScramCredential.from_json(cred.to_json()) == cred
    assert QuotaEntity(user="").to_json() == {"user": ""}
    assert QuotaEntity(client_id="x").to_json() == {"clientId": "x"}
    assert QuotaEntity("u", "x").to_json() == {"user": "u", "clientId": "x"}
    acl = Acl("User:a", "topic", "orders", "prefixed", "write", "deny", "10.0.0.1")
    assert list(acl.to_json().items()) == [
        ("principal", "User:a"),
        ("host", "10.0.0.1"),
        ("resourceType", "topic"),
        ("name", "orders"),
        ("patternType", "prefixed"),
        ("operation", "write"),
        ("permission", "deny"),
    ]
    assert PlanOptions(leaders=True).to_json() == {
        "rebalance": False,
        "leaders": True,
        "allowRetentionDrop": False,
    }
    targeted = PlanOptions(targets=("a*",))
    assert list(targeted.to_json()) == ["rebalance", "leaders", "allowRetentionDrop", "targets"]
    assert targeted.used() == {
        "rebalance": False,
        "leaders": False,
        "allowRetentionDrop": False,
        "targets": True,
    }


def test_an_action_writes_type_and_topic_first_and_its_unset_fields_not_at_all() -> None:
    assert list(create_acl(Acl("User:a", "topic", "t", "literal", "read")).to_json()) == [
        "type",
        "topic",
        "acl",
    ]
    alter = AlterConfig("t", set={"retention.ms": "1"}, after_reassign=True)
    data = alter.to_json()
    assert list(data) == ["type", "topic", "set", "delete", "previous", "afterReassign"]
    assert action_from_json(data) == alter
    assert "afterReassign" not in AlterConfig("t").to_json()
