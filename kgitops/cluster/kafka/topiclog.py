"""kgitops' own compacted topics (the passwordVersion records, versions.py; the owner records,
owners.py), read with a group-less ``KafkaConsumer`` and written with
``KafkaProducer(acks="all")``: the clients ``tail`` and ``sample-keys`` read topics with,
opened as theirs are (``bootstrap.reader_client``: the admin client's servers, timeouts, TLS
and SASL, the same first-connection guard and error translation)::

    read    partition 0 assigned (no group, nothing committed), from its first offset, polled
            until the position reaches the end offset ListOffsets gave when reading began;
            one line when the position has not moved for requestTimeoutMs (a large topic
            takes as long as it takes); every record of the batches read counts, at or past
            that end too (Tansu reports the base offset of the last batch + 1 as its end).
            kafka-python follows a leader change, starts again at the log start after
            OFFSET_OUT_OF_RANGE (records deleted below it) and waits out a quota's throttle.
    write   every record to partition 0, acks=all, one request in flight at a time (the
            records land in the order given), in batches of at most ``MAX_BATCH_BYTES``,
            retried by the producer while the error is retriable, for requestTimeoutMs a
            batch's worth of records; the outcome of each record. Never idempotent: no
            InitProducerId, no right beyond Write on the topic (the apply preflight checks
            that one).

Neither client creates a topic (``allow_auto_create_topics`` off: a broker's
``auto.create.topics.enable`` would make one uncompacted); the callers create it with its
layout first.

A batch kafka-python cannot decode (compressed with a codec whose library is not installed
here, or records that do not decode) is skipped, never a failed read: the read returns it as
an ``Undecoded`` range and goes on after it. kafka-python names no batch boundary, and a
Fetch at any offset inside the batch returns the whole batch again, so the first offset past
it is found by seeking: ahead in doubling steps until a Fetch decodes, then halving back
(about 2 log2 N Fetches for a batch of N records). A batch that fails its CRC
(``CorruptRecordError``) ends the read in one line.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import kafka.errors as kerr

from kgitops.cluster.kafka.bootstrap import reader_client
from kgitops.cluster.kafka.errors import said
from kgitops.cluster.kafka.version_records import CODECS, Raw, Undecoded
from kgitops.errors import ClusterError, ClusterTimeout
from kgitops.model import ClusterSpec

#: The most one batch of records written holds: half the 1 MiB a Kafka broker accepts in one
#: batch by default (``message.max.bytes``, the topic's ``max.message.bytes``).
MAX_BATCH_BYTES = 512 * 1024
RECORD_OVERHEAD = 64  # a v2 record's varints, attributes and deltas, at most
#: A Fetch waits at most this long for data at the end of the log (Tansu answers nothing at
#: all to a fetch that may not wait).
FETCH_WAIT_MS = 100
POLL_MS = 200
FETCH_BYTES = 4 * 1024 * 1024  # a Fetch's most of the partition (~40,000 records)
POLL_RECORDS = 50_000  # a poll returns what the Fetches brought


def _decode_failure(exc: BaseException) -> bool:
    """An exception of kafka-python decoding a batch's records (not of the network, the
    broker or the client's state): a codec missing here, or bytes that do not decode. A batch
    that fails its CRC is no such failure: the read stops there (``CorruptRecordError``)."""
    if isinstance(exc, kerr.CorruptRecordError):
        raise ClusterError(
            f"Fetch: a record batch of the topic is corrupt ({said(str(exc))})"
        ) from None
    if isinstance(exc, kerr.UnsupportedCodecError):
        return True
    return not isinstance(exc, kerr.KafkaError | OSError)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, kerr.UnsupportedCodecError):
        missing = [package for _, installed, package in CODECS.values() if not installed()]
        install = f": pip install {' '.join(missing)}" if missing else ""
        return f"compressed with a codec not installed here ({said(str(exc))}){install}"
    return f"its records do not decode ({type(exc).__name__})"


class TopicLog:
    """Reads and writes kgitops' own topics of ``spec``'s cluster; each call opens its
    client, and closes it before it returns. Every request is counted (``port.count_sent``)
    as the admin client's are."""

    def __init__(
        self, spec: ClusterSpec, environ: Mapping[str, str] | None, *, timeout_ms: int
    ) -> None:
        self._spec = spec
        self._environ = environ
        self._timeout_ms = timeout_ms

    def read(self, topic: str, max_bytes: int) -> tuple[list[Raw], list[Undecoded]]:
        """Every record of partition 0 of ``topic`` as (offset, key, value), in log order, and
        the batches that cannot be decoded here. ClusterError when the partition holds more
        than ``max_bytes`` of keys and values, or its end is not reached within
        requestTimeoutMs."""
        from kafka import KafkaConsumer, TopicPartition

        with reader_client(
            KafkaConsumer,
            self._spec,
            self._environ,
            "Fetch",
            allow_auto_create_topics=False,
            fetch_max_wait_ms=FETCH_WAIT_MS,
            max_partition_fetch_bytes=FETCH_BYTES,
            max_poll_records=POLL_RECORDS,
        ) as (consumer, _):
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = int(consumer.end_offsets([tp], timeout_ms=self._timeout_ms)[tp])
            return _drain(consumer, tp, end, self._timeout_ms / 1000, max_bytes)

    def write(
        self, topic: str, records: Sequence[tuple[bytes, bytes | None]]
    ) -> list[ClusterError | None]:
        """Each record's outcome: None when written (acks=all), else its error."""
        from kafka import KafkaProducer

        if not records:
            return []
        size = sum(len(k) + len(v or b"") + RECORD_OVERHEAD for k, v in records)
        budget_ms = self._timeout_ms * math.ceil(size / MAX_BATCH_BYTES)  # each batch's own
        with reader_client(
            KafkaProducer,
            self._spec,
            self._environ,
            "Produce",
            closing={"timeout": 0},  # what was not acknowledged by now is reported as not written
            acks="all",
            enable_idempotence=False,
            max_in_flight_requests_per_connection=1,
            allow_auto_create_topics=False,
            batch_size=MAX_BATCH_BYTES,
            linger_ms=0,
            max_block_ms=self._timeout_ms,
            delivery_timeout_ms=budget_ms,
        ) as (producer, translated):
            deadline = time.monotonic() + budget_ms / 1000
            futures = [producer.send(topic, key=k, value=v, partition=0) for k, v in records]
            with contextlib.suppress(kerr.KafkaTimeoutError):  # each record says so below
                producer.flush(timeout=max(deadline - time.monotonic(), 0.001))
            out: list[ClusterError | None] = []
            for future in futures:
                try:
                    future.get(timeout=max(deadline - time.monotonic(), 0.001))
                except Exception as exc:
                    out.append(translated(exc))
                else:
                    out.append(None)
            return out


def _drain(
    consumer: Any, tp: Any, end: int, patience: float, max_bytes: int
) -> tuple[list[Raw], list[Undecoded]]:
    """The records of ``tp`` from the consumer's position until it reaches ``end``;
    ``ClusterTimeout`` when the position has not moved for ``patience`` seconds (a large
    topic takes as long as it takes, a stalled read does not)."""
    records: list[Raw] = []
    undecoded: list[Undecoded] = []
    total = 0
    deadline, at = time.monotonic() + patience, _position(consumer, tp, patience, end)
    while at < end:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise _stalled(tp.topic, at, end, patience)
        try:
            polled = consumer.poll(timeout_ms=min(POLL_MS, left_ms))
        except Exception as exc:
            if not _decode_failure(exc):
                raise
            after = _past(consumer, tp, at, end, patience)
            undecoded.append(Undecoded(at, after - 1, _reason(exc)))
            consumer.seek(tp, after)
            deadline, at = time.monotonic() + patience, after
            continue
        for r in polled.get(tp, ()):
            total += max(r.serialized_key_size, 0) + max(r.serialized_value_size, 0)
            if total > max_bytes:
                raise ClusterError(
                    f"{tp.topic} holds more than {max_bytes // 2**20} MiB; kgitops' records "
                    "take ~100 bytes each: is another program writing to it?"
                )
            key = None if r.key is None else bytes(r.key)
            value = None if r.value is None else bytes(r.value)
            records.append((int(r.offset), key, value))
        moved = _position(consumer, tp, patience, end)
        if moved != at:
            deadline, at = time.monotonic() + patience, moved
    return records, undecoded


def _position(consumer: Any, tp: Any, patience: float, end: int | None) -> int:
    """The consumer's position, waiting at most ``patience`` for it (kafka-python asks
    ListOffsets when it has none: at the start, after OFFSET_OUT_OF_RANGE)."""
    at = consumer.position(tp, timeout_ms=max(int(patience * 1000), 1))
    if at is None:
        raise _stalled(tp.topic, 0, end, patience)
    return int(at)


def _past(consumer: Any, tp: Any, first: int, end: int, patience: float) -> int:
    """The first offset after the batch at ``first`` that does not decode (``end`` when
    none before it decodes): doubling steps ahead, then halving back (module doc)."""
    bad, step = first, 1
    while True:
        probe = first + step
        if probe >= end:
            good = end
            break
        if not _decodes(consumer, tp, probe, patience):
            bad, step = probe, step * 2
            continue
        good = probe
        break
    while good - bad > 1:
        middle = (bad + good) // 2
        if _decodes(consumer, tp, middle, patience):
            good = middle
        else:
            bad = middle
    return good


def _decodes(consumer: Any, tp: Any, offset: int, patience: float) -> bool:
    """Whether a Fetch from ``offset`` (< the end offset) gives records kafka-python decodes
    (an answer within ``patience`` seconds)."""
    consumer.seek(tp, offset)
    deadline = time.monotonic() + patience
    while True:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise _stalled(tp.topic, offset, None, patience)
        try:
            polled = consumer.poll(timeout_ms=min(POLL_MS, left_ms), max_records=1)
        except Exception as exc:
            if not _decode_failure(exc):
                raise
            return False
        if polled.get(tp) or _position(consumer, tp, patience, None) > offset:
            return True


def _stalled(topic: str, offset: int, end: int | None, patience: float) -> ClusterTimeout:
    upto = "" if end is None else f" of {end}"
    return ClusterTimeout(
        f"Fetch: reading topic {topic} stopped at offset {offset}{upto}: nothing more came "
        f"within requestTimeoutMs ({patience * 1000:.0f} ms): the cluster may be overloaded, or "
        "the principal kgitops logs in as over its fetch or request quota (kind: Quota); run "
        "again later or raise requestTimeoutMs"
    )
