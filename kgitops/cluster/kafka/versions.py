"""Which ``passwordVersion`` each SCRAM credential was written from, on a real cluster.

Kafka keeps a credential's mechanism, iterations, salt and stored key, and
DescribeUserScramCredentials returns only the first two: a ``passwordVersion`` bump cannot be
read from the credential itself. So the adapter writes it down on the same cluster, in a topic
kgitops owns (cluster.yaml ``passwordVersionTopic``, default ``_kgitops-password-versions``),
as JulieOps keeps its state in a Kafka topic: the record survives a fresh CI runner, and every
checkout of the repository reads the same one::

    topic      one partition, cleanup.policy=compact, compression.type=uncompressed,
               RF min(3, live brokers not decommissioned), min.insync.replicas RF-1
               (at least 1, at most 2: RF 3 -> 2, RF 2 -> 1);
               created on the first write (or apply's preflight), with an explicit
               replica assignment (Kafka's rule, start index 0: Kafka 3.3+ would
               otherwise place it at random)
    key        {"mechanism":"SCRAM-SHA-512","user":"orders-app"}    JSON, sorted keys
    value      {"iterations":8192,"passwordVersion":2}               never a password, salt
                                                                    or key
    tombstone  a credential written without a version: its old record no longer holds

An existing topic is used only when it is kgitops-shaped (``shape_problems``: one partition,
compacted; before a write, a codec kgitops can read back), else refused in one line.

Writes: apply's preflight (``ready_scram_versions``) makes the topic ready before anything
is changed (created if missing, a leader, Write and Read for the principal where Metadata
reports them); before AlterUserScramCredentials it is checked again (``prepare_versions``),
so a topic that cannot be created stops the credentials from being written at all; after
it, a record for each credential the cluster accepted (``record_versions``), written with
``KafkaProducer(acks="all")`` in batches of at most 512 KiB (topiclog.py). Reads
(``read_versions``): Metadata for the topic (none: no records, not an error), then a
group-less ``KafkaConsumer`` reads partition 0 from its first offset to the end offset it
had when reading began, unless it stalls for requestTimeoutMs (topiclog.py: leader
changes, records deleted below the log start and a quota's throttle are kafka-python's to
handle); the last record of a key wins, as compaction keeps it.

``join``: a record counts only when its iterations are the credential's (a credential
rewritten outside kgitops with other iterations has no known version). A credential without
a record that counts gets ``password_version`` None and a ``version_note`` saying why; the
plan counts it as version 1 (kgitops/plan/access_diff.py). A record that is not kgitops'
(not JSON, a wrong type, larger than ``MAX_RECORD_BYTES``) is skipped, and names its offset
in that note when its key is a credential's. A batch whose records cannot be decoded here
(compressed with lz4, snappy or zstd, whose libraries kafka-python may lack: a broker-wide
``compression.type``, or another writer) is skipped too, never a failed read: each
credential recorded before it has no known version (its note names the batch and the
package to install), so the plan may rotate it again (the same password, a new salt) but
never skips a rotation the batch may have recorded.

This module is the adapter half (the topic made ready, the records read and written through
topiclog.py); what a record, the topic's layout and its shape are, pure, is
kgitops/cluster/kafka/version_records.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kafka.protocol.metadata import MetadataRequest

from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION, item_error, retriable_code
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.transport import Backoff
from kgitops.cluster.kafka.version_records import (
    VersionRecord,
    build_describe_configs,
    latest,
    missing_operations,
    read_describe_configs,
    shape_problems,
    topic_layout,
    version_records,
)
from kgitops.cluster.port import NewTopic, ScramUpsert
from kgitops.errors import ClusterError, ClusterRequestError, UnsupportedOperation
from kgitops.model import Broker

#: The most one read takes from the topic; more is refused (a compacted topic of 100,000
#: credentials holds ~10 MB).
MAX_TOPIC_BYTES = 256 * 1024 * 1024
#: How often the version topic is asked again while it has no leader or answers a retriable
#: error (the transport's ``Backoff`` with this cap: a leader is usually there in a moment).
POLL_SECONDS = 0.1


def partition_zero(
    send: Callable[[Any], Any], topic: str
) -> tuple[int, int | None, list[Broker], int]:
    """(error code of ``topic``, its partition 0 leader, the live brokers, its partition
    count): one Metadata request; code UNKNOWN_TOPIC_OR_PARTITION when the topic does not
    exist. Of kgitops' own topics (the passwordVersion topic, owners.py's)."""
    req = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
        allow_auto_topic_creation=False,
    )
    md = send(req)
    brokers = [Broker(int(b.node_id), b.rack or None) for b in md.brokers]
    for t in md.topics:
        if t.name != topic:
            continue
        if t.error_code:
            return int(t.error_code), None, brokers, 0
        leader = next((int(p.leader_id) for p in t.partitions if p.partition_index == 0), -1)
        return 0, (leader if leader >= 0 else None), brokers, len(t.partitions)
    return UNKNOWN_TOPIC_OR_PARTITION, None, brokers, 0


def _reading(topic: str, exc: ClusterError) -> str:
    return f"cannot read the passwordVersion records (topic {topic}): {exc}"


class PasswordVersions:
    """The passwordVersion records for ``KafkaAdmin`` (which provides ``_send``,
    ``_timeout_ms``, ``_spec``, ``_log`` and ``create_topics``)."""

    _timeout_ms: int
    _spec: Any
    _log: TopicLog

    def _send(self, request: Any, node_id: int | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def create_topics(self, topics: Sequence[NewTopic]) -> Any:  # pragma: no cover
        raise NotImplementedError

    @property
    def _version_topic(self) -> str:
        return str(self._spec.password_version_topic)

    def _version_partition(self) -> tuple[int, int | None, list[Broker], int]:
        return partition_zero(self._send, self._version_topic)

    def _leader(self, *, create: bool) -> int | None:
        """The leader of the version topic's partition, waiting for one until the deadline;
        None when the topic does not exist (and ``create`` is False). An existing topic that
        is not kgitops' (``shape_problems``; before a write when ``create``) is refused: its
        records are never read nor written."""
        topic = self._version_topic
        backoff = Backoff(self._timeout_ms / 1000, cap=POLL_SECONDS)
        created = False
        while True:
            code, leader, brokers, count = self._version_partition()
            if code == UNKNOWN_TOPIC_OR_PARTITION and not create and not created:
                return None
            if code == UNKNOWN_TOPIC_OR_PARTITION and not created:
                replicas, configs = topic_layout(brokers, self._spec.decommission)
                result = self.create_topics([NewTopic(topic, {0: replicas}, configs)])[topic]
                if result is not None and getattr(result, "code", "") not in (
                    "TOPIC_ALREADY_EXISTS",  # another apply created it first
                    "ASSIGNMENT_MISMATCH",  # created, elsewhere (a broker ignoring it)
                ):
                    raise result
                created = True
                continue
            if code not in (0, UNKNOWN_TOPIC_OR_PARTITION) and not retriable_code(code):
                err = item_error("Metadata", topic, code, None)
                raise err if err is not None else ClusterError(f"{topic}: error {code}")
            if code == 0 and count and not created:  # one made here is kgitops' own
                self._check_shape(count, writing=create)
            if code == 0 and leader is not None:
                return leader
            if not backoff.wait():
                raise ClusterRequestError(
                    f"{topic}: the partition has no leader", code="LEADER_NOT_AVAILABLE", item=topic
                )

    def _check_shape(self, partitions: int, *, writing: bool) -> None:
        """ClusterError when the existing topic is not kgitops' (``shape_problems``); its
        configs are asked once per adapter and purpose."""
        checked: set[bool] = self.__dict__.setdefault("_version_shape_checked", set())
        if writing in checked and partitions == 1:
            return
        topic = self._version_topic
        configs = read_describe_configs(self._send(build_describe_configs(topic)), topic)
        problems = shape_problems(partitions, configs, writing=writing)
        if problems:
            raise ClusterError(
                f"topic {topic} exists and is not kgitops' passwordVersion topic "
                f"({'; '.join(problems)}); kgitops neither reads nor writes it: name a topic "
                "of its own in cluster.yaml passwordVersionTopic"
            )
        checked.add(writing)

    def read_versions(self) -> dict[tuple[str, str], VersionRecord]:
        """Every (user, mechanism) record of the version topic; empty when it does not exist.
        ClusterError (naming the topic) when it cannot be read."""
        topic = self._version_topic
        try:
            return self._read_versions(topic)
        except UnsupportedOperation:
            raise
        except ClusterRequestError as exc:
            raise ClusterRequestError(_reading(topic, exc), exc.code, exc.item) from None
        except ClusterError as exc:  # the others take one message: keep the class
            raise type(exc)(_reading(topic, exc)) from None

    def _read_versions(self, topic: str) -> dict[tuple[str, str], VersionRecord]:
        if self._leader(create=False) is None:
            return {}
        records, undecoded = self._log.read(topic, MAX_TOPIC_BYTES)
        return latest(records, undecoded)

    def ready_scram_versions(self) -> None:
        """``ClusterAdmin.ready_scram_versions``: apply's preflight (see ``missing_operations``
        for the rights check); once per adapter. A refusal after the topic was created here
        is a ClusterRequestError with ``changed``."""
        if self.__dict__.get("_versions_ready"):
            return
        topic = self._version_topic
        try:
            existed = self._version_partition()[0] != UNKNOWN_TOPIC_OR_PARTITION
            self._leader(create=True)
            missing = missing_operations(self._topic_operations())
        except ClusterError as exc:
            raise ClusterError(
                f"the passwordVersion topic {topic} is not available ({exc}): kgitops records "
                "there which passwordVersion each SCRAM credential was written from"
            ) from None
        if missing:
            created = "" if existed else " (created just now, empty)"
            raise ClusterRequestError(
                f"the principal kgitops logs in as may not {' or '.join(missing)} the "
                f"passwordVersion topic {topic}{created}: credentials would be written without "
                "their record, and rewritten by every apply; grant it "
                f"{' and '.join(m.capitalize() for m in missing)} on that topic",
                code="TOPIC_AUTHORIZATION_FAILED",
                item=topic,
                changed=not existed,
            )
        self.__dict__["_versions_ready"] = True

    def _topic_operations(self) -> int | None:
        """The operations the principal may perform on the version topic, as Metadata v8+
        reports them (``include_topic_authorized_operations``); None when not reported."""
        req = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=self._version_topic)],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
        )
        for t in self._send(req).topics:
            if t.name == self._version_topic:
                bits = getattr(t, "topic_authorized_operations", None)
                return None if bits is None else int(bits)
        return None

    def prepare_versions(self) -> ClusterError | None:
        """Before a credential is written: the version topic exists (created when it does
        not) and has a leader; the error, or None."""
        try:
            self._leader(create=True)
        except ClusterError as exc:
            return exc
        return None

    def write_versions(self, upserts: Sequence[ScramUpsert]) -> ClusterError | None:
        """``record_versions``, as one outcome: the first error, or None when every record
        was written."""
        failed = self.record_versions(upserts)
        return next(iter(failed.values()), None)

    def record_versions(self, upserts: Sequence[ScramUpsert]) -> dict[str, ClusterError]:
        """Record the versions of credentials just written (topiclog.py: acks=all, in
        order), creating the topic first when it does not exist; the error of each
        credential (``ScramUpsert.key``) whose record was not written."""
        if not upserts:
            return {}
        try:
            self._leader(create=True)
            written = self._log.write(self._version_topic, version_records(upserts))
        except ClusterError as exc:
            return {u.key: exc for u in upserts}
        return {u.key: err for u, err in zip(upserts, written, strict=True) if err is not None}
