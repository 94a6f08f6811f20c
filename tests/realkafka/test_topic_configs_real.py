"""Topic configs on a real Apache Kafka cluster: every config kgitops knows and Kafka 4.1
has is set by apply, read back as set (kafka-python DescribeConfigs) and re-planned empty;
one Kafka does not have is an error at its position before anything changes.

Kafka 4.1.2 refuses ``message.format.version``, ``message.downconversion.enable`` and
``message.timestamp.difference.max.ms`` (removed in 4.0, KIP-724 / KIP-937) and trunk's
``remote.copy.lag.ms``/``remote.copy.lag.bytes`` (KIP-1241) with INVALID_CONFIG "Unknown topic
config name" (LogConfig.validateNames); kgitops used to plan them and stop half way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kgitops.spec.config_table import CONFIGS
from kgitops.spec.topic_configs import normalize_config
from tests.realkafka.kafka_flow_helpers import Inspector, KafkaFolder

# Not in Kafka 4.1: removed in 4.0, or only on Kafka's trunk.
NOT_IN_4_1 = {
    "message.downconversion.enable",
    "message.format.version",
    "message.timestamp.difference.max.ms",
    "remote.copy.lag.bytes",
    "remote.copy.lag.ms",
}
# A valid value other than Kafka's default for each config Kafka 4.1 has (tiered storage is
# off on the cluster, so remote.storage.enable stays false).
VALUES = {
    "cleanup.policy": "compact,delete",
    "compression.type": "lz4",
    "compression.gzip.level": "5",
    "compression.lz4.level": "10",
    "compression.zstd.level": "-5",
    "delete.retention.ms": "2d",
    "file.delete.delay.ms": "30000",
    "flush.messages": "1000",
    "flush.ms": "5000",
    "index.interval.bytes": "8192",
    "local.retention.bytes": "-1",
    "local.retention.ms": "-1",
    "max.compaction.lag.ms": "86400000",
    "max.message.bytes": "2MiB",
    "message.timestamp.after.max.ms": "7200000",
    "message.timestamp.before.max.ms": "86400000",
    "message.timestamp.type": "LogAppendTime",
    "min.cleanable.dirty.ratio": "0.25",
    "min.compaction.lag.ms": "1000",
    "min.insync.replicas": "2",
    "preallocate": "true",
    "remote.log.copy.disable": "true",
    "remote.log.delete.on.disable": "true",
    "retention.bytes": "1GiB",
    "retention.ms": "infinite",
    "segment.bytes": "2MiB",
    "segment.index.bytes": "1MiB",
    "segment.jitter.ms": "1000",
    "segment.ms": "1h",
    "unclean.leader.election.enable": "true",
}


@pytest.fixture
def kafka(
    kafka_cluster: Any, tmp_path: Path, topic_prefix: str
) -> Iterator[tuple[KafkaFolder, Inspector]]:
    inspector = Inspector(kafka_cluster.bootstrap)
    yield KafkaFolder(tmp_path, kafka_cluster.bootstrap, topic_prefix), inspector
    inspector.close()


def described(inspector: Inspector, topic: str) -> dict[str, dict[str, Any]]:
    answer = inspector.admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
    )
    return answer["topic"][topic]  # type: ignore[no-any-return]


def test_kafka_4_1_lists_the_topic_configs_kgitops_knows_but_the_removed_and_trunk_ones(
    kafka: tuple[KafkaFolder, Inspector],
) -> None:
    folder, inspector = kafka
    folder.topics({"name": "probe", "partitions": 1, "replicationFactor": 2})
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    listed = set(described(inspector, folder.name("probe")))
    assert listed == set(CONFIGS) - NOT_IN_4_1
    assert set(VALUES) == listed - {
        "remote.storage.enable",
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
    }


def test_every_config_kafka_has_is_applied_as_written_and_replans_empty(
    kafka: tuple[KafkaFolder, Inspector],
) -> None:
    folder, inspector = kafka
    folder.topics({"name": "compacted", "partitions": 1, "replicationFactor": 3, "config": VALUES})
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    got = described(inspector, folder.name("compacted"))
    for key, value in VALUES.items():
        assert got[key]["config_source"] == "DYNAMIC_TOPIC_CONFIG", key
        assert got[key]["value"] == normalize_config(key, value), key
    folder.replan_is_empty()


@pytest.mark.parametrize(
    "key, value", [("message.format.version", "3.0-IV1"), ("remote.copy.lag.ms", "100")]
)
def test_a_config_the_cluster_lacks_stops_plan_and_apply_before_anything_changes(
    kafka: tuple[KafkaFolder, Inspector], key: str, value: str
) -> None:
    folder, inspector = kafka
    old = {"name": "old", "partitions": 1, "replicationFactor": 2}
    folder.topics(old)
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    # added to an existing topic, and on a new one (alone: the plan describes no topic)
    for docs in (
        [{**old, "config": {key: value}}],
        [{"name": "new", "partitions": 1, "replicationFactor": 2, "config": {key: value}}],
    ):
        folder.topics(*docs)
        for argv in (["plan", str(folder.dir)], ["apply", str(folder.dir), "--yes"]):
            code, out, err = folder.cli(*argv)
            assert code == 1, out + err
            lines = [x for x in err.splitlines() if "error:" in x]
            assert len(lines) == 1, err
            assert "topics.yaml:7:" in lines[0] and "does not know this topic config" in lines[0]
            assert f"{key}: cluster 'kafka'" in lines[0]
    assert folder.name("new") not in inspector.admin.list_topics()
    own = {
        k
        for k, e in described(inspector, folder.name("old")).items()
        if e["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    }
    assert own == set()
