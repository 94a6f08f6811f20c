"""The scale-out of issue 14, measured: the demo cluster (topics/demo) created on brokers 0-5,
filled (shop.orders 2 GiB, web.clicks 500 MiB, payments.transactions 100 MiB per partition;
the issue gives no size for shop.order-status and payments.audit: 0 B), then grown to 9
brokers (6, 7, 8 in az1-az3) and planned with ``--rebalance``; the plan is applied on the
simulated cluster to compare its ETA with apply's simulated time.

Prints the markdown tables docs/algorithms.md shows. Run: ``python benchmarks/demo_scaleout.py``
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from dataclasses import replace

from kgitops.apply.run import apply_plan
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import write_state
from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.plan.actions import CreateTopic, Reassign
from kgitops.plan.diff import compute_plan
from kgitops.spec.load import load_specs_or_raise
from kgitops.units import human_bytes, human_rate, human_seconds

GiB, MiB = 1 << 30, 1 << 20
SIZES = {"shop.orders": 2 * GiB, "web.clicks": 500 * MiB, "payments.transactions": 100 * MiB}
DEMO = os.path.join(os.path.dirname(__file__), "..", "topics", "demo")


def brokers(n: int) -> tuple[Broker, ...]:
    return tuple(Broker(i, f"az{i % 3 + 1}") for i in range(n))


def table(state: ClusterState, title: str) -> list[str]:
    size: Counter[int] = Counter()
    count: Counter[int] = Counter()
    lead: Counter[int] = Counter()
    per_topic: dict[str, Counter[int]] = {}
    for name, t in state.topics.items():
        for ps in t.partitions.values():
            for b in ps.replicas:
                size[b] += ps.size_bytes or 0
                count[b] += 1
                per_topic.setdefault(name, Counter())[b] += 1
            lead[ps.replicas[0]] += 1
    ids = [b.id for b in state.brokers]
    names = sorted(per_topic)
    out = [
        f"**{title}**",
        "",
        "| broker | rack | bytes | replicas | preferred leaders | " + " | ".join(names) + " |",
        "|---:|---|---:|---:|---:|" + "---:|" * len(names),
    ]
    for b in ids:
        rack = state.brokers[b].rack
        cells = " | ".join(str(per_topic[n][b]) for n in names)
        out.append(f"| {b} | {rack} | {human_bytes(size[b])} | {count[b]} | {lead[b]} | {cells} |")
    mean = sum(size[b] for b in ids) / len(ids)
    out += [
        "",
        f"bytes per broker {human_bytes(min(size[b] for b in ids))} to "
        f"{human_bytes(max(size[b] for b in ids))} (mean {human_bytes(round(mean))}, max "
        f"{max(size[b] for b in ids) / mean:.2f}x); preferred leaders "
        f"{min(lead[b] for b in ids)} to {max(lead[b] for b in ids)}",
        "",
    ]
    return out


def main() -> int:
    specs = load_specs_or_raise(DEMO, brokers=brokers(6))
    assert specs.cluster is not None
    empty = ClusterState(brokers=brokers(6), topics={})
    created, _ = compute_plan(specs, empty, None)
    topics = {}
    for a in created.of_kind(CreateTopic):
        size = SIZES.get(a.topic, 0)
        topics[a.topic] = TopicState(
            a.topic, {p: PartitionState(r, r, r[0], size) for p, r in a.assignment.items()}
        )
    grown = ClusterState(brokers=brokers(9), topics=topics)
    specs9 = load_specs_or_raise(DEMO, brokers=brokers(9))
    plan, _ = compute_plan(specs9, grown, None, rebalance=True)
    after = dict(topics)
    for move in plan.of_kind(Reassign):
        parts = dict(after[move.topic].partitions)
        for p, m in move.moves.items():
            parts[p] = replace(parts[p], replicas=m.target, isr=m.target, leader=m.target[0])
        after[move.topic] = TopicState(move.topic, parts)
    lines = table(grown, "Before: brokers 6, 7, 8 just added")
    lines += table(ClusterState(brokers=brokers(9), topics=after), "After `plan --rebalance`")
    moved = sum(a.bytes_to_move for a in plan.of_kind(Reassign))
    moves = sum(len(a.moves) for a in plan.of_kind(Reassign))
    transfer = plan.transfer
    assert transfer is not None and transfer.estimated_seconds is not None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "demo.json")
        write_state(path, grown)
        sim = SimulatedCluster.open(path, brokers(9))
        apply_plan(plan, sim, specs9.cluster.reassignment if specs9.cluster else None,  # type: ignore[arg-type]
                   allow_delete=False)  # fmt: skip
        took = SimulatedCluster.open(path, brokers(9)).state.clock
        again, _ = compute_plan(specs9, sim.describe(), None, rebalance=True)
    settings = specs9.cluster.reassignment if specs9.cluster else None
    lines += [
        f"Moved: {moves} partition moves, {human_bytes(moved)}; plan ETA "
        f"{human_seconds(transfer.estimated_seconds)} in {transfer.window_count} windows "
        f"(maxConcurrentMoves {settings.max_concurrent_moves if settings else '?'}, throttle "
        f"{human_rate(settings.throttle_bytes_per_sec or 0) if settings else '?'}); the "
        f"simulated apply took {human_seconds(took)} "
        f"({(transfer.estimated_seconds - took) / took:+.1%}); a second `--rebalance` plans "
        f"{len(again.of_kind(Reassign))} reassignment(s).",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
