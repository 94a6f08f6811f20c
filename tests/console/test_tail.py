"""`kgitops tail`: messages printed safely, on the local broker with a real kafka-python
producer; it never joins a consumer group (docs/console.md)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.console.messages import message_lines, shown
from kgitops.model import Broker
from kgitops.records import Message
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder, run_cli

VALIDATOR = Draft202012Validator(schema("tail.json"))

VALUES: list[bytes | None] = [
    b"hello",
    "evil\x1b[2J\nFAKE ROW\u202e".encode(),
    b"\xff\x00\x01binary",
    None,  # a tombstone
    b"x" * 500,
]


@pytest.fixture
def topic(local_broker: str, topic_prefix: str, tmp_path: Path) -> tuple[Path, str]:
    """A folder for the local broker, and a topic of 2 partitions: partition 0 holds VALUES
    (keys k0..k4, one record per produce request, so the broker's end offsets are exact),
    partition 1 one message with a binary key and a header."""
    import kafka

    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewTopic
    from kgitops.model import ClusterSpec

    name = f"{topic_prefix}tail"
    admin = KafkaAdmin(ClusterSpec(name="l", directory=".", bootstrap_servers=(local_broker,)))
    try:
        b = admin.describe([]).broker_ids[0]
        (error,) = admin.create_topics([NewTopic(name, {0: (b,), 1: (b,)})]).values()
        assert error is None, error
    finally:
        admin.close()
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=0)
    for i, v in enumerate(VALUES):
        producer.send(name, key=f"k{i}".encode(), value=v, partition=0).get(timeout=10)
    producer.send(
        name, key=b"\x00\xfe", value=b"one", partition=1, headers=[("trace", b"\x01")]
    ).get(timeout=10)
    producer.close()
    cluster_folder(tmp_path, "local", bootstrap=local_broker)
    return tmp_path, name


def tail(*argv: str) -> tuple[int, str, str]:
    return run_cli("tail", *argv)


def _bytes(encoded: dict[str, str] | None) -> bytes | None:
    if encoded is None:
        return None
    if "text" in encoded:
        return encoded["text"].encode()
    return base64.b64decode(encoded["base64"])


def test_json_lines_give_back_every_message_exactly(topic: tuple[Path, str]) -> None:
    folder, name = topic
    code, out, err = tail(str(folder), name, "--from", "earliest", "--format", "json")
    assert code == 0, err
    rows: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines()]
    for row in rows:
        VALIDATOR.validate(row)
    by_partition = sorted(rows, key=lambda r: (r["partition"], r["offset"]))
    assert [(r["partition"], r["offset"]) for r in by_partition] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 0),
    ]
    assert [_bytes(r["value"]) for r in by_partition[:5]] == VALUES
    assert [_bytes(r["key"]) for r in by_partition] == [
        b"k0",
        b"k1",
        b"k2",
        b"k3",
        b"k4",
        b"\x00\xfe",
    ]
    assert by_partition[5]["headers"] == [{"key": "trace", "value": {"text": "\x01"}}]
    assert by_partition[0]["size"] == len(b"k0hello")
    assert by_partition[3]["size"] == len(b"k3")  # a null value has no bytes
    assert all(r["timestampType"] == "CreateTime" and r["timestamp"] for r in rows)
    assert all(line.isascii() for line in out.splitlines())


def test_text_escapes_cuts_and_shows_binary_as_hex(topic: tuple[Path, str]) -> None:
    folder, name = topic
    code, out, err = tail(
        str(folder), name, "--partition", "0", "--from", "earliest", "--width", "40"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["PARTITION", "OFFSET", "TIMESTAMP", "SIZE", "KEY", "VALUE"]
    assert len(lines) == 6
    assert lines[1].endswith('"k0"  "hello"')
    assert '"evil\\x1b[2J\\nFAKE ROW\\u202e"' in lines[2]
    assert lines[3].endswith("0xff000162696e617279")
    assert lines[4].endswith('"k3"  null')
    assert lines[5].endswith('"' + "x" * 35 + '"...')
    assert "\x1b" not in out and "\u202e" not in out


def test_latest_is_the_last_n_and_an_offset_starts_there(topic: tuple[Path, str]) -> None:
    folder, name = topic
    code, out, _ = tail(str(folder), name, "--partition", "0", "--max", "2", "--format", "json")
    assert [json.loads(x)["offset"] for x in out.splitlines()] == [3, 4]
    code, out, _ = tail(str(folder), name, "--partition", "0", "--from", "3", "--format", "json")
    assert code == 0
    assert [json.loads(x)["offset"] for x in out.splitlines()] == [3, 4]
    code, out, _ = tail(str(folder), name, "--partition", "0", "--from", "5", "--format", "json")
    assert (code, out) == (0, "")  # the end offset: nothing yet


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--partition", "0", "--from", "99"],
            "error: offset 99 is out of range for {t}-0 (log start 0, end 5)",
        ),
        (["--partition", "7"], "error: topic '{t}' has no partition 7 (it has 2: 0-1)"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(
    topic: tuple[Path, str], argv: list[str], message: str
) -> None:
    folder, name = topic
    code, out, err = tail(str(folder), name, *argv)
    assert (code, out) == (1, "")
    assert err == message.format(t=name) + "\n"


def test_an_unknown_topic_is_one_line(local_broker: str, tmp_path: Path, topic_prefix: str) -> None:
    cluster_folder(tmp_path, "local", bootstrap=local_broker)
    code, out, err = tail(str(tmp_path), f"{topic_prefix}absent")
    assert (code, out) == (1, "")
    assert err == f"error: topic '{topic_prefix}absent' does not exist on the cluster\n"


def test_tail_joins_no_consumer_group_and_commits_nothing(
    topic: tuple[Path, str], count_requests: Counter[str]
) -> None:
    folder, name = topic
    count_requests.clear()
    code, _, err = tail(str(folder), name, "--from", "earliest")
    assert code == 0, err
    assert count_requests["Fetch"] >= 1
    group_apis = {
        "FindCoordinator",
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "OffsetCommit",
        "OffsetFetch",
        "LeaveGroup",
    }
    assert group_apis & set(count_requests) == set()


def test_a_simulated_cluster_has_no_messages(tmp_path: Path) -> None:
    cluster_folder(tmp_path, "sim", brokers=[Broker(0)], state_file="s.json")
    code, out, err = tail(str(tmp_path), "t")
    assert (code, out) == (1, "")
    assert "is simulated: it holds no messages to tail" in err


def test_shown_cuts_on_the_escaped_text_and_marks_the_cut() -> None:
    assert shown(b"\n" * 10, 10) == '"\\n\\n"...'
    assert shown(b"\xff" * 10, 8) == "0xfff..."
    assert shown(None, 1) == "null"
    m = Message("t", 0, 1, None, "none", None, b"v", size=1)
    assert message_lines([m], 20)[1].split() == ["0", "1", "-", "1", "null", '"v"']


def test_a_huge_value_is_one_short_cell_in_text() -> None:
    assert shown(b"\n" * 10_000_000, 12) == '"\\n\\n\\n"...'
    assert shown(b"\xff" * 10_000_000, 12) == "0xfffffff..."
    assert shown(b"a" * 10, 12) == '"aaaaaaaaaa"'  # fits: not cut
    assert shown(b"a" * 11, 12) == '"aaaaaaa"...'


def test_followed_rows_print_the_header_once_and_widen_for_a_wider_cell() -> None:
    from kgitops.console.messages import FollowedRows

    rows = FollowedRows(40)
    assert rows.lines([]) == []  # nothing read yet: not even the header
    first = rows.lines([Message("t", 0, 7, None, "none", None, b"v", size=1)])
    assert first == [
        "PARTITION  OFFSET  TIMESTAMP  SIZE  KEY   VALUE",
        '        0       7  -             1  null  "v"',
    ]
    (later,) = rows.lines([Message("t", 12, 123456789, None, "none", b"k", b"\x1b", size=2)])
    assert later == '       12  123456789  -             2  "k"   "\\x1b"'
    assert rows.lines([]) == []


class _NotUtf8(str):
    """A header key a producer writes as bytes that are not UTF-8 (on the wire it is a
    STRING; Java clients replace the bad bytes, kafka-python refuses the record)."""

    def encode(self, *args: object, **kwargs: object) -> bytes:
        return b"\xff\xfe"


def test_a_record_kafka_python_cannot_decode_is_one_line_naming_where_to_skip(
    local_broker: str, tmp_path: Path, topic_prefix: str
) -> None:
    import kafka

    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewTopic
    from kgitops.model import ClusterSpec

    name = f"{topic_prefix}undecodable"
    admin = KafkaAdmin(ClusterSpec(name="l", directory=".", bootstrap_servers=(local_broker,)))
    try:
        b = admin.describe([]).broker_ids[0]
        (error,) = admin.create_topics([NewTopic(name, {0: (b,)})]).values()
        assert error is None, error
    finally:
        admin.close()
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=0)
    producer.send(name, b"ok0", partition=0).get(timeout=10)
    producer.send(name, b"bad", partition=0, headers=[(_NotUtf8("k"), b"v")]).get(timeout=10)
    producer.send(name, b"ok2", partition=0).get(timeout=10)
    producer.close()
    cluster_folder(tmp_path, "local", bootstrap=local_broker)
    argv = [str(tmp_path), name, "--from", "earliest", "--format", "json"]
    for follow in ([], ["--follow"]):
        code, out, err = tail(*argv, *follow)
        assert code == 1
        assert err.startswith(f"error: topic '{name}': kafka-python cannot decode a record (")
        assert err.endswith(
            "reading stopped before it (partition 0 at offset 1): read past it with "
            "--partition P --from OFFSET+1\n"
        )
        assert len(err.splitlines()) == 1 and "\\xff" in err
        # --follow prints what it read before the record; the bounded read prints nothing
        assert [json.loads(x)["offset"] for x in out.splitlines()] == ([0] if follow else [])
    code, out, err = tail(str(tmp_path), name, "--partition", "0", "--from", "2")
    assert code == 0, err
    assert out.splitlines()[1].endswith('"ok2"')
