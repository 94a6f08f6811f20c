"""How kgitops reads its own topics (kgitops/cluster/kafka/topiclog.py) from what
kafka-python's ``KafkaConsumer`` gives, without a broker: a consumer over a scripted partition
(whole batches a poll, a batch that does not decode raising at every fetch that lands in it,
as kafka-python does). The same reads on Apache Kafka:
tests/access/test_password_versions_real.py."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace as NS
from typing import Any

import kafka.errors as kerr
import pytest
from kafka import TopicPartition

from kgitops.cluster.kafka import topiclog
from kgitops.cluster.kafka.version_records import Undecoded
from kgitops.errors import ClusterError, ClusterTimeout

TP = TopicPartition("_kgitops-password-versions", 0)

Batch = tuple[int, int, "BaseException | list[int]"]  # first offset, last offset, records


class Consumer:
    """A partition of ``batches``: a poll returns the records of the batch holding the
    position from it on (up to ``max_records``) and moves the position past them (past the
    batch when it returned all of it); a batch that is an exception raises it instead."""

    def __init__(self, batches: list[Batch], value: bytes = b"v") -> None:
        self.batches = batches
        self.value = value
        self.at = 0
        self.polls = 0

    def position(self, tp: Any, timeout_ms: int | None = None) -> int:
        return self.at

    def seek(self, tp: Any, offset: int) -> None:
        self.at = offset

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict[Any, list[Any]]:
        self.polls += 1
        for _first, last, content in self.batches:
            if last < self.at:
                continue
            if isinstance(content, BaseException):
                raise content
            offsets = [o for o in content if o >= self.at][:max_records]
            whole = max_records is None or len(offsets) == len([o for o in content if o >= self.at])
            self.at = last + 1 if whole else offsets[-1] + 1
            return {TP: [_record(o, self.value) for o in offsets]}
        return {}


def _record(offset: int, value: bytes) -> Any:
    return NS(
        offset=offset,
        key=b"k%d" % offset,
        value=value,
        serialized_key_size=len(b"k%d" % offset),
        serialized_value_size=len(value),
    )


def _drain(consumer: Consumer, end: int, max_bytes: int = 1 << 20) -> Any:
    return topiclog._drain(consumer, TP, end, 5.0, max_bytes)


def test_every_record_of_the_batches_read_counts_at_or_past_the_end_offset_too() -> None:
    """Tansu's end offset is the last batch's base offset + 1: the rest of that batch is
    read, never dropped."""
    consumer = Consumer([(0, 4, [0, 1, 2, 3, 4]), (5, 9, [5, 7, 9])])
    records, undecoded = _drain(consumer, end=6)
    assert [o for o, _, _ in records] == [0, 1, 2, 3, 4, 5, 7, 9]
    assert undecoded == [] and consumer.polls == 2


@pytest.mark.parametrize("size", [1, 2, 3, 1000, 40_000])
def test_a_batch_whose_codec_is_missing_is_skipped_exactly_and_the_read_goes_on(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(topiclog.CODECS, 3, ("lz4", lambda: False, "lz4"))
    missing = kerr.UnsupportedCodecError("Libraries for lz4 compression codec not found")
    first, last = 3, 3 + size - 1
    consumer = Consumer(
        [(0, 2, [0, 1, 2]), (first, last, missing), (last + 1, last + 2, [last + 1, last + 2])]
    )
    records, undecoded = _drain(consumer, end=last + 3)
    assert [o for o, _, _ in records] == [0, 1, 2, last + 1, last + 2]
    [u] = undecoded
    assert (u.first, u.last) == (first, last)
    assert u.reason.startswith('compressed with a codec not installed here ("UnsupportedCodecError')
    assert "Libraries for lz4 compression codec not found" in u.reason
    assert "pip install" in u.reason and "lz4" in u.reason.split("pip install")[1]
    assert consumer.polls <= 2 * math.ceil(math.log2(size + 1)) + 4  # seeks, not a scan


def test_a_batch_that_does_not_decode_up_to_the_end_is_one_range_to_the_end() -> None:
    broken = ValueError("bad varint")  # a record that does not decode (no KafkaError)
    consumer = Consumer([(0, 0, [0]), (1, 30, broken)])
    records, undecoded = _drain(consumer, end=31)
    assert [o for o, _, _ in records] == [0]
    assert undecoded == [Undecoded(1, 30, "its records do not decode (ValueError)")]


def test_two_undecodable_batches_side_by_side_lose_no_record_after_them() -> None:
    broken = ValueError("bad")
    consumer = Consumer([(0, 9, broken), (10, 12, broken), (13, 14, [13, 14])])
    records, undecoded = _drain(consumer, end=15)
    assert [o for o, _, _ in records] == [13, 14]
    assert [(u.first, u.last) for u in undecoded] in ([(0, 12)], [(0, 9), (10, 12)])


def test_a_corrupt_batch_stops_the_read_in_one_line() -> None:
    crc = kerr.CorruptRecordError("Record batch for partition p-0 at offset 2 failed crc check")
    consumer = Consumer([(0, 1, [0, 1]), (2, 5, crc), (6, 6, [6])])
    with pytest.raises(ClusterError) as info:
        _drain(consumer, end=7)
    message = str(info.value)
    assert message.startswith("Fetch: a record batch of the topic is corrupt (")
    assert "offset 2 failed crc check" in message and "\n" not in message


def test_any_other_library_error_is_left_to_the_client_wrapper_to_translate() -> None:
    refused = kerr.TopicAuthorizationFailedError({TP.topic})
    with pytest.raises(kerr.TopicAuthorizationFailedError):
        _drain(Consumer([(0, 3, refused)]), end=4)


def test_a_topic_larger_than_the_cap_is_refused() -> None:
    consumer = Consumer([(i, i, [i]) for i in range(10)], value=b"x" * 100)
    with pytest.raises(ClusterError, match="holds more than 0 MiB"):
        _drain(consumer, end=10, max_bytes=500)
    assert consumer.at < 10  # it stopped reading


def test_a_read_that_stops_moving_fails_after_its_patience_in_one_line() -> None:
    stuck = Consumer([(0, 1, [0, 1])])  # the end offset says 5: nothing more ever comes
    started = time.monotonic()
    with pytest.raises(ClusterTimeout) as info:
        topiclog._drain(stuck, TP, 5, 0.3, 1 << 20)
    assert time.monotonic() - started < 2
    message = str(info.value)
    assert message.startswith(
        f"Fetch: reading topic {TP.topic} stopped at offset 2 of 5: nothing more came within "
        "requestTimeoutMs (300 ms)"
    )
    assert "quota" in message and "\n" not in message


class Slow(Consumer):
    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict[Any, list[Any]]:
        time.sleep(0.1)
        return super().poll(timeout_ms, max_records)


def test_a_read_that_keeps_moving_may_take_longer_than_its_patience() -> None:
    """requestTimeoutMs bounds a stall, not the whole read: a topic of many credentials
    takes as long as reading it takes."""
    slow = Slow([(i, i, [i]) for i in range(10)])
    started = time.monotonic()
    records, _ = topiclog._drain(slow, TP, 10, 0.3, 1 << 20)
    assert len(records) == 10 and time.monotonic() - started >= 0.9
