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
reports them; logtopic.py, which makes the owner records' topic ready alike); before
AlterUserScramCredentials it is checked again (``prepare_versions``), so a topic that cannot
be created stops the credentials from being written at all; after it, a record for each
credential the cluster accepted (``record_versions``), written with
``KafkaProducer(acks="all")`` in batches of at most 512 KiB (topiclog.py). Reads
(``read_versions``): Metadata for the topic (``KafkaAdminClient.describe_topics``; none: no
records, not an error), then a group-less ``KafkaConsumer`` reads partition 0 from its first
offset to the end offset it had when reading began, unless it stalls for requestTimeoutMs
(topiclog.py: leader changes, records deleted below the log start and a quota's throttle
are kafka-python's to handle); the last record of a key wins, as compaction keeps it.

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

This module is the adapter half (the topic made ready through logtopic.py, the records read
and written through topiclog.py); what a record, the topic's layout and its shape are, pure, is
kgitops/cluster/kafka/version_records.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgitops.cluster.kafka.logtopic import LogTopic
from kgitops.cluster.kafka.version_records import (
    VersionRecord,
    latest,
    missing_operations,
    version_records,
)
from kgitops.cluster.port import ScramUpsert
from kgitops.errors import ClusterError, ClusterRequestError, UnsupportedOperation

#: The most one read takes from the topic; more is refused (a compacted topic of 100,000
#: credentials holds ~10 MB).
MAX_TOPIC_BYTES = 256 * 1024 * 1024
#: What the topic is, as a refusal of a topic that is not kgitops' names it, and the way out.
VERSION_TOPIC_ROLE = "passwordVersion topic"
VERSION_TOPIC_ADVICE = ": name a topic of its own in cluster.yaml passwordVersionTopic"


def _reading(topic: str, exc: ClusterError) -> str:
    return f"cannot read the passwordVersion records (topic {topic}): {exc}"


class PasswordVersions:
    """The passwordVersion records in ``topic`` (cluster.yaml ``passwordVersionTopic``; a
    ``LogTopic`` with ``VERSION_TOPIC_ROLE`` and ``VERSION_TOPIC_ADVICE``): a component of
    the adapter's access half (access.AccessRequests holds one)."""

    def __init__(self, topic: LogTopic) -> None:
        self.topic = topic
        self._ready = False

    @property
    def name(self) -> str:
        return self.topic.name

    def read_versions(self) -> dict[tuple[str, str], VersionRecord]:
        """Every (user, mechanism) record of the version topic; empty when it does not exist.
        ClusterError (naming the topic) when it cannot be read."""
        try:
            if self.topic.ready(create=False, writing=False) is None:
                return {}
            records, undecoded = self.topic.read(MAX_TOPIC_BYTES)
            return latest(records, undecoded)
        except UnsupportedOperation:
            raise
        except ClusterRequestError as exc:
            raise ClusterRequestError(_reading(self.name, exc), exc.code, exc.item) from None
        except ClusterError as exc:  # the others take one message: keep the class
            raise type(exc)(_reading(self.name, exc)) from None

    def ready_scram_versions(self) -> None:
        """``ClusterAdmin.ready_scram_versions``: apply's preflight (see ``missing_operations``
        for the rights check); once per adapter. A refusal after the topic was created here
        is a ClusterRequestError with ``changed``."""
        if self._ready:
            return
        try:
            ready = self.topic.ready(create=True, writing=True)
            missing = missing_operations(None if ready is None else ready.operations)
        except ClusterError as exc:
            raise ClusterError(
                f"the passwordVersion topic {self.name} is not available ({exc}): kgitops "
                "records there which passwordVersion each SCRAM credential was written from"
            ) from None
        if missing:
            created = ready is not None and ready.created
            made = " (created just now, empty)" if created else ""
            raise ClusterRequestError(
                f"the principal kgitops logs in as may not {' or '.join(missing)} the "
                f"passwordVersion topic {self.name}{made}: credentials would be written "
                "without their record, and rewritten by every apply; grant it "
                f"{' and '.join(m.capitalize() for m in missing)} on that topic",
                code="TOPIC_AUTHORIZATION_FAILED",
                item=self.name,
                changed=created,
            )
        self._ready = True

    def prepare_versions(self) -> ClusterError | None:
        """Before a credential is written: the version topic exists (created when it does
        not) and has a leader; the error, or None."""
        try:
            self.topic.ready(create=True, writing=True)
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
            self.topic.ready(create=True, writing=True)
            written = self.topic.write(version_records(upserts))
        except ClusterError as exc:
            return {u.key: exc for u in upserts}
        return {u.key: err for u, err in zip(upserts, written, strict=True) if err is not None}
