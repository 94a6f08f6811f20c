"""``kgitops tail DIR TOPIC [--partition P] [--from earliest|latest|OFFSET] [--max N]
[--follow]``: print messages of a topic safely (text shown escaped, binary as hex, long values
cut) or as JSON lines (``--format json``, schema ``kgitops/schemas/tail.json``), without
joining a consumer group; ``--follow`` keeps printing new ones, line by line, until SIGTERM
(exit 0) or Ctrl-C (exit 130, as every kgitops command). See docs/console.md."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from kgitops.commands._units import is_digits, positive_int, seconds
from kgitops.errors import KgitopsError

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
    from kgitops.plan.messages import message_json, message_lines
    from kgitops.plan.views import safe_text

    spec = load_cluster(args.dir)
    if spec.simulated is not None:
        raise KgitopsError(
            f"cluster {spec.name!r} is simulated: it holds no messages to tail "
            "(try a real cluster or `kgitops local up`)"
        )
    if args.follow:
        return _follow(args, spec)
    from kgitops.cluster.kafka.tail import read_messages

    messages = read_messages(
        spec,
        args.topic,
        partitions=_partitions_of(args),
        start=args.start,
        max_messages=20 if args.max is None else args.max,
        timeout=30.0 if args.timeout is None else args.timeout,
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


def _partitions_of(args: argparse.Namespace) -> list[int] | None:
    return None if args.partition is None else sorted(set(args.partition))


_STOPPING = ("SIGTERM", "SIGHUP")


class _Stop(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the end of a follow (a KeyboardInterrupt, so no library's
    ``except Exception`` can swallow it)."""


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``_Stop`` (once; later ones are ignored);
    SIGINT keeps raising KeyboardInterrupt (Ctrl-C: exit 130)."""
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not fired:
            fired.append(signum)
            raise _Stop

    wanted = [s for s in (getattr(signal, n, None) for n in _STOPPING) if s is not None]
    try:
        previous = {s: signal.signal(s, handler) for s in wanted}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def _reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (``| head -n 5`` ended): the write end
    of such a pipe polls as an error. Checked on every batch, so a quiet topic cannot keep
    ``tail -f | head`` waiting forever (as GNU ``tail -f`` checks)."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, 0)  # errors and hang-ups are always reported
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        return False


def _write(lines: list[str]) -> None:
    """Whole lines, flushed; a SIGTERM arriving meanwhile waits until they are out, so a
    reader never gets half a line."""
    blocked = {s for s in (getattr(signal, n, None) for n in _STOPPING) if s is not None}
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is not None:
        mask(signal.SIG_BLOCK, blocked)
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left mid-write: what is buffered goes nowhere,
        with contextlib.suppress(OSError, ValueError):  # not into an error at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise
    finally:
        if mask is not None:
            mask(signal.SIG_UNBLOCK, blocked)


def _follow(args: argparse.Namespace, spec: ClusterSpec) -> int:
    """Print each batch as it is read, flushed, until a signal, --timeout or --max."""
    from kgitops.cluster.kafka.tail import follow_messages
    from kgitops.plan.messages import FollowedRows, message_json

    latest = args.start == "latest"
    limit = None if latest else args.max  # latest: --max is the backlog, then every message
    rows = FollowedRows(args.width)
    printed = 0
    with _stopped_by_sigterm():
        try:
            batches = follow_messages(
                spec,
                args.topic,
                partitions=_partitions_of(args),
                start=args.start,
                backlog=20 if args.max is None else args.max,
                timeout=args.timeout,
            )
            with closing(batches):
                for batch in batches:
                    if _reader_gone():
                        raise BrokenPipeError  # exit 1, as for any closed pipe
                    if limit is not None:
                        batch = batch[: limit - printed]
                    if args.format == "json":
                        lines = [json.dumps(message_json(m), ensure_ascii=True) for m in batch]
                    else:
                        lines = rows.lines(batch)
                    if lines:
                        _write(lines)
                    printed += len(batch)
                    if limit is not None and printed >= limit:
                        break
        except _Stop:
            pass
    return 0
