"""The same script on the simulated cluster and on real Apache Kafka 4.1 (issue 28): what a
user can observe -- leader, ISR, replicas, the end offset consumers see (the high watermark)
and what a producer gets -- must agree.

The brokers die (SIGKILL) in ``kafka_crash_cluster``, a cluster of its own; the simulated
cluster is given the real one's ``broker.session.timeout.ms`` (3 s) and Kafka version. Real
Kafka is read with kafka-python only, never through kgitops' adapter.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kgitops.cluster.kafka.localcluster import KafkaCluster
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker

pytestmark = pytest.mark.slow

T = TypeVar("T")
VALUE = b"v" * 1000  # about 1 KiB a record, as the simulation counts them
RECORD = 1024


def eventually(read: Callable[[], T], ok: Callable[[T], bool], seconds: float = 30) -> T:
    """``read()`` until ``ok``; a read that fails (a client that met the dead broker) is
    tried again, and re-raised only at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = read()
        except Exception:  # kafka-python: connection refused to a broker just killed
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.5)
            continue
        if ok(value) or time.monotonic() >= deadline:
            return value
        time.sleep(0.5)


class Real:
    """The real cluster, through kafka-python."""

    def __init__(self, cluster: KafkaCluster, topic: str) -> None:
        from kafka import KafkaAdminClient

        self.cluster = cluster
        self.topic = topic
        self.admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap.split(","))

    def create(self, replicas: list[int], min_isr: int) -> None:
        from kafka.admin import NewTopic as KNewTopic

        self.admin.create_topics(
            [
                KNewTopic(
                    self.topic,
                    replica_assignments={0: replicas},
                    topic_configs={"min.insync.replicas": str(min_isr)},
                )
            ]
        )

    def partition(self) -> tuple[int | None, list[int], list[int], int]:
        """(leader, replicas, ISR, leader epoch) of partition 0, from a fresh admin client
        (kafka-python's caches a dead controller)."""
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=self.live_bootstrap())
        try:
            (t,) = admin.describe_topics([self.topic])
        finally:
            admin.close()
        (p,) = t["partitions"]
        leader = p["leader_id"] if p["leader_id"] >= 0 else None
        return leader, list(p["replica_nodes"]), sorted(p["isr_nodes"]), p["leader_epoch"]

    def live_bootstrap(self) -> list[str]:
        return [f"127.0.0.1:{n.port}" for n in self.cluster.brokers if self.cluster.running(n)]

    def end_offset(self) -> int:
        """ListOffsets LATEST (READ_UNCOMMITTED): the high watermark."""
        from kafka import KafkaConsumer, TopicPartition

        consumer = KafkaConsumer(bootstrap_servers=self.live_bootstrap())
        try:
            tp = TopicPartition(self.topic, 0)
            return int(consumer.end_offsets([tp])[tp])
        finally:
            consumer.close()

    def produce(self, count: int, acks: Any) -> int:
        """Send ``count`` records to partition 0; how many the cluster acknowledged."""
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.live_bootstrap(),
            acks=acks,
            retries=2,
            request_timeout_ms=3000,
            delivery_timeout_ms=8000,
            max_block_ms=8000,
            linger_ms=0,
        )
        futures = [producer.send(self.topic, value=VALUE, partition=0) for _ in range(count)]
        acked = 0
        for f in futures:
            try:
                f.get(timeout=15)
                acked += 1
            except Exception:  # NotEnoughReplicas, timeouts: not acknowledged
                pass
        producer.close(timeout=5)
        return acked

    def kill(self, broker: int) -> None:
        self.cluster.stop_node(self.cluster.node(broker), kill=True)

    def pause(self, broker: int, seconds: float) -> None:
        """SIGSTOP the broker's JVM for ``seconds`` (a stall, as a long GC pause), then
        SIGCONT."""
        pid = self.cluster.node(broker).pid
        assert pid is not None and self.cluster.running(self.cluster.node(broker))
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)

    def restart_stopped(self) -> None:
        """Leave the shared crash cluster whole for the next test."""
        for n in self.cluster.brokers:
            if not self.cluster.running(n):
                self.cluster.start_node(n)

    def start(self, broker: int) -> None:
        self.cluster.start_node(self.cluster.node(broker))


class Sim:
    """The simulated cluster, told the real one's session timeout and Kafka version."""

    def __init__(self, path: Path, brokers: list[Broker], topic: str) -> None:
        self.topic = topic
        self.path = str(path)
        self.brokers = brokers
        sim = self.open()
        data = json.loads(path.read_text())
        data["brokerDefaults"] = {
            "broker.session.timeout.ms": "3000",
            "replica.lag.time.max.ms": "10000",
        }
        path.write_text(json.dumps(data))
        del sim

    def open(self) -> SimulatedCluster:
        return SimulatedCluster.open(
            self.path,
            self.brokers,
            kafka_version=(4, 1),
            eligible_leader_replicas=True,
            leader_balance_seconds=None,
        )

    def create(self, replicas: list[int], min_isr: int) -> None:
        sim = self.open()
        sim.create_topics(
            [NewTopic(self.topic, {0: tuple(replicas)}, {"min.insync.replicas": str(min_isr)})]
        )

    def partition(self) -> tuple[int | None, list[int], list[int], int]:
        state = self.open().describe()
        p = state.topics[self.topic].partitions[0]
        offsets = state.offsets_of(self.topic, 0)
        assert offsets is not None
        return p.leader, list(p.replicas), sorted(p.isr or ()), offsets.leader_epoch

    def end_offset(self) -> int:
        sim = self.open()
        return sim.list_offsets([(self.topic, 0)], -1)[(self.topic, 0)]

    def produce(self, count: int, acks: Any) -> int:
        """``count`` records of RECORD bytes in one simulated second; how many the leader
        appended (its log end offset's growth)."""
        sim = self.open()

        def leader_leo() -> int:
            state = sim.describe()
            leader = state.topics[self.topic].partitions[0].leader
            offsets = state.offsets_of(self.topic, 0)
            assert offsets is not None and leader is not None
            return dict(offsets.log_end_offsets)[leader]

        before = leader_leo()
        sim.set_produce_rate(self.topic, count * RECORD, acks="all" if acks == "all" else "1")
        sim.advance(1)
        sim.set_produce_rate(self.topic, 0)
        return leader_leo() - before

    def kill(self, broker: int) -> None:
        sim = self.open()
        sim.stop_broker(broker)
        sim.advance(sim.state.session_timeout)

    def pause(self, broker: int, seconds: float) -> None:
        sim = self.open()
        sim.stop_broker(broker, resume_after=seconds)
        sim.advance(seconds)

    def start(self, broker: int) -> None:
        sim = self.open()
        sim.restore_broker(broker)
        sim.advance(5)


def test_brokers_dying_under_an_acks_all_producer_look_the_same_on_both(
    kafka_crash_cluster: KafkaCluster, tmp_path: Path, topic_prefix: str
) -> None:
    topic = f"{topic_prefix}truth"
    brokers = [Broker(n.id, n.rack) for n in kafka_crash_cluster.brokers]
    real = Real(kafka_crash_cluster, topic)
    sim = Sim(tmp_path / "sim.json", brokers, topic)
    try:
        _dying_script(real, sim)
    finally:
        real.restart_stopped()


def _dying_script(real: Real, sim: Sim) -> None:
    seen: list[tuple[str, object, object]] = []

    def same(step: str, read: Callable[[Any], object], settle: Callable[[object], bool]) -> None:
        got_sim = read(sim)
        got_real = eventually(lambda: read(real), lambda v: v == got_sim or settle(v))
        seen.append((step, got_sim, got_real))
        assert got_real == got_sim, f"{step}: simulated {got_sim}, real {got_real}"

    for side in (real, sim):
        side.create([1, 2, 3], min_isr=2)
    same("created", lambda s: s.partition(), lambda v: False)

    assert real.produce(100, "all") == sim.produce(100, "all") == 100
    same("100 acks=all records: HW", lambda s: s.end_offset(), lambda v: False)
    assert sim.end_offset() == 100

    # a follower dies: fenced after broker.session.timeout.ms, it leaves the ISR
    for side in (real, sim):
        side.kill(3)
    same("broker 3 fenced", lambda s: s.partition(), lambda v: False)
    assert sim.partition() == (1, [1, 2, 3], [1, 2], 0)
    assert real.produce(20, "all") == sim.produce(20, "all") == 20, "ISR 2 = min ISR 2"

    # a second one: ISR [1] < min.insync.replicas 2
    for side in (real, sim):
        side.kill(2)
    same("broker 2 fenced", lambda s: s.partition(), lambda v: False)
    assert sim.partition() == (1, [1, 2, 3], [1], 0)
    hw = sim.end_offset()
    assert real.produce(10, "all") == sim.produce(10, "all") == 0, "NOT_ENOUGH_REPLICAS"
    same("acks=all refused: HW unchanged", lambda s: s.end_offset(), lambda v: False)
    # acks=1 is written to the leader, but from 3.7 the HW stays under min ISR
    assert real.produce(30, 1) == sim.produce(30, 1) == 30
    same("acks=1 under min ISR: HW frozen", lambda s: s.end_offset(), lambda v: False)
    assert sim.end_offset() == hw == 120

    # broker 2 returns: it catches up, rejoins the ISR, the HW moves to the log end
    for side in (real, sim):
        side.start(2)
    same("broker 2 back", lambda s: s.partition(), lambda v: False)
    assert sim.partition() == (1, [1, 2, 3], [1, 2], 0)
    same("HW after the ISR grew", lambda s: s.end_offset(), lambda v: False)
    assert sim.end_offset() == 150
    for side in (real, sim):
        side.start(3)
    same("broker 3 back", lambda s: s.partition(), lambda v: False)
    assert sim.partition() == (1, [1, 2, 3], [1, 2, 3], 0)

    # the leader dies: the next in-sync replica leads, one leader epoch later
    for side in (real, sim):
        side.kill(1)
    same("leader 1 fenced", lambda s: s.partition(), lambda v: False)
    assert sim.partition() == (2, [1, 2, 3], [2, 3], 1)
    assert real.produce(10, "all") == sim.produce(10, "all") == 10
    same("HW after the failover", lambda s: s.end_offset(), lambda v: False)
    assert sim.end_offset() == 160


def test_min_isr_above_rf_takes_acks_all_writes_on_kafka_4_1_as_simulated(
    kafka_cluster: KafkaCluster, tmp_path: Path, topic_prefix: str
) -> None:
    """Kafka 3.7+ caps min.insync.replicas at the replica count (Partition.effectiveMinIsr):
    an RF-2 topic with min.insync.replicas 3 takes acks=all writes, and neither side calls
    it under min ISR."""
    topic = f"{topic_prefix}capped"
    brokers = [Broker(n.id, n.rack) for n in kafka_cluster.brokers]
    real = Real(kafka_cluster, topic)
    sim = Sim(tmp_path / "sim.json", brokers, topic)
    for side in (real, sim):
        side.create([1, 2], min_isr=3)
    assert eventually(real.partition, lambda v: v[0] is not None) == sim.partition()
    assert sim.partition() == (1, [1, 2], [1, 2], 0)
    assert real.produce(10, "all") == sim.produce(10, "all") == 10
    assert eventually(real.end_offset, lambda v: v == 10) == sim.end_offset() == 10


def test_a_paused_broker_is_fenced_only_past_the_session_timeout_on_both(
    kafka_crash_cluster: KafkaCluster, tmp_path: Path, topic_prefix: str
) -> None:
    """simulate pause-broker against SIGSTOP: a 1 s stall changes nothing the controller
    shows (broker.session.timeout.ms is 3 s); a 6 s stall of the leader fences it, the
    leadership moves (one epoch later) and the broker rejoins the ISR once it runs again."""
    topic = f"{topic_prefix}pause"
    brokers = [Broker(n.id, n.rack) for n in kafka_crash_cluster.brokers]
    real = Real(kafka_crash_cluster, topic)
    sim = Sim(tmp_path / "sim.json", brokers, topic)
    try:
        for side in (real, sim):
            side.create([1, 2, 3], min_isr=2)
        start = sim.partition()
        assert start == (1, [1, 2, 3], [1, 2, 3], 0)
        assert eventually(real.partition, lambda v: v == start) == start
        for side in (real, sim):
            side.pause(2, 1)
        time.sleep(2)  # what would have changed has reached the brokers
        assert sim.partition() == start
        assert real.partition() == start, "a stall shorter than the session timeout"
        for side in (real, sim):
            side.pause(1, 6)
        moved = sim.partition()
        assert moved[0] == 2 and moved[3] == 1
        sim.open().advance(5)
        back = sim.partition()
        assert back == (2, [1, 2, 3], [1, 2, 3], 1)
        assert eventually(real.partition, lambda v: v == back) == back
    finally:
        real.restart_stopped()
