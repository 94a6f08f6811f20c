"""``kgitops delete-group DIR --group G [--yes]``: delete a consumer group and its committed
offsets. Shows what would go and changes nothing without ``--yes``; refuses while the group
has members, naming them (Kafka answers NON_EMPTY_GROUP). See docs/console.md."""

from __future__ import annotations

import argparse

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.errors import KgitopsError

NAME = "delete-group"
HELP = "delete a consumer group with no members and its committed offsets (--yes to delete)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser)
    parser.add_argument("--group", required=True, metavar="G")
    parser.add_argument("--yes", action="store_true", help="delete it")


def run(args: argparse.Namespace) -> int:
    from kgitops.cluster.connect import open_cluster
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.console.group_views import find_group
    from kgitops.console.offsets import refuse_active
    from kgitops.safetext import safe_text

    name = safe_text(args.group)
    admin = open_cluster(load_cluster(args.dir))
    try:
        group = find_group(
            admin.describe_groups([args.group]),
            args.group,
            lambda: admin.describe_groups().groups,
        )
        refuse_active(group, "delete the group")
        topics = sorted({t for t, _ in group.offsets})
        print(
            f"delete group {name} ({safe_text(group.state)}): {len(group.offsets)} committed "
            f"offset(s) on {len(topics)} topic(s)"
            + (": " + ", ".join(safe_text(t) for t in topics[:10]) if topics else "")
            + (f" and {len(topics) - 10} more" if len(topics) > 10 else "")
        )
        if not args.yes:
            print("nothing changed: run again with --yes to delete it")
            return 0
        error = admin.delete_groups([args.group]).get(args.group)
        if error is not None:
            raise KgitopsError(f"group {name} was not deleted: {error}")
    finally:
        admin.close()
    print(f"deleted group {name}")
    return 0
