"""A recording fake transport for the kafka-python adapter (imported by test modules, after
pytest's warning filters are in place: kafka-python warns on import under Python 3.11)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.transport import Transport
from kgitops.versionrules import DEFAULT_VERSION


class RecordingManager:
    """kafka-python's connection manager, recording every request and answering each from
    ``answer(request, node_id)``: the adapter is driven without a broker."""

    def __init__(self, answer: Callable[[Any, int | None], Any]) -> None:
        self.answer = answer
        self.sent: list[tuple[Any, int | None]] = []
        self.broker_version_data = self  # every API is advertised

    def api_version(self, request_class: Any) -> int:
        return 0

    def send(self, request: Any, node_id: int | None = None, request_timeout_ms: int = 0) -> Any:
        self.sent.append((request, node_id))
        return (request, node_id)

    async def wait_for(self, future: Any, timeout_ms: int) -> Any:
        return self.answer(*future)

    def run(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        return asyncio.run(fn(*args))


def adapter(manager: RecordingManager, timeout_ms: int = 1000) -> KafkaAdmin:
    """A KafkaAdmin whose transport sends through ``manager`` (no connection is made)."""
    admin = object.__new__(KafkaAdmin)
    admin._timeout_ms = timeout_ms
    admin._secrets = ()
    admin._transport = Transport(manager, timeout_ms=timeout_ms, tls=None)
    admin._transport.controller = 1
    admin._spec = SimpleNamespace(kafka_version=DEFAULT_VERSION)  # cluster.yaml's default
    return admin
