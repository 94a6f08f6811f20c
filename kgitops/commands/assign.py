"""``kgitops assign``: Kafka's replica assignment (AdminUtils) for given brokers, as JSON.

::

    $ kgitops assign --brokers 0,1,2,3,4,5 --racks rack1,rack3,rack3,rack2,rack2,rack1 \\
          --partitions 7 --replication-factor 3
    {
      "0": [0, 3, 1],
      ...
      "6": [0, 4, 2]
    }

An empty entry in ``--racks`` means that broker has no rack (then Kafka refuses a rack-aware
assignment). ``--keep-order`` walks ``--brokers`` in the order given, as AdminUtils itself
does; by default the list is sorted by id, as Kafka's tools sort it before calling AdminUtils.
The replica shift defaults to the start index, as Kafka's fixedStartIndex sets both.
"""

from __future__ import annotations

import argparse
import json

from kgitops.commands._units import integer
from kgitops.errors import KgitopsError
from kgitops.names import INT32_MAX

NAME = "assign"
HELP = "print Kafka's replica assignment (AdminUtils) for a broker list, as JSON"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--brokers", required=True, help="broker ids, comma-separated: 0,1,2")
    parser.add_argument(
        "--racks",
        help="one rack per broker, in --brokers order; an empty entry means no rack: r1,,r2",
    )
    parser.add_argument("--partitions", required=True, type=integer, metavar="N")
    parser.add_argument("--replication-factor", required=True, type=integer, metavar="R")
    parser.add_argument(
        "--start-index",
        type=integer,
        default=0,
        metavar="I",
        help="Kafka's fixedStartIndex: position of partition 0's leader (default 0)",
    )
    parser.add_argument(
        "--replica-shift",
        type=integer,
        metavar="K",
        help="Kafka's nextReplicaShift (default: the start index)",
    )
    parser.add_argument(
        "--start-partition",
        type=integer,
        default=0,
        metavar="S",
        help="first partition id to place (the existing count when adding partitions)",
    )
    parser.add_argument(
        "--rack-unaware",
        action="store_true",
        help="ignore racks (kgitops' placement: rack-unaware)",
    )
    parser.add_argument(
        "--keep-order",
        action="store_true",
        help="run AdminUtils on --brokers exactly as given (by default they are sorted by id, "
        "as Kafka's tools do before calling it; only rack-unaware placement differs)",
    )


def parse_ints(text: str, what: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``: broker ids, Kafka's 32-bit ``node.id`` (0..2147483647),
    with a clear error for anything else."""
    values = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()):
            raise KgitopsError(
                f"{what}: {part!r} is not a broker id (a whole number 0..{INT32_MAX}; "
                "expected e.g. 0,1,2)"
            )
        value = int(part)
        if value > INT32_MAX:
            raise KgitopsError(
                f"{what}: {value} is not a broker id: Kafka's broker ids are 32-bit "
                f"(0..{INT32_MAX})"
            )
        values.append(value)
    return values


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._units import MAX_PARTITIONS, MAX_REPLICATION_FACTOR, check_count
    from kgitops.model import Broker
    from kgitops.placement.assignment import assign_replicas

    # upper bounds only: below them, Kafka's own errors (AdminUtils) speak
    check_count(max(args.partitions, 1), "--partitions")
    check_count(max(args.replication_factor, 1), "--replication-factor", MAX_REPLICATION_FACTOR)
    if not 0 <= args.start_partition <= INT32_MAX - args.partitions:
        raise KgitopsError(
            f"--start-partition must be 0..{INT32_MAX - args.partitions:,}: Kafka's partition "
            "ids are 32-bit"
        )
    for flag, value in (
        ("--start-index", args.start_index),
        ("--replica-shift", args.replica_shift),
    ):
        if value is not None and not 0 <= value <= MAX_PARTITIONS:
            raise KgitopsError(f"{flag} must be 0..{MAX_PARTITIONS:,}")
    ids = parse_ints(args.brokers, "--brokers")
    if args.racks is None:
        racks: list[str | None] = [None] * len(ids)
    else:
        from kgitops.model import RACK_RULE, legal_rack

        racks = [r.strip() or None for r in args.racks.split(",")]
        if any(r is not None and not legal_rack(r) for r in racks):
            raise KgitopsError(f"--racks: a rack id is {RACK_RULE}")
        if len(racks) != len(ids):
            raise KgitopsError(
                f"--racks has {len(racks)} entries but --brokers has {len(ids)}; give one rack "
                "per broker (an empty entry for a broker without a rack)"
            )
    brokers = [Broker(i, r) for i, r in zip(ids, racks, strict=True)]
    result = assign_replicas(
        brokers,
        args.partitions,
        args.replication_factor,
        start_index=args.start_index,
        replica_shift=args.replica_shift,
        start_partition=args.start_partition,
        rack_aware=False if args.rack_unaware else None,
        keep_order=args.keep_order,
    )
    print(format_assignment(result))
    return 0


def format_assignment(assignment: dict[int, tuple[int, ...]]) -> str:
    """JSON with one partition per line, partition ids as string keys in numeric order."""
    lines = [
        f"  {json.dumps(str(p))}: {json.dumps(list(r))}" for p, r in sorted(assignment.items())
    ]
    return "{\n" + ",\n".join(lines) + "\n}"
