"""A broker killed (SIGKILL) in the middle of a throttled drain, on a real Apache Kafka cluster
(tests/conftest.py ``kafka_crash_cluster``, its own cluster), while a producer writes with
``acks=all``:

* ``kgitops status`` says what is wrong (exit 2, the dead broker named offline, partitions
  under-replicated);
* kgitops' adapter, whose cached "controller" was the broker killed, still sends
  CreatePartitions, AlterPartitionReassignments and ElectLeaders (KRaft's Metadata names a
  random live broker as the controller: KIP-590, ``KRaftMetadataCache.getControllerId``);
* after the broker is back, a new plan and apply converge (a plan after it is empty), no
  replication throttle is left on any broker or topic (DescribeConfigs, read with
  kafka-python), and every record the producer had acknowledged is read back, with its value.

One kill scenario; ``benchmarks/chaos.py`` runs many, at random moments.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kgitops.cluster.kafka.localcluster import KafkaCluster
from tests.helpers import cluster_folder, eventually

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


def kgitops(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "kgitops", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
        check=False,
    )


def write_folder(folder: Path, bootstrap: str, topic: str, *, drain: bool) -> None:
    extra = (
        "unmanagedTopics: ignore\n"
        "reassignment: {throttleBytesPerSec: 300000, maxConcurrentMoves: 2, timeoutSeconds: 600}\n"
        + ("decommission: [4]\n" if drain else "")
    )
    topics = (
        "apiVersion: kgitops/v1\n"
        "kind: Topic\n"
        f"name: {topic}\n"
        "partitions: 4\n"
        "replicationFactor: 3\n"
        "config: {min.insync.replicas: '2'}\n"
    )
    cluster_folder(folder, "crash", bootstrap=bootstrap, extra=extra, files={"topics.yaml": topics})


class Producer:
    """kafka-python, acks=all; remembers every record the cluster acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from kafka import KafkaProducer

        self.topic = topic
        self.acked: dict[bytes, bytes] = {}
        self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._producer = KafkaProducer(
            bootstrap_servers=bootstrap.split(","),
            acks="all",
            retries=5,
            linger_ms=5,
            request_timeout_ms=5000,
            delivery_timeout_ms=30000,
            max_block_ms=10000,
        )
        self._n = 0
        self._thread: threading.Thread | None = None

    def send(self, count: int, size: int) -> None:
        for _ in range(count):
            key = f"k{self._n:08d}".encode()
            value = key * (size // len(key))
            self._n += 1
            future = self._producer.send(self.topic, key=key, value=value)
            future.add_callback(self._ok, key, value)
            future.add_errback(self._err)

    def _ok(self, key: bytes, value: bytes, _meta: Any) -> None:
        with self._lock:
            self.acked[key] = value

    def _err(self, _exc: BaseException) -> None:
        with self._lock:
            self.failed += 1

    def start(self, per_second: int) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    self.send(per_second // 10, 200)
                except Exception:  # a full buffer while a broker is down
                    with self._lock:
                        self.failed += 1
                self._stop.wait(0.1)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        self._producer.flush(60)
        self._producer.close(30)


def read_all(bootstrap: str, topic: str) -> dict[bytes, list[bytes]]:
    """Every record of every partition, from the beginning to the end offsets."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap.split(","),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=1000,
    )
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        end = consumer.end_offsets(parts)
        out: dict[bytes, list[bytes]] = {}
        deadline = time.monotonic() + 120
        while any(consumer.position(tp) < end[tp] for tp in parts):
            assert time.monotonic() < deadline, "the records could not be read back in 120 s"
            for batch in consumer.poll(timeout_ms=1000).values():
                for record in batch:
                    out.setdefault(record.key, []).append(record.value)
        return out
    finally:
        consumer.close()


def throttles_left(bootstrap: str, brokers: list[int], topic: str) -> list[str]:
    """Throttle configs set on any broker or on the topic (DescribeConfigs, every config with
    its source: config_filter='all', keeping the non-default ones)."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), request_timeout_ms=10000)
    try:
        resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in brokers]
        resources.append(ConfigResource(ConfigResourceType.TOPIC, topic))
        answer = admin.describe_configs(resources, config_filter="all")
    finally:
        admin.close()
    left = []
    for kind, by_name in answer.items():
        for name, configs in by_name.items():
            for key in THROTTLE_KEYS:
                entry = configs.get(key)
                if entry is None or entry.get("is_default") or entry.get("config_source") == 5:
                    continue
                if entry.get("value") not in (None, ""):
                    left.append(f"{kind} {name}: {key}={entry['value']}")
    return left


def in_flight(admin: Any, topic: str) -> dict[int, Any]:
    return dict(admin.list_reassignments().get(topic, {}))


def scenario(cluster: KafkaCluster, folder: Path, topic: str) -> None:
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewPartitions, NewTopic
    from kgitops.model import ClusterSpec, TopicPartition

    bootstrap = cluster.bootstrap
    write_folder(folder, bootstrap, topic, drain=False)
    created = kgitops("apply", str(folder), "--yes")
    assert created.returncode == 0, created.stdout + created.stderr

    producer = Producer(bootstrap, topic)
    producer.send(16000, 200)  # ~3.2 MB before the drain: each move copies ~0.8 MB
    producer._producer.flush(60)
    producer.start(per_second=200)

    admin = KafkaAdmin(
        ClusterSpec(
            name="crash",
            directory=str(folder),
            bootstrap_servers=tuple(bootstrap.split(",")),
            request_timeout_ms=15000,
        )
    )
    side = f"{topic}-side"
    apply: subprocess.Popen[str] | None = None
    victim: int | None = None
    try:
        # the broker this adapter will send controller-bound requests to, among 1-3 (4 is
        # the one drained): it is the one killed
        state = eventually(lambda: admin.describe([]), lambda s: s.controller_id in (1, 2, 3), 30)
        victim = state.controller_id
        assert victim in (1, 2, 3)
        a, b = (x for x in (1, 2, 3) if x != victim)
        assert admin.create_topics([NewTopic(side, {0: (a, b)}, {})]) == {side: None}

        write_folder(folder, bootstrap, topic, drain=True)
        apply = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgitops",
                "apply",
                str(folder),
                "--yes",
                "--poll-interval",
                "1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        flying = eventually(lambda: in_flight(admin, topic), bool, 60)
        assert flying, "no reassignment was in flight within 60 s"
        assert admin.describe([]).broker_configs, "the moves are not throttled"
        assert cluster.stop_node(cluster.node(victim), kill=True)
        # read at once, while Metadata may still list the dead broker: it is down, not an error
        seen = admin.describe([topic])
        assert topic in seen.topics
        assert [b.id for b in seen.brokers if not b.online] in ([], [victim])

        # status: the dead broker named, under-replicated partitions, exit 2
        status = eventually(
            lambda: kgitops("status", str(folder)),
            lambda r: f"offline: {victim}" in r.stdout,
            30,
        )
        assert status.returncode == 2, status.stdout + status.stderr
        first = status.stdout.splitlines()[:2]
        assert f"offline: {victim}" in first[0], status.stdout
        assert first[1].startswith("UNHEALTHY") and "under-replicated" in first[1], status.stdout

        # the adapter's controller was the broker killed: controller-bound calls still go
        assert admin.create_partitions([NewPartitions(side, 2, {1: (a, b)})]) == {side: None}
        assert admin.alter_reassignments({TopicPartition(side, 0): (b, a)}) == {
            TopicPartition(side, 0): None
        }
        assert admin.elect_preferred_leaders([TopicPartition(side, 1)]) == {
            TopicPartition(side, 1): None
        }

        out, _ = apply.communicate(timeout=300)
        print(f"apply during the kill: exit {apply.returncode}\n{out}")
    finally:
        if apply is not None and apply.poll() is None:
            apply.kill()
            apply.wait()
        if victim is not None:
            cluster.start_node(cluster.node(victim))
        admin.close()

    converge = kgitops("apply", str(folder), "--yes", "--poll-interval", "1", timeout=600)
    assert converge.returncode == 0, converge.stdout + converge.stderr
    replan = eventually(
        lambda: kgitops("plan", str(folder), "--detailed-exitcode"),
        lambda r: r.returncode != 2,
        15,
    )
    assert replan.returncode == 0, replan.stdout + replan.stderr
    assert throttles_left(bootstrap, [b.id for b in cluster.brokers], topic) == []

    producer.close()
    assert len(producer.acked) >= 16000
    got = read_all(bootstrap, topic)
    lost = [k for k in producer.acked if k not in got]
    assert not lost, f"{len(lost)} acknowledged record(s) lost, e.g. {lost[:3]}"
    wrong = [k for k, v in producer.acked.items() if any(g != v for g in got[k])]
    assert not wrong, f"{len(wrong)} record(s) read back with another value"


def test_broker_killed_mid_drain_status_reconverge_no_loss(
    kafka_crash_cluster: KafkaCluster, tmp_path: Path, topic_prefix: str
) -> None:
    scenario(kafka_crash_cluster, tmp_path / "crash", f"{topic_prefix}orders")
