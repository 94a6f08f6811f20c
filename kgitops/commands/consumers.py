"""``kgitops consumers``: Kafka's consumer-group assignment, as JSON.

::

    $ kgitops consumers --strategy range --partitions t0=3,t1=3 --member C0 --member C1
    {"C0": ["t0-0", "t0-1", "t1-0", "t1-1"], "C1": ["t0-2", "t1-2"]}

A member subscribes to every listed topic, or with ``NAME=t0,t1`` to those only; a subscribed
topic that ``--partitions`` does not list is ignored with a warning, as Kafka's assignors skip
a topic without metadata. For the
sticky strategy, ``--previous C0=t0-0,t0-1`` (repeatable) gives what each member owned, and
the result moves as few partitions as balance allows.
"""

from __future__ import annotations

import argparse
import json
import sys

from kgitops.errors import KgitopsError

NAME = "consumers"
HELP = "print Kafka's consumer-group assignment (range, roundrobin, sticky) as JSON"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strategy", required=True, choices=["range", "roundrobin", "sticky"])
    parser.add_argument("--partitions", required=True, help="partition count per topic: t0=3,t1=2")
    parser.add_argument(
        "--member",
        action="append",
        required=True,
        metavar="NAME[=TOPICS]",
        help="a group member, subscribed to all topics or to TOPICS (comma-separated)",
    )
    parser.add_argument(
        "--previous",
        action="append",
        default=[],
        metavar="NAME=T-P,...",
        help="sticky only: the partitions a member owned before, e.g. C0=t0-0,t0-1",
    )


def _pair(text: str, flag: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise KgitopsError(f"{flag}: {text!r} is not NAME=VALUE")
    return name.strip(), value.strip()


def parse_partitions(text: str) -> dict[str, int]:
    from kgitops.commands._units import MAX_PARTITIONS, check_count

    counts: dict[str, int] = {}
    for item in text.split(","):
        topic, value = _pair(item, "--partitions")
        try:
            count = int(value)
        except ValueError:
            raise KgitopsError(f"--partitions: {value!r} for {topic} is not a number") from None
        if count < 1:
            raise KgitopsError(f"--partitions: {topic} must have at least 1 partition")
        if topic in counts:
            raise KgitopsError(f"--partitions: {topic} is listed twice")
        counts[topic] = check_count(count, f"--partitions {topic}")
    check_count(sum(counts.values()), "--partitions in all", MAX_PARTITIONS)
    return counts


def parse_members(
    items: list[str], topics: dict[str, int], warnings: list[str] | None = None
) -> dict[str, list[str]]:
    """Members and the listed topics each subscribes to. A subscribed topic that
    ``--partitions`` does not list is left out with a warning in ``warnings``, as Kafka's
    assignors skip a topic they have no metadata for."""
    members: dict[str, list[str]] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not name:
            raise KgitopsError(f"--member: {item!r} has no member name")
        if name in members:
            raise KgitopsError(f"--member: {name} is listed twice")
        subscribed = [t.strip() for t in value.split(",") if t.strip()] if sep else list(topics)
        if sep and not subscribed:
            raise KgitopsError(f"--member: {name} subscribes to no topic")
        unknown = [t for t in subscribed if t not in topics]
        if unknown and warnings is not None:
            warnings.extend(
                f"warning: --member {name} subscribes to {t}, which --partitions does not list: "
                "ignored, as Kafka's assignors skip a topic without metadata"
                for t in unknown
            )
        members[name] = [t for t in subscribed if t in topics]
    return members


def parse_previous(
    items: list[str], members: dict[str, list[str]]
) -> dict[str, list[tuple[str, int]]]:
    previous: dict[str, list[tuple[str, int]]] = {}
    for item in items:
        name, value = _pair(item, "--previous")
        if name not in members:
            raise KgitopsError(f"--previous: {name} is not a --member")
        owned = previous.setdefault(name, [])
        for tp in (v.strip() for v in value.split(",") if v.strip()):
            topic, dash, number = tp.rpartition("-")
            if not dash or not topic or not number.isdigit():
                raise KgitopsError(f"--previous: {tp!r} is not TOPIC-PARTITION (e.g. t0-3)")
            owned.append((topic, int(number)))
    return previous


def run(args: argparse.Namespace) -> int:
    from kgitops.placement.consumers import (
        assign_range,
        assign_round_robin,
        assign_sticky,
        java_order,
    )

    partitions = parse_partitions(args.partitions)
    warnings: list[str] = []
    members = parse_members(args.member, partitions, warnings)
    for line in warnings:
        print(line, file=sys.stderr)
    previous = parse_previous(args.previous, members)
    if previous and args.strategy != "sticky":
        raise KgitopsError("--previous only applies to --strategy sticky")
    if args.strategy == "range":
        result = assign_range(members, partitions)
    elif args.strategy == "roundrobin":
        result = assign_round_robin(members, partitions)
    else:
        result = assign_sticky(members, partitions, previous)
    out = {
        m: [f"{t}-{p}" for t, p in sorted(result[m], key=lambda tp: (java_order(tp[0]), tp[1]))]
        for m in members
    }
    print(json.dumps(out))
    return 0
