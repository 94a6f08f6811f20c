"""``kgitops get DIR topics|partitions|brokers|config TOPIC|balance|groups|members GROUP|lags
GROUP [--topic GLOB]...``: the everyday questions
about a cluster, as sorted aligned tables or ``--format json`` (``kgitops-get/v1``, schema
``kgitops/schemas/console.json``). See docs/console.md.

Works on a live cluster, the local broker, a simulated cluster and a ``--state`` snapshot;
every view costs one ``describe`` (Metadata plus DescribeConfigs for the topics and one per
broker), whatever the number of topics.
"""

from __future__ import annotations

import argparse
import sys

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._console import add_source, emit, read_groups, read_state, read_state_of
from kgitops.errors import KgitopsError

NAME = "get"
HELP = (
    "show topics, partitions, brokers, a topic's config, the balance, consumer groups, "
    "their members or lags"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser)
    sub = parser.add_subparsers(dest="view", metavar="VIEW", required=True)
    filtered = argparse.ArgumentParser(add_help=False)
    add_source(filtered)
    filtered.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="GLOB",
        help="only topics matching this shell glob (repeatable; e.g. 'payments.*')",
    )
    listed = argparse.ArgumentParser(add_help=False)
    listed.add_argument(
        "--include-internal",
        action="store_true",
        help="also list internal topics: __* (__consumer_offsets...; a --topic glob starting "
        "with __ lists the ones it matches) and kgitops' passwordVersion topic (or --topic NAME)",
    )
    sub.add_parser(
        "topics", parents=[filtered, listed], help="topics: partitions, RF, bytes, health"
    )
    sub.add_parser(
        "partitions",
        parents=[filtered, listed],
        help="partitions: leader, replicas, ISR, bytes",
    )
    sub.add_parser(
        "brokers", parents=[filtered], help="brokers: rack, liveness, replicas, leaders, bytes"
    )
    sub.add_parser(
        "balance",
        parents=[filtered],
        help="replicas, leaders and bytes per broker and per rack, with the spread",
    )
    plain = argparse.ArgumentParser(add_help=False)
    add_source(plain)
    p = sub.add_parser("config", parents=[plain], help="the configs set on one topic")
    p.add_argument("topic_name", metavar="TOPIC")
    sub.add_parser(
        "groups", parents=[filtered], help="consumer groups: state, members, topics, total lag"
    )
    p = sub.add_parser("members", parents=[filtered], help="a group's members and their partitions")
    p.add_argument("group", metavar="GROUP")
    p = sub.add_parser(
        "lags",
        parents=[filtered],
        help="a group's committed offset, end offset and lag per partition",
    )
    p.add_argument("group", metavar="GROUP")


def run(args: argparse.Namespace) -> int:
    from kgitops.console import views
    from kgitops.model import OWNER_TOPIC, PASSWORD_VERSION_TOPIC
    from kgitops.safetext import safe_text

    if args.view in ("groups", "members", "lags"):
        return _groups(args)
    if args.view == "config":
        state = read_state(args, [args.topic_name])
        if args.topic_name not in state.topics:
            raise KgitopsError(
                f"topic '{safe_text(args.topic_name)}' does not exist on the cluster"
            )
        view = views.config_view(state, args.topic_name)
    else:
        state, cluster = read_state_of(args)
        own = (
            cluster.own_topics
            if cluster is not None
            else frozenset({PASSWORD_VERSION_TOPIC, OWNER_TOPIC})
        )
        if args.view in ("topics", "partitions"):
            internal = args.include_internal
            chosen = views.Selection(args.topic, internal=internal, own=own)
            if args.view == "topics":
                labels = _spec_labels(args.dir) if cluster is not None else None
                view = views.topics_view(state, chosen, labels)
            else:
                view = views.partitions_view(state, chosen)
        else:
            internal = True  # a broker's replicas are all its replicas
            view = (views.brokers_view if args.view == "brokers" else views.balance_view)(
                state, args.topic
            )
        if args.topic and not views.select(state, args.topic, internal=internal, own=own):
            globs = ", ".join(safe_text(t) for t in args.topic)
            hidden = sorted(views.select(state, args.topic, internal=True, own=own))
            if hidden:  # internal topics match, but only --include-internal shows them
                print(
                    f"note: no topic shown matches {globs}: {len(hidden)} internal topic(s) "
                    f"match ({', '.join(safe_text(n) for n in hidden[:5])}"
                    f"{', ...' if len(hidden) > 5 else ''}); add --include-internal",
                    file=sys.stderr,
                )
            else:
                print(f"note: no topic matches {globs}", file=sys.stderr)
    emit(view, args.format, views.render_text(view) if args.format == "text" else [])
    return 0


def _spec_labels(directory: str) -> dict[str, dict[str, str]]:
    """Each topic's ``labels:`` in the folder's specs (topic files with errors are skipped)."""
    from kgitops.spec.load import load_specs

    return {t.name: dict(t.labels) for t in load_specs(directory).topics if t.labels}


def _groups(args: argparse.Namespace) -> int:
    from kgitops.console import group_views as gv
    from kgitops.safetext import safe_text

    globs = ", ".join(safe_text(t) for t in args.topic)
    if args.view == "groups":
        view = gv.groups_view(read_groups(args), args.topic)
        shown = view["groups"]
        nothing = f"no consumer group has an offset or a partition of a topic matching {globs}"
    else:
        groups = read_groups(args, [args.group])
        make = gv.members_view if args.view == "members" else gv.lags_view
        view = make(groups, args.group, args.topic, lambda: read_groups(args).groups)
        shown = view["members" if args.view == "members" else "partitions"]
        gid = safe_text(args.group)
        nothing = (
            f"no member of group {gid} is assigned a partition of a topic matching {globs}"
            if args.view == "members"
            else f"group {gid} has no offset or partition of a topic matching {globs}"
        )
    if args.topic and not shown:
        print(f"note: {nothing}", file=sys.stderr)
    emit(view, args.format, gv.render_group_text(view) if args.format == "text" else [])
    return 0
