"""The owner records on a real cluster (kgitops/plan/owners.py says what they are).

Kafka refuses a topic config it does not know (IncrementalAlterConfigs of ``kgitops.owner``
on a topic: INVALID_CONFIG "Unknown topic config name: kgitops.owner", from
``LogConfig.validateNames``, storage/src/main/java/org/apache/kafka/storage/internals/log/
LogConfig.java; tests/ownership/test_owner_records_real.py), so the record cannot ride on
the topics it describes. It lives in a topic of kgitops' own, ``_kgitops-owners``
(``model.OWNER_TOPIC``), shaped as the passwordVersion topic is
(version_records.topic_layout: one partition, compacted, uncompressed, RF min(3, brokers),
created on the first write with Kafka's placement rule), made ready as that topic is (one
``logtopic.LogTopic`` each) and read and written as it is (topiclog.py)::

    read    Metadata for the topic (``KafkaAdminClient.describe_topics``; none: no record),
            then a group-less ``KafkaConsumer`` from the first offset to the end offset; the
            last record of an owner wins; a batch that cannot be decoded here stops the read
            (it may hold any owner's claim)
    write   ``KafkaProducer(acks="all")``, every record in order; created when missing

An existing topic of that name that is not compacted or has more than one partition is
refused in one line: its records would expire, and kgitops neither reads nor writes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgitops.cluster.kafka.logtopic import LogTopic
from kgitops.cluster.port import refused
from kgitops.errors import (
    ClusterError,
    ClusterRequestError,
    UnsupportedOperation,
)
from kgitops.model import OWNER_TOPIC
from kgitops.plan.owners import OwnerRecord, latest_at, record_key, record_value

#: The most one read takes from the topic (a record is a few hundred bytes an owner).
MAX_OWNER_TOPIC_BYTES = 64 * 1024 * 1024
#: What the topic is, as a refusal of a topic that is not kgitops' names it.
OWNER_TOPIC_ROLE = "owner record topic"


class OwnerRecords:
    """``read_owners`` / ``record_owners``: a component ``KafkaAdmin`` holds, over ``topic``
    (``model.OWNER_TOPIC``, a ``LogTopic`` with ``OWNER_TOPIC_ROLE``). Its shape is checked
    on a read as before a write: a codec kgitops cannot read back stops both."""

    def __init__(self, topic: LogTopic) -> None:
        self.topic = topic

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
        if self.topic.ready(create=False, writing=True) is None:
            return {}
        records, undecoded = self.topic.read(MAX_OWNER_TOPIC_BYTES)
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
        self.topic.ready(create=True, writing=True)
        failed = next((err for err in self.topic.write(batch) if err), None)
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
