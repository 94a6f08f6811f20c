"""How describe() and create_topics() scale with the topic count on the local broker (Tansu).

Prints requests sent (counted at kafka-python's connection layer) and wall-time ratios, 10
topics against 1,000, measured in one run. Run: python benchmarks/bench_kafka_describe.py
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from kafka.net.connection import KafkaConnection

from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.local import start_broker
from kgitops.cluster.port import NewTopic
from kgitops.model import ClusterSpec

COUNTS: Counter[str] = Counter()
_original = KafkaConnection._send_request


def _counting(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
    COUNTS[type(request).__name__.removesuffix("Request")] += 1
    return _original(self, request, *args, **kwargs)


def measure(admin: KafkaAdmin, names: list[str], broker: int) -> tuple[int, float, int, float]:
    topics = [NewTopic(n, {0: (broker,)}, {"retention.ms": "60000"}) for n in names]
    COUNTS.clear()
    t0 = time.perf_counter()
    assert all(e is None for e in admin.create_topics(topics).values())
    create_s, create_n = time.perf_counter() - t0, sum(COUNTS.values())
    COUNTS.clear()
    t0 = time.perf_counter()
    state = admin.describe(names)
    describe_s, describe_n = time.perf_counter() - t0, sum(COUNTS.values())
    assert len(state.topics) == len(names)
    admin.delete_topics(names)
    return create_n, create_s, describe_n, describe_s


def main() -> None:
    KafkaConnection._send_request = _counting
    broker = start_broker()
    try:
        spec = ClusterSpec(name="bench", directory=".", bootstrap_servers=(broker.bootstrap,))
        admin = KafkaAdmin(spec)
        b = admin.describe([]).brokers[0].id
        small = measure(admin, [f"bench.s{i:05d}" for i in range(10)], b)
        large = measure(admin, [f"bench.l{i:05d}" for i in range(1000)], b)
        admin.close()
    finally:
        broker.stop()
    print("                 10 topics   1000 topics   ratio")
    print(f"create requests  {small[0]:9d}   {large[0]:11d}   {large[0] / small[0]:.2f}")
    print(f"create time      {'':9}   {'':11}   {large[1] / small[1]:.1f}x for 100x the topics")
    print(f"describe requests{small[2]:9d}   {large[2]:11d}   {large[2] / small[2]:.2f}")
    print(f"describe time    {'':9}   {'':11}   {large[3] / small[3]:.1f}x for 100x the topics")
    print(f"(absolute, this machine: describe of 1000 topics {large[3] * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
