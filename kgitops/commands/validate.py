"""``kgitops validate [DIR] [--state FILE]``: schema and semantic checks, every problem at once.

DIR is a cluster folder (it has a cluster.yaml) or a folder of cluster folders (``topics/``),
each validated in turn. Prints ``path:line:col: error|warning: message`` lines, sorted, then a
one-line summary; exit 1 if any error.
"""

from __future__ import annotations

import argparse
import sys

from kgitops.errors import KgitopsError
from kgitops.model import Broker

NAME = "validate"
HELP = "check the topic and cluster files: schemas, Kafka's rules, every problem at once"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        nargs="?",
        default="topics",
        metavar="DIR",
        help="a cluster folder, or a folder of cluster folders (default: topics)",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="a saved cluster state (kgitops snapshot): its brokers are used for the "
        "replication-factor, assignment and decommission checks",
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print errors only, no warnings or summary"
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.specs import cluster_dirs, load_specs

    brokers: list[Broker] | None = None
    if args.state:
        brokers = _state_brokers(args.state)
    errors = warnings = 0
    folders = cluster_dirs(args.directory)
    for folder in folders:
        specs = load_specs(folder, brokers=brokers)
        for d in specs.diagnostics:
            if d.is_error:
                errors += 1
            else:
                warnings += 1
                if args.quiet:
                    continue
            print(d)
        if not args.quiet:
            topics = len(specs.topics)
            print(
                f"{folder}: {topics} topic{'s' if topics != 1 else ''}, "
                f"{len(specs.errors)} error(s), {len(specs.warnings)} warning(s)",
                file=sys.stderr,
            )
    return 1 if errors else 0


def _state_brokers(path: str) -> list[Broker]:
    """The brokers of a saved state; read_state raises a KgitopsError naming the file."""
    from kgitops.cluster.snapshot import read_state

    try:
        state = read_state(path)
    except OSError as exc:  # read_state translates these itself; this is the last guard
        raise KgitopsError(f"{path}: cannot read the state file: {exc.strerror}") from None
    return list(state.brokers)
