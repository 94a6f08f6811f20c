"""A bounded sample of a live topic's keys and sizes (``kgitops sample-keys``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kgitops.cluster.kafka.bootstrap import topic_consumer
from kgitops.model import ClusterSpec

# ------------------------------------------------------------ key sampling (analyze keys)


@contextlib.contextmanager
def _topic_reader(
    spec: ClusterSpec, topic: str, call: str, environ: Mapping[str, str] | None
) -> Iterator[tuple[Any, list[Any]]]:
    """A group-less ``KafkaConsumer`` and the topic's partitions, sorted; a topic that does
    not exist, and any library error in the block, is one ``ClusterError`` naming ``call``."""
    from kafka import TopicPartition

    absent = f"{call}: topic {topic!r} does not exist on the cluster"
    with topic_consumer(spec, topic, call, environ, absent=absent) as (consumer, ids):
        yield consumer, [TopicPartition(topic, p) for p in sorted(ids)]


def sample_keys(
    spec: ClusterSpec,
    topic: str,
    max_messages: int,
    *,
    timeout: float = 60.0,
    idle: float = 2.0,
    environ: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[bytes | None, int]]:
    """A bounded sample of a live topic's recent traffic for ``kgitops sample-keys``: up to
    ``max_messages`` records as ``(key bytes or None, serialized key + value size)``.

    No consumer group is joined and nothing is committed. When the topic holds more than
    ``max_messages`` records, each partition contributes its share of the most recent ones
    in proportion to its own record count, so the partitions' relative load survives the
    sampling; otherwise everything is read. Reading stops at ``max_messages``, after
    ``idle`` seconds without a record (the end of the log), or after ``timeout`` seconds.
    ``progress(read, expected)`` hears the count after every fetched batch (``expected``:
    what the topic holds, at most ``max_messages``).
    """
    import math

    out: list[tuple[bytes | None, int]] = []
    with _topic_reader(spec, topic, "Fetch", environ) as (consumer, tps):
        consumer.assign(tps)
        begin = consumer.beginning_offsets(tps)
        end = consumer.end_offsets(tps)
        available = {tp: max(0, end[tp] - begin[tp]) for tp in tps}
        total = sum(available.values())
        quota: dict[Any, float] = {tp: math.inf for tp in tps}
        if total > max_messages:
            for tp in tps:
                quota[tp] = math.ceil(max_messages * available[tp] / total)
                consumer.seek(tp, max(begin[tp], end[tp] - int(quota[tp])))
        else:
            consumer.seek_to_beginning(*tps)
        taken = dict.fromkeys(tps, 0)
        deadline = time.monotonic() + timeout
        last_record = time.monotonic()
        while len(out) < max_messages and time.monotonic() < deadline:
            batch = consumer.poll(timeout_ms=200, max_records=min(10_000, max_messages))
            if not batch:
                if time.monotonic() - last_record > idle:
                    break
                continue
            last_record = time.monotonic()
            for tp, records in batch.items():
                for r in records:
                    if taken[tp] >= quota[tp] or len(out) >= max_messages:
                        break
                    taken[tp] += 1
                    size = max(r.serialized_key_size, 0) + max(r.serialized_value_size, 0)
                    out.append((r.key, size))
                if taken[tp] >= quota[tp]:
                    consumer.pause(tp)
            if progress is not None:
                progress(len(out), min(total, max_messages))
            if all(taken[tp] >= quota[tp] for tp in tps):
                break
    return out


def offset_ranges(
    spec: ClusterSpec,
    topic: str,
    *,
    last: int | None = None,
    since_ms: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[int, tuple[int, int]]:
    """``{partition: (start, end)}`` of ``topic`` for a bounded read (``analyze keys
    --topic``): ``end`` is each partition's end offset now, ``start`` its first offset, or
    the first at or after ``since_ms`` (milliseconds since the epoch; the end when no record
    is that recent), then at most ``last`` records before the end. Pinning the end makes
    the read a fixed set of records, whatever is produced meanwhile."""
    with _topic_reader(spec, topic, "ListOffsets", environ) as (consumer, tps):
        begin = consumer.beginning_offsets(tps)
        end = consumer.end_offsets(tps)
        start = dict(begin)
        if since_ms is not None:
            found = consumer.offsets_for_times(dict.fromkeys(tps, since_ms))
            for tp in tps:
                hit = found.get(tp)
                start[tp] = end[tp] if hit is None else max(begin[tp], hit.offset)
        if last is not None:
            start = {tp: max(start[tp], end[tp] - last) for tp in tps}
        return {tp.partition: (start[tp], max(start[tp], end[tp])) for tp in tps}
