"""`kgitops get` against the local Kafka-protocol broker (Tansu) through the kafka-python
adapter, and the admin requests it costs: the same for 3 topics as for 30."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder


def _folder(tmp_path: Path, bootstrap: str) -> Path:
    return cluster_folder(tmp_path, "local", bootstrap=bootstrap, extra="requestTimeoutMs: 60000\n")


def _create(bootstrap: str, names: list[str], config: dict[str, str] | None = None) -> None:
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewTopic
    from kgitops.model import ClusterSpec

    spec = ClusterSpec(
        name="local", directory=".", bootstrap_servers=(bootstrap,), request_timeout_ms=60_000
    )
    admin = KafkaAdmin(spec)
    try:
        b = admin.describe([]).broker_ids[0]
        results = admin.create_topics(
            [NewTopic(n, {0: (b,), 1: (b,)}, config or {}) for n in names]
        )
        assert all(e is None for e in results.values()), results
    finally:
        admin.close()


def test_get_reads_the_local_broker(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, local_broker)
    name = f"{topic_prefix}orders"
    _create(local_broker, [name], {"retention.ms": "86400000"})
    assert main(["get", str(folder), "partitions", "--topic", name, "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["partitions"]
    assert [(p["topic"], p["partition"], len(p["replicas"])) for p in parts] == [
        (name, 0, 1),
        (name, 1, 1),
    ]
    assert main(["get", str(folder), "config", name]) == 0
    assert "retention.ms  86400000" in capsys.readouterr().out
    assert main(["get", str(folder), "balance", "--topic", name, "--format", "json"]) == 0
    balance = json.loads(capsys.readouterr().out)
    assert sum(b["replicas"] for b in balance["brokers"]) == 2
    assert main(["get", str(folder), "config", f"{topic_prefix}absent"]) == 1
    assert capsys.readouterr().err == (
        f"error: topic '{topic_prefix}absent' does not exist on the cluster\n"
    )


@pytest.mark.parametrize("view", ["topics", "balance"])
def test_get_costs_the_same_requests_for_3_topics_as_for_30(
    local_broker: str,
    tmp_path: Path,
    topic_prefix: str,
    count_requests: Counter[str],
    view: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _folder(tmp_path, local_broker)
    seen = []
    for n in (3, 30):
        _create(local_broker, [f"{topic_prefix}{view}{n}-{i}" for i in range(n)])
        count_requests.clear()
        assert main(["get", str(folder), view, "--format", "json"]) == 0
        capsys.readouterr()
        seen.append(dict(count_requests))
    assert seen[0] == seen[1]
    # connecting (ApiVersions and Metadata twice: bootstrap, then the broker), the cluster,
    # the topics' metadata and configs, one broker's configs, reassignments in flight (asked
    # by KafkaAdminClient, which first asks Metadata for the controller, once per connection)
    assert seen[0] == {
        "ApiVersions": 2,
        "DescribeCluster": 1,
        "DescribeConfigs": 2,
        "ListPartitionReassignments": 1,
        "Metadata": 3,
    }
