"""``plan --rebalance`` at scale: a cluster of 1,000,000 partitions (RF 3) on 60 brokers in 3
racks, skewed sizes, after adding 6 empty brokers (2 per rack). Goals: the plan (the whole
``compute_plan``, ETA schedule included) in <= 20 s of CPU on the 2-core machine (the wall
time is printed too; on a machine shared with other jobs it is longer); bytes moved <= 1.15x
the lower bound computed here; per-topic spread within one replica; bytes per broker within
10 % of the mean.

The same figures for Kafka's own answer, measured in the same run:
``kafka-reassign-partitions.sh --generate`` calls ``AdminUtils.assignReplicasToBrokers`` over
the new broker list for every topic, with a random start index (here seeded).

Lower bound on the bytes moved (RF 3 on 3 racks: every partition has one replica per rack,
so the two new brokers of a rack must take distinct partitions):

* count: per rack and topic, the two new brokers need ``2 * floor(P / 22)`` replicas of the
  topic (goal 2's lower share): at least the sum of the topic's that many smallest partitions;
* bytes: each new broker needs 90 % of the mean bytes per broker (goal 3);

a rack's new brokers receive at least the larger of the two; the bound is the sum over racks.

Run: ``python benchmarks/rebalance.py [--partitions 1000000] [--seed 1]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kgitops.model import Broker, ClusterSpec, ClusterState, PartitionState, TopicSpec, TopicState
from kgitops.perf import paused_gc
from kgitops.placement.assignment import assign_replicas
from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan

RACKS = 3
OLD, ADDED = 60, 6
RF = 3
TOLERANCE = 0.10


@dataclass(frozen=True)
class Desired:
    cluster: ClusterSpec
    topics: tuple[TopicSpec, ...]


def cluster(
    partitions: int, seed: int
) -> tuple[dict[str, dict[int, tuple[int, ...]]], dict[str, list[int]]]:
    """Topics placed by AdminUtils on the 60 old brokers, and their partition sizes: topic
    partition counts and sizes are skewed (a few large topics, most small; lognormal sizes)."""
    rng = random.Random(seed)
    old = [Broker(i, f"az{i % RACKS + 1}") for i in range(OLD)]
    counts: list[int] = []
    left = partitions
    while left > 0:
        n = min(left, rng.choice([6, 12, 24, 48, 100, 100, 300, 600, 1200, 3000]))
        counts.append(n)
        left -= n
    assignments: dict[str, dict[int, tuple[int, ...]]] = {}
    sizes: dict[str, list[int]] = {}
    for i, n in enumerate(counts):
        name = f"topic{i:05d}"
        assignments[name] = assign_replicas(
            old, n, RF, start_index=rng.randrange(OLD), rack_aware=True
        )
        base = rng.lognormvariate(18, 1.5)  # ~66 MB median, a long tail of large topics
        sizes[name] = [int(base * rng.lognormvariate(0, 0.4)) for _ in range(n)]
    return assignments, sizes


def kafka_answer(
    assignments: Mapping[str, Mapping[int, tuple[int, ...]]], brokers: Sequence[Broker], seed: int
) -> dict[str, dict[int, tuple[int, ...]]]:
    rng = random.Random(seed + 1)
    return {
        name: assign_replicas(
            brokers, len(a), RF, start_index=rng.randrange(len(brokers)), rack_aware=True
        )
        for name, a in assignments.items()
    }


def figures(
    before: Mapping[str, Mapping[int, tuple[int, ...]]],
    after: Mapping[str, Mapping[int, tuple[int, ...]]],
    sizes: Mapping[str, Sequence[int]],
    brokers: Sequence[int],
) -> dict[str, float]:
    moved = 0
    per_bytes: Counter[int] = Counter()
    per_lead: Counter[int] = Counter()
    worst_topic = worst_leaders = 0
    for name, a in after.items():
        counts: Counter[int] = Counter()
        leads: Counter[int] = Counter()
        for p, reps in a.items():
            size = sizes[name][p]
            old = before[name][p]
            moved += size * sum(1 for b in reps if b not in old)
            for b in reps:
                per_bytes[b] += size
                counts[b] += 1
            leads[reps[0]] += 1
            per_lead[reps[0]] += 1
        # per rack (every partition has one replica per rack)
        for r in range(RACKS):
            members = [b for b in brokers if b % RACKS == r]
            values = [counts[b] for b in members]
            worst_topic = max(worst_topic, max(values) - min(values))
        lv = [leads[b] for b in brokers]
        worst_leaders = max(worst_leaders, max(lv) - min(lv))
    mean = sum(per_bytes.values()) / len(brokers)
    lead_values = [per_lead[b] for b in brokers]
    return {
        "moved": moved,
        "topic_spread": worst_topic,
        "topic_leader_spread": worst_leaders,
        "bytes_max": max(per_bytes[b] for b in brokers) / mean,
        "bytes_min": min(per_bytes[b] for b in brokers) / mean,
        "leaders_spread": max(lead_values) - min(lead_values),
    }


def lower_bound(
    assignments: Mapping[str, Mapping[int, tuple[int, ...]]],
    sizes: Mapping[str, Sequence[int]],
    brokers: Sequence[int],
) -> int:
    total = sum(sum(s) * RF for s in sizes.values())
    mean = total / len(brokers)
    per_rack_brokers = len(brokers) // RACKS
    new_per_rack = ADDED // RACKS
    bound = 0
    for _ in range(RACKS):
        by_count = 0
        for name, a in assignments.items():
            lo = len(a) // per_rack_brokers
            need = new_per_rack * lo
            if need:
                by_count += sum(sorted(sizes[name])[:need])
        by_bytes = new_per_rack * (1 - TOLERANCE) * mean
        bound += int(max(by_count, by_bytes))
    return bound


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    t0 = time.perf_counter()
    assignments, sizes = cluster(args.partitions, args.seed)
    grown = [Broker(i, f"az{i % RACKS + 1}") for i in range(OLD + ADDED)]
    with paused_gc():
        state = ClusterState(
            brokers=tuple(grown),
            topics={
                name: TopicState(
                    name,
                    {p: PartitionState(r, r, r[0], sizes[name][p]) for p, r in a.items()},
                )
                for name, a in assignments.items()
            },
        )
    specs = Desired(
        ClusterSpec(name="bench", directory="."),
        tuple(
            TopicSpec(name=name, partitions=len(a), replication_factor=RF, placement="rack-aware")
            for name, a in sorted(assignments.items())
        ),
    )
    built = time.perf_counter() - t0
    print(
        f"cluster: {args.partitions:,} partitions in {len(assignments):,} topics, RF {RF}, "
        f"{OLD} + {ADDED} brokers in {RACKS} racks (built in {built:.1f} s)"
    )

    t0, c0 = time.perf_counter(), time.process_time()
    plan, _ = compute_plan(specs, state, None, rebalance=True)
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    ours = {name: dict(a) for name, a in assignments.items()}
    for action in plan.of_kind(Reassign):
        for p, m in action.moves.items():
            ours[action.topic][p] = m.target

    t0, c0 = time.perf_counter(), time.process_time()
    kafka = kafka_answer(assignments, grown, args.seed)
    kafka_took, kafka_cpu = time.perf_counter() - t0, time.process_time() - c0

    ids = [b.id for b in grown]
    bound = lower_bound(assignments, sizes, ids)
    a, k = figures(assignments, ours, sizes, ids), figures(assignments, kafka, sizes, ids)
    tb = 1 << 40
    print(f"lower bound on bytes moved: {bound / tb:.2f} TiB")
    print(f"{'':24}{'kgitops --rebalance':>22}{'Kafka --generate':>20}")
    rows = [
        ("time (s, wall)", f"{took:.1f}", f"{kafka_took:.1f}"),
        ("time (s, CPU)", f"{cpu:.1f}", f"{kafka_cpu:.1f}"),
        ("bytes moved (TiB)", f"{a['moved'] / tb:.2f}", f"{k['moved'] / tb:.2f}"),
        ("moved / lower bound", f"{a['moved'] / bound:.3f}x", f"{k['moved'] / bound:.3f}x"),
        ("per-topic replica spread", f"{a['topic_spread']:.0f}", f"{k['topic_spread']:.0f}"),
        (
            "per-topic leader spread",
            f"{a['topic_leader_spread']:.0f}",
            f"{k['topic_leader_spread']:.0f}",
        ),
        ("bytes max / mean", f"{a['bytes_max']:.3f}", f"{k['bytes_max']:.3f}"),
        ("bytes min / mean", f"{a['bytes_min']:.3f}", f"{k['bytes_min']:.3f}"),
        ("leaders max - min", f"{a['leaders_spread']:.0f}", f"{k['leaders_spread']:.0f}"),
    ]
    for label, x, y in rows:
        print(f"{label:24}{x:>22}{y:>20}")
    ok = (
        cpu <= 20
        and a["moved"] <= 1.15 * bound
        and a["topic_spread"] <= 1
        and a["bytes_max"] <= 1 + TOLERANCE
        and a["bytes_min"] >= 1 - TOLERANCE
    )
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
