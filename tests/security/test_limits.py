"""Absurd sizes are refused at once, in one line, before any work: cluster.yaml ``limits``
for specs, fixed bounds for the algorithm commands."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml

CLUSTER = cluster_yaml("test", brokers=THREE_RACKS)


def _topic(name: str, partitions: int, rf: int = 3) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\n"
        f"partitions: {partitions}\nreplicationFactor: {rf}\n"
    )


def _run_limited(args: list[str]) -> subprocess.CompletedProcess[str]:
    """The CLI in a process with 1 GB of address space and 60 s: a command that tries to
    build what it was asked for fails with MemoryError (an internal error) instead."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run(
        [sys.executable, "-m", "kgitops", *args],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_partitions_at_the_int32_maximum_is_a_positioned_error_not_a_memory_error(
    tmp_path: Path, command: str
) -> None:
    cluster_folder(tmp_path, cluster=CLUSTER, files={"big.yaml": _topic("big", 2147483647)})
    done = _run_limited([command, str(tmp_path)])
    assert done.returncode == 1
    assert f"{tmp_path}/big.yaml:4:13: error: partitions 2,147,483,647 is above " in (
        done.stdout + done.stderr
    )
    assert "internal error" not in done.stderr
    assert not (tmp_path / ".state").exists()  # refused before the cluster was opened


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_limits_raised_to_the_int32_maximum_are_refused_where_written_not_a_memory_error(
    tmp_path: Path, command: str
) -> None:
    raised = "limits: {partitionsPerTopic: 2147483647, totalPartitions: 2147483647}\n"
    cluster_folder(
        tmp_path, cluster=CLUSTER + raised, files={"big.yaml": _topic("big", 2147483647)}
    )
    done = _run_limited([command, str(tmp_path)])
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"{tmp_path}/cluster.yaml:7:30: error: limits.partitionsPerTopic must be at most " in out
    assert f"{tmp_path}/cluster.yaml:7:59: error: limits.totalPartitions must be at most " in out
    assert "internal error" not in out and "MemoryError" not in out
    assert not (tmp_path / ".state").exists() or command == "plan"


def test_running_out_of_memory_is_one_line_not_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kgitops.commands.validate as validate

    def exhausted(args: object) -> int:
        raise MemoryError

    monkeypatch.setattr(validate, "run", exhausted)
    assert main(["validate", "."]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory") and len(err.splitlines()) == 1


def test_limits_are_read_from_cluster_yaml_and_checked_per_topic_and_in_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(
        tmp_path,
        cluster=CLUSTER
        + "limits: {partitionsPerTopic: 20000, totalPartitions: 30000, replicationFactor: 2}\n",
        files={"a.yaml": _topic("a", 20_000, rf=2), "b.yaml": _topic("b", 15_000, rf=3)},
    )
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{tmp_path}/b.yaml:5:20: error: replicationFactor 3 is above limits.replicationFactor "
        "(2); raise the limit in cluster.yaml if meant",
        f"{tmp_path}/cluster.yaml:7:54: error: the topics of this folder have 35,000 partitions "
        "in all, above limits.totalPartitions (30,000); raise the limit in cluster.yaml if meant",
    ]


@pytest.mark.parametrize(
    "limits",
    [
        "limits: {partitionsPerTopic: 50000, replicationFactor: 0}\n",
        "limits: {partitionsPerTopic: 50000, totalPartition: 9}\n",
        "limits: {partitionsPerTopic: 50000}\nunknownField: 1\n",
        "limits: {partitionsPerTopic: many}\n",
    ],
)
def test_a_cluster_yaml_with_an_error_never_quotes_the_default_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limits: str
) -> None:
    """cluster.yaml raised the limit (or wrote it wrong) and has an error: the topics are
    measured against what it says, never against the default 10,000 as if it were set."""
    cluster_folder(tmp_path, cluster=CLUSTER + limits, files={"a.yaml": _topic("a", 20_000)})
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith(f"{tmp_path}/cluster.yaml:"), out


def test_the_default_limit_is_ten_thousand_partitions_per_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(tmp_path, cluster=CLUSTER, files={"a.yaml": _topic("a", 10_000)})
    assert main(["validate", str(tmp_path)]) == 0
    (tmp_path / "a.yaml").write_text(_topic("a", 10_001))
    assert main(["validate", str(tmp_path)]) == 1
    assert "partitions 10,001 is above limits.partitionsPerTopic (10,000)" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [
                "assign",
                "--brokers",
                "0,1,2",
                "--partitions",
                "99999999999999999999",
                "--replication-factor",
                "3",
            ],
            "error: --partitions: 99,999,999,999,999,999,999 is more than kgitops computes "
            "(at most 1,000,000)",
        ),
        (
            [
                "assign",
                "--brokers",
                "0,1,2",
                "--partitions",
                "3",
                "--replication-factor",
                "3",
                "--start-partition",
                "2147483647",
            ],
            "error: --start-partition must be 0..2,147,483,644: Kafka's partition ids are 32-bit",
        ),
        (
            ["partition", "--partitions", "99999999999999999999", "key"],
            "error: --partitions: 99,999,999,999,999,999,999 is more than Kafka allows "
            "(at most 2,147,483,647)",
        ),
        (
            ["partition", "--partitions", "2147483648", "key"],
            "error: --partitions: 2,147,483,648 is more than Kafka allows (at most 2,147,483,647)",
        ),
        (
            ["consumers", "--strategy", "range", "--partitions", "t0=100000000", "--member", "c0"],
            "error: --partitions t0: 100,000,000 is more than kgitops computes (at most 1,000,000)",
        ),
        (
            [
                "consumers",
                "--strategy",
                "sticky",
                "--partitions",
                "t0=600000,t1=600000",
                "--member",
                "c0",
            ],
            "error: --partitions in all: 1,200,000 is more than kgitops computes "
            "(at most 1,000,000)",
        ),
    ],
)
def test_algorithm_commands_refuse_absurd_counts_in_one_line(args: list[str], message: str) -> None:
    done = _run_limited(args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")
