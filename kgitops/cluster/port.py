"""The one port through which kgitops reads and changes a cluster.

Three adapters implement it: ``kafka.KafkaAdmin`` (kafka-python, real clusters and the local
broker), ``simulated.SimulatedCluster`` (file-backed, multi-broker, Kafka's rules) and, for
tests, anything else with the same shape. Apply, status, snapshot and import see only this.

Batched by design: every write takes all its items at once and returns a per-item result, so
an adapter sends one request per API (and per broker where Kafka requires it), never one per
topic, and apply can report exactly which items failed. A result maps the item (a topic name,
a ``TopicPartition``, or ``"broker:<id>"``) to None on success or the ClusterError that item got.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kgitops.errors import ClusterError
from kgitops.model import ClusterState, TopicPartition

Results = Mapping[str, ClusterError | None]
PartitionResults = Mapping[TopicPartition, ClusterError | None]


@dataclass(frozen=True)
class NewTopic:
    """A topic to create with an explicit assignment (partition id -> replicas)."""

    name: str
    assignment: Mapping[int, tuple[int, ...]]
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewPartitions:
    """Partitions to add: ``total`` is the new count; assignment covers the new ids only."""

    topic: str
    total: int
    assignment: Mapping[int, tuple[int, ...]]


@dataclass(frozen=True)
class ConfigChange:
    """An incremental config change: SET these, DELETE those (IncrementalAlterConfigs)."""

    set: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()


@runtime_checkable
class ClusterAdmin(Protocol):
    """What kgitops needs from a cluster. See the module docstring for the result shape."""

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        """Brokers with racks and liveness, topics (all, or only those named) with partitions,
        replicas, ISR, leaders, sizes where known, configs set on the topic itself
        (DYNAMIC_TOPIC_CONFIG only), and reassignments in flight."""
        ...

    def create_topics(self, topics: Sequence[NewTopic]) -> Results: ...

    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results: ...

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results: ...

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        """Dynamic per-broker configs, e.g. leader/follower.replication.throttled.rate."""
        ...

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        """Submit reassignments; a None target cancels the one in flight for that partition."""
        ...

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        """In-flight reassignments: topic -> partition -> (replicas, adding, removing)."""
        ...

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults: ...

    def delete_topics(self, names: Sequence[str]) -> Results: ...

    def sleep(self, seconds: float) -> None:
        """Let time pass while waiting for the cluster (real: time.sleep; simulated: the
        simulated clock advances and replicas catch up)."""
        ...

    def close(self) -> None: ...
