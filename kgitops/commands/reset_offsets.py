"""``kgitops reset-offsets DIR --group G --topic T --to-earliest|--to-latest|--to-offset N|
--to-time ISO|--shift-by N [--partitions 0,1] [--yes]``: move a consumer group's committed
offsets. Shows the plan (partition, from, to, messages skipped or replayed) and changes
nothing without ``--yes``; refuses while the group has members, naming them (Kafka refuses an
admin commit to an active group). See docs/console.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._units import integer, is_digits
from kgitops.errors import ClusterError, KgitopsError

if TYPE_CHECKING:
    from kgitops.model import TopicPartition

NAME = "reset-offsets"
HELP = "move a consumer group's committed offsets on a topic (a plan first; --yes to commit)"


def _time(text: str) -> int:
    """ISO 8601 -> ms since the epoch; no zone means UTC."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2026-11-24T09:30:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def _offset(text: str) -> int:
    if not is_digits(text):
        raise argparse.ArgumentTypeError(f"not an offset (0 or more): {text!r}")
    return int(text)


def _shift(text: str) -> int:
    return integer(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser)
    parser.add_argument("--group", required=True, metavar="G")
    parser.add_argument("--topic", required=True, metavar="T")
    to = parser.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the log start")
    to.add_argument("--to-latest", action="store_true", help="the end (skip everything)")
    to.add_argument("--to-offset", type=_offset, metavar="N", help="offset N in each partition")
    to.add_argument(
        "--to-time", type=_time, metavar="ISO", help="the first offset at or after this time"
    )
    to.add_argument(
        "--shift-by", type=_shift, metavar="±N", help="N forward (skip) or back (-N: replay)"
    )
    parser.add_argument("--partitions", metavar="0,1", help="only these partitions (default all)")
    parser.add_argument("--yes", action="store_true", help="commit the new offsets")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from kgitops.cluster.connect import open_cluster
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.console.group_views import find_group
    from kgitops.console.offsets import parse_partitions, refuse_active, reset_plan, selected
    from kgitops.model import TopicPartition
    from kgitops.safetext import safe_text

    admin = open_cluster(load_cluster(args.dir))
    try:
        topic = args.topic
        state = admin.describe([topic])
        if topic not in state.topics:
            raise KgitopsError(f"topic '{safe_text(topic)}' does not exist on the cluster")
        count = state.topics[topic].partition_count
        chosen = selected(
            None if args.partitions is None else parse_partitions(args.partitions, count, topic),
            count,
        )
        group = find_group(
            admin.describe_groups([args.group]),
            args.group,
            lambda: admin.describe_groups().groups,
        )
        refuse_active(group, "reset offsets")
        keys = [(topic, p) for p in chosen]
        starts = admin.list_offsets(keys, -2)
        ends = admin.list_offsets(keys, -1)
        logs = {p: (starts[(topic, p)], ends[(topic, p)]) for p in chosen}
        committed = {p: group.offsets.get((topic, p)) for p in chosen}
        targets: dict[int, int | None]
        if args.to_earliest:
            targets = {p: logs[p][0] for p in chosen}
        elif args.to_latest:
            targets = {p: logs[p][1] for p in chosen}
        elif args.to_offset is not None:
            targets = dict.fromkeys(chosen, args.to_offset)
        elif args.to_time is not None:
            at = admin.list_offsets(keys, args.to_time)
            targets = {p: at[(topic, p)] for p in chosen}
        else:
            targets = {}
            for p in chosen:
                now = committed[p]
                targets[p] = None if now is None else now + args.shift_by
        plan = reset_plan(committed, logs, targets)
        changes = {TopicPartition(topic, p): o for p, o in plan.changes.items()}
        applied = False
        if args.yes and changes:
            results = admin.alter_group_offsets(args.group, changes)
            failed = {tp: e for tp, e in results.items() if e is not None}
            if failed:
                raise _failed(failed, len(changes))
            applied = True
    finally:
        admin.close()
    if args.format == "json":
        json.dump(plan.to_json(args.group, topic, applied), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(plan.lines(args.group, topic)) + "\n")
        if not changes:
            print("nothing to change")
        elif applied:
            print(f"committed {len(changes)} offset(s) for group {safe_text(args.group)}")
        else:
            print("nothing changed: run again with --yes to commit these offsets")
    return 0


def _failed(failed: Mapping[TopicPartition, ClusterError], total: int) -> KgitopsError:
    first = next(iter(failed.values()))
    return KgitopsError(
        f"the cluster refused {len(failed)} of {total} offset(s) (the others were committed): "
        f"{first}"
    )
