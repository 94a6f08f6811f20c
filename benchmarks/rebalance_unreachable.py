"""``plan --rebalance`` when goal 3's band cannot be reached: the cluster of
``benchmarks/rebalance.py`` (60 + 6 brokers in 3 racks, skewed sizes) plus one topic of a
single partition (RF 3) holding a tenth of the data, so its three brokers stay far above the
band whatever moves. Plans it with swaps and with single moves only (``SWAP_PASSES = 0``), in
the same run, and prints CPU, bytes moved, the replicas moved by swaps and the
``BALANCE_BAND_UNREACHED`` figures (brokers left outside, spread as a share of the mean).

    python3 benchmarks/rebalance_unreachable.py [--partitions 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

import rebalance as rb  # noqa: E402

from kgitops.model import (  # noqa: E402
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionState,
    TopicSpec,
    TopicState,
)
from kgitops.placement import balance  # noqa: E402
from kgitops.plan.actions import Reassign  # noqa: E402
from kgitops.plan.diff import compute_plan  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    args = parser.parse_args()
    assignments, sizes = rb.cluster(args.partitions, 1)
    assignments["giant"] = {0: (0, 1, 2)}
    sizes["giant"] = [sum(sum(s) for s in sizes.values()) // 10]
    brokers = tuple(Broker(i, f"az{i % rb.RACKS + 1}") for i in range(rb.OLD + rb.ADDED))
    state = ClusterState(
        brokers=brokers,
        topics={
            n: TopicState(n, {p: PartitionState(r, r, r[0], sizes[n][p]) for p, r in a.items()})
            for n, a in assignments.items()
        },
    )
    specs = rb.Desired(
        ClusterSpec(name="bench", directory="."),
        tuple(
            TopicSpec(name=n, partitions=len(a), replication_factor=rb.RF, placement="rack-aware")
            for n, a in sorted(assignments.items())
        ),
    )
    passes = balance.SWAP_PASSES  # type: ignore[attr-defined]  # balance reads its own name
    for label, swaps in (("single moves", 0), ("with swaps", passes)):
        balance.SWAP_PASSES = swaps  # type: ignore[attr-defined]
        c0 = time.process_time()
        plan, _ = compute_plan(specs, state, None, rebalance=True)
        cpu = time.process_time() - c0
        moved = sum(a.bytes_to_move for a in plan.of_kind(Reassign))
        by_swap = sum(
            1 for a in plan.of_kind(Reassign) for m in a.moves.values() if "(a swap)" in m.reason
        )
        w = next((w for w in plan.warnings if w.code == "BALANCE_BAND_UNREACHED"), None)
        outside = len(w.data["brokers"]) if w else 0
        spread = w.data["spread"] if w else None
        print(
            f"{label:>12}: {cpu:5.1f} s CPU, {moved / (1 << 40):6.2f} TiB moved, "
            f"{by_swap} replica(s) moved by swaps, {outside} broker(s) outside the band, "
            f"spread {spread}"
        )
    balance.SWAP_PASSES = passes  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
