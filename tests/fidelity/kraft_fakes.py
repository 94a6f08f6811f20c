"""A recording fake transport for the kafka-python adapter (imported by test modules, after
pytest's warning filters are in place: kafka-python warns on import under Python 3.11)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import kafka.errors as kerr
from kafka.protocol.admin import DescribeClusterRequest, ListPartitionReassignmentsRequest

from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.describe import Describe
from kgitops.cluster.kafka.topics import TopicWrites
from kgitops.cluster.kafka.transport import Transport
from kgitops.model import TopicPartition
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


class LibraryOver:
    """The ``KafkaAdminClient`` methods the adapter calls, sending the request the library
    builds through ``manager`` (to the controller, node 1) and reading the answer as the
    library does (kafka/admin/_partitions.py)."""

    def __init__(self, manager: RecordingManager) -> None:
        self.manager = manager

    def describe_cluster(self) -> dict[str, Any]:
        request = DescribeClusterRequest(
            include_cluster_authorized_operations=True, include_fenced_brokers=True
        )
        resp = self.manager.answer(*self.manager.send(request, None))
        if resp.error_code:
            raise kerr.for_code(resp.error_code)()
        return {
            "brokers": [
                {"broker_id": b.broker_id, "rack": b.rack, "is_fenced": b.is_fenced}
                for b in resp.brokers
            ]
        }

    def list_partition_reassignments(self, timeout_ms: int | None = None) -> dict[Any, Any]:
        request = ListPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=None)
        resp = self.manager.answer(*self.manager.send(request, 1))
        if resp.error_code:
            raise kerr.for_code(resp.error_code)()
        return {
            TopicPartition(t.name, p.partition_index): {
                "replicas": list(p.replicas),
                "adding_replicas": list(p.adding_replicas),
                "removing_replicas": list(p.removing_replicas),
            }
            for t in resp.topics
            for p in t.partitions
        }


def adapter(manager: RecordingManager, timeout_ms: int = 1000) -> KafkaAdmin:
    """A KafkaAdmin whose transport sends through ``manager`` (no connection is made)."""
    admin = object.__new__(KafkaAdmin)
    admin._timeout_ms = timeout_ms
    admin._secrets = ()
    admin._transport = Transport(manager, timeout_ms=timeout_ms, tls=None)
    admin._transport.controller = 1
    admin._client = LibraryOver(manager)
    admin._spec = SimpleNamespace(kafka_version=DEFAULT_VERSION)  # cluster.yaml's default
    admin._reads = Describe(admin._transport, admin._client, admin._spec, timeout_ms)
    admin._writes = TopicWrites(admin._transport, admin._client, timeout_ms)
    return admin
