"""Read messages of a topic (``kgitops tail``) without joining a consumer group: the consumer
is assigned partitions (no group id, no JoinGroup, no FindCoordinator, nothing committed), as
``sample.py`` reads keys.

``read_messages`` reads what is there now and stops; ``follow_messages`` goes on reading new
messages until the caller stops it (``tail --follow``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

from kafka.errors import UnknownTopicIdError, UnknownTopicOrPartitionError

from kgitops.cluster.kafka.bootstrap import topic_consumer
from kgitops.errors import ClusterError, ClusterRequestError, KgitopsError
from kgitops.model import ClusterSpec
from kgitops.records import Message, TailRequest
from kgitops.safetext import safe_text

_TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}

#: ``tail --follow``: after this many seconds without a message (or a quarter of
#: requestTimeoutMs, if less), one ListOffsets asks the partitions' leaders whether they still
#: answer (kafka-python retries a dead connection forever and silently; this turns a dead
#: cluster into one line and exit 1). Before it, the consumer's metadata is asked whether the
#: topic still exists: Kafka answers a deleted topic's ListOffsets with
#: UNKNOWN_TOPIC_OR_PARTITION, which kafka-python retries until ``requestTimeoutMs`` and then
#: reports as a cluster too slow to answer.
IDLE_CHECK_SECONDS = 5.0


def _silence_bounds(spec: ClusterSpec) -> tuple[float, float, float]:
    """(seconds of quiet before a check, the longest poll, the check's own timeout), all
    fitting in requestTimeoutMs together: a cluster that stops answering is reported at most
    requestTimeoutMs after it last answered. The default 30,000 ms gives (5.0, 0.5, 24.5);
    3,000 ms gives (0.75, 0.5, 1.75)."""
    limit = max(int(spec.request_timeout_ms), 1000) / 1000  # as settings.client_config
    quiet = min(IDLE_CHECK_SECONDS, limit / 4)
    poll = min(0.5, quiet)
    return quiet, poll, max(limit - quiet - poll, 0.25)


def _order(m: Message) -> tuple[int, int, int]:
    return (m.timestamp_ms or 0, m.partition, m.offset)


@contextlib.contextmanager
def _assigned(
    spec: ClusterSpec, request: TailRequest, environ: Mapping[str, str] | None
) -> Iterator[tuple[Any, list[Any], dict[Any, int]]]:
    """A consumer assigned the requested partitions, each at its first offset (with
    ``latest``, ``count`` messages before its end), with the partitions and their end
    offsets when reading began. Any library error, in the block too, becomes one
    ``ClusterError`` line."""
    from kafka import TopicPartition
    from kafka.errors import CorruptRecordError

    topic, partitions, start = request.topic, request.partitions, request.start
    absent = f"topic '{safe_text(topic)}' does not exist on the cluster"
    with topic_consumer(spec, topic, "Fetch", environ, absent=absent) as (consumer, ids):
        chosen = sorted(ids) if partitions is None else list(partitions)
        missing = [p for p in chosen if p not in ids]
        if missing:
            raise KgitopsError(
                f"topic '{safe_text(topic)}' has no partition {missing[0]} "
                f"(it has {len(ids)}: 0-{max(ids)})"
            )
        tps = [TopicPartition(topic, p) for p in chosen]
        try:
            consumer.assign(tps)
            begin = consumer.beginning_offsets(tps)
            end = consumer.end_offsets(tps)
            for tp in tps:
                if start == "earliest":
                    first = begin[tp]
                elif start == "latest":
                    first = max(begin[tp], end[tp] - request.count)
                else:
                    assert isinstance(start, int)
                    if not begin[tp] <= start <= end[tp]:
                        raise KgitopsError(
                            f"offset {start} is out of range for {safe_text(topic)}-{tp.partition} "
                            f"(log start {begin[tp]}, end {end[tp]})"
                        )
                    first = start
                consumer.seek(tp, first)
            yield consumer, tps, end
        except CorruptRecordError as exc:
            if not tps:
                raise
            raise _undecodable(topic, consumer, tps, exc) from None


def _undecodable(topic: str, consumer: Any, tps: Sequence[Any], exc: Exception) -> ClusterError:
    """A record kafka-python cannot decode (a CRC that fails, a header key that is not UTF-8,
    which Java clients would replace): reading stops before it, at the positions named, so
    ``--partition P --from OFFSET`` past it reads on."""
    at = []
    for tp in tps[:6]:
        with contextlib.suppress(Exception):
            at.append(f"{tp.partition} at offset {consumer.position(tp)}")
    more = f" and {len(tps) - 6} more" if len(tps) > 6 else ""
    return ClusterError(
        f"topic '{safe_text(topic)}': kafka-python cannot decode a record "
        f"({safe_text(str(exc), 200)}); reading stopped before it (partition "
        f"{', '.join(at)}{more}): read past it with --partition P --from OFFSET+1"
    )


def read_messages(
    spec: ClusterSpec, request: TailRequest, *, environ: Mapping[str, str] | None = None
) -> list[Message]:
    """Up to ``request.count`` records of the requested partitions, by (timestamp,
    partition, offset).

    ``start``: ``"earliest"`` the first messages of each partition; ``"latest"`` the last
    ones (as ``tail -n``: each partition's last ``count``, then the latest overall); an
    offset: from that offset in each partition chosen. Reading stops at the end offsets the
    partitions had when it began (what is there now, never waiting for more), at ``count``
    (earliest, offset), or after ``timeout`` seconds (None: 30).

    ``KgitopsError`` for a topic or partition the cluster lacks and an offset outside a
    partition's log (naming its start and end)."""
    max_messages = request.count
    timeout = 30.0 if request.timeout is None else request.timeout
    out: list[Message] = []
    with _assigned(spec, request, environ) as (c, tps, end):
        todo = {tp for tp in tps if c.position(tp) < end[tp]}
        for tp in set(tps) - todo:
            c.pause(tp)
        deadline = time.monotonic() + timeout
        taken = dict.fromkeys(tps, 0)
        while todo and time.monotonic() < deadline:
            batch = c.poll(timeout_ms=200, max_records=1000)
            for tp, records in batch.items():
                for r in records:
                    if r.offset >= end[tp] or taken[tp] >= max_messages:
                        break
                    taken[tp] += 1
                    out.append(_message(r))
                if taken[tp] >= max_messages or c.position(tp) >= end[tp]:
                    todo.discard(tp)
                    c.pause(tp)
    out.sort(key=_order)
    return out[-max_messages:] if request.start == "latest" else out[:max_messages]


def follow_messages(
    spec: ClusterSpec, request: TailRequest, *, environ: Mapping[str, str] | None = None
) -> Generator[list[Message], None, None]:
    """``tail --follow``: batches of messages as they are read, until the caller stops
    iterating (a signal), ``timeout`` seconds pass (None: never), or the cluster stops
    answering (``ClusterError``). A poll that read nothing yields an empty batch (at most
    every half second).

    ``start``: ``"latest"`` first yields the last ``count`` messages by timestamp (as
    ``read_messages`` picks them), then every message written after them; ``"earliest"`` or
    an offset: every message from there on. After the backlog, each batch is in the order it
    was read (each partition's messages by offset).

    No message is missed or repeated: the position of each partition only moves past what
    was yielded. A record read while the backlog was gathered at or past a partition's end
    offset (the end a broker reported when reading began: Tansu reports the base offset of
    the last record batch + 1, short of its other records) is kept and yielded right after
    the backlog, never dropped. Memory is bounded: the backlog holds at most ``count``
    messages per partition plus one fetch, and each later batch at most 500 messages."""
    topic, timeout = request.topic, request.timeout
    with _assigned(spec, request, environ) as (c, tps, end):
        deadline = None if timeout is None else time.monotonic() + timeout  # once connected
        if request.start == "latest":
            head: list[Message] = []
            later: list[Message] = []
            todo = {tp for tp in tps if c.position(tp) < end[tp]}
            for tp in set(tps) - todo:
                c.pause(tp)
            quiet_since = time.monotonic()
            while todo and (deadline is None or time.monotonic() < deadline):
                polled = _poll(c, topic, timeout_ms=200, max_records=1000)
                for tp, records in polled.items():
                    for r in records:
                        (head if r.offset < end[tp] else later).append(_message(r))
                    if c.position(tp) >= end[tp]:
                        todo.discard(tp)
                        c.pause(tp)  # a paused partition's fetched records wait, unread
                if polled:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= IDLE_CHECK_SECONDS:
                    break  # nothing more to read below the end offsets (transaction markers)
            c.resume(*tps)
            head.sort(key=_order)
            yield head[-request.count :] + later
        quiet, slice_s, check_s = _silence_bounds(spec)
        idle_since = time.monotonic()
        missing = 0
        while deadline is None or time.monotonic() < deadline:
            left = slice_s * 1000 if deadline is None else (deadline - time.monotonic()) * 1000
            polled = _poll(
                c, topic, timeout_ms=max(0, min(int(slice_s * 1000), int(left))), max_records=500
            )
            batch = [_message(r) for records in polled.values() for r in records]
            now = time.monotonic()
            if batch:
                idle_since = now
                missing = 0
            elif now - idle_since >= quiet:
                missing = 0 if _listed(c, topic) else missing + 1
                if missing >= 2:  # twice, a check apart: not one broker's lagging cache
                    raise _deleted(topic)
                if not missing:
                    # the leaders answer, or this raises (one line, exit 1) within the rest of
                    # requestTimeoutMs since the cluster last answered
                    try:
                        c.end_offsets(tps, timeout_ms=int(check_s * 1000))
                    except _UNKNOWN_TOPIC:
                        # Kafka answers a deleted topic's ListOffsets so; the consumer's
                        # metadata cache may still list it: ask the cluster
                        _end_if_gone(c, topic)
                idle_since = time.monotonic()
            yield batch  # empty too: the caller can look at its output while all is quiet


#: What kafka-python raises when a request met a topic the broker does not know: a Fetch's
#: UNKNOWN_TOPIC_OR_PARTITION (or UNKNOWN_TOPIC_ID) raises nothing itself, it refreshes the
#: consumer's metadata for the topic, and a Metadata answer naming that one topic unknown
#: fails the refresh with ``UnknownTopicOrPartitionError``, raised to whatever call waits on
#: it (``poll``, ``partitions_for_topic``, ``topics``, ``end_offsets``). Whether the topic is
#: gone is then asked of the whole cluster (``_gone``).
_UNKNOWN_TOPIC = (UnknownTopicOrPartitionError, UnknownTopicIdError)


def _poll(consumer: Any, topic: str, **kw: Any) -> dict[Any, list[Any]]:
    """``consumer.poll(**kw)``; a topic a broker did not know that the cluster no longer
    lists is ``_deleted``, else nothing was read (a broker's lagging metadata: the next poll
    asks again)."""
    try:
        return dict(consumer.poll(**kw))
    except _UNKNOWN_TOPIC:
        _end_if_gone(consumer, topic)
        return {}


def _listed(consumer: Any, topic: str) -> bool:
    """Whether the consumer's metadata lists ``topic`` (its cache; kafka-python asks the
    cluster when the cache lacks it). A refresh that ended in UNKNOWN_TOPIC_OR_PARTITION is
    confirmed with a fresh Metadata of every topic: gone, it is ``_deleted``; still listed
    (a broker's lagging metadata, a leader moving), it counts as listed and the leaders are
    asked next."""
    try:
        return bool(consumer.partitions_for_topic(topic))
    except _UNKNOWN_TOPIC:
        _end_if_gone(consumer, topic)
        return True


def _end_if_gone(consumer: Any, topic: str) -> None:
    """``_deleted`` when the cluster no longer lists ``topic`` (after a request met it
    unknown); otherwise nothing: a broker's lagging metadata."""
    if _gone(consumer, topic):
        raise _deleted(topic) from None


def _gone(consumer: Any, topic: str) -> bool:
    """Whether the cluster no longer lists ``topic`` (a fresh Metadata request of every
    topic, not the consumer's cache). ``consumer.topics()`` first waits for a refresh of the
    topic already under way, and raises that refresh's UNKNOWN_TOPIC_OR_PARTITION: it is then
    asked again (its own request, of every topic, follows), at most three times."""
    for _ in range(3):
        try:
            return topic not in consumer.topics()
        except _UNKNOWN_TOPIC:
            continue  # the topic's own refresh failed: the listing of every topic follows
        except Exception:  # the cluster did not answer: the caller's checks decide
            return False
    return False


def _deleted(topic: str) -> ClusterRequestError:
    return ClusterRequestError(
        f"topic '{safe_text(topic)}' no longer exists on the cluster (deleted while tail "
        "followed it)",
        code="UNKNOWN_TOPIC_OR_PARTITION",
    )


def _message(r: Any) -> Message:
    headers = tuple((str(k), None if v is None else bytes(v)) for k, v in (r.headers or ()))
    ts = r.timestamp if r.timestamp is not None and r.timestamp >= 0 else None
    return Message(
        topic=r.topic,
        partition=r.partition,
        offset=r.offset,
        timestamp_ms=ts,
        timestamp_type=_TIMESTAMP_TYPES.get(r.timestamp_type, "none") if ts else "none",
        key=None if r.key is None else bytes(r.key),
        value=None if r.value is None else bytes(r.value),
        headers=headers,
        size=max(r.serialized_key_size, 0) + max(r.serialized_value_size, 0),
    )
