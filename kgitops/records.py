"""A record of a topic as a consumer reads it (``kgitops tail``): the value the Kafka adapter
returns (``cluster/kafka/tail.py``) and ``console/messages.py`` prints, as text lines or
``kgitops-tail/v1`` JSON; and ``TailRequest``, what the command asks the adapter to read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Message:
    """One record as a consumer sees it."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None  # None: Kafka's -1 (no timestamp)
    timestamp_type: str  # CreateTime | LogAppendTime | none
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    size: int = 0  # serialized key + value bytes, as the record batch holds them


@dataclass(frozen=True, slots=True)
class TailRequest:
    """What ``kgitops tail`` reads, once (``read_messages``) or following (``follow_messages``).

    ``partitions`` of ``topic`` (None: all), from ``start``: ``"earliest"``, ``"latest"`` or
    an offset in each partition. ``count``: with ``"latest"``, each partition starts that many
    messages before its end and the last ``count`` of them are shown; a read once also
    stops at ``count`` messages. ``timeout``: seconds until reading stops (None: 30 for a
    read once, never when following)."""

    topic: str
    partitions: tuple[int, ...] | None = None
    start: str | int = "latest"
    count: int = 20
    timeout: float | None = None
