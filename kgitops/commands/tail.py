"""``kgitops tail DIR TOPIC [--partition P] [--from earliest|latest|OFFSET] [--max N]``: print
a few messages of a topic safely (text shown escaped, binary as hex, long values cut) or as
JSON lines (``--format json``), without joining a consumer group. See docs/console.md."""

from __future__ import annotations

import argparse
import json
import sys

from kgitops.commands._units import is_digits, positive_int, seconds
from kgitops.errors import KgitopsError

NAME = "tail"
HELP = "print the last (or first) messages of a topic, without joining a consumer group"


def _start(text: str) -> str | int:
    if text in ("earliest", "latest"):
        return text
    if is_digits(text):
        return int(text)
    raise argparse.ArgumentTypeError(f"expected earliest, latest or an offset, not {text!r}")


def _partition(text: str) -> int:
    if not is_digits(text):
        raise argparse.ArgumentTypeError(f"not a partition id: {text!r}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the cluster folder (with cluster.yaml)")
    parser.add_argument("topic", metavar="TOPIC")
    parser.add_argument(
        "--partition",
        type=_partition,
        action="append",
        metavar="P",
        help="only this partition (repeatable; default: all)",
    )
    parser.add_argument(
        "--from",
        dest="start",
        type=_start,
        default="latest",
        metavar="earliest|latest|OFFSET",
        help="latest (default): the last N messages; earliest: the first N; OFFSET: from "
        "that offset in each partition read",
    )
    parser.add_argument(
        "--max", type=positive_int, default=20, metavar="N", help="at most N messages (20)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--width",
        type=positive_int,
        default=120,
        metavar="CHARS",
        help="text output: cut values longer than this (default 120; JSON is never cut)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="stop reading after this long (default 30)",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.plan.messages import message_json, message_lines
    from kgitops.plan.views import safe_text

    spec = load_cluster(args.dir)
    if spec.simulated is not None:
        raise KgitopsError(
            f"cluster {spec.name!r} is simulated: it holds no messages to tail "
            "(try a real cluster or `kgitops local up`)"
        )
    from kgitops.cluster.kafka.tail import read_messages

    messages = read_messages(
        spec,
        args.topic,
        partitions=None if args.partition is None else sorted(set(args.partition)),
        start=args.start,
        max_messages=args.max,
        timeout=args.timeout,
    )
    if args.format == "json":
        for m in messages:
            sys.stdout.write(json.dumps(message_json(m), ensure_ascii=True) + "\n")
        return 0
    if not messages:
        print(f"note: no message to show in {safe_text(args.topic)}", file=sys.stderr)
        return 0
    sys.stdout.write("\n".join(message_lines(messages, args.width)) + "\n")
    return 0
