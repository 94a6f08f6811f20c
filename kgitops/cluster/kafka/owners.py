"""The owner records on a real cluster (kgitops/plan/owners.py says what they are).

Kafka refuses a topic config it does not know (IncrementalAlterConfigs of ``kgitops.owner``
on a topic: INVALID_CONFIG "Unknown topic config name: kgitops.owner", from
``LogConfig.validateNames``, storage/src/main/java/org/apache/kafka/storage/internals/log/
LogConfig.java; tests/realkafka/test_owner_records_kafka.py), so the record cannot ride on
the topics it describes. It lives in a topic of kgitops' own, ``_kgitops-owners``
(``model.OWNER_TOPIC``), shaped as the passwordVersion topic is
(version_records.topic_layout: one partition, compacted, uncompressed, RF min(3, brokers),
created on the first write with Kafka's placement rule); its requests are version_records'
pure ones::

    read    Metadata for the topic (none: no record), then Fetch from offset 0 until the
            high watermark or an empty answer (Tansu); the last record of an owner wins
    write   one Produce (acks=all) of every record, to the leader; created when missing

An existing topic of that name that is not compacted or has more than one partition is
refused in one line: its records would expire, and kgitops neither reads nor writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka.protocol.metadata import MetadataRequest

from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION, item_error, retriable_code
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.kafka.version_records import (
    build_describe_configs,
    build_fetch,
    build_produce,
    read_describe_configs,
    read_fetch,
    read_produce,
    shape_problems,
    topic_layout,
)
from kgitops.cluster.port import NewTopic, Results, refused
from kgitops.errors import (
    ClusterError,
    ClusterRequestError,
    UnsupportedOperation,
)
from kgitops.model import OWNER_TOPIC, Broker, ClusterSpec
from kgitops.plan.owners import OwnerRecord, latest_at, record_key, record_value

#: The most one read takes from the topic (a record is a few hundred bytes an owner).
MAX_OWNER_TOPIC_BYTES = 64 * 1024 * 1024
OFFSET_OUT_OF_RANGE = 1
EARLIEST = -2


class OwnerRecords:
    """``read_owners`` / ``record_owners``: a component ``KafkaAdmin`` holds. Requests go
    through the adapter's ``Transport``; the topic is created and its offsets are read
    through the adapter's ``create_topics`` and ``list_offsets``."""

    def __init__(
        self,
        transport: Transport,
        spec: ClusterSpec,
        *,
        create_topics: Callable[[Sequence[NewTopic]], Results],
        list_offsets: Callable[[Iterable[tuple[str, int]], int], dict[tuple[str, int], int]],
    ) -> None:
        self._transport = transport
        self._spec = spec
        self._timeout_ms = transport.timeout_ms
        self._create = create_topics
        self._offsets = list_offsets

    def _send(self, request: Any, node_id: int | None = None) -> Any:
        return self._transport.send(request, node_id)

    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        return self._create(topics)

    def list_offsets(
        self, partitions: Iterable[tuple[str, int]], spec: int
    ) -> dict[tuple[str, int], int]:
        return self._offsets(partitions, spec)

    def _owner_partition(self) -> tuple[int, int | None, list[Broker], int]:
        """(the topic's error code, partition 0's leader, the live brokers, its partition
        count): one Metadata; UNKNOWN_TOPIC_OR_PARTITION when it does not exist."""
        req = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=OWNER_TOPIC)],
            allow_auto_topic_creation=False,
        )
        md = self._send(req)
        brokers = [Broker(int(b.node_id), b.rack or None) for b in md.brokers]
        for t in md.topics:
            if t.name != OWNER_TOPIC:
                continue
            if t.error_code:
                return int(t.error_code), None, brokers, 0
            leader = next((int(p.leader_id) for p in t.partitions if p.partition_index == 0), -1)
            return 0, (leader if leader >= 0 else None), brokers, len(t.partitions)
        return UNKNOWN_TOPIC_OR_PARTITION, None, brokers, 0

    def _owner_leader(self, *, create: bool) -> int | None:
        """The leader of the topic's partition, waited for until the deadline; None when the
        topic does not exist and ``create`` is False."""
        deadline = time.monotonic() + self._timeout_ms / 1000
        created = checked = False
        while True:
            code, leader, brokers, count = self._owner_partition()
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
        leader = self._owner_leader(create=False)
        if leader is None:
            return {}
        offset, total = 0, 0
        records: list[tuple[int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + self._timeout_ms / 1000
        while True:
            got = read_fetch(self._send(build_fetch(OWNER_TOPIC, offset), leader))
            if got.code == OFFSET_OUT_OF_RANGE:
                start = self.list_offsets([(OWNER_TOPIC, 0)], EARLIEST)[(OWNER_TOPIC, 0)]
                if start > offset:
                    offset = int(start)
                    continue
            if got.code and retriable_code(got.code) and time.monotonic() < deadline:
                time.sleep(0.1)
                leader = self._owner_leader(create=False)
                if leader is None:
                    return {}
                continue
            if got.code:
                err = item_error("Fetch", OWNER_TOPIC, got.code, None)
                if err is not None:
                    raise err
            if not got.answered:  # throttled by a quota, never the end of the log
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"Fetch: the broker kept answering without partition 0 (throttled "
                        f"{got.throttle_ms} ms): the principal is over its quota"
                    )
                time.sleep(min(5.0, max(got.throttle_ms / 1000, 0.1)))
                continue
            if got.undecoded:
                first = got.undecoded[0]
                raise ClusterError(
                    f"{first.problem.replace('of it', 'of an owner')}: kgitops cannot tell "
                    "who owns what"
                )
            total += got.size
            if total > MAX_OWNER_TOPIC_BYTES:
                raise ClusterError(
                    f"it holds more than {MAX_OWNER_TOPIC_BYTES // 2**20} MiB: is another "
                    "program writing to it?"
                )
            records.extend((o, k, v) for o, k, v in got.records if o >= offset)
            if got.next_offset <= offset:  # nothing more (an empty answer ends it on Tansu)
                break
            offset = got.next_offset
            if offset >= got.high_watermark:
                break
        return latest_at(records)

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        """``ClusterAdmin.record_owners``: one Produce (acks=all), retried while the error
        is retriable, until the deadline."""
        if not records:
            return
        batch = [
            (record_key(owner), None if r is None else record_value(r))
            for owner, r in sorted(records.items())
        ]
        deadline = time.monotonic() + self._timeout_ms / 1000
        leader = self._owner_leader(create=True)
        while True:
            req = build_produce(OWNER_TOPIC, batch, self._timeout_ms, int(time.time() * 1000))
            code, message = read_produce(self._send(req, leader))
            if code == 0:
                return
            if code == -2:
                raise ClusterRequestError(
                    f"{OWNER_TOPIC}: the broker gave no result for partition 0", item=OWNER_TOPIC
                )
            retry = retriable_code(code) or code == UNKNOWN_TOPIC_OR_PARTITION
            if not retry or time.monotonic() > deadline:
                err = item_error("Produce", OWNER_TOPIC, code, message)
                raise err if err is not None else ClusterError(f"{OWNER_TOPIC}: error {code}")
            time.sleep(0.1)
            leader = self._owner_leader(create=True)


def _reading(exc: ClusterError) -> str:
    said = str(exc).replace("the passwordVersion topic", "the topic")  # read_fetch's words
    advice = (
        f"; a folder with owns: reads them: grant its principal Describe, DescribeConfigs and "
        f"Read on topic "
        f"{OWNER_TOPIC} (docs/ownership.md)"
        if refused(exc)
        else ""
    )
    return f"cannot read the owner records (topic {OWNER_TOPIC}): {said}{advice}"
