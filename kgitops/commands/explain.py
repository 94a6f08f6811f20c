"""``kgitops explain DIR TOPIC``: every effective value of a topic and where it came from.

Precedence is topic > profile > defaults > broker (see docs/specs.md)::

    $ kgitops explain topics/prod payments.orders
    payments.orders  topics/prod/orders.yaml:3:1  profile critical
      partitions                  12                topic             topics/prod/orders.yaml:4:13
      replicationFactor           3                 defaults          topics/prod/cluster.yaml:8:22
      config.min.insync.replicas  2                 profile critical  topics/prod/cluster.yaml:16:28
      config.retention.ms         90d (7776000000)  topic             topics/prod/orders.yaml:7:17
    every other config: the broker's (--all lists them with Kafka's defaults)
"""

from __future__ import annotations

import argparse
import json

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.errors import printable

NAME = "explain"
HELP = "show each effective value of a topic and where it came from (topic, profile, defaults)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser)
    parser.add_argument("topic", metavar="TOPIC", help="the topic's name")
    parser.add_argument(
        "--all", action="store_true", help="also list the configs left to the broker"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from kgitops.errors import KgitopsError, SpecError
    from kgitops.spec.layers import effective_values
    from kgitops.spec.load import load_specs
    from kgitops.spec.schemacheck import did_you_mean

    specs = load_specs(args.dir)
    if specs.errors:
        raise SpecError(specs.diagnostics)
    topic = specs.topic(args.topic)
    if topic is None:
        hint = did_you_mean(args.topic, [t.name for t in specs.topics])
        raise KgitopsError(f"no topic {args.topic!r} in {args.dir}{hint}")
    rows = effective_values(topic, every_config=args.all)
    if args.format == "json":
        out = {
            "topic": topic.name,
            "file": str(topic.mark),
            "profile": topic.profile,
            "values": [
                {
                    "field": r.path,
                    "value": r.value,
                    "origin": r.origin,
                    "where": None if r.where is None else str(r.where),
                }
                for r in rows
            ],
        }
        print(json.dumps(out, indent=2))
        return 0
    head = f"{topic.name}  {topic.mark}"
    print(printable(head + (f"  profile {topic.profile}" if topic.profile else "")))
    width = max(len(r.path) for r in rows)
    value_width = max(len(r.value) for r in rows)
    origin_width = max(len(r.origin) for r in rows)
    for r in rows:
        where = "" if r.where is None else str(r.where)
        line = f"  {r.path:<{width}}  {r.value:<{value_width}}  {r.origin:<{origin_width}}  {where}"
        print(printable(line.rstrip()))
    if not args.all:
        print("every other config: the broker's (--all lists them with Kafka's defaults)")
    return 0
