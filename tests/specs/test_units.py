"""Durations and sizes in topic configs: written as people write them, held as Kafka holds them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from kgitops.cli import main
from kgitops.cluster.controller import topic_config_error
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.plan.actions import AlterConfig
from kgitops.spec.config_table import CONFIGS, LONG_MAX
from kgitops.spec.load import load_specs
from kgitops.spec.topic_configs import check_config, normalize_config, readable_config
from kgitops.units import human_rate, spec_bytes, spec_bytes_text, spec_millis, spec_millis_text
from tests.helpers import cluster_folder

from .conftest import Problems

TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: t\npartitions: 1\nreplicationFactor: 1\n"
SCHEMA = Path(__file__).resolve().parents[2] / "kgitops" / "schemas" / "topic.json"


@pytest.mark.parametrize(
    ("name", "written", "held"),
    [
        ("retention.ms", "7d", "604800000"),
        ("retention.ms", "36h", "129600000"),
        ("retention.ms", "15m", "900000"),
        ("segment.ms", "500ms", "500"),
        ("retention.ms", "1h30m", "5400000"),
        ("retention.ms", "1.5s", "1500"),
        ("retention.ms", "2w", "1209600000"),
        ("retention.ms", "infinite", "-1"),
        ("retention.ms", "-1", "-1"),
        ("segment.bytes", "1GiB", "1073741824"),
        ("segment.bytes", "512MiB", "536870912"),
        ("max.message.bytes", "10MB", "10000000"),
        ("retention.bytes", "1kB", "1000"),
        ("retention.bytes", "1.5KiB", "1536"),
        ("retention.bytes", "INFINITE", "-1"),
        ("local.retention.bytes", "infinite", "-1"),
        ("local.retention.ms", "-2", "-2"),
    ],
)
def test_a_duration_or_size_with_units_is_held_as_kafkas_number(
    name: str, written: str, held: str
) -> None:
    assert check_config(name, written) == (held, None)
    assert normalize_config(name, written) == held


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("retention.ms", "0.5ms"),  # not a whole millisecond: refused, never rounded
        ("retention.bytes", "0.5B"),
        ("retention.ms", "7M"),  # months are not a unit
        ("retention.ms", "1GiB"),  # a size is not a duration
        ("segment.bytes", "7d"),
        ("segment.bytes", "1m"),  # a minute, or a megabyte? neither
        ("segment.ms", "infinite"),  # -1 is no "forever" for a segment
        ("max.compaction.lag.ms", "infinite"),
        ("min.insync.replicas", "2k"),  # a count has no unit
        ("retention.ms", "7 days"),
        ("retention.ms", "d"),
        ("retention.ms", "1h 30x"),
    ],
)
def test_a_value_that_is_not_an_exact_amount_of_its_unit_is_refused(
    name: str, written: str
) -> None:
    held, problem = check_config(name, written)
    assert held is None and problem is not None and name in problem


def test_units_still_meet_kafkas_range() -> None:
    assert check_config("segment.bytes", "512KiB")[1] == (
        "segment.bytes must be at least 1048576, not 524288"
    )
    assert check_config("retention.ms", "200000000000000d")[1] == (
        "retention.ms must be at most 9223372036854775807 (Kafka holds it in a 64-bit long), "
        "not 17280000000000000000000"
    )


def test_the_broker_takes_numbers_only() -> None:
    """A unit is kgitops' spelling: the simulated cluster refuses ``7d`` as Kafka does."""
    assert topic_config_error("retention.ms", "604800000") is None
    assert topic_config_error("retention.ms", "7d") is not None


@pytest.mark.parametrize(
    ("name", "held", "readable"),
    [
        ("retention.ms", "604800000", "7d"),
        ("retention.ms", "129600000", "36h"),
        ("retention.ms", "-1", "infinite"),
        ("segment.ms", "1500", "1500ms"),
        ("flush.ms", str(LONG_MAX), str(LONG_MAX)),
        ("segment.bytes", "1073741824", "1GiB"),
        ("max.message.bytes", "10000000", "10MB"),
        ("retention.bytes", "10000000000", "10GB"),
        ("retention.bytes", "2048000000", "2048MB"),
        ("retention.bytes", "1048576000", "1000MiB"),
        ("segment.bytes", "536870912", "512MiB"),
        ("max.message.bytes", "1048588", "1048588"),
        ("retention.bytes", "-1", "infinite"),
        ("local.retention.bytes", "-2", "-2"),
        ("min.insync.replicas", "2", "2"),
        ("cleanup.policy", "delete", "delete"),
    ],
)
def test_a_held_value_reads_in_the_largest_exact_unit(name: str, held: str, readable: str) -> None:
    assert readable_config(name, held) == readable


UNIT_CONFIGS = sorted(n for n, c in CONFIGS.items() if c.unit is not None)


@given(st.sampled_from(UNIT_CONFIGS), st.integers(min_value=-2, max_value=LONG_MAX))
def test_the_readable_form_reads_back_to_the_same_number(name: str, number: int) -> None:
    held = normalize_config(name, number)
    assert normalize_config(name, readable_config(name, held)) == held


@given(st.integers(min_value=1, max_value=10**15))
def test_printed_amounts_parse_back_exactly(n: int) -> None:
    ms, size = spec_millis_text(n), spec_bytes_text(n)
    assert (spec_millis(ms) if not ms.isdigit() else int(ms)) == n
    assert (spec_bytes(size) if not size.isdigit() else int(size)) == n


def test_units_in_a_spec_load_as_numbers_and_bad_ones_point_at_the_value(
    problems: Problems, tmp_path: Path
) -> None:
    bad = TOPIC + "config:\n  retention.ms: 7x\n  segment.bytes: 1GB\n  segment.ms: infinite\n"
    assert [p for p in problems({"a.yaml": bad}) if ": error: " in p] == [
        "a.yaml:7:17: error: retention.ms must be a duration (7d, 36h, 15m, 500ms) or a number "
        "of milliseconds, or infinite, not the string '7x'",
        "a.yaml:9:15: error: segment.ms must be a duration (7d, 36h, 15m, 500ms) or a number "
        "of milliseconds, not the string 'infinite'",
    ]
    good = TOPIC + "config:\n  retention.ms: 7d\n  segment.bytes: 512MiB\n"
    (tmp_path / "a.yaml").write_text(good)
    specs = load_specs(str(tmp_path))
    assert specs.errors == []
    topic = specs.topic("t")
    assert topic is not None
    assert dict(topic.config) == {"retention.ms": "604800000", "segment.bytes": "536870912"}


def test_the_schema_accepts_units_where_kafka_takes_ms_or_bytes_and_nowhere_else() -> None:
    validator = Draft202012Validator(json.loads(SCHEMA.read_text()))

    def ok(config: dict[str, object]) -> bool:
        doc = {
            "apiVersion": "kgitops/v1",
            "kind": "Topic",
            "name": "t",
            "partitions": 1,
            "replicationFactor": 1,
            "config": config,
        }
        return validator.is_valid(doc)

    assert ok({"retention.ms": "7d", "retention.bytes": "10GiB", "segment.ms": "1h30m"})
    assert ok({"retention.ms": "infinite", "max.message.bytes": "10MB"})
    assert not ok({"retention.ms": "7x"})
    assert not ok({"segment.ms": "infinite"})
    assert not ok({"segment.bytes": "7d"})
    assert not ok({"min.insync.replicas": "2k"})
    described = json.loads(SCHEMA.read_text())["properties"]["config"]["properties"]
    assert re.search(r"\b7d\b", described["retention.ms"]["description"])
    assert "decimal" in described["segment.bytes"]["description"]


def test_seven_days_against_a_live_604800000_is_no_change(tmp_path: Path) -> None:
    cluster_folder(tmp_path, brokers=[Broker(0)])
    s = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), [Broker(0)])
    s.create_topics(
        [NewTopic("t", {0: (0,)}, {"retention.ms": "604800000", "segment.bytes": "536870912"})]
    )
    (tmp_path / "t.yaml").write_text(
        TOPIC + "config:\n  retention.ms: 7d\n  segment.bytes: 512MiB\n"
    )
    assert main(["import", str(tmp_path)]) == 0  # writes the lock; t.yaml is kept
    assert main(["plan", str(tmp_path), "--detailed-exitcode"]) == 0
    (tmp_path / "t.yaml").write_text(
        TOPIC + "config:\n  retention.ms: 1d\n  segment.bytes: 512MiB\n"
    )
    assert main(["plan", str(tmp_path), "--detailed-exitcode"]) == 2
    assert main(["apply", str(tmp_path), "--yes", "--allow-retention-drop"]) == 0
    reread = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), [Broker(0)])
    assert reread.describe().topics["t"].config["retention.ms"] == "86400000"


def test_import_writes_durations_and_sizes_in_units(tmp_path: Path) -> None:
    cluster_folder(tmp_path, brokers=[Broker(0)])
    s = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), [Broker(0)])
    live = {
        "retention.ms": "604800000",
        "retention.bytes": "-1",
        "local.retention.bytes": "10000000000",
        "segment.bytes": "1073741824",
        "max.message.bytes": "1048588",
        "min.insync.replicas": "1",
    }
    s.create_topics([NewTopic("u", {0: (0,)}, live)])
    assert main(["import", str(tmp_path)]) == 0
    text = (tmp_path / "u.yaml").read_text()
    assert '  retention.ms: "7d"\n' in text
    assert '  retention.bytes: "infinite"\n' in text
    assert '  segment.bytes: "1GiB"\n' in text
    assert '  local.retention.bytes: "10GB"\n' in text  # decimal stays decimal
    assert "  max.message.bytes: 1048588\n" in text
    assert "  min.insync.replicas: 1\n" in text
    topic = load_specs(str(tmp_path)).topic("u")
    assert topic is not None and dict(topic.config) == live
    assert main(["plan", str(tmp_path), "--detailed-exitcode"]) == 0


def test_the_plan_shows_a_decimal_size_in_decimal_units() -> None:
    data = AlterConfig(
        "t", set={"retention.bytes": "10000000000"}, previous={"retention.bytes": "5368709120"}
    ).to_json()
    assert AlterConfig.details(data)[0] == [
        "~ retention.bytes: 5368709120 (5GiB) -> 10000000000 (10GB)"
    ]


def test_the_plan_shows_a_changed_duration_with_its_units() -> None:
    data = AlterConfig(
        "t", set={"retention.ms": "86400000"}, previous={"retention.ms": "604800000"}
    ).to_json()
    assert AlterConfig.details(data)[0] == ["~ retention.ms: 604800000 (7d) -> 86400000 (1d)"]


@pytest.mark.parametrize("text", ["١٢d", "１２h", "1٠5d", "12d\n", " 7d", "7 d", "1h 30m", "٥GiB"])
def test_only_ascii_digits_and_no_spaces_make_an_amount(text: str) -> None:
    from kgitops.units import parse_duration, parse_size, spec_bytes, spec_millis

    assert spec_millis(text) is None and spec_bytes(text) is None
    for parse in (parse_duration, parse_size):
        with pytest.raises(ValueError):
            parse(text)


def test_the_command_line_and_the_configs_read_one_grammar() -> None:
    from kgitops.units import parse_duration, parse_size, spec_bytes, spec_millis

    for text in ("1w", "1h30m", "1.5s", "2d12h", "500ms"):
        assert parse_duration(text) * 1000 == spec_millis(text)
    for text in ("10MB", "1.5KiB", "2gib", "1TB", "7b"):
        assert parse_size(text) == spec_bytes(text)


def test_other_scripts_digits_in_a_config_point_at_the_value(problems: Problems) -> None:
    bad = TOPIC + 'config:\n  retention.ms: "١٢d"\n  segment.ms: "１２h"\n  retention.bytes: "١٢"\n'
    errors = [p for p in problems({"a.yaml": bad}) if ": error: " in p]
    assert [e.split(": error: ")[0] for e in errors] == [
        "a.yaml:7:17",
        "a.yaml:8:15",
        "a.yaml:9:20",
    ]


@pytest.mark.parametrize("field", ["partitions", "replicationFactor"])
def test_a_whole_float_is_not_an_integer(problems: Problems, field: str) -> None:
    text = TOPIC.replace(f"{field}: 1", f"{field}: 48.0")
    errors = [p for p in problems({"a.yaml": text}) if ": error: " in p]
    line = 4 if field == "partitions" else 5
    assert len(errors) == 1 and errors[0].startswith(f"a.yaml:{line}:"), errors
    assert "48.0" in errors[0]


def test_the_editor_schema_reads_amounts_as_kgitops_does() -> None:
    validator = Draft202012Validator(json.loads(SCHEMA.read_text()))

    def ok(value: str) -> bool:
        doc = {"apiVersion": "kgitops/v1", "kind": "Topic", "name": "t", "partitions": 1}
        return validator.is_valid(
            {**doc, "replicationFactor": 1, "config": {"retention.ms": value}}
        )

    for value in ("7d", "1h30m", " 604800000 ", "infinite", "2w"):
        assert ok(value) and (normalize_config("retention.ms", value) is not None), value
    for value in ("7 d", " 7d", "١٢d", "１２h", "1h 30m"):
        assert not ok(value), value


def test_an_amount_past_pythons_digit_limit_is_one_positioned_line(problems: Problems) -> None:
    nines = "9" * 5000
    tiny = "1." + "0" * 5000 + "1"
    bad = (
        TOPIC + f"config:\n  retention.ms: {nines}d\n  segment.bytes: {nines}GiB\n"
        f"  local.retention.ms: '{nines}'\n"
        f"  local.retention.bytes: {tiny}KiB\n"
    )
    errors = [p for p in problems({"a.yaml": bad}) if ": error: " in p]
    assert errors[:3] == [
        "a.yaml:7:17: error: retention.ms must be at most 9223372036854775807, "
        "not a 5001-character value",
        "a.yaml:8:18: error: segment.bytes must be at most 2147483647, not a 5003-character value",
        "a.yaml:9:23: error: local.retention.ms must be at most 9223372036854775807, "
        "not a 5000-character value",
    ]
    assert errors[3].startswith("a.yaml:10:26: error: local.retention.bytes must be a size")
    assert all(len(e) < 300 for e in errors)


def test_long_decimals_are_exact_where_it_matters_and_never_whole_when_they_are_not() -> None:
    assert spec_millis("1." + "0" * 5000 + "s") == 1000
    assert spec_millis("1." + "0" * 5000 + "1s") is None
    assert spec_bytes("0" * 5000 + "1KiB") == 1024


@pytest.mark.parametrize("flag", ["--timeout", "--max-file-size"])
def test_an_amount_past_pythons_digit_limit_on_the_command_line_is_one_line(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if flag != "--timeout":
        argv = ["--max-file-size", "9" * 5000 + "GB", "validate", str(tmp_path)]
    else:
        argv = ["apply", str(tmp_path), "--timeout", "9" * 5000 + "d"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "a 500" in err and "character value is too" in err
    assert "set_int_max_str_digits" not in err


@pytest.mark.parametrize(
    ("rate", "shown"),
    [
        (50_000_000, "50 MB/s"),  # throttleBytesPerSec: 50000000, meant as 50 MB/s
        (52_428_800, "50 MiB/s"),
        (10**10, "10 GB/s"),
        (1000, "1 kB/s"),
        (1_234_567, "1.2 MiB/s"),
        (500, "500 B/s"),
        (2.5, "2 B/s"),
    ],
)
def test_a_rate_reads_in_the_family_it_was_set_in(rate: float, shown: str) -> None:
    assert human_rate(rate) == shown
