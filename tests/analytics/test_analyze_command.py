"""``kgitops analyze keys`` end to end: the report, its formats, and clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgitops.cli import main
from kgitops.placement.partitioner import partition_for

SCHEMA = json.loads(
    (resources.files("kgitops") / "schemas" / "keys-report.json").read_text(encoding="utf-8")
)
KEYS = [f"customer-{i % 97}" for i in range(2000)] + ["whale"] * 400


def _state(path: Path) -> None:
    brokers = [{"id": 1, "rack": "az1"}, {"id": 2, "rack": "az2"}, {"id": 3, "rack": "az3"}]
    parts = {str(p): {"replicas": [1 + p % 3, 1 + (p + 1) % 3]} for p in range(6)}
    path.write_text(
        json.dumps(
            {
                "format": "kgitops-state/v1",
                "brokers": brokers,
                "topics": {"orders": {"partitions": parts, "config": {}}},
            }
        )
    )


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "keys.csv"
    lines = ["key,bytes", *(f"{k},{100 + i % 7}" for i, k in enumerate(KEYS)), ",50"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.spark
def test_the_json_report_follows_the_schema_with_broker_rack_and_consumer_load(
    spark: Any, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _state(tmp_path / "state.json")
    out = tmp_path / "report.json"
    code = main(
        [
            "analyze",
            "keys",
            "--input",
            str(sample),
            "--partitions",
            "12,24",
            "--size-column",
            "bytes",
            "--state",
            str(tmp_path / "state.json"),
            "--topic",
            "orders",
            "--consumers",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert capsys.readouterr().out == ""
    report = json.loads(out.read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["current"] == 6 and report["base"] == 6
    assert report["messages"] == len(KEYS) + 1 and report["nullKeys"] == 1
    assert report["distinctKeys"] == 98
    assert [m["to"] for m in report["moves"]] == [12, 24]
    assert report["hotKeys"][0]["key"] == "whale"
    assert report["hotKeys"][0]["partitions"]["24"] == partition_for("whale", 24)
    six = report["partitionCounts"]["6"]
    assert six["placement"]["source"] == "state"
    assert report["partitionCounts"]["12"]["placement"]["source"] == "computed"
    whale_p = partition_for("whale", 6)
    leader = 1 + whale_p % 3
    lead = {b["id"]: b["leaderMessages"] for b in six["placement"]["brokers"]}
    assert lead[leader] >= 400
    assert sum(r["messages"] for r in six["consumers"]["range"]["assignment"]) == len(KEYS)


@pytest.mark.spark
def test_markdown_has_the_moved_share_and_a_bar_chart(
    spark: Any, sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["analyze", "keys", "--input", str(sample), "--partitions", "6,12", "--markdown"]) == 0
    )
    captured = capsys.readouterr()
    md = captured.out
    assert "| 6 → 12 |" in md and "█" in md and "`whale`" in md
    assert "reading" not in md and "analysed" not in md  # stdout holds the report only
    assert f"reading {sample}…\n" in captured.err
    assert "analysed 2,401 messages in " in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--partitions", "6,x"], "not a list of partition counts"),
        (["--partitions", "0"], "partition counts must be positive"),
        (["--partitions", "6", "--topic", "t"], "--topic needs --state"),
        (["--partitions", "6", "--state", "s.json"], "--state needs --topic"),
    ],
)
def test_bad_arguments_are_one_clear_line_and_exit_1(
    tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "k.parquet"
    pq.write_table(pa.table({"key": ["a"]}), sample)
    assert main(["analyze", "keys", "--input", str(sample), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_missing_input_is_reported_without_starting_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["analyze", "keys", "--input", str(tmp_path / "none.parquet"), "--partitions", "6"])
    assert code == 1
    assert (
        capsys.readouterr().err
        == f"error: {tmp_path / 'none.parquet'}: no such file or directory\n"
    )


def test_a_topic_missing_from_the_state_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "k.parquet"
    pq.write_table(pa.table({"key": ["a"]}), sample)
    _state(tmp_path / "state.json")
    code = main(
        [
            "analyze",
            "keys",
            "--input",
            str(sample),
            "--partitions",
            "6",
            "--state",
            str(tmp_path / "state.json"),
            "--topic",
            "nope",
        ]
    )
    assert code == 1
    assert "no topic 'nope' in this state" in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.slow
def test_with_out_dash_stdout_holds_the_json_and_nothing_else(sample: Path) -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kgitops",
            "analyze",
            "keys",
            "--input",
            str(sample),
            "--partitions",
            "3,6",
            "--master",
            "local[1]",
            "--out",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["engine"] in ("java", "arrow")
