"""Apply's preflight for the passwordVersion topic (``ready_scram_versions``): before the
plan's topics are created, the topic is made ready (created when missing, kgitops-shaped, a
leader) and the principal's rights on it are checked, so a cluster where the version cannot
be recorded is refused in one line, exit 1, nothing changed."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest

from kgitops.errors import ClusterError, ClusterRequestError
from tests.access.test_password_versions import Partition, Scripted

TOPIC = "_kgitops-password-versions"
READ, WRITE, DESCRIBE = "READ", "WRITE", "DESCRIBE"


class Cluster(Scripted):
    """A cluster whose version topic exists or not, and the principal's ``operations`` on it
    as Metadata reports them (``describe_topics``)."""

    def __init__(self, *, exists: bool, operations: Collection[str] | None) -> None:
        broker = Partition(1 if exists else -1, code=0 if exists else 3, operations=operations)
        super().__init__(broker)
        self.created = broker.created
        self.sent = broker.sent


@pytest.mark.parametrize(
    "operations", [None, frozenset(), frozenset({DESCRIBE, READ, WRITE}), frozenset({READ})]
)
def test_a_topic_that_may_be_written_or_whose_rights_are_not_reported_is_ready(
    operations: frozenset[str] | None,
) -> None:
    """None: Metadata before v8, or Tansu; none at all, or no DESCRIBE: not a real answer
    (Kafka lists a topic only to a principal that may describe it)."""
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
    assert "DescribeConfigs" not in cluster.sent


@pytest.mark.parametrize(
    ("operations", "missing", "grant"),
    [
        ({DESCRIBE, READ}, "may not write", "grant it Write on that topic"),
        ({DESCRIBE, WRITE}, "may not read", "grant it Read on that topic"),
        ({DESCRIBE}, "may not write or read", "grant it Write and Read on that topic"),
    ],
)
def test_a_topic_the_principal_may_not_write_or_read_is_refused_in_one_line(
    operations: set[str], missing: str, grant: str
) -> None:
    cluster = Cluster(exists=True, operations=operations)
    with pytest.raises(ClusterRequestError) as info:
        cluster.ready_scram_versions()
    message = str(info.value)
    assert f"{missing} the passwordVersion topic {TOPIC}:" in message
    assert grant in message and "\n" not in message
    assert "created just now" not in message and not info.value.changed


def test_a_topic_created_by_the_preflight_that_may_not_be_written_says_so() -> None:
    cluster = Cluster(exists=False, operations={DESCRIBE, READ, "CREATE"})
    with pytest.raises(ClusterRequestError) as info:
        cluster.ready_scram_versions()
    assert f"may not write the passwordVersion topic {TOPIC} (created just now, empty):" in str(
        info.value
    )
    assert info.value.changed  # apply says something was changed: the topic
    assert len(cluster.created) == 1


def test_a_topic_that_cannot_be_created_is_refused_naming_it() -> None:
    cluster = Cluster(exists=False, operations=None)

    def refused(topics: Any) -> Any:
        return {
            t.name: ClusterRequestError(
                f"{t.name}: TOPIC_AUTHORIZATION_FAILED", code="TOPIC_AUTHORIZATION_FAILED"
            )
            for t in topics
        }

    cluster.broker.create_topics = refused  # type: ignore[method-assign]
    with pytest.raises(ClusterError) as info:
        cluster.ready_scram_versions()
    assert str(info.value).startswith(f"the passwordVersion topic {TOPIC} is not available (")
    assert "TOPIC_AUTHORIZATION_FAILED" in str(info.value)
