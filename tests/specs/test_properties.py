"""Properties of loading as a whole: it never raises, every position is inside its file, and a
valid topic comes back exactly as written."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from kgitops.spec.load import load_specs
from kgitops.spec.schemacheck import schema
from kgitops.spec.topic_configs import normalize_config
from kgitops.versionrules import DEFAULT_VERSION
from tests.helpers import cluster_folder

from .conftest import CLUSTER

_junk = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 2**33),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)

_config_values = st.one_of(
    st.integers(-3, 2**40), st.booleans(), st.sampled_from(["compact", "delete", "x", "1.5"])
)
_config = st.dictionaries(
    st.sampled_from(
        [
            "retention.ms",
            "cleanup.policy",
            "min.insync.replicas",
            "preallocate",
            "min.cleanable.dirty.ratio",
            "segment.bytes",
            "bogus.name",
            "compression.type",
        ]
    ),
    _config_values,
    max_size=4,
)

_topic = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["kgitops/v1", "kgitops/v1", "v0"]),
        "kind": st.sampled_from(["Topic", "Topic", "Cluster", "Nope"]),
        "name": st.one_of(st.from_regex(r"[a-z][a-z0-9._-]{0,20}", fullmatch=True), st.text()),
        "partitions": st.one_of(st.integers(-1, 64), _junk),
        "replicationFactor": st.integers(-1, 5),
    },
    optional={
        "placement": st.sampled_from(["rack-aware", "rack-unaware", "static", "?"]),
        "startIndex": st.integers(-1, 5),
        "assignment": st.lists(st.lists(st.integers(0, 4), max_size=4), max_size=4),
        "config": st.one_of(_config, _junk),
        "delete": st.one_of(st.booleans(), _junk),
        "keys": _junk,
        "extra": _junk,
    },
)


def _write(root: Path, files: list[list[Any]]) -> None:
    texts = {
        f"f{i}.yaml": yaml.safe_dump_all(docs, sort_keys=False) for i, docs in enumerate(files)
    }
    cluster_folder(root, cluster=CLUSTER, files=texts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.one_of(_topic, _junk), min_size=1, max_size=3), max_size=3))
def test_loading_any_documents_never_raises_and_positions_are_in_their_files(
    files: list[list[Any]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, files)
        specs = load_specs(tmp)
        lines = {str(p): p.read_text().count("\n") + 1 for p in root.glob("*.yaml")}
        for d in specs.diagnostics:
            assert d.mark.path in lines, d
            assert 1 <= d.mark.line <= lines[d.mark.path], d
            assert d.mark.col >= 1
        assert list(specs.diagnostics) == sorted(specs.diagnostics)
        assert [t.name for t in specs.topics] == sorted(t.name for t in specs.topics)


_valid_topic = st.fixed_dictionaries(
    {
        "apiVersion": st.just("kgitops/v1"),
        "kind": st.just("Topic"),
        "name": st.from_regex(r"[a-z][a-z0-9-]{0,30}", fullmatch=True),
        "partitions": st.integers(1, 10_000),
        "replicationFactor": st.integers(2, 3),
    },
    optional={
        "startIndex": st.integers(0, 2),
        "config": st.fixed_dictionaries(
            {},
            optional={
                "retention.ms": st.one_of(st.integers(-1, 2**40), st.integers(0, 99).map(str)),
                "cleanup.policy": st.sampled_from(["compact", "delete", "compact,delete"]),
                "unclean.leader.election.enable": st.booleans(),
                "min.cleanable.dirty.ratio": st.floats(0, 1),
                "min.insync.replicas": st.just(1),
            },
        ),
        "delete": st.booleans(),
    },
)


@settings(max_examples=100, deadline=None)
@given(_valid_topic)
def test_a_valid_topic_loads_exactly_as_written(doc: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), [[doc]])
        specs = load_specs(tmp)
        assert [d for d in specs.errors] == []
        [topic] = specs.topics
        assert topic.name == doc["name"]
        assert topic.partitions == doc["partitions"]
        assert topic.replication_factor == doc["replicationFactor"]
        assert topic.start_index == doc.get("startIndex")
        assert topic.delete == doc.get("delete", False)
        config = doc.get("config", {})
        assert dict(topic.config) == {k: normalize_config(k, v) for k, v in config.items()}
        text = (Path(tmp) / "f0.yaml").read_text().splitlines()
        line = next(i for i, row in enumerate(text, 1) if row.startswith("partitions:"))
        assert topic.mark_of("partitions").line == line
        # and an editor using topic.json shows no error on it either
        assert Draft202012Validator(schema("topic.json")).is_valid(doc)


_cluster_doc = st.fixed_dictionaries(
    {"apiVersion": st.just("kgitops/v1"), "kind": st.just("Cluster"), "name": _junk},
    optional={
        "simulated": st.one_of(
            st.fixed_dictionaries({"stateFile": _junk, "brokers": st.lists(_junk, max_size=3)}),
            _junk,
        ),
        "reassignment": st.dictionaries(
            st.sampled_from(["maxConcurrentMoves", "timeoutSeconds", "x"]), _junk, max_size=2
        ),
        "defaults": st.one_of(st.fixed_dictionaries({"replicationFactor": _junk}), _junk),
        "profiles": st.dictionaries(st.text(max_size=4), _junk, max_size=2),
        "decommission": _junk,
        "policies": _junk,
        "extra": _junk,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.tuples(st.just("Topic"), _topic), st.tuples(st.just("Cluster"), _cluster_doc)))
def test_what_a_salvage_keeps_conforms_to_the_schema_but_for_missing_top_level_fields(
    case: tuple[str, dict[str, Any]],
) -> None:
    from kgitops.spec.schemacheck import salvage, validator

    kind, doc = case
    doc = {**doc, "kind": kind}
    kept = salvage(doc, kind)
    if kept is None:
        return
    left = list(validator(kind).iter_errors(kept.value))
    assert all(e.validator == "required" and not e.absolute_path for e in left), left
    assert {k for e in left for k in e.validator_value if k not in kept.value} == kept.missing
    assert _within(kept.value, doc)  # parts taken out, nothing changed or added
    assert all(kept.lost(k) for k in doc if k not in kept.value)


def _within(part: Any, whole: Any) -> bool:
    if isinstance(part, dict) and isinstance(whole, dict):
        return all(k in whole and _within(v, whole[k]) for k, v in part.items())
    return bool(part == whole)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["retention.ms", "min.cleanable.dirty.ratio", "cleanup.policy", "preallocate"]),
    st.one_of(
        st.sampled_from([0.0, -0.0, 0.5, 1, 1.0, True, "true", "7d", "compact", "x\ty"]),
        st.integers(-2, 2),
        st.floats(allow_nan=False),
        st.text(max_size=4),
    ),
)
def test_a_remembered_config_answer_is_the_answer_checked_afresh(name: str, value: Any) -> None:
    """The loader remembers each scalar config value's answer (10,000 topics repeat the same
    few): asked twice, and after values equal to it as dict keys (``-0.0`` and ``0.0``,
    ``1``, ``1.0`` and ``true``), it still answers as the check itself does."""
    from kgitops.spec import rules
    from kgitops.spec.rules import checked_config
    from kgitops.spec.topic_configs import check_config

    for twin in (value, 0.0, -0.0, 1, 1.0, True, value):
        normal, problem = check_config(name, twin)
        if problem is None and normal is not None:
            problem = rules.control_characters(name, normal)
        assert checked_config(name, twin, DEFAULT_VERSION) == (normal, problem), twin
