"""Kafka's own code as the placement referee, at full count: random placement questions
through Kafka 3.9.1's ``AdminUtils.assignReplicasToBrokers`` (and its added-partitions rule) in
one JVM, against kgitops.placement.assignment (tests/algorithms/kafka_oracle.py).

Prints the cases, how they were answered, the mismatches (goal 0), the time, and what the
referee cost to set up (mvn, javac). Needs java/javac 17+ and mvn.

    python3 benchmarks/placement_oracle.py [--cases 1000000] [--seed 1] [--jobs 1] [--mvn-timing]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "algorithms"))

import kafka_oracle as ko  # noqa: E402


def _run(built: ko.Build, seed: int, count: int) -> ko.Outcome:
    """One JVM, ``count`` cases from ``seed``."""
    outcome = ko.Outcome()
    with ko.Oracle(built) as oracle:
        for batch in ko.batches(seed, count, size=20_000):
            ko.compare(oracle, batch, outcome)
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="JVMs (and processes) in parallel")
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
    started = time.perf_counter()
    shares = [args.cases // args.jobs + (i < args.cases % args.jobs) for i in range(args.jobs)]
    work = [(built, args.seed * 1000 + i, share) for i, share in enumerate(shares)]
    if args.jobs == 1:
        parts = [_run(*work[0])]
    else:
        with multiprocessing.Pool(args.jobs) as pool:
            parts = pool.starmap(_run, work)
    elapsed = time.perf_counter() - started
    outcome = ko.Outcome()
    for part in parts:
        outcome.cases += part.cases
        outcome.verdicts.update(part.verdicts)
        outcome.refusals.update(part.refusals)
        outcome.mismatches.extend(part.mismatches)
    seeds = ", ".join(str(w[1]) for w in work)
    print(f"cases: {outcome.cases:,}  (seeds {seeds}; {args.jobs} JVM(s))")
    for name, count in sorted(outcome.verdicts.items()):
        print(f"  {name:20} {count:>10,}")
    for name, count in sorted(outcome.refusals.items()):
        print(f"    refused as Kafka's {name}: {count:,}")
    print(f"mismatches: {outcome.mismatch_count}")
    print(
        f"time: {elapsed:.1f} s, {outcome.cases / elapsed:,.0f} cases/s (generation, Kafka in the "
        "JVM(s), kgitops and the comparison, wall clock)"
    )
    for case, ours, theirs in outcome.mismatches[:5]:
        print(ko.describe(case, ours, theirs))
    return 0 if outcome.mismatch_count == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
