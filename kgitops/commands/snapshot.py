"""`kgitops snapshot DIR --out FILE`: save the live cluster's state as kgitops-state/v1 JSON;
`kgitops snapshot diff A B`: what changed between two saved states.

The file holds brokers and racks, topics with replicas, ISR, leaders, sizes, the configs set
on each topic, and reassignments in flight; `kgitops plan DIR --state FILE` then plans from it
with no network (for pull requests that cannot reach the cluster), and a copy of it can seed
a simulated cluster for what-if questions. ``diff`` prints one line per change, positioned by
broker, topic, partition and config (kgitops/plan/statediff.py), and exits 0 when the states
are the same, 2 when they differ (as ``diff`` does; 1 is an error).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._options import add_topic_filter
from kgitops.errors import KgitopsError

if TYPE_CHECKING:
    from kgitops.cluster.port import ClusterAdmin
    from kgitops.groups import GroupsState

NAME = "snapshot"
HELP = (
    "save the live cluster state (brokers, topics, assignments, configs, sizes) as JSON; "
    "`snapshot diff A B` compares two (exit 2 when they differ)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser, ", or `diff`")
    parser.add_argument(
        "files", nargs="*", metavar="A B", help="with `diff`: the two state files to compare"
    )
    parser.add_argument("--out", "-o", metavar="FILE", help="where to write the JSON ('-': stdout)")
    add_topic_filter(parser)


def run(args: argparse.Namespace) -> int:
    if args.dir == "diff" and args.files:
        return diff(args.files)
    if args.files:
        raise KgitopsError("snapshot takes one cluster folder (or: snapshot diff A B)")
    if not args.out:
        raise KgitopsError("snapshot needs --out FILE (or '-' for stdout)")
    from kgitops.cluster.connect import open_cluster
    from kgitops.cluster.snapshot import dumps_state
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.commands._out import named_files
    from kgitops.files import STATE_OUT, check_output

    named = named_files(args.dir, args.out) if args.out != "-" else {}
    if args.out != "-":
        check_output(args.out, STATE_OUT, named=named)
    spec = load_cluster(args.dir)
    admin = open_cluster(spec)
    try:
        state = admin.describe(args.topic)
        if state.groups is None:
            state = replace(state, groups=_groups(admin))
    finally:
        admin.close()
    if args.out == "-":
        sys.stdout.write(dumps_state(state))
        return 0
    from kgitops.files import write_output
    from kgitops.perf import paused_gc

    with paused_gc():
        text = dumps_state(state)
    try:
        write_output(args.out, text, STATE_OUT, named=named)
    except OSError as exc:
        raise KgitopsError(
            f"{args.out}: cannot write the snapshot: {exc.strerror or exc}"
        ) from None
    partitions = sum(t.partition_count for t in state.topics.values())
    print(
        f"wrote {args.out}: {len(state.brokers)} broker(s), {len(state.topics)} topic(s), "
        f"{partitions} partition(s) of cluster {spec.name}",
        file=sys.stderr,
    )
    return 0


def _groups(admin: ClusterAdmin) -> GroupsState | None:
    """The consumer groups and their log offsets, for ``get groups|lags --state``; None when
    the cluster lacks the group APIs (the snapshot is still taken)."""
    from kgitops.errors import UnsupportedOperation

    try:
        return admin.describe_groups()
    except UnsupportedOperation:
        return None


def diff(files: list[str]) -> int:
    """Print what changed from state file A to state file B; 0 when nothing did, else 2."""
    from kgitops.cluster.snapshot import read_state
    from kgitops.plan.statediff import describe_changes

    if len(files) != 2:
        raise KgitopsError(f"snapshot diff takes two state files, got {len(files)}")
    before, after = (read_state(f) for f in files)
    lines = describe_changes(before, after)
    if not lines:
        print(f"no changes between {files[0]} and {files[1]}")
        return 0
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 2
