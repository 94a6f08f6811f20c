"""The JSON Schemas users point their editors at: valid, documented, closed, and in step with
the code that reads and writes the same documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from kgitops.cluster.snapshot import state_to_json
from kgitops.model import Broker, ClusterState, PartitionState, Reassignment, TopicState
from kgitops.plan.actions import (
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Move,
    Reassign,
)
from kgitops.plan.transfer import Traffic, Transfer
from kgitops.plan.value import Plan, PlanWarning
from kgitops.spec.config_schema import config_schema
from kgitops.spec.config_table import CONFIGS
from kgitops.spec.schemacheck import SCHEMA_FILES, compile_schema, conforms, schema, validator

ROOT = Path(__file__).resolve().parents[2]

# Objects deliberately open: free-form figures and a simulator's own bookkeeping.
OPEN_OBJECTS = {"data", "simulation", "recordedState"}  # recordedState: state_from_json


def _subschemas(node: Any, name: str = "", via: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every subschema as (path, how it was reached, schema)."""
    if not isinstance(node, dict):
        return
    yield name, via, node
    for key, sub in node.get("properties", {}).items():
        yield from _subschemas(sub, f"{name}.{key}", "properties")
    for key, sub in node.get("$defs", {}).items():
        yield from _subschemas(sub, f"{name}#{key}", "$defs")
    for word in ("items", "additionalProperties"):
        yield from _subschemas(node.get(word), f"{name}[{word}]", word)


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    data = schema(name)
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(data)


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_every_field_has_a_description_editors_can_show(name: str) -> None:
    missing = [
        path
        for path, via, sub in _subschemas(schema(name))
        if via in ("", "properties", "$defs", "items") and "description" not in sub
    ]
    assert missing == []


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_every_object_with_named_fields_refuses_unknown_ones(name: str) -> None:
    open_ = [
        path
        for path, _, sub in _subschemas(schema(name))
        if "properties" in sub
        and sub.get("additionalProperties") is not False
        and path.rsplit(".", 1)[-1] not in OPEN_OBJECTS
        and path != ".actions[items]"  # closed by its kind's $defs entry
    ]
    assert open_ == []


def test_the_repository_root_links_to_the_shipped_schemas() -> None:
    link = ROOT / "schemas"
    assert link.is_symlink()
    for name in SCHEMA_FILES:
        assert json.loads((link / name).read_text()) == schema(name)


def test_the_topic_schema_config_is_generated_from_topic_configs() -> None:
    assert schema("topic.json")["properties"]["config"] == config_schema()


def test_the_topic_schema_knows_every_config_in_the_table() -> None:
    props = schema("topic.json")["properties"]["config"]["properties"]
    assert sorted(props) == sorted(CONFIGS)
    assert props["min.insync.replicas"]["anyOf"][0]["minimum"] == 1
    assert props["compression.type"]["enum"] == [
        "uncompressed",
        "zstd",
        "lz4",
        "snappy",
        "gzip",
        "producer",
    ]


def _sample_plan() -> Plan:
    return Plan(
        cluster="prod",
        state_fingerprint="sha256:" + "ab" * 32,
        cluster_dir="topics/prod",
        state_digests={"a": "sha256:" + "cd" * 32},
        actions=(
            CreateTopic(
                topic="a",
                partitions=2,
                replication_factor=2,
                start_index=1,
                assignment={0: (1, 2), 1: (2, 1)},
                config={"retention.ms": "1000"},
                placement="rack-aware",
            ),
            AlterConfig(topic="b", set={"retention.ms": "5"}, delete=("x",), previous={"x": "1"}),
            AddPartitions(topic="c", from_count=1, to_count=2, start_index=0, assignment={1: (2,)}),
            Reassign(
                topic="d",
                moves={0: Move((1, 2), (1, 3), reason="broker 2 is decommissioned", size_bytes=9)},
                bytes_to_move=9,
            ),
            ElectLeaders(topic="e", partitions=(0, 3)),
            DeleteTopic(topic="f", partitions=3, size_bytes=None),
        ),
        warnings=(PlanWarning("a", "KEY_REMAP", "half the keys move", {"keyShare": 0.5}),),
        transfer=Transfer(
            brokers={3: Traffic(9, 0), 1: Traffic(0, 9)},
            racks={"az1": Traffic(0, 9), "az3": Traffic(9, 0)},
            cross_rack_bytes=9,
            total_bytes=9,
            cluster_bytes=100,
            throttle_bytes_per_sec=1000,
            estimated_seconds=0.0,
        ),
    )


def test_a_plan_with_every_action_kind_matches_plan_json() -> None:
    errors = list(validator_for("plan.json").iter_errors(_sample_plan().to_json()))
    assert [e.message for e in errors] == []


def test_plan_json_refuses_an_action_with_a_field_of_another_kind() -> None:
    data = _sample_plan().to_json()
    data["actions"][0]["moves"] = {}
    assert not validator_for("plan.json").is_valid(data)


def test_a_snapshot_state_matches_state_json() -> None:
    state = ClusterState(
        brokers=(Broker(1, "az1"), Broker(2, None, online=False)),
        topics={
            "t": TopicState(
                "t",
                {0: PartitionState((1, 2), isr=(1,), leader=1, size_bytes=10)},
                {"retention.ms": "1"},
            )
        },
        reassignments={"t": {0: Reassignment(adding=(2,), removing=(1,), target=(2,))}},
        cluster_id="abc",
        controller_id=1,
        broker_configs={1: {"leader.replication.throttled.rate": "100"}},
    )
    errors = list(validator_for("state.json").iter_errors(state_to_json(state)))
    assert [e.message for e in errors] == []


def test_the_example_in_product_md_matches_state_json() -> None:
    example = {
        "format": "kgitops-state/v1",
        "clusterId": "abc",
        "brokers": [{"id": 1, "rack": "az1"}, {"id": 2, "rack": "az2"}],
        "topics": {
            "payments.orders": {
                "partitions": {
                    "0": {"replicas": [1, 2], "isr": [1, 2], "leader": 1, "sizeBytes": 1048576}
                },
                "config": {"retention.ms": "604800000"},
            }
        },
        "reassignments": {"payments.orders": {"0": {"adding": [3], "removing": [1]}}},
    }
    assert validator_for("state.json").is_valid(example)


def validator_for(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema(name))


# ---------------------------------------------------------------- the compiled fast path

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "kgitops/v1",
            "Topic",
            "Cluster",
            "orders",
            "a.b",
            "..",
            "",
            "x y",
            "static",
            "rack-aware",
            "k:9092",
            "KAFKA_PASSWORD",
            "SASL_SSL",
            "PLAIN",
            "warn",
        ]
    ),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "partitions",
                    "replicationFactor",
                    "placement",
                    "startIndex",
                    "assignment",
                    "config",
                    "delete",
                    "keys",
                    "sample",
                    "id",
                    "rack",
                    "zzz",
                ]
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=12,
)
_topic_like = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["kgitops/v1", "v2"]),
        "kind": st.just("Topic"),
        "name": st.sampled_from(["orders", "..", "a b", "x" * 250]),
        "partitions": st.one_of(st.integers(-2, 5), st.floats(0, 3), st.text(max_size=2)),
        "replicationFactor": st.integers(-1, 4),
    },
    optional={
        "placement": st.sampled_from(["rack-aware", "static", "rackaware"]),
        "startIndex": st.integers(-1, 3),
        "assignment": st.lists(st.lists(st.integers(-1, 3), max_size=3), max_size=3),
        "config": _values,
        "delete": _scalars,
        "keys": _values,
        "extra": _scalars,
    },
)


@settings(max_examples=400, deadline=None)
@given(_topic_like)
def test_the_fast_path_never_accepts_what_jsonschema_refuses_for_topics(doc: Any) -> None:
    if conforms("Topic")(doc):
        assert validator("Topic").is_valid(doc)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_the_fast_path_never_accepts_what_jsonschema_refuses_for_clusters(doc: Any) -> None:
    if conforms("Cluster")(doc):
        assert validator("Cluster").is_valid(doc)


_sasl = st.fixed_dictionaries(
    {},
    optional={
        "mechanism": st.sampled_from(["PLAIN", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI", 3]),
        "usernameEnv": st.sampled_from(["KAFKA_USER", "bad name", 1]),
        "passwordEnv": st.sampled_from(["KAFKA_PASSWORD", ""]),
        "tokenEnv": st.sampled_from(["TOKEN", None]),
    },
)
_cluster_like = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["kgitops/v1", "v2"]),
        "kind": st.just("Cluster"),
        "name": st.sampled_from(["prod", "a b", ""]),
    },
    optional={
        "bootstrapServers": st.lists(st.sampled_from(["kafka-1:9092", "nohost", 7]), max_size=2),
        "security": st.fixed_dictionaries(
            {}, optional={"protocol": st.sampled_from(["SASL_SSL", "TLS"]), "sasl": _sasl}
        ),
        "simulated": st.fixed_dictionaries(
            {"stateFile": st.sampled_from(["state.json", 3])},
            optional={
                "brokers": st.lists(
                    st.fixed_dictionaries({"id": st.integers(-1, 2)}, optional={"rack": _scalars}),
                    max_size=3,
                ),
                "autoLeaderRebalance": st.one_of(
                    st.booleans(),
                    st.dictionaries(
                        st.sampled_from(["enabled", "intervalSeconds", "x"]), _scalars, max_size=2
                    ),
                    _scalars,
                ),
            },
        ),
        "profiles": st.dictionaries(
            st.sampled_from(["critical", "bad name", "a-b_1", ""]),
            st.fixed_dictionaries({}, optional={"replicationFactor": st.integers(0, 3)}),
            max_size=2,
        ),
        "owns": st.dictionaries(
            st.sampled_from(["topics", "groups", "owner", "x"]),
            st.one_of(st.lists(st.sampled_from(["orders.*", ""]), max_size=2), _scalars),
            max_size=2,
        ),
        "unmanagedTopics": st.sampled_from(["warn", "ignore", "delete", "keep"]),
        "extra": _scalars,
    },
)


@settings(max_examples=600, deadline=None)
@given(_cluster_like)
def test_the_fast_path_answers_as_jsonschema_for_cluster_documents(doc: Any) -> None:
    """cluster.yaml's schema uses $ref, allOf, if/then, oneOf, propertyNames and
    minProperties: the compiled check follows each of them exactly (a valid cluster.yaml
    never imports jsonschema), and never says yes where jsonschema says no."""
    assert conforms("Cluster")(doc) == validator("Cluster").is_valid(doc)


def test_every_cluster_yaml_of_the_repository_passes_the_fast_path() -> None:
    import yaml

    seen = 0
    for path in sorted(ROOT.glob("**/cluster.yaml")):
        if ".git" in path.parts:
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "Cluster":
                seen += 1
                assert conforms("Cluster")(doc) == validator("Cluster").is_valid(doc), path
    assert seen >= 10


def test_the_fast_path_refuses_one_of_two_unsure_branches() -> None:
    """oneOf and the condition of if need exact answers from their parts: an unknown
    keyword inside them makes the whole check say no (and jsonschema decide)."""
    unsure = {"dependentRequired": {"a": ["b"]}}
    assert not compile_schema({"oneOf": [unsure, {"type": "string"}]})("x")
    assert not compile_schema({"if": unsure, "then": {"type": "string"}})("x")
    assert not compile_schema({"not": unsure})({})
    assert compile_schema({"oneOf": [{"type": "boolean"}, {"type": "object"}]})(True)
    assert not compile_schema({"oneOf": [{"type": "integer"}, {"minimum": 0}]})(1)
    defs = {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert compile_schema(defs)({"a": 1})
    assert not compile_schema(defs)({"a": "1"})
    assert not compile_schema({"$ref": "other.json#/x"})(1)


def test_the_fast_path_accepts_a_valid_topic() -> None:
    doc = {
        "apiVersion": "kgitops/v1",
        "kind": "Topic",
        "name": "orders",
        "partitions": 3,
        "replicationFactor": 3,
        "config": {"retention.ms": 5},
    }
    assert conforms("Topic")(doc)


def test_the_fast_path_says_no_to_a_keyword_it_does_not_know() -> None:
    assert not compile_schema({"type": "object", "dependentRequired": {"a": ["b"]}})({})


def test_the_state_schema_says_where_a_real_clusters_password_version_is_kept() -> None:
    """passwordVersion is no longer 'simulated clusters only': a real cluster keeps it in the
    passwordVersion topic, and its snapshot (no access read: access None) holds none."""
    root = Path(__file__).resolve().parents[2] / "kgitops" / "schemas" / "state.json"

    def found(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            props = node.get("properties", {})
            if isinstance(props, dict) and "passwordVersion" in props:
                yield props["passwordVersion"]["description"]
            for v in node.values():
                yield from found(v)
        elif isinstance(node, list):
            for v in node:
                yield from found(v)

    [description] = found(json.loads(root.read_text(encoding="utf-8")))
    assert "simulated clusters only" not in description
    assert "passwordVersionTopic" in description
    assert "access" not in state_to_json(ClusterState(brokers=(), topics={}))
