"""Apply's preflight for the passwordVersion topic (``ready_scram_versions``): before the
plan's topics are created, the topic is made ready (created when missing, kgitops-shaped, a
leader) and the principal's rights on it are checked, so a cluster where the version cannot
be recorded is refused in one line, exit 1, nothing changed."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest
from kafka.protocol.admin import DescribeConfigsRequest
from kafka.protocol.metadata import MetadataRequest

from kgitops.cluster.kafka import version_records as r
from kgitops.cluster.kafka import versions as v
from kgitops.cluster.port import NewTopic
from kgitops.errors import ClusterError
from tests.access.test_password_versions import COMPACTED, _configs_answer

TOPIC = "_kgitops-password-versions"
READ, WRITE, DESCRIBE = 1 << 3, 1 << 4, 1 << 8


class Cluster(v.PasswordVersions):
    """Metadata (with the principal's operations on the topic), DescribeConfigs and
    CreateTopics of a cluster whose version topic exists or not."""

    _timeout_ms = 2000

    def __init__(self, *, exists: bool, operations: int | None) -> None:
        self._spec = NS(password_version_topic=TOPIC, decommission=())
        self.exists = exists
        self.operations = operations
        self.created: list[NewTopic] = []
        self.sent: list[str] = []

    def _send(self, request: Any, node_id: int | None = None) -> Any:
        self.sent.append(type(request).__name__)
        if isinstance(request, DescribeConfigsRequest):
            return _configs_answer(COMPACTED)
        assert isinstance(request, MetadataRequest)
        parts = [NS(partition_index=0, leader_id=1)] if self.exists else []
        topic = NS(
            name=TOPIC,
            error_code=0 if self.exists else 3,
            partitions=parts,
            topic_authorized_operations=self.operations,
        )
        return NS(brokers=[NS(node_id=1, rack=None)], topics=[topic])

    def create_topics(self, topics: Any) -> Any:
        self.created.extend(topics)
        self.exists = True
        return {t.name: None for t in topics}


@pytest.mark.parametrize("operations", [None, r.NOT_REPORTED, 0, DESCRIBE | READ | WRITE])
def test_a_topic_that_may_be_written_or_whose_rights_are_not_reported_is_ready(
    operations: int | None,
) -> None:
    cluster = Cluster(exists=True, operations=operations)
    cluster.ready_scram_versions()
    assert cluster.created == []
    sent = len(cluster.sent)
    cluster.ready_scram_versions()  # once per adapter
    assert len(cluster.sent) == sent


def test_a_missing_topic_is_created_by_the_preflight() -> None:
    cluster = Cluster(exists=False, operations=None)
    cluster.ready_scram_versions()
    [topic] = cluster.created
    assert topic.name == TOPIC and topic.config["cleanup.policy"] == "compact"
    # a topic made just now is not asked for its configs (a new topic's DescribeConfigs may
    # still answer UNKNOWN_TOPIC_OR_PARTITION on a busy Kafka)
    assert "DescribeConfigsRequest" not in cluster.sent


@pytest.mark.parametrize(
    ("operations", "missing", "grant"),
    [
        (DESCRIBE | READ, "may not write", "grant it Write on that topic"),
        (DESCRIBE | WRITE, "may not read", "grant it Read on that topic"),
        (DESCRIBE, "may not write or read", "grant it Write and Read on that topic"),
    ],
)
def test_a_topic_the_principal_may_not_write_or_read_is_refused_in_one_line(
    operations: int, missing: str, grant: str
) -> None:
    cluster = Cluster(exists=True, operations=operations)
    with pytest.raises(ClusterError) as info:
        cluster.ready_scram_versions()
    message = str(info.value)
    assert f"{missing} the passwordVersion topic {TOPIC}:" in message
    assert grant in message and "\n" not in message


def test_a_topic_that_cannot_be_created_is_refused_naming_it() -> None:
    cluster = Cluster(exists=False, operations=None)

    def refused(topics: Any) -> Any:
        from kgitops.errors import ClusterRequestError

        return {
            t.name: ClusterRequestError(
                f"{t.name}: TOPIC_AUTHORIZATION_FAILED", code="TOPIC_AUTHORIZATION_FAILED"
            )
            for t in topics
        }

    cluster.create_topics = refused  # type: ignore[method-assign]
    with pytest.raises(ClusterError) as info:
        cluster.ready_scram_versions()
    assert str(info.value).startswith(f"the passwordVersion topic {TOPIC} is not available (")
    assert "TOPIC_AUTHORIZATION_FAILED" in str(info.value)
