"""Topic configs are held as the strings Kafka holds, and checked with Kafka's types and ranges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgitops.names import THROTTLED_REPLICAS_CONFIGS
from kgitops.spec.config_table import CONFIGS, INT_MAX, LONG_MAX, suggest
from kgitops.spec.topic_configs import check_config, normalize_config


@pytest.mark.parametrize(
    ("name", "value", "held"),
    [
        ("retention.ms", 604800000, "604800000"),
        ("retention.ms", "604800000", "604800000"),
        ("retention.ms", "0604800000", "604800000"),
        ("retention.ms", -1, "-1"),
        ("unclean.leader.election.enable", False, "false"),
        ("unclean.leader.election.enable", "TRUE", "true"),
        ("cleanup.policy", ["compact", "delete"], "compact,delete"),
        ("cleanup.policy", "compact, delete", "compact,delete"),
        ("cleanup.policy", "delete", "delete"),
        ("min.cleanable.dirty.ratio", "0.50", "0.5"),
        ("min.cleanable.dirty.ratio", 1, "1.0"),
        ("compression.type", "zstd", "zstd"),
        ("compression.gzip.level", -1, "-1"),
    ],
)
def test_a_value_normalises_to_the_string_kafka_holds(name: str, value: object, held: str) -> None:
    assert normalize_config(name, value) == held


def test_an_unknown_config_normalises_as_plain_text() -> None:
    assert normalize_config("confluent.placement.constraints", "{}") == "{}"
    assert normalize_config("some.flag", True) == "true"


def test_normalising_a_bad_value_never_raises_and_keeps_its_text() -> None:
    assert normalize_config("retention.ms", "forever") == "forever"
    assert normalize_config("preallocate", "Maybe") == "maybe"


@given(st.integers(min_value=-1, max_value=LONG_MAX))
def test_every_retention_in_range_round_trips_through_its_string(ms: int) -> None:
    held = normalize_config("retention.ms", ms)
    assert held == str(ms)
    assert normalize_config("retention.ms", held) == held


@given(st.sampled_from(sorted(CONFIGS)))
def test_every_default_is_a_valid_value_of_its_config(name: str) -> None:
    spec = CONFIGS[name]
    if spec.default == "" or name in THROTTLED_REPLICAS_CONFIGS:
        return
    held, problem = check_config(name, spec.default)
    assert problem is None
    assert held == spec.default or float(held or 0) == float(spec.default)


def test_the_gzip_level_allows_minus_one_besides_one_to_nine() -> None:
    assert check_config("compression.gzip.level", -1) == ("-1", None)
    assert check_config("compression.gzip.level", 0) == (
        None,
        "compression.gzip.level must be between 1 and 9 or -1, not 0",
    )


def test_an_int_config_stops_at_kafkas_32_bit_limit() -> None:
    assert check_config("max.message.bytes", INT_MAX) == (str(INT_MAX), None)
    assert check_config("max.message.bytes", INT_MAX + 1)[1] == (
        "max.message.bytes must be at most 2147483647 (Kafka holds it in a 32-bit int), "
        "not 2147483648"
    )


def test_a_boolean_is_not_a_number() -> None:
    assert check_config("retention.ms", True) == (
        None,
        "retention.ms must be a duration (7d, 36h, 15m, 500ms) or a number of milliseconds, "
        "or infinite, not a boolean",
    )


def test_a_list_config_refuses_a_value_listed_twice() -> None:
    assert check_config("cleanup.policy", "delete,delete")[1] == (
        "cleanup.policy lists a value twice: delete,delete"
    )


def test_the_table_has_every_topic_config_of_kafka_3_and_4() -> None:
    expected = {
        "cleanup.policy",
        "compression.type",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.copy.lag.bytes",
        "remote.copy.lag.ms",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
    assert set(CONFIGS) == expected


def test_a_near_miss_suggests_the_config_meant() -> None:
    assert suggest("retention.msec") == "retention.ms"
    assert suggest("min.isr") is None


_SAMPLES: list[object] = [
    -(2**63) - 1,
    -(2**63),
    -(2**31) - 1,
    -(2**31),
    -131072,
    -3,
    -2,
    -1,
    0,
    1,
    9,
    10,
    17,
    22,
    1048575,
    1048576,
    2**31 - 1,
    2**31,
    2**63 - 1,
    2**63,
    0.0,
    0.5,
    1.0,
    1.5,
    -0.5,
    True,
    False,
    "-2",
    "-1",
    "0",
    " 5 ",
    "+7",
    "05",
    "1_000",
    "2147483648",
    "9223372036854775808",
    "0.5",
    "1.5",
    ".5",
    "1e-3",
    "inf",
    "nan",
    "1_0.5",
    "true",
    "false",
    "TRUE",
    " False ",
    "yes",
    "compact",
    "delete",
    "compact,delete",
    " compact , delete ",
    "Compact",
    "bogus",
    "",
    "zstd",
    "ZSTD",
    "producer",
    "CreateTime",
    "LogAppendTime",
    ["compact"],
    ["compact", "delete"],
    ["bogus"],
    [1],
    [],
    None,
    {"a": 1},
]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_editor_schema_never_flags_what_validate_accepts(name: str) -> None:
    flagged = [v for v in _SAMPLES if check_config(name, v)[1] is None and not _schema_ok(name, v)]
    assert flagged == []


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_for_yaml_numbers_and_booleans_the_schema_and_validate_agree_exactly(name: str) -> None:
    # A number written as a string ("604800000") can only be pattern-checked by a schema;
    # its range is checked by validate.
    disagree = [
        v
        for v in _SAMPLES
        if not isinstance(v, str) and _schema_ok(name, v) != (check_config(name, v)[1] is None)
    ]
    assert disagree == []


def _schema_ok(name: str, value: object) -> bool:
    from jsonschema import Draft202012Validator

    from kgitops.spec.schemacheck import schema

    sub = schema("topic.json")["properties"]["config"]["properties"][name]
    return bool(Draft202012Validator(sub).is_valid(value))


def test_the_producers_none_compression_points_at_uncompressed() -> None:
    assert check_config("compression.type", "none")[1] == (
        "compression.type must be one of uncompressed, zstd, lz4, snappy, gzip, producer, "
        "not 'none' ('none' is the producer's word; a topic says 'uncompressed')"
    )
