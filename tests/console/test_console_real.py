"""The console on a real Apache Kafka cluster (the ``kafka_cluster`` fixture) and real
consumer groups (kafka-python ``KafkaConsumer`` with a group id: subscribe, poll, commit):
``get groups|members|lags``, ``reset-offsets``, ``delete-group``, ``tail``, and
``sample-keys`` feeding ``analyze keys``. Every figure kgitops prints is checked against
what Kafka says through another client (end offsets, committed offsets, the records).

One topic serves the module: written once, read by every test."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kgitops.cli import main
from kgitops.placement.partitioner import partition_for
from tests.helpers import cluster_folder, eventually, group_consumer, poll_records, run_cli

if TYPE_CHECKING:
    from kgitops.cluster.kafka.localcluster import KafkaCluster

RUN = os.urandom(3).hex()  # a cluster reused across sessions keeps earlier runs' names
PARTITIONS = 3
KEYS = [f"account-{i % 40}" for i in range(240)] + ["whale"] * 60


@dataclass
class Topic:
    folder: Path
    bootstrap: str
    name: str
    records: list[tuple[int, int, bytes, bytes]]  # (partition, offset, key, value) as acked


def _json(*argv: str) -> Any:
    code, out, err = run_cli(*argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _produce(bootstrap: str, topic: str, keys: list[str]) -> list[tuple[int, int, bytes, bytes]]:
    """Write one record per key with kafka-python's default partitioner (Kafka's murmur2),
    acks=all; (partition, offset, key, value) of each as the broker acknowledged it."""
    import kafka

    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        futures = [
            (
                k.encode(),
                f"value-{i}".encode(),
                producer.send(topic, key=k.encode(), value=f"value-{i}".encode()),
            )
            for i, k in enumerate(keys)
        ]
        producer.flush()
        out = []
        for key, value, future in futures:
            meta = future.get(timeout=30)
            out.append((meta.partition, meta.offset, key, value))
        return out
    finally:
        producer.close()


def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    import kafka
    from kafka.structs import TopicPartition

    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: off for tp, off in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def _committed(bootstrap: str, group: str) -> dict[int, int]:
    """The group's committed offsets, as kafka-python's admin client reads them."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        offsets = admin.list_group_offsets(group).get(group, {})
        return {tp.partition: om.offset for tp, om in offsets.items()}
    finally:
        admin.close()


def _group_ids(bootstrap: str) -> set[str]:
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()}
    finally:
        admin.close()


@pytest.fixture(scope="module")
def topic(kafka_cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Topic:
    """A 3-partition topic written with keyed records. Created with kafka-python, not
    ``kgitops apply``: on a shared cluster an apply also removes throttles no move of its
    own needs (docs/apply.md), which another test may be looking at."""
    folder = tmp_path_factory.mktemp("console")
    name = f"rk-console-{RUN}.orders"
    orders = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: {PARTITIONS}\n"
        "replicationFactor: 3\n"
    )
    cluster_folder(
        folder,
        "real",
        bootstrap=kafka_cluster.bootstrap,
        extra="unmanagedTopics: ignore\n",
        files={"orders.yaml": orders},
    )
    from kafka.admin import KafkaAdminClient, NewTopic

    first = kafka_cluster.bootstrap.split(",")[0]
    admin = KafkaAdminClient(bootstrap_servers=first)
    try:
        admin.create_topics([NewTopic(name, PARTITIONS, 3)])
    finally:
        admin.close()
    records = _produce(first, name, KEYS)
    return Topic(folder, first, name, records)


@pytest.fixture
def member(topic: Topic) -> Iterator[Any]:
    """A live member of a new group that has read and committed every record of the topic
    (the module's tests write some more: read up to the end offsets)."""
    group = f"rk-console-{RUN}-{os.urandom(2).hex()}"
    consumer = group_consumer(topic.bootstrap, group, [topic.name], client_id="billing-1")
    total = sum(_end_offsets(topic.bootstrap, topic.name).values())
    assert poll_records(consumer, total) == total
    consumer.commit()
    consumer.group = group  # type: ignore[attr-defined]
    try:
        yield consumer
    finally:
        consumer.close()


def test_groups_members_and_lags_of_a_live_group_are_what_kafka_says(
    topic: Topic, member: Any
) -> None:
    group = member.group
    later = _produce(topic.bootstrap, topic.name, ["late-1", "late-2", "late-3", "late-4"])
    topic.records.extend(later)  # the module's other tests read them too
    ends = _end_offsets(topic.bootstrap, topic.name)
    committed = _committed(topic.bootstrap, group)
    behind = Counter(p for p, _, _, _ in later)
    assert {p: ends[p] - committed[p] for p in ends} == {p: behind[p] for p in ends}

    folder = str(topic.folder)
    groups = _json("get", folder, "groups", "--topic", topic.name)["groups"]
    mine = [g for g in groups if g["group"] == group]
    assert len(mine) == 1, groups
    assert (mine[0]["state"], mine[0]["members"], mine[0]["topics"]) == (
        "Stable",
        1,
        [topic.name],
    )
    assert mine[0]["totalLag"] == 4 and mine[0]["maxLag"] == max(behind.values())

    members = _json("get", folder, "members", group)["members"]
    assert len(members) == 1 and members[0]["clientId"] == "billing-1"
    assert sorted((p["topic"], p["partition"]) for p in members[0]["partitions"]) == [
        (topic.name, p) for p in range(PARTITIONS)
    ]

    lags = _json("get", folder, "lags", group)
    assert (lags["state"], lags["totalLag"]) == ("Stable", 4)
    rows = {r["partition"]: r for r in lags["partitions"]}
    assert {p: (r["committed"], r["end"], r["lag"]) for p, r in rows.items()} == {
        p: (committed[p], ends[p], behind[p]) for p in range(PARTITIONS)
    }
    assert {r["member"] for r in rows.values()} == {members[0]["member"]}


def test_reset_offsets_and_delete_group_wait_for_the_members_to_go(
    topic: Topic, member: Any
) -> None:
    group, folder = member.group, str(topic.folder)
    before = _committed(topic.bootstrap, group)
    code, out, err = run_cli(
        "reset-offsets", folder, "--group", group, "--topic", topic.name,
        "--to-earliest", "--yes",
    )  # fmt: skip
    assert code == 1 and "billing-1" in err and len(err.strip().splitlines()) == 1, err
    code, out, err = run_cli("delete-group", folder, "--group", group, "--yes")
    assert code == 1 and "billing-1" in err, err
    assert _committed(topic.bootstrap, group) == before  # nothing changed

    member.close()  # leaves the group at once (LeaveGroup)
    assert (
        eventually(
            lambda: run_cli("get", folder, "lags", group, "--format", "json"),
            lambda r: r[0] == 0 and json.loads(r[1])["state"] == "Empty",
        )[0]
        == 0
    )

    shifted = _json(
        "reset-offsets", folder, "--group", group, "--topic", topic.name,
        "--shift-by", "-2", "--partitions", "0", "--yes",
    )  # fmt: skip
    assert shifted["applied"] is True
    assert [(p["partition"], p["from"], p["to"]) for p in shifted["partitions"]] == [
        (0, before[0], before[0] - 2)
    ]
    assert _committed(topic.bootstrap, group) == {**before, 0: before[0] - 2}

    earliest = _json(
        "reset-offsets", folder, "--group", group, "--topic", topic.name,
        "--to-earliest", "--yes",
    )  # fmt: skip
    assert earliest["applied"] is True
    assert _committed(topic.bootstrap, group) == dict.fromkeys(range(PARTITIONS), 0)

    code, out, err = run_cli("delete-group", folder, "--group", group)
    assert code == 0 and group in out + err, out + err  # without --yes: what would go
    assert group in _group_ids(topic.bootstrap)
    code, _out, err = run_cli("delete-group", folder, "--group", group, "--yes")
    assert code == 0, err
    assert group not in _group_ids(topic.bootstrap)
    code, _out, err = run_cli("get", folder, "lags", group)
    assert code == 1 and f"consumer group '{group}' does not exist" in err, err


def test_tail_prints_the_records_kafka_acknowledged(topic: Topic) -> None:
    folder = str(topic.folder)
    code, out, err = run_cli(
        "tail", folder, topic.name, "--from", "earliest", "--max", "1000",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    ends = _end_offsets(topic.bootstrap, topic.name)
    assert len(lines) == sum(ends.values())  # every record, once
    got = {(m["partition"], m["offset"]): (m["key"]["text"], m["value"]["text"]) for m in lines}
    for p, o, k, v in topic.records:
        assert got[(p, o)] == (k.decode(), v.decode())
    assert len(got) == len(topic.records)

    code, out, err = run_cli("tail", folder, topic.name, "--max", "5", "--format", "json")
    assert code == 0, err
    last = [json.loads(line) for line in out.splitlines()]
    assert len(last) == 5
    assert all(m["offset"] < ends[m["partition"]] for m in last)


def test_sample_keys_reads_every_key_on_the_partition_kafka_put_it(
    topic: Topic, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    SAMPLE = tmp_path / "orders.parquet"

    code, _out, err = run_cli(
        "sample-keys", str(topic.folder), "--topic", topic.name, "--out", str(SAMPLE)
    )
    assert code == 0, err
    table = pq.read_table(SAMPLE).to_pydict()
    sampled = Counter(k.decode() for k in table["key"])
    assert sampled == Counter(k.decode() for _, _, k, _ in topic.records)
    assert sum(table["bytes"]) == sum(len(k) + len(v) for _, _, k, v in topic.records)
    for p, _, k, _ in topic.records:  # the producer's partitioner is Kafka's murmur2
        assert partition_for(k, PARTITIONS) == p


@pytest.mark.spark
def test_analyze_keys_on_the_sample_counts_what_kafka_stored(
    topic: Topic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("pyspark")
    sample = tmp_path / "orders.parquet"
    assert (
        main(["sample-keys", str(topic.folder), "--topic", topic.name, "--out", str(sample)]) == 0
    )
    monkeypatch.setenv("KGITOPS_CACHE_DIR", str(tmp_path / "cache"))
    report_file = tmp_path / "report.json"
    code, _out, err = run_cli(
        "analyze", "keys", "--input", str(sample), "--partitions", f"{PARTITIONS},6",
        "--size-column", "bytes", "--out", str(report_file),
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(report_file.read_text())
    import pyarrow.parquet as pq

    keys = [k.decode() for k in pq.read_table(sample).to_pydict()["key"]]
    moved = {k for k in keys if partition_for(k, PARTITIONS) != partition_for(k, 6)}
    # the analysis puts each sampled key where Kafka's producer did: its per-partition counts
    # at the current count are the partitions' end offsets
    ends = _end_offsets(topic.bootstrap, topic.name)
    assert report["partitionCounts"][str(PARTITIONS)]["messages"] == [
        ends[p] for p in range(PARTITIONS)
    ]
    move = report["moves"][0]
    assert (move["from"], move["to"]) == (PARTITIONS, 6)
    assert move["movedKeys"] == len(moved)
    assert move["movedMessages"] == sum(1 for k in keys if k in moved)


def test_tail_follow_ends_in_one_line_when_its_topic_is_deleted(topic: Topic) -> None:
    """Kafka answers a deleted topic's ListOffsets with UNKNOWN_TOPIC_OR_PARTITION, which
    kafka-python retries until the request timeout: the idle check asks the metadata first. A
    Fetch may meet the deletion first (kafka-python's failed refresh of the topic is raised to
    the idle check): the same line, after a fresh list of every topic lacks it."""
    import subprocess
    import sys

    from kafka.admin import KafkaAdminClient, NewTopic

    name = f"rk-console-{RUN}.doomed"
    admin = KafkaAdminClient(bootstrap_servers=topic.bootstrap)
    try:
        admin.create_topics([NewTopic(name, 2, 2)])
        _produce(topic.bootstrap, name, ["before"])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        follower = subprocess.Popen(
            [sys.executable, "-m", "kgitops", "tail", str(topic.folder), name, "--follow"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert follower.stdout is not None
            header = follower.stdout.readline()  # the backlog is out: it follows now
            assert header.startswith("PARTITION") and "before" in follower.stdout.readline()
            admin.delete_topics([name])
            started = time.monotonic()
            _out, err = follower.communicate(timeout=60)
            took = time.monotonic() - started
        finally:
            if follower.poll() is None:
                follower.kill()
                follower.communicate()
    finally:
        admin.close()
    assert follower.returncode == 1, err
    assert err.strip().splitlines() == [
        f"error: topic '{name}' no longer exists on the cluster (deleted while tail followed it)"
    ], err
    assert took < 20, took  # was: the 30 s request timeout after the 5 s idle check


def test_a_consumer_protocol_group_is_described_with_its_members_and_lag(
    topic: Topic, kafka_cluster: KafkaCluster
) -> None:
    """A Kafka 4 consumer-protocol group (KIP-848, ``group.protocol=consumer``: Kafka's own
    console consumer here, kafka-python speaks only the classic protocol). DescribeGroups
    answers it GROUP_ID_NOT_FOUND, "not a classic group" (was: `get` said the group does
    not exist, its committed offsets dropped)."""
    import subprocess

    from kgitops.cluster.kafka.runtime import ensure_runtime

    runtime = ensure_runtime()
    group = f"rk-console-{RUN}-kip848"
    consumer = subprocess.Popen(
        [
            runtime.java,
            "-Xmx128m",
            "-cp",
            runtime.classpath,
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            topic.bootstrap,
            "--topic",
            topic.name,
            "--group",
            group,
            "--from-beginning",
            "--consumer-property",
            "group.protocol=consumer",
            "--consumer-property",
            "auto.commit.interval.ms=500",
            "--consumer-property",
            "client.id=kip848-1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    folder = str(topic.folder)
    try:
        ends = _end_offsets(topic.bootstrap, topic.name)

        def lags() -> Any:
            code, out, _err = run_cli("get", folder, "lags", group, "--format", "json")
            return json.loads(out) if code == 0 else None

        seen = eventually(
            lags,
            lambda d: (
                d is not None
                and d["totalLag"] == 0
                and {r["partition"]: r["committed"] for r in d["partitions"]} == ends
                and all(r["member"] for r in d["partitions"])
            ),
            seconds=90,
        )
        assert seen is not None, "the group never showed"
        assert seen["state"] == "Stable" and seen["totalLag"] == 0, seen
        members = _json("get", folder, "members", group)["members"]
        assert [m["clientId"] for m in members] == ["kip848-1"]
        assert sorted(p["partition"] for p in members[0]["partitions"]) == list(range(PARTITIONS))
        groups = _json("get", folder, "groups", "--topic", topic.name)["groups"]
        mine = [g for g in groups if g["group"] == group]
        assert [(g["state"], g["members"], g["protocol"]) for g in mine] == [
            ("Stable", 1, "uniform")
        ]
        code, _out, err = run_cli("delete-group", folder, "--group", group, "--yes")
        assert code == 1 and "kip848-1" in err, err  # a live member: refused, as for classic
    finally:
        consumer.terminate()
        consumer.wait(timeout=60)
    code, _out, err = eventually(
        lambda: run_cli("delete-group", folder, "--group", group, "--yes"),
        lambda r: r[0] == 0,
        seconds=60,
    )
    assert code == 0, err
    assert group not in _group_ids(topic.bootstrap)


def test_a_deleted_topics_failed_refresh_reaches_the_idle_check_and_is_confirmed(
    topic: Topic,
) -> None:
    """The race the test above met in CI, made deterministic: on Kafka 4.1 a Fetch of a
    deleted topic makes kafka-python refresh the topic's metadata, and a call that waits on
    that refresh (``partitions_for_topic``, as the idle check asks) raises its
    UNKNOWN_TOPIC_OR_PARTITION; the adapter's check confirms it with a Metadata of every topic
    and says "no longer exists", never the raw error."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import UnknownTopicOrPartitionError

    from kgitops.cluster.kafka.tail import _listed
    from kgitops.errors import ClusterRequestError

    name = f"rk-console-{RUN}.doomed-check"
    admin = KafkaAdminClient(bootstrap_servers=topic.bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=topic.bootstrap)
    raw: list[str] = []
    said: list[str] = []
    try:
        admin.create_topics([NewTopic(name, 2, 2)])
        eventually(lambda: consumer.partitions_for_topic(name), lambda ids: ids == {0, 1})
        consumer.assign([TopicPartition(name, p) for p in (0, 1)])
        consumer.seek_to_end()
        for _ in range(4):
            consumer.poll(timeout_ms=200)
        admin.delete_topics([name])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (raw and said):
            consumer.poll(timeout_ms=100)  # its Fetch meets the deletion, refreshes
            try:
                consumer.partitions_for_topic(name)  # what the idle check asked before
            except UnknownTopicOrPartitionError as exc:
                raw.append(str(exc))
            consumer.poll(timeout_ms=100)
            try:
                _listed(consumer, name)
            except ClusterRequestError as exc:
                said.append(str(exc))
    finally:
        consumer.close()
        admin.close()
    assert raw, "kafka-python no longer raises a failed refresh to partitions_for_topic"
    assert said and set(said) == {
        f"topic '{name}' no longer exists on the cluster (deleted while tail followed it)"
    }, said
