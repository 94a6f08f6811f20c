"""Topics on a test broker for the key-analysis tests (kafka-python, no kgitops code)."""

from __future__ import annotations

import time


def create_topic(bootstrap: str, topic: str, partitions: int, settle: float = 0.5) -> None:
    """A topic of ``partitions`` partitions, replication factor 1, then a moment for the
    brokers to learn of it before anything is produced."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()
    time.sleep(settle)
