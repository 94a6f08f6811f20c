"""Leftover throttle rates on several brokers of a real Kafka cluster (another tool's, or a
killed apply's) are removed by a reviewed, saved plan: ``plan --out`` then ``apply --plan``
(found on Kafka 4.1.2 when another run had left rates on four brokers: the saved plan was
refused, each broker's ``remove_throttles`` taken for the same action)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kgitops.plan.throttles import RATE_KEYS
from tests.helpers import eventually
from tests.realkafka.kafka_flow_helpers import Inspector, KafkaFolder


@pytest.fixture
def kafka(
    kafka_cluster: Any, tmp_path: Path, topic_prefix: str
) -> Iterator[tuple[KafkaFolder, Inspector]]:
    inspector = Inspector(kafka_cluster.bootstrap)
    yield KafkaFolder(tmp_path, kafka_cluster.bootstrap, topic_prefix), inspector
    inspector.close()


def test_a_saved_plan_removes_leftover_rates_from_several_brokers(
    kafka: tuple[KafkaFolder, Inspector],
) -> None:
    folder, inspector = kafka
    folder.topics({"name": "quiet", "partitions": 1, "replicationFactor": 2})
    leftover = dict.fromkeys(RATE_KEYS, "1000")
    inspector.admin.alter_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(b), leftover) for b in (1, 2)],
        raise_on_unknown=False,
    )
    mine = {f"broker {b}: {k}=1000" for b in (1, 2) for k in RATE_KEYS}
    assert mine <= set(eventually(inspector.throttles, lambda t: mine <= set(t)))
    path, plan = folder.plan()
    removed = {a["broker"] for a in plan["actions"] if a["type"] == "remove_throttles"}
    assert {1, 2} <= removed, json.dumps(plan["actions"])
    folder.apply(path)
    left = eventually(inspector.throttles, lambda t: not mine & set(t), 10)
    assert not mine & set(left), left
