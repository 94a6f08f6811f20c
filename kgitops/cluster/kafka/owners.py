"""The owner records on a real cluster (kgitops/plan/owners.py says what they are).

Kafka refuses a topic config it does not know (IncrementalAlterConfigs of ``kgitops.owner``
on a topic: INVALID_CONFIG "Unknown topic config name: kgitops.owner", from
``LogConfig.validateNames``, storage/src/main/java/org/apache/kafka/storage/internals/log/
LogConfig.java; tests/realkafka/test_owner_records_kafka.py), so the record cannot ride on
the topics it describes. It lives in a topic of kgitops' own, ``_kgitops-owners``
(``model.OWNER_TOPIC``), shaped as the passwordVersion topic is
(version_records.topic_layout: one partition, compacted, uncompressed, RF min(3, brokers),
created on the first write with Kafka's placement rule), and read and written as that
topic is (topiclog.py)::

    read    Metadata for the topic (none: no record), then a group-less ``KafkaConsumer``
            from the first offset to the end offset; the last record of an owner wins; a
            batch that cannot be decoded here stops the read (it may hold any owner's claim)
    write   ``KafkaProducer(acks="all")``, every record in order; created when missing

An existing topic of that name that is not compacted or has more than one partition is
refused in one line: its records would expire, and kgitops neither reads nor writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION, item_error, retriable_code
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.kafka.version_records import (
    build_describe_configs,
    read_describe_configs,
    shape_problems,
    topic_layout,
)
from kgitops.cluster.kafka.versions import partition_zero
from kgitops.cluster.port import NewTopic, Results, refused
from kgitops.errors import (
    ClusterError,
    ClusterRequestError,
    UnsupportedOperation,
)
from kgitops.model import OWNER_TOPIC, ClusterSpec
from kgitops.plan.owners import OwnerRecord, latest_at, record_key, record_value

#: The most one read takes from the topic (a record is a few hundred bytes an owner).
MAX_OWNER_TOPIC_BYTES = 64 * 1024 * 1024


class OwnerRecords:
    """``read_owners`` / ``record_owners``: a component ``KafkaAdmin`` holds. Metadata and
    DescribeConfigs go through the adapter's ``Transport``, the topic is created through the
    adapter's ``create_topics``, and its records are read and written through ``log``."""

    def __init__(
        self,
        transport: Transport,
        spec: ClusterSpec,
        *,
        create_topics: Callable[[Sequence[NewTopic]], Results],
        log: TopicLog,
    ) -> None:
        self._transport = transport
        self._spec = spec
        self._timeout_ms = transport.timeout_ms
        self._create = create_topics
        self._log = log

    def _send(self, request: Any, node_id: int | None = None) -> Any:
        return self._transport.send(request, node_id)

    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        return self._create(topics)

    def _owner_leader(self, *, create: bool) -> int | None:
        """The leader of the topic's partition, waited for until the deadline; None when the
        topic does not exist and ``create`` is False."""
        deadline = time.monotonic() + self._timeout_ms / 1000
        created = checked = False
        while True:
            code, leader, brokers, count = partition_zero(self._send, OWNER_TOPIC)
            if code == UNKNOWN_TOPIC_OR_PARTITION and not created:
                if not create:
                    return None
                replicas, configs = topic_layout(brokers, self._spec.decommission)
                got = self.create_topics([NewTopic(OWNER_TOPIC, {0: replicas}, configs)])
                err = got[OWNER_TOPIC]
                if err is not None and getattr(err, "code", "") not in (
                    "TOPIC_ALREADY_EXISTS",  # another apply created it first
                    "ASSIGNMENT_MISMATCH",
                ):
                    raise err
                created = True
                continue
            if code not in (0, UNKNOWN_TOPIC_OR_PARTITION) and not retriable_code(code):
                err = item_error("Metadata", OWNER_TOPIC, code, None)
                raise err if err is not None else ClusterError(f"{OWNER_TOPIC}: error {code}")
            if code == 0 and count and not created and not checked:
                self._check_owner_shape(count)
                checked = True
            if code == 0 and leader is not None:
                return leader
            if time.monotonic() > deadline:
                raise ClusterRequestError(
                    f"{OWNER_TOPIC}: the partition has no leader",
                    code="LEADER_NOT_AVAILABLE",
                    item=OWNER_TOPIC,
                )
            time.sleep(0.1)

    def _check_owner_shape(self, partitions: int) -> None:
        configs = read_describe_configs(
            self._send(build_describe_configs(OWNER_TOPIC)), OWNER_TOPIC
        )
        problems = shape_problems(partitions, configs, writing=True)
        if problems:
            raise ClusterError(
                f"topic {OWNER_TOPIC} exists and is not kgitops' owner record topic "
                f"({'; '.join(problems)}); kgitops neither reads nor writes it"
            )

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        """``ClusterAdmin.read_owners``; ClusterError naming the topic when it cannot be
        read."""
        try:
            return self._read_owners()
        except UnsupportedOperation:
            raise
        except ClusterRequestError as exc:
            raise ClusterRequestError(_reading(exc), exc.code, exc.item) from None
        except ClusterError as exc:
            raise type(exc)(_reading(exc)) from None

    def _read_owners(self) -> Mapping[str, OwnerRecord]:
        if self._owner_leader(create=False) is None:
            return {}
        records, undecoded = self._log.read(OWNER_TOPIC, MAX_OWNER_TOPIC_BYTES)
        if undecoded:
            raise ClusterError(
                f"{undecoded[0].problem.replace('of it', 'of an owner')}: kgitops cannot tell "
                "who owns what"
            )
        return latest_at(records)

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        """``ClusterAdmin.record_owners``: every record (topiclog.py: acks=all, in order),
        the topic created first when missing; the first record's error, if any."""
        if not records:
            return
        batch = [
            (record_key(owner), None if r is None else record_value(r))
            for owner, r in sorted(records.items())
        ]
        self._owner_leader(create=True)
        failed = next((err for err in self._log.write(OWNER_TOPIC, batch) if err), None)
        if failed is not None:
            raise failed


def _reading(exc: ClusterError) -> str:
    said = str(exc)
    advice = (
        f"; a folder with owns: reads them: grant its principal Describe, DescribeConfigs and "
        f"Read on topic "
        f"{OWNER_TOPIC} (docs/ownership.md)"
        if refused(exc)
        else ""
    )
    return f"cannot read the owner records (topic {OWNER_TOPIC}): {said}{advice}"
