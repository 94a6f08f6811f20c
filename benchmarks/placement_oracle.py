"""Kafka's own code as the placement referee, at full count: random placement questions
through Kafka 3.9.1's ``AdminUtils.assignReplicasToBrokers`` (and its added-partitions rule) in
one JVM, against kgitops.placement.assignment (tests/algorithms/kafka_oracle.py).

Prints the cases, how they were answered, the mismatches (goal 0), the time, and what the
referee cost to set up (mvn, javac). Needs java/javac 17+ and mvn.

    python3 benchmarks/placement_oracle.py [--cases 1000000] [--seed 1] [--mvn-timing]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "algorithms"))

import kafka_oracle as ko  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--mvn-timing", action="store_true", help="run mvn even when the classpath is cached"
    )
    args = parser.parse_args()
    try:
        built = ko.build(refresh=args.mvn_timing)
    except ko.OracleUnavailable as exc:
        print(f"cannot run the referee: {exc}", file=sys.stderr)
        return 1
    if built.mvn_seconds is not None:
        print(f"mvn dependency:build-classpath: {built.mvn_seconds:.1f} s")
    if built.javac_seconds is not None:
        print(f"javac: {built.javac_seconds:.1f} s")
    outcome = ko.Outcome()
    started = time.perf_counter()
    with ko.Oracle(built) as oracle:
        for batch in ko.batches(args.seed, args.cases, size=20_000):
            ko.compare(oracle, batch, outcome)
    elapsed = time.perf_counter() - started
    print(f"cases: {outcome.cases:,}  (seed {args.seed})")
    for name, count in sorted(outcome.verdicts.items()):
        print(f"  {name:20} {count:>10,}")
    print(f"mismatches: {outcome.mismatch_count}")
    print(
        f"time: {elapsed:.1f} s, {outcome.cases / elapsed:,.0f} cases/s (generation, Kafka "
        "in one JVM, kgitops and the comparison)"
    )
    for case, ours, theirs in outcome.mismatches[:5]:
        print(ko.describe(case, ours, theirs))
    return 0 if outcome.mismatch_count == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
