"""The whole plan, YAML to JSON, at scale: 10,000 topics x 100 partitions (RF 3) against a
snapshot of 60 brokers in 3 racks. Goal: under 10 s and under 2 GB on a 2-core machine.

Two variants, each in its own process so peak RSS (``resource.getrusage``) is its own:

* ``existing``: every topic exists, placed as Kafka would place it: the plan is empty;
* ``half-new``: every other topic is missing: 5,000 topics are created, each with the start
  index that best evens out preferred leaders given everything planned before it.

``--live`` also runs ``plan`` against the local Kafka-protocol broker (Tansu) with 10 and with
1,000 managed topics and counts the admin requests sent (at kafka-python's connection layer):
the describe is batched, so the count does not grow with the number of topics.

Run: ``python benchmarks/plan.py [--topics 10000] [--partitions 100] [--live]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any

BROKERS = 60
RACKS = 3


def _brokers() -> list[dict[str, Any]]:
    return [{"id": i, "rack": f"az{i % RACKS + 1}"} for i in range(BROKERS)]


def generate(root: str, topics: int, partitions: int, *, half_new: bool) -> tuple[str, str]:
    """A cluster folder with ``topics`` Topic docs (100 per file) and a state JSON file."""
    from kgitops.model import Broker
    from kgitops.placement.assignment import assign_replicas

    folder = os.path.join(root, "prod")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "cluster.yaml"), "w") as f:
        f.write(
            "apiVersion: kgitops/v1\nkind: Cluster\nname: prod\n"
            'bootstrapServers: ["kafka-1:9092"]\n'
            "reassignment: {throttleBytesPerSec: 50000000}\n"
        )
    brokers = [Broker(b["id"], b["rack"]) for b in _brokers()]
    placed = {s: assign_replicas(brokers, partitions, 3, start_index=s) for s in range(BROKERS)}
    live: dict[str, Any] = {}
    per_file = 100
    for start in range(0, topics, per_file):
        docs = []
        for i in range(start, min(start + per_file, topics)):
            name = f"team{i % 50:02d}.topic{i:05d}"
            docs.append(
                f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\n"
                f"partitions: {partitions}\nreplicationFactor: 3\n"
                "config:\n  retention.ms: 604800000\n  cleanup.policy: delete\n"
            )
            if half_new and i % 2:
                continue
            assignment = placed[i % BROKERS]
            live[name] = {
                "partitions": {
                    str(p): {
                        "replicas": list(r),
                        "isr": list(r),
                        "leader": r[0],
                        "sizeBytes": 1 << 20,
                    }
                    for p, r in assignment.items()
                },
                "config": {"retention.ms": "604800000", "cleanup.policy": "delete"},
            }
        with open(os.path.join(folder, f"topics-{start // per_file:04d}.yaml"), "w") as f:
            f.write("---\n".join(docs))
    state = os.path.join(root, "state.json")
    with open(state, "w") as f:
        json.dump({"format": "kgitops-state/v1", "brokers": _brokers(), "topics": live}, f)
    return folder, state


def run_one(folder: str, state: str) -> dict[str, Any]:
    """Plan ``folder`` against ``state`` in this process, as ``kgitops plan --state --format
    json --max-file-size 1GB`` does (the snapshot is ~90 MB, above the 10 MB default cap);
    wall and CPU seconds end to end, then per stage, and peak RSS."""
    from kgitops.files import file_size_limit

    with file_size_limit(10**9):
        return _run_one(folder, state)


def _run_one(folder: str, state: str) -> dict[str, Any]:
    from kgitops.commands._planning import plan_directory
    from kgitops.plan.render import render_json

    w0, c0 = time.perf_counter(), time.process_time()
    result = plan_directory(folder, state_file=state)
    text = render_json(result.plan.to_json())
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    from kgitops.cluster.snapshot import read_state
    from kgitops.plan.diff import compute_plan
    from kgitops.spec.load import load_specs
    from kgitops.spec.lock import read_lock

    stages: dict[str, float] = {}
    clock = time.process_time
    t = clock()
    live = read_state(state)
    stages["state"], t = clock() - t, clock()
    specs = load_specs(folder, brokers=live.brokers)
    stages["specs"], t = clock() - t, clock()
    plan, _ = compute_plan(specs, live, read_lock(folder))
    stages["diff"], t = clock() - t, clock()
    render_json(plan.to_json())
    stages["json"] = clock() - t
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "stages_cpu_s": stages,
        "actions": len(result.plan.actions),
        "json_mb": len(text) / 1e6,
        "peak_rss_mb": rss,
    }


def live_requests(counts: tuple[int, ...] = (10, 1000)) -> dict[int, Counter[str]]:
    """Admin requests `plan` sends to the local broker, per number of managed topics."""
    from kafka.net.connection import KafkaConnection

    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.local import start_broker
    from kgitops.cluster.port import NewTopic
    from kgitops.commands._planning import plan_directory
    from kgitops.model import ClusterSpec
    from kgitops.plan.actions import CreateTopic

    sent: Counter[str] = Counter()
    original = KafkaConnection._send_request

    def counting(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        sent[type(request).__name__.removesuffix("Request")] += 1
        return original(self, request, *args, **kwargs)

    out: dict[int, Counter[str]] = {}
    broker = start_broker()
    try:
        spec = ClusterSpec(name="bench", directory=".", bootstrap_servers=(broker.bootstrap,))
        admin = KafkaAdmin(spec)
        node = admin.describe([]).brokers[0].id
        for n in counts:
            names = [f"live{n}.t{i:05d}" for i in range(n)]
            admin.create_topics([NewTopic(t, {0: (node,)}) for t in names])
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "cluster.yaml"), "w") as f:
                    f.write(
                        "apiVersion: kgitops/v1\nkind: Cluster\nname: bench\n"
                        f'bootstrapServers: ["{broker.bootstrap}"]\nunmanagedTopics: ignore\n'
                    )
                with open(os.path.join(tmp, "topics.yaml"), "w") as f:
                    f.write(
                        "---\n".join(
                            f"apiVersion: kgitops/v1\nkind: Topic\nname: {t}\n"
                            "partitions: 1\nreplicationFactor: 1\n"
                            for t in names
                        )
                    )
                KafkaConnection._send_request = counting
                sent.clear()
                try:
                    result = plan_directory(tmp)
                finally:
                    KafkaConnection._send_request = original
                assert not result.plan.of_kind(CreateTopic), "topics should exist"
                out[n] = Counter(sent)
            admin.delete_topics(names)
        admin.close()
    finally:
        broker.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--live", action="store_true", help="also count live admin requests")
    parser.add_argument("--run", nargs=2, metavar=("FOLDER", "STATE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        from kgitops.files import file_size_limit

        with file_size_limit(10**10):  # `--max-file-size 10GB`: the snapshot is ~60 MB
            print(json.dumps(run_one(*args.run)))
        return
    results = {}
    for variant in ("existing", "half-new"):
        with tempfile.TemporaryDirectory() as tmp:
            folder, state = generate(
                tmp, args.topics, args.partitions, half_new=variant == "half-new"
            )
            proc = subprocess.run(
                [sys.executable, __file__, "--run", folder, state],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                sys.exit(proc.stderr)
            results[variant] = json.loads(proc.stdout.strip().splitlines()[-1])
    n_parts = args.topics * args.partitions
    print(
        f"{args.topics:,} topics x {args.partitions} partitions = {n_parts:,} partitions, "
        f"RF 3, {BROKERS} brokers in {RACKS} racks"
    )
    print(
        f"{'variant':10} {'actions':>8} {'wall':>7} {'CPU':>7} {'of 10 s':>8} "
        f"{'peak RSS':>9} {'of 2 GB':>8}   CPU by stage: state / specs / diff / json"
    )
    for variant, r in results.items():
        st = r["stages_cpu_s"]
        print(
            f"{variant:10} {r['actions']:8,} {r['wall_s']:6.2f}s {r['cpu_s']:6.2f}s "
            f"{r['cpu_s'] / 10:7.0%} {r['peak_rss_mb']:6.0f} MB {r['peak_rss_mb'] / 2048:7.0%}"
            f"   {st['state']:.2f} / {st['specs']:.2f} / {st['diff']:.2f} / {st['json']:.2f} s"
        )
    print("(CPU = process time: the wall time on a machine shared with other work is longer)")
    if args.live:
        counts = live_requests()
        print("\nadmin requests sent by `kgitops plan` to a live broker (Tansu):")
        for n, c in counts.items():
            detail = ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
            print(f"  {n:5,} managed topics: {sum(c.values())} requests ({detail})")
        small, large = (sum(c.values()) for c in counts.values())
        print(f"  ratio for 100x the topics: {large / small:.2f}")


if __name__ == "__main__":
    main()
