"""How fast kgitops places replicas, against a direct Python translation of Kafka's AdminUtils.

10,000 topics x 100 partitions, RF 3, 60 brokers in 3 racks, rack-aware, each topic with its
own start index (as a lock would record them). Prints partitions placed per second for
kgitops.placement.assignment (as a planner uses it, and with
whole-topic reuse switched off) and for the direct,
uncached, line-by-line translation (tests/algorithms/kafka_reference.py) measured in the same
run, their ratio, and checks on a sample that both give the same answer.

    python3 benchmarks/assignment.py [--topics 10000] [--partitions 100]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "algorithms"))

import kafka_reference  # noqa: E402

import kgitops.placement.assignment as assignment  # noqa: E402
from kgitops.model import Broker  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--brokers", type=int, default=60)
    parser.add_argument(
        "--reference-topics",
        type=int,
        default=1_000,
        help="topics the slow direct translation places (default 1,000)",
    )
    args = parser.parse_args()

    brokers = [Broker(i, f"rack-{i % 3}") for i in range(args.brokers)]
    pairs = [(b.id, b.rack) for b in brokers]
    rng = random.Random(42)
    starts = [rng.randrange(args.brokers) for _ in range(args.topics)]
    total = args.topics * args.partitions

    # every topic computed afresh: no whole-topic reuse (the broker rows stay warm)
    fresh_topics = min(args.topics, 2_000)
    t0 = time.perf_counter()
    for s in starts[:fresh_topics]:
        assignment._TOPICS.clear()
        assignment.assign_replicas(brokers, args.partitions, 3, start_index=s)
    fresh = time.perf_counter() - t0

    assignment._TOPICS.clear()
    assignment._LAYOUTS.clear()
    t0 = time.perf_counter()
    for s in starts:
        assignment.assign_replicas(brokers, args.partitions, 3, start_index=s)
    ours = time.perf_counter() - t0

    ref_topics = min(args.reference_topics, args.topics)
    t0 = time.perf_counter()
    reference = [
        kafka_reference.assign_replicas_to_brokers(pairs, args.partitions, 3, starts[i], 0)
        for i in range(ref_topics)
    ]
    ref = time.perf_counter() - t0

    for i in range(0, ref_topics, max(1, ref_topics // 50)):
        got = assignment.assign_replicas(brokers, args.partitions, 3, start_index=starts[i])
        assert got == {p: tuple(r) for p, r in reference[i].items()}, f"topic {i} differs"

    ours_rate = total / ours
    fresh_rate = fresh_topics * args.partitions / fresh
    ref_rate = ref_topics * args.partitions / ref
    print(
        f"workload: {args.topics:,} topics x {args.partitions} partitions, RF 3, "
        f"{args.brokers} brokers in 3 racks, rack-aware"
    )
    print(
        f"kgitops.placement.assignment, all topics     : {ours_rate:>12,.0f} partitions/s "
        f"({total:,} in {ours:.3f} s)"
    )
    print(
        f"kgitops.placement.assignment, no topic reuse : {fresh_rate:>12,.0f} partitions/s "
        f"({fresh_topics:,} topics, each computed afresh)"
    )
    print(
        f"direct translation of AdminUtils   : {ref_rate:>12,.0f} partitions/s "
        f"({ref_topics:,} topics)"
    )
    print(
        f"ratio kgitops / direct             : {ours_rate / ref_rate:>12.1f}x "
        f"(no topic reuse: {fresh_rate / ref_rate:.1f}x)"
    )
    print("same answers on the sampled topics : yes")
    goal = 1_000_000
    print(f"goal >= {goal:,} partitions/s     : {'met' if ours_rate >= goal else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
