"""The plan is a sorted, frozen value whose JSON form round-trips exactly."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kgitops.errors import PlanError
from kgitops.plan.actions import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Move,
    Reassign,
    RemoveThrottles,
    kind_named,
    kinds,
)
from kgitops.plan.transfer import Traffic, Transfer
from kgitops.plan.value import Plan, PlanWarning


def _sample() -> Plan:
    return Plan(
        cluster="prod",
        state_fingerprint="sha256:" + "ab" * 32,
        actions=(
            DeleteTopic(topic="old", partitions=3, size_bytes=10),
            Reassign(
                topic="a",
                moves={0: Move((1, 2), (1, 2, 3), "replication factor 2 -> 3", 123)},
                bytes_to_move=123,
            ),
            ElectLeaders(topic="a", partitions=(4,)),
            RemoveThrottles(
                topic="", broker=2, remove={"leader.replication.throttled.rate": ""}, reason="x"
            ),
            RemoveThrottles(
                topic="a", remove={"follower.replication.throttled.replicas": "0:3"}, reason="y"
            ),
            AddPartitions(
                topic="a", from_count=6, to_count=12, start_index=1, assignment={6: (1, 2, 3)}
            ),
            AlterConfig(topic="a", set={"retention.ms": "1000"}, delete=("x",)),
            CreateTopic(
                topic="b",
                partitions=1,
                replication_factor=3,
                start_index=2,
                assignment={0: (1, 2, 3)},
                config={"retention.ms": "1000"},
            ),
            CreateTopic(
                topic="a0", partitions=1, replication_factor=1, start_index=0, assignment={0: (1,)}
            ),
        ),
        warnings=(PlanWarning("a", "KEY_REMAP", "keys move", {"keyShare": 0.5}),),
        cluster_dir="topics/prod",
    )


def test_actions_are_sorted_by_kind_order_then_topic() -> None:
    kinds = [(a.kind, a.topic) for a in _sample().actions]
    assert kinds == [
        ("create_topic", "a0"),
        ("create_topic", "b"),
        ("alter_config", "a"),
        ("add_partitions", "a"),
        ("reassign", "a"),
        ("remove_throttles", ""),  # a broker's rates first, then topics by name
        ("remove_throttles", "a"),
        ("elect_leaders", "a"),
        ("delete_topic", "old"),
    ]


def test_json_round_trip_is_exact() -> None:
    plan = _sample()
    data = json.loads(json.dumps(plan.to_json()))
    assert Plan.from_json(data).to_json() == plan.to_json()


def test_json_has_the_contract_fields() -> None:
    data = _sample().to_json()
    assert data["format"] == "kgitops-plan/v1"
    assert data["summary"]["create_topic"] == 2
    create = data["actions"][0]
    assert create["assignment"] == {"0": [1]}
    move = next(a for a in data["actions"] if a["type"] == "reassign")["moves"]["0"]
    assert move["from"] == [1, 2] and move["to"] == [1, 2, 3]


def test_the_plan_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _sample().cluster = "x"  # type: ignore[misc]


def test_a_foreign_or_broken_plan_is_refused_with_a_plan_error() -> None:
    with pytest.raises(PlanError, match="not a kgitops plan"):
        Plan.from_json({"format": "other"})
    with pytest.raises(PlanError):
        Plan.from_json(
            {
                "format": "kgitops-plan/v1",
                "cluster": "x",
                "stateFingerprint": "s",
                "actions": [{"type": "launch_rockets", "topic": "a"}],
            }
        )
    with pytest.raises(PlanError):
        Plan.from_json(
            {
                "format": "kgitops-plan/v1",
                "cluster": "x",
                "stateFingerprint": "s",
                "actions": [{"type": "create_topic", "topic": "a"}],
            }
        )


def test_move_knows_what_it_adds_and_removes() -> None:
    m = Move((1, 2, 3), (1, 4, 3))
    assert m.adding == (4,) and m.removing == (2,)


def test_the_kind_registry_holds_every_kind_once_in_apply_order() -> None:
    assert [k.kind for k in kinds()] == [
        "create_topic",
        "alter_config",
        "add_partitions",
        "reassign",
        "remove_throttles",
        "elect_leaders",
        "upsert_user",
        "alter_quota",
        "create_acl",
        "delete_acl",
        "delete_topic",
    ]
    assert [k.symbol for k in kinds()] == ["+", "~", "~", "~", "~", "~", "+", "~", "+", "-", "-"]
    access = {"upsert_user", "alter_quota", "create_acl", "delete_acl"}
    # a plan without access changes counts only the topic kinds (plans stay as they were)
    assert list(_sample().summary()) == [k.kind for k in kinds() if k.kind not in access]
    assert kind_named("reassign") is Reassign and kind_named("launch_rockets") is None


def test_a_kind_whose_name_or_order_clashes_with_another_is_refused() -> None:
    with pytest.raises(TypeError, match="clashes"):

        @dataclasses.dataclass(frozen=True)
        class Twin(Action, kind="launch_rockets", order=CreateTopic.order):  # pragma: no cover
            pass

    assert kind_named("launch_rockets") is None


def test_the_transfer_estimate_is_a_typed_field_read_from_plans_written_before_it() -> None:
    data = _sample().to_json()
    assert "transfer" not in data
    data["transfer"] = {  # as plans wrote it when it was a free-form field: no racks
        "brokers": {"3": {"in": 9, "out": 0}, "1": {"in": 0, "out": 9}},
        "totalBytes": 9,
        "clusterBytes": 100,
        "throttleBytesPerSec": 1000,
        "estimatedSeconds": 0.0,
    }
    plan = Plan.from_json(data)
    assert plan.transfer == Transfer(
        brokers={1: Traffic(0, 9), 3: Traffic(9, 0)},
        cross_rack_bytes=None,
        total_bytes=9,
        cluster_bytes=100,
        throttle_bytes_per_sec=1000,
        estimated_seconds=0.0,
    )
    assert plan.extra == {}
    assert Plan.from_json(plan.to_json()) == plan


def test_plan_fields_this_version_does_not_know_are_kept_untouched() -> None:
    data = {**_sample().to_json(), "futureField": {"x": [1]}}
    assert Plan.from_json(data).to_json()["futureField"] == {"x": [1]}
