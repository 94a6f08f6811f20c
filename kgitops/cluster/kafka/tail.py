"""Read a few messages of a topic (``kgitops tail``) without joining a consumer group: the
consumer is assigned partitions (no group id, no JoinGroup, no FindCoordinator, nothing
committed), as ``sample.py`` reads keys."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from kgitops.cluster.kafka.bootstrap import open_client
from kgitops.cluster.kafka.errors import translate
from kgitops.cluster.kafka.settings import client_config, secret_values, tls_advice
from kgitops.errors import ClusterError, ClusterRequestError, KgitopsError
from kgitops.model import ClusterSpec
from kgitops.plan.messages import Message
from kgitops.plan.views import safe_text

_TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def read_messages(
    spec: ClusterSpec,
    topic: str,
    *,
    partitions: Sequence[int] | None = None,
    start: str | int = "latest",
    max_messages: int = 20,
    timeout: float = 30.0,
    environ: Mapping[str, str] | None = None,
) -> list[Message]:
    """Up to ``max_messages`` records of ``topic`` (of ``partitions``, default all), by
    (timestamp, partition, offset).

    ``start``: ``"earliest"`` the first messages of each partition; ``"latest"`` the last
    ones (as ``tail -n``: each partition's last ``max_messages``, then the latest overall);
    an offset: from that offset in each partition chosen. Reading stops at the end offsets
    the partitions had when it began (what is there now, never waiting for more), at
    ``max_messages`` (earliest, offset), or after ``timeout`` seconds.

    ``KgitopsError`` for a topic or partition the cluster lacks and an offset outside a
    partition's log (naming its start and end)."""
    from kafka import KafkaConsumer, TopicPartition

    config = client_config(spec, environ)
    secrets = secret_values(config)
    tls = tls_advice(spec)
    allowed = set(KafkaConsumer.DEFAULT_CONFIG)
    settings = {k: v for k, v in config.items() if k in allowed}
    settings.update(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
    consumer: Any = None
    out: list[Message] = []
    try:
        consumer = open_client(KafkaConsumer, spec, settings, tls, secrets)
        ids = consumer.partitions_for_topic(topic)
        if not ids:
            raise ClusterRequestError(
                f"topic '{safe_text(topic)}' does not exist on the cluster", code="UNKNOWN_TOPIC"
            )
        chosen = sorted(ids) if partitions is None else list(partitions)
        missing = [p for p in chosen if p not in ids]
        if missing:
            raise KgitopsError(
                f"topic '{safe_text(topic)}' has no partition {missing[0]} "
                f"(it has {len(ids)}: 0-{max(ids)})"
            )
        tps = [TopicPartition(topic, p) for p in chosen]
        consumer.assign(tps)
        begin = consumer.beginning_offsets(tps)
        end = consumer.end_offsets(tps)
        for tp in tps:
            if start == "earliest":
                first = begin[tp]
            elif start == "latest":
                first = max(begin[tp], end[tp] - max_messages)
            else:
                assert isinstance(start, int)
                if not begin[tp] <= start <= end[tp]:
                    raise KgitopsError(
                        f"offset {start} is out of range for {safe_text(topic)}-{tp.partition} "
                        f"(log start {begin[tp]}, end {end[tp]})"
                    )
                first = start
            consumer.seek(tp, first)
        todo = {tp for tp in tps if consumer.position(tp) < end[tp]}
        for tp in set(tps) - todo:
            consumer.pause(tp)
        deadline = time.monotonic() + timeout
        taken = dict.fromkeys(tps, 0)
        while todo and time.monotonic() < deadline:
            batch = consumer.poll(timeout_ms=200, max_records=1000)
            for tp, records in batch.items():
                for r in records:
                    if r.offset >= end[tp] or taken[tp] >= max_messages:
                        break
                    taken[tp] += 1
                    out.append(_message(r))
                if taken[tp] >= max_messages or consumer.position(tp) >= end[tp]:
                    todo.discard(tp)
                    consumer.pause(tp)
    except (ClusterError, KgitopsError):
        raise
    except Exception as exc:
        raise translate(exc, "Fetch", secrets=secrets, tls=tls) from None
    finally:
        if consumer is not None:
            with contextlib.suppress(Exception):  # never mask the real error
                consumer.close()
    out.sort(key=lambda m: (m.timestamp_ms or 0, m.partition, m.offset))
    return out[-max_messages:] if start == "latest" else out[:max_messages]


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
