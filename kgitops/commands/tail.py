"""``kgitops tail DIR TOPIC [--partition P] [--from earliest|latest|OFFSET] [--max N]
[--follow]``: print messages of a topic safely (text shown escaped, binary as hex, long values
cut) or as JSON lines (``--format json``, schema ``kgitops/schemas/tail.json``), without
joining a consumer group; ``--follow`` keeps printing new ones, line by line, until SIGTERM
(exit 0) or Ctrl-C (exit 130, as every kgitops command). See docs/console.md."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._units import is_digits, positive_int, seconds
from kgitops.errors import KgitopsError
from kgitops.records import TailRequest

if TYPE_CHECKING:
    from kgitops.model import ClusterSpec

NAME = "tail"
HELP = (
    "print the last (or first) messages of a topic, or follow it, without joining a consumer group"
)


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
    add_cluster_dir_argument(parser)
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
        "--max",
        type=positive_int,
        metavar="N",
        help="at most N messages (20); with --follow: the last N before following (latest), "
        "or stop after N (earliest, OFFSET; default: never)",
    )
    parser.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep printing new messages until SIGTERM (exit 0) or Ctrl-C (exit 130)",
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
        metavar="SECONDS",
        help="stop reading after this long (default 30; with --follow: never)",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.console.messages import message_json, message_lines
    from kgitops.safetext import safe_text

    spec = load_cluster(args.dir)
    if spec.simulated is not None:
        raise KgitopsError(
            f"cluster {spec.name!r} is simulated: it holds no messages to tail "
            "(try a real cluster or `kgitops local up`)"
        )
    request = TailRequest(
        args.topic,
        partitions=None if args.partition is None else tuple(sorted(set(args.partition))),
        start=args.start,
        count=20 if args.max is None else args.max,
        timeout=args.timeout,
    )
    if args.follow:
        return _follow(args, spec, request)
    from kgitops.cluster.kafka.tail import read_messages

    messages = read_messages(spec, request)
    if args.format == "json":
        for m in messages:
            sys.stdout.write(json.dumps(message_json(m), ensure_ascii=True) + "\n")
        return 0
    if not messages:
        print(f"note: no message to show in {safe_text(args.topic)}", file=sys.stderr)
        return 0
    sys.stdout.write("\n".join(message_lines(messages, args.width)) + "\n")
    return 0


def _follow(args: argparse.Namespace, spec: ClusterSpec, request: TailRequest) -> int:
    """Print each batch as it is read, flushed, until a signal, --timeout or --max."""
    from kgitops.cluster.kafka.tail import follow_messages
    from kgitops.commands._stream import Stop, reader_gone, stopped_by_sigterm, write_lines
    from kgitops.console.messages import FollowedRows, message_json

    latest = args.start == "latest"
    limit = None if latest else args.max  # latest: --max is the backlog, then every message
    rows = FollowedRows(args.width)
    printed = 0
    with stopped_by_sigterm():
        try:
            batches = follow_messages(spec, request)
            with closing(batches):
                for batch in batches:
                    if reader_gone():
                        raise BrokenPipeError  # exit 1, as for any closed pipe
                    if limit is not None:
                        batch = batch[: limit - printed]
                    if args.format == "json":
                        lines = [json.dumps(message_json(m), ensure_ascii=True) for m in batch]
                    else:
                        lines = rows.lines(batch)
                    if lines:
                        write_lines(lines)
                    printed += len(batch)
                    if limit is not None and printed >= limit:
                        break
        except Stop:
            pass
    return 0
