"""`kgitops assign`, `kgitops partition` and `kgitops consumers` as docs/algorithms.md describes
them: JSON or lines on stdout, Kafka's errors on stderr with exit 1, never a traceback."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli


def test_assign_prints_the_seed_rack_aware_assignment() -> None:
    code, out, err = run_cli(
        "assign", "--brokers", "0,1,2,3,4,5",
        "--racks", "rack1,rack3,rack3,rack2,rack2,rack1",
        "--partitions", "7", "--replication-factor", "3",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2],
        "4": [4, 2, 0], "5": [2, 0, 3], "6": [0, 4, 2],
    }  # fmt: skip


def test_assign_start_index_shift_and_start_partition() -> None:
    code, out, _ = run_cli(
        "assign", "--brokers", "0,1,2,3,4", "--partitions", "2",
        "--replication-factor", "3", "--start-index", "2", "--replica-shift", "0",
        "--start-partition", "5",
    )  # fmt: skip
    # p5: first (5+2)%5 = 2; shift 0 bumped to 1 at p5 -> followers 2+2, 2+3
    assert code == 0 and json.loads(out) == {"5": [2, 4, 0], "6": [3, 0, 1]}


def test_assign_empty_rack_entry_is_kafkas_rack_error() -> None:
    code, out, err = run_cli(
        "assign", "--brokers", "0,1,2", "--racks", "a,,b",
        "--partitions", "3", "--replication-factor", "2",
    )  # fmt: skip
    assert code == 1 and out == ""
    assert (
        err == "error: Not all brokers have rack information for replica rack aware assignment.\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--brokers", "0,1", "--partitions", "3", "--replication-factor", "3"],
         "Replication factor: 3 larger than available brokers: 2."),
        (["--brokers", "0,1", "--partitions", "0", "--replication-factor", "1"],
         "Number of partitions must be larger than 0."),
        (["--brokers", "0,x", "--partitions", "1", "--replication-factor", "1"],
         "--brokers: 'x' is not a broker id (a whole number 0..2147483647; expected e.g. 0,1,2)"),
        (["--brokers", "0,2147483648", "--partitions", "1", "--replication-factor", "1"],
         "--brokers: 2147483648 is not a broker id: Kafka's broker ids are 32-bit "
         "(0..2147483647)"),
        (["--brokers", "0,-1", "--partitions", "1", "--replication-factor", "1"],
         "--brokers: '-1' is not a broker id"),
        (["--brokers", "0,\u0661", "--partitions", "1", "--replication-factor", "1"],
         "--brokers: '\u0661' is not a broker id"),
        (["--brokers", "0,1", "--racks", "a", "--partitions", "1", "--replication-factor", "1"],
         "--racks has 1 entries but --brokers has 2"),
    ],
)  # fmt: skip
def test_assign_bad_input_is_one_clear_line(argv: list[str], message: str) -> None:
    code, _, err = run_cli("assign", *argv)
    assert code == 1
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_partition_prints_one_partition_per_key() -> None:
    code, out, _ = run_cli("partition", "--partitions", "12", "foobar", "21")
    assert code == 0
    assert out.split() == [str((-790332482 & 0x7FFFFFFF) % 12), str((-973932308 & 0x7FFFFFFF) % 12)]


def test_partition_hex_keys_are_raw_bytes() -> None:
    _, text, _ = run_cli("partition", "--partitions", "7", "abc")
    code, raw, _ = run_cli("partition", "--partitions", "7", "--hex", "616263")
    assert code == 0 and raw == text == f"{479470107 % 7}\n"


def test_partition_json_puts_each_key_next_to_its_partition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("user-1\n\u00e9t\u00e9\n"))
    code, out, err = run_cli("partition", "--partitions", "12", "--format", "json", "foobar", "-")
    assert (code, err) == (0, "")
    _, lines, _ = run_cli("partition", "--partitions", "12", "foobar", "user-1", "\u00e9t\u00e9")
    assert json.loads(out) == {
        "format": "kgitops-partition/v1",
        "partitions": 12,
        "keys": [
            {"key": k, "keyHex": k.encode().hex(), "partition": int(p)}
            for k, p in zip(["foobar", "user-1", "\u00e9t\u00e9"], lines.split(), strict=True)
        ],
    }


def test_partition_json_of_hex_keys_keeps_the_bytes_and_nulls_a_key_that_is_not_text() -> None:
    code, out, _ = run_cli(
        "partition", "--partitions", "7", "--hex", "--format", "json", "616263", "FF00"
    )
    _, lines, _ = run_cli("partition", "--partitions", "7", "--hex", "616263", "ff00")
    assert code == 0
    assert json.loads(out)["keys"] == [
        {"key": "abc", "keyHex": "616263", "partition": 479470107 % 7},
        {"key": None, "keyHex": "ff00", "partition": int(lines.split()[1])},
    ]


def test_partition_bad_hex_and_bad_count() -> None:
    assert run_cli("partition", "--partitions", "3", "--hex", "zz")[0] == 1
    code, _, err = run_cli("partition", "--partitions", "0", "k")
    assert code == 1 and "--partitions must be at least 1" in err


def test_consumers_range_round_robin_and_subscriptions() -> None:
    code, out, _ = run_cli(
        "consumers", "--strategy", "range", "--partitions", "t0=3,t1=3",
        "--member", "C0", "--member", "C1",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == {"C0": ["t0-0", "t0-1", "t1-0", "t1-1"], "C1": ["t0-2", "t1-2"]}
    code, out, _ = run_cli(
        "consumers", "--strategy", "roundrobin", "--partitions", "t0=1,t1=2,t2=3",
        "--member", "C0=t0", "--member", "C1=t0,t1", "--member", "C2",
    )  # fmt: skip
    assert json.loads(out) == {
        "C0": ["t0-0"], "C1": ["t1-0"], "C2": ["t1-1", "t2-0", "t2-1", "t2-2"],
    }  # fmt: skip


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky"])
def test_consumers_ignore_a_subscribed_topic_without_partitions_with_a_warning(
    strategy: str,
) -> None:
    code, out, err = run_cli(
        "consumers", "--strategy", strategy, "--partitions", "t0=2",
        "--member", "a=t0,t9", "--member", "b=t9",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == {"a": ["t0-0", "t0-1"], "b": []}
    assert "--member a subscribes to t9, which --partitions does not list: ignored" in err
    assert "--member b subscribes to t9" in err


def test_assign_keep_order_walks_the_brokers_as_given() -> None:
    argv = ["assign", "--brokers", "3,1,2", "--partitions", "3", "--replication-factor", "2"]
    code, out, _ = run_cli(*argv, "--keep-order")
    assert code == 0 and json.loads(out) == {"0": [3, 1], "1": [1, 2], "2": [2, 3]}
    code, out, _ = run_cli(*argv)  # sorted by id first, as Kafka's tools do
    assert code == 0 and json.loads(out) == {"0": [1, 2], "1": [2, 3], "2": [3, 1]}


def test_consumers_sticky_keeps_previous_ownership() -> None:
    code, out, _ = run_cli(
        "consumers", "--strategy", "sticky", "--partitions", "t=3",
        "--member", "a", "--member", "b", "--previous", "a=t-0,t-1,t-2",
    )  # fmt: skip
    assert code == 0 and json.loads(out) == {"a": ["t-0", "t-1"], "b": ["t-2"]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--partitions", "t0=x", "--member", "a"], "'x' for t0 is not a number"),
        (["--partitions", "t0=1", "--member", "a", "--member", "a"], "a is listed twice"),
        (["--partitions", "t0=1", "--member", "a", "--previous", "b=t0-0"], "b is not a --member"),
        (["--partitions", "t0=1", "--member", "a", "--previous", "a=t0"], "not TOPIC-PARTITION"),
    ],
)
def test_consumers_bad_input_is_one_clear_line(argv: list[str], message: str) -> None:
    code, _, err = run_cli("consumers", "--strategy", "sticky", *argv)
    assert code == 1 and message in err and "Traceback" not in err


def test_partition_reads_keys_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("foobar\n21\n"))
    code, out, _ = run_cli("partition", "--partitions", "12", "-", "foobar")
    assert code == 0 and out.split() == ["6", "0", "6"]
