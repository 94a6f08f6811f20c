"""A record of a topic as a consumer reads it (``kgitops tail``): the value the Kafka adapter
returns (``cluster/kafka/tail.py``) and ``console/messages.py`` prints, as text lines or
``kgitops-tail/v1`` JSON."""

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
