"""What the console commands (``get``, and later ``tail``, ``reset-offsets``) share: the
cluster state of a folder, from the live cluster, the simulated one or a ``--state`` snapshot,
the JSON / text output, and the ``--limit`` of the text views (``status``, ``simulate show``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from kgitops.commands._units import integer
from kgitops.errors import KgitopsError
from kgitops.groups import GroupsState
from kgitops.model import ClusterSpec, ClusterState


def add_source(parser: argparse.ArgumentParser) -> None:
    """``--state FILE`` and ``--format text|json``."""
    parser.add_argument(
        "--state", metavar="FILE", help="read a saved snapshot instead of the live cluster"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def add_limit(parser: argparse.ArgumentParser, listed: str) -> None:
    """``--limit N``: how many lines a text view lists (``listed`` says of what), 20 unless
    given, every one with 0."""
    parser.add_argument(
        "--limit", type=integer, default=20, metavar="N", help=f"{listed} (default 20; 0: all)"
    )


def read_state(args: argparse.Namespace, topics: Iterable[str] | None = None) -> ClusterState:
    """The state ``args`` point at: ``--state FILE`` (DIR need not hold a cluster.yaml), else
    the cluster DIR's cluster.yaml describes, through one ``describe`` (a constant number of
    admin requests: Metadata, and DescribeConfigs for the topics and each broker)."""
    return read_state_of(args, topics)[0]


def read_state_of(
    args: argparse.Namespace, topics: Iterable[str] | None = None
) -> tuple[ClusterState, ClusterSpec | None]:
    """``read_state`` and the cluster.yaml read for it (None: ``--state`` without one)."""
    if args.state is not None:
        from kgitops.cluster.snapshot import read_state as read_file

        state = read_file(args.state)
        if os.path.exists(os.path.join(args.dir, "cluster.yaml")):
            return state, _cluster(args)  # a cluster.yaml that cannot be reached still stops us
        return state, None
    from kgitops.cluster.connect import open_cluster

    cluster = _cluster(args)
    admin = open_cluster(cluster)
    try:
        return admin.describe(None if topics is None else list(topics)), cluster
    finally:
        admin.close()


def read_groups(args: argparse.Namespace, group_ids: Iterable[str] | None = None) -> GroupsState:
    """The consumer groups ``args`` point at (all, or those named) with their committed
    offsets and the log offsets of their partitions: from ``--state FILE`` (which must hold
    them), else the cluster's ``describe_groups``."""
    if args.state is not None:
        from kgitops.cluster.snapshot import read_state as read_file

        state = read_file(args.state)
        if state.groups is None:
            raise KgitopsError(
                f"{args.state}: the snapshot holds no consumer groups (take it again with "
                "`kgitops snapshot`, which saves them)"
            )
        return state.groups
    from kgitops.cluster.connect import open_cluster

    admin = open_cluster(_cluster(args))
    try:
        return admin.describe_groups(group_ids)
    finally:
        admin.close()


def _cluster(args: argparse.Namespace) -> ClusterSpec:
    """The cluster of ``args.dir`` for reading (``readable_cluster``), read once per run."""
    from kgitops.commands._clusterdir import readable_cluster

    cluster: ClusterSpec | None = getattr(args, "readable_cluster", None)
    if cluster is None:
        cluster = readable_cluster(args.dir)
        args.readable_cluster = cluster
    return cluster


def emit(view: Mapping[str, Any], fmt: str, lines: list[str]) -> None:
    """Write the view: its JSON, or the text lines."""
    if fmt == "json":
        json.dump(view, sys.stdout, indent=2, sort_keys=False)
        sys.stdout.write("\n")
    elif lines:
        sys.stdout.write("\n".join(lines) + "\n")
