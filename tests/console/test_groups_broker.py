"""Consumer groups and lag on the local broker (Tansu) with a real kafka-python producer and
a real consumer group: what Kafka clients see, the broker's quirks included (docs/console.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.cli import main
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.port import NewTopic
from kgitops.model import TopicPartition
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder, group_consumer, kafka_admin, poll_records


def _folder(tmp_path: Path, bootstrap: str) -> Path:
    return cluster_folder(tmp_path, "local", bootstrap=bootstrap, extra="requestTimeoutMs: 60000\n")


def _admin(bootstrap: str) -> KafkaAdmin:
    return kafka_admin(bootstrap, timeout_ms=60_000, name="l")


def _topics(bootstrap: str, names: list[str], partitions: int = 2) -> None:
    admin = _admin(bootstrap)
    try:
        b = admin.describe([]).broker_ids[0]
        results = admin.create_topics(
            [NewTopic(n, {p: (b,) for p in range(partitions)}) for n in names]
        )
        assert all(e is None for e in results.values()), results
    finally:
        admin.close()


def _produce(bootstrap: str, topic: str, records: dict[int, int]) -> None:
    """``records[p]`` records to each partition ``p``, one per produce request (so that the
    end offset is exact)."""
    import kafka

    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    for p, n in records.items():
        for i in range(n):
            producer.send(topic, value=f"v{i}".encode(), partition=p).get(timeout=10)
    producer.close()


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main(["get", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.mark.slow
def test_lag_of_a_real_consumer_group(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import kafka
    from kafka.structs import OffsetAndMetadata

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}orders"
    group = f"{topic_prefix}billing"
    _topics(local_broker, [topic])
    _produce(local_broker, topic, {0: 3, 1: 2})
    consumer = group_consumer(local_broker, group, [topic], client_id="billing-1")
    try:
        assert poll_records(consumer, 5) == 5
        consumer.commit(
            {
                kafka.TopicPartition(topic, 0): OffsetAndMetadata(1, "", -1),
                kafka.TopicPartition(topic, 1): OffsetAndMetadata(2, "", -1),
            }
        )
        lags = _json(capsys, str(folder), "lags", group)
        assert [
            (r["partition"], r["committed"], r["end"], r["lag"]) for r in lags["partitions"]
        ] == [
            (0, 1, 3, 2),
            (1, 2, 2, 0),
        ]
        assert (lags["state"], lags["totalLag"], lags["maxLag"]) == ("Stable", 2, 2)
        members = _json(capsys, str(folder), "members", group)["members"]
        assert len(members) == 1 and members[0]["member"]
        groups = {g["group"]: g for g in _json(capsys, str(folder), "groups")["groups"]}
        assert groups[group]["members"] == 1
        assert groups[group]["topics"] == [topic]
        # Tansu keeps the committed offsets without a __consumer_offsets topic (Kafka would
        # have made it): the internal-topic tests use real Kafka Metadata responses instead
        # (tests/cluster/test_kafka_internal_topics.py, docs/local-broker.md)
        admin = _admin(local_broker)
        try:
            assert admin.describe(["__consumer_offsets"]).topics == {}
        finally:
            admin.close()
    finally:
        consumer.close()


def test_lags_cost_the_same_requests_for_1_topic_as_for_6(
    local_broker: str,
    tmp_path: Path,
    topic_prefix: str,
    count_requests: Counter[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _folder(tmp_path, local_broker)
    seen = []
    for n in (1, 6):
        names = [f"{topic_prefix}lag{n}-{i}" for i in range(n)]
        _topics(local_broker, names)
        admin = _admin(local_broker)
        group = f"{topic_prefix}g{n}"
        offsets = {TopicPartition(t, p): 0 for t in names for p in (0, 1)}
        assert all(e is None for e in admin.alter_group_offsets(group, offsets).values())
        admin.close()
        count_requests.clear()
        data = _json(capsys, str(folder), "lags", group)
        assert len(data["partitions"]) == 2 * n
        seen.append(dict(count_requests))
    assert seen[0] == seen[1], seen
    # connecting (ApiVersions, Metadata), the group's coordinator, the group, its offsets,
    # the partitions' leaders, then the log start and end offsets from each leader
    assert seen[0] == {
        "ApiVersions": 2,
        "Metadata": 2,
        "FindCoordinator": 1,
        "DescribeGroups": 1,
        "OffsetFetch": 1,
        "ListOffsets": 2,
    }


def test_the_topic_filter_costs_no_request(
    local_broker: str,
    tmp_path: Path,
    topic_prefix: str,
    count_requests: Counter[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _folder(tmp_path, local_broker)
    names = [f"{topic_prefix}f-{i}" for i in range(3)]
    _topics(local_broker, names)
    group = f"{topic_prefix}g"
    admin = _admin(local_broker)
    offsets = {TopicPartition(t, p): 0 for t in names for p in (0, 1)}
    assert all(e is None for e in admin.alter_group_offsets(group, offsets).values())
    admin.close()
    seen = {}
    for view in (["lags", group], ["groups"]):
        for narrowed in ([], ["--topic", f"{topic_prefix}f-1"]):
            count_requests.clear()
            data = _json(capsys, str(folder), *view, *narrowed)
            seen[(view[0], bool(narrowed))] = dict(count_requests)
            if view[0] == "lags":
                rows = [(r["topic"], r["partition"]) for r in data["partitions"]]
                expected = [(t, p) for t in (names[1:2] if narrowed else names) for p in (0, 1)]
                assert rows == expected
            else:
                mine = [g for g in data["groups"] if g["group"] == group]
                assert mine[0]["topics"] == (names[1:2] if narrowed else names)
    assert seen[("lags", True)] == seen[("lags", False)]
    assert seen[("groups", True)] == seen[("groups", False)]


@pytest.mark.slow
def test_reset_offsets_on_the_local_broker_refuses_a_live_consumer_then_commits(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import kafka
    from kafka.structs import OffsetAndMetadata

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}reset"
    group = f"{topic_prefix}resetters"
    _topics(local_broker, [topic], partitions=1)
    _produce(local_broker, topic, {0: 4})
    consumer = group_consumer(local_broker, group, [topic])
    tp = kafka.TopicPartition(topic, 0)
    argv = ["reset-offsets", str(folder), "--group", group, "--topic", topic, "--to-earliest"]
    try:
        poll_records(consumer, 4)
        consumer.commit({tp: OffsetAndMetadata(4, "", -1)})
        assert main([*argv, "--yes"]) == 1
        out, err = capsys.readouterr()
        assert out == "" and "has 1 active member(s)" in err and "stop its consumers" in err
    finally:
        consumer.close()
    assert main([*argv, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "          0     4   0          0        4  replays 4" in out
    assert main([*argv, "--format", "json"]) == 0  # now nothing to change
    data = json.loads(capsys.readouterr().out)
    Draft202012Validator(schema("reset-offsets.json")).validate(data)
    assert (data["applied"], data["partitions"][0]["from"], data["partitions"][0]["to"]) == (
        False,
        0,
        0,
    )
    reader = kafka.KafkaConsumer(bootstrap_servers=local_broker, group_id=group)
    try:
        assert reader.committed(tp) == 0  # what another Kafka client reads back
    finally:
        reader.close()
