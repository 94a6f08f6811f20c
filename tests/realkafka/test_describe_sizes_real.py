"""Partition sizes of ``describe(topics)`` on a real Apache Kafka cluster: the DescribeLogDirs
requests name the topics asked for, so a broker lists those replicas only.

With ``topics=None`` (Kafka's DescribeLogDirsRequest.json: a null Topics means every
partition) each broker listed every replica it holds; on the peers benchmark's cluster of
4,000 topics each read of the 4 moving topics took 1.2-2.6 s, and apply's reassign loop reads
them at every poll: the drain's time grew with the cluster, not with its own topics.
"""

from __future__ import annotations

import time
from typing import Any

from kafka import KafkaProducer
from kafka.protocol.admin import DescribeLogDirsRequest

from kgitops.cluster.port import NewTopic
from tests.helpers import kafka_admin


def test_describe_of_some_topics_asks_their_log_dirs_only(kafka_cluster: Any, topic_prefix: str):
    admin = kafka_admin(kafka_cluster.bootstrap)
    asked, other = f"{topic_prefix}sized", f"{topic_prefix}other"
    try:
        created = admin.create_topics(
            [NewTopic(asked, {0: (1, 2), 1: (2, 3)}, {}), NewTopic(other, {0: (3, 1)}, {})]
        )
        assert created == {asked: None, other: None}
        producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap.split(","))
        for topic, partitions in ((asked, (0, 1)), (other, (0,))):
            for p in partitions:
                for _ in range(20):
                    producer.send(topic, value=b"x" * 1000, partition=p)
        producer.flush(60)
        producer.close(30)

        sent: list[Any] = []
        transport = admin._reads._transport
        send_each = transport.send_each

        def recording(requests: Any) -> Any:
            sent.extend(r for r in requests.values() if isinstance(r, DescribeLogDirsRequest))
            return send_each(requests)

        transport.send_each = recording  # type: ignore[method-assign]
        deadline = time.monotonic() + 30
        while True:
            sent.clear()
            state = admin.describe([asked])
            sizes = {p: s.size_bytes for p, s in state.topics[asked].partitions.items()}
            if all((s or 0) >= 20_000 for s in sizes.values()) or time.monotonic() > deadline:
                break
            admin.sleep(0.5)
        assert all((s or 0) >= 20_000 for s in sizes.values()), sizes
        assert set(state.topics) == {asked}
        assert sent, "no DescribeLogDirs request was sent"
        for request in sent:
            named = {(t.topic, tuple(t.partitions)) for t in request.topics or ()}
            assert named == {(asked, (0, 1))}, request

        # the whole cluster's describe still lists every partition's size
        sent.clear()
        everything = admin.describe()
        assert sent and all(r.topics is None for r in sent)
        assert (everything.topics[other].partitions[0].size_bytes or 0) >= 20_000
        assert {p: s.size_bytes for p, s in everything.topics[asked].partitions.items()} == sizes
    finally:
        admin.delete_topics([asked, other])
        admin.close()
