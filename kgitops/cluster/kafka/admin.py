"""``KafkaAdmin``: the ClusterAdmin port over kafka-python (see the package docstring).

Composed of components over one ``transport.Transport``: ``describe.Describe`` (the reads),
``topics.TopicWrites`` (topic and broker-config writes), ``groups.Groups``,
``access.AccessRequests`` and ``owners.OwnerRecords``; this class builds them and hands
each port call on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.cluster import port
from kgitops.cluster.kafka.access import AccessRequests
from kgitops.cluster.kafka.bootstrap import open_admin_client
from kgitops.cluster.kafka.describe import Describe
from kgitops.cluster.kafka.groups import Groups
from kgitops.cluster.kafka.logtopic import LogTopic
from kgitops.cluster.kafka.owners import OWNER_TOPIC_ROLE, OwnerRecords
from kgitops.cluster.kafka.settings import client_config, secret_values, tls_advice
from kgitops.cluster.kafka.token import TokenSource
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.topics import TopicWrites
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.kafka.versions import (
    VERSION_TOPIC_ADVICE,
    VERSION_TOPIC_ROLE,
    PasswordVersions,
)
from kgitops.groups import GroupsState, Partition
from kgitops.model import OWNER_TOPIC, ClusterSpec, ClusterState, TopicPartition
from kgitops.plan.owners import OwnerRecord


class KafkaAdmin:
    """``ClusterAdmin`` for a real Kafka cluster (3.x/4.x, KRaft or ZooKeeper) or Tansu."""

    def __init__(self, spec: ClusterSpec, *, environ: Mapping[str, str] | None = None) -> None:
        self._spec = spec
        config = client_config(spec, environ)
        source = config.get("sasl_oauth_token_provider")
        self._token_source = source if isinstance(source, TokenSource) else None
        self._secrets = secret_values(config)
        self._timeout_ms = int(config["request_timeout_ms"])
        self._departed: set[int] = set()
        tls = tls_advice(spec)
        self._client, manager = open_admin_client(spec, config, tls, self._secrets)
        self._transport = Transport(
            manager,
            timeout_ms=self._timeout_ms,
            tls=tls,
            tls_context=config.get("ssl_context"),
            bootstrap=spec.bootstrap_servers,
            secrets=lambda: self._secrets,
            library=self._client,
        )
        self._reads = Describe(self._transport, self._client, spec, self._timeout_ms)
        self._writes = TopicWrites(self._transport, self._client, self._timeout_ms)
        self._groups = Groups(self._transport)
        log = TopicLog(spec, environ, timeout_ms=self._timeout_ms)

        def own_topic(name: str, role: str, advice: str = "") -> LogTopic:
            return LogTopic(
                self._transport,
                name,
                role=role,
                advice=advice,
                drained=spec.decommission,
                create_topics=lambda topics: self.create_topics(topics),
                log=log,
            )

        versions = own_topic(spec.password_version_topic, VERSION_TOPIC_ROLE, VERSION_TOPIC_ADVICE)
        self._access = AccessRequests(self._transport, spec, versions=PasswordVersions(versions))
        self._owners = OwnerRecords(own_topic(OWNER_TOPIC, OWNER_TOPIC_ROLE))
        self._closed = False

    @property
    def _secrets(self) -> tuple[str, ...]:
        """What every message is scrubbed of (OAUTHBEARER tokens too, as they refresh)."""
        token = getattr(self, "_token_source", None)
        return self._fixed_secrets + (token.seen if token is not None else ())

    @_secrets.setter
    def _secrets(self, value: tuple[str, ...]) -> None:
        self._fixed_secrets = tuple(value)

    # ---- the request primitive

    # ---- owner records: the ``owners.OwnerRecords`` component's

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        return self._owners.read_owners()

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        self._owners.record_owners(records)

    # ---- access: the ``access.AccessRequests`` component's (passwordVersion records too)

    def probe_access(self, apis: Collection[str]) -> None:
        self._access.probe_access(apis)

    def ready_scram_versions(self) -> None:
        self._access.versions.ready_scram_versions()

    def describe_acls(self) -> frozenset[Acl]:
        return self._access.describe_acls()

    def create_acls(self, acls: Sequence[Acl]) -> port.Results:
        return self._access.create_acls(acls)

    def delete_acls(self, acls: Sequence[Acl]) -> port.Results:
        return self._access.delete_acls(acls)

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return self._access.describe_client_quotas()

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, port.QuotaChange]) -> port.Results:
        return self._access.alter_client_quotas(changes)

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        return self._access.describe_scram_users()

    def upsert_scram_users(self, upserts: Sequence[port.ScramUpsert]) -> port.Results:
        return self._access.upsert_scram_users(upserts)

    # ---- consumer groups: the ``groups.Groups`` component's

    def list_group_ids(self) -> list[str]:
        return self._groups.list_group_ids()

    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        return self._groups.describe_groups(group_ids)

    def list_offsets(self, partitions: Iterable[Partition], spec: int) -> dict[Partition, int]:
        return self._groups.list_offsets(partitions, spec)

    def log_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, tuple[int, int]]:
        return self._groups.log_offsets(partitions)

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> port.PartitionResults:
        return self._groups.alter_group_offsets(group_id, offsets)

    def delete_groups(self, group_ids: Sequence[str]) -> port.Results:
        return self._groups.delete_groups(group_ids)

    # ---- sending: the transport's (``transport.Transport``)

    def _send(
        self, request: Any, node_id: int | None = None, *, timeout_ms: int | None = None
    ) -> Any:
        return self._transport.send(request, node_id, timeout_ms=timeout_ms)

    def _send_each(self, requests: Mapping[int, Any]) -> dict[int, Any]:
        return self._transport.send_each(requests)

    def supports(self, request_class: Any) -> bool:
        """Whether the broker advertises this API (ApiVersions, answered at connect)."""
        return self._transport.supports(request_class)

    def _require(self, request_class: Any) -> None:
        self._transport.require(request_class)

    # ---- reads: the ``describe.Describe`` component's

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        return self._reads.describe(topics)

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        return self._reads.list_reassignments()

    # ---- writes: the ``topics.TopicWrites`` component's

    def create_topics(self, topics: Sequence[port.NewTopic]) -> port.Results:
        return self._writes.create_topics(topics)

    def create_partitions(self, additions: Sequence[port.NewPartitions]) -> port.Results:
        return self._writes.create_partitions(additions)

    def alter_topic_configs(self, changes: Mapping[str, port.ConfigChange]) -> port.Results:
        return self._writes.alter_topic_configs(changes)

    def alter_broker_configs(self, changes: Mapping[int, port.ConfigChange]) -> port.Results:
        return self._writes.alter_broker_configs(changes)

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> port.PartitionResults:
        return self._writes.alter_reassignments(targets)

    def elect_preferred_leaders(
        self, partitions: Iterable[TopicPartition]
    ) -> port.PartitionResults:
        return self._writes.elect_preferred_leaders(partitions)

    def delete_topics(self, names: Sequence[str]) -> port.Results:
        return self._writes.delete_topics(names)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._client.close()
        except Exception as exc:  # closing must not turn a result into a failure
            logging.getLogger(__name__).debug("close failed: %s", exc)

    def __enter__(self) -> KafkaAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
