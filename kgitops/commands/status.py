"""`kgitops status DIR`: is the cluster healthy? Offline and under-replicated partitions, ISR,
leaders off the preferred replica, reassignments in flight (see ``kgitops.plan.health``), and
per broker the bytes, replicas and preferred leaders it holds (``kgitops.plan.spread``, the
figures the plan shows before -> after).

Exit code: 0 healthy; 2 unhealthy (a broker offline, a partition offline, under-replicated
or under its min.insync.replicas, a replication throttle no move needs, or a replica on a
decommissioned broker); 1 when the status could not be read. Leaders off preferred
and reassignments in flight are shown but do not make the cluster unhealthy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._console import add_limit, add_source

if TYPE_CHECKING:
    from kgitops.plan.health import Health, PartitionHealth

NAME = "status"
HELP = (
    "cluster health: offline and under-replicated partitions, ISR, leaders, reassignments "
    "(exit 2 when unhealthy)"
)

UNHEALTHY = 2

_SECTIONS = (
    (
        "offline",
        "Offline partitions (no leader: no in-sync replica is online; unclean election is off)",
    ),
    ("under_min_isr", "Under min ISR (acks=all producers are refused)"),
    ("under_replicated", "Under-replicated partitions (ISR smaller than the replication factor)"),
    ("reassigning", "Reassignments in flight"),
    (
        "leader_off_preferred",
        "Leaders off the preferred replica (a preferred-leader election moves them back)",
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "exit codes: 0 healthy; 2 unhealthy (a broker offline, partitions offline, "
        "under-replicated or under min ISR, throttles left, replicas on decommissioned "
        "brokers); 1 the status could not be read"
    )
    add_cluster_dir_argument(parser)
    add_source(parser)
    add_limit(parser, "partitions listed per section in text output")


def run(args: argparse.Namespace) -> int:
    from kgitops.plan.health import assess
    from kgitops.plan.spread import broker_spread, text_lines

    progress = None
    decommission: tuple[int, ...] = ()
    if args.state is not None:
        from kgitops.cluster.snapshot import read_state

        state = read_state(args.state)
        title = args.state
        if os.path.exists(os.path.join(args.dir, "cluster.yaml")):
            from kgitops.commands._clusterdir import load_cluster

            loaded = load_cluster(args.dir)
            decommission = loaded.decommission
            if state.kafka_version is None:  # a state file from before kafkaVersion
                state = replace(state, kafka_version=loaded.kafka_version)
    else:
        from kgitops.cluster.connect import open_cluster
        from kgitops.commands._clusterdir import load_cluster

        spec = load_cluster(args.dir)
        decommission = spec.decommission
        admin = open_cluster(spec)
        try:
            state = admin.describe(None)
            get_progress = getattr(admin, "replica_progress", None)
            if callable(get_progress):
                progress = get_progress()
        finally:
            admin.close()
        title = f"cluster {spec.name}" + (" (simulated)" if spec.simulated else "")
    health = assess(state, progress, decommission=decommission)
    spread = broker_spread(state)
    if args.format == "json":
        json.dump({**health.to_json(), "spread": spread}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        lines = render(health, title, args.limit)
        lines += ["", *text_lines(spread, changes=False)]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0 if health.healthy else UNHEALTHY


def render(health: Health, title: str, limit: int = 20) -> list[str]:
    """The text report: a verdict line, then one section per kind of finding."""
    offline = health.offline_brokers
    lines = [
        f"{title}: {health.brokers} broker(s)"
        + (f", offline: {', '.join(map(str, offline))}" if offline else "")
        + f"; {health.topics} topic(s), {health.partitions} partition(s)"
    ]
    counts = [
        f"{health.count(flag)} {words}"
        for flag, words in (
            ("offline", "offline"),
            ("under_replicated", "under-replicated"),
            ("under_min_isr", "under min ISR"),
            ("reassigning", "reassigning"),
            ("stalled", "stalled"),
            ("leader_off_preferred", "leader(s) off preferred"),
        )
        if health.count(flag)
    ]
    if health.harmful_throttles:
        counts.append(f"{len(health.harmful_throttles)} throttle(s) left")
    if health.draining:
        counts.append(f"{sum(health.draining.values())} replica(s) on decommissioned brokers")
    verdict = "HEALTHY" if health.healthy else "UNHEALTHY"
    lines.append(f"{verdict}" + (f": {', '.join(counts)}" if counts else ""))
    if offline:
        lines.append("(a broker id marked * below is offline)")
    for b in health.retired:
        lines.append(
            f"broker {b}: decommissioned, down and holding no replica (Kafka lists it as fenced "
            f"until `kafka-cluster.sh unregister --id {b}` removes it)"
        )
    if health.harmful_throttles:
        lines.append("")
        lines.append(
            "Replication throttles left (no move in flight needs them; "
            "`kgitops plan` lists them under ~ remove_throttles)"
        )
        for t in health.harmful_throttles:
            what = ", ".join(f"{k}={v}" if v else k for k, v in sorted(t.keys.items()))
            lines.append(f"  {t.name}: {what}  ({t.reason})")
    if health.draining:
        lines.append("")
        lines.append("Decommissioned brokers still holding replicas (the drain is not done)")
        for b, n in sorted(health.draining.items()):
            lines.append(f"  broker {b}: {n} replica(s)")
    if not health.isr_known:
        lines.append("note: the state has no ISR for some partitions; their health is unknown")
    for flag, heading in _SECTIONS:
        found = health.of(flag)
        if not found:
            continue
        lines.append("")
        lines.append(heading)
        shown = found if limit <= 0 else found[:limit]
        width = max(len(f.name) for f in shown)
        dead = frozenset(health.offline_brokers)
        lines.extend(f"  {f.name:<{width}}  {_describe(f, flag, dead)}" for f in shown)
        if len(found) > len(shown):
            lines.append(f"  ... and {len(found) - len(shown)} more (--limit 0 lists all)")
    return lines


def _describe(f: PartitionHealth, flag: str, dead: frozenset[int]) -> str:
    """One finding in one line; a broker id marked ``*`` is offline."""
    from kgitops.units import human_bytes

    def _ids(ids: tuple[int, ...]) -> str:
        return "[" + ", ".join(f"{b}*" if b in dead else str(b) for b in ids) + "]"

    leader = "none" if f.leader is None else str(f.leader)
    base = f"AR {_ids(f.replicas)}  ISR {_ids(f.isr)}"
    if f.osr:
        base += f"  OSR {_ids(f.osr)}"
    if flag == "leader_off_preferred":
        return f"leader {leader}, preferred {f.replicas[0]}  ({base})"
    if flag == "under_min_isr":
        out = f"{base}  min.insync.replicas {f.min_isr}"
        leo = f.leader_leo
        if f.offsets is not None and leo is not None and leo > f.offsets.high_watermark:
            hw = f.offsets.high_watermark
            out += f"  HW {hw} < leader LEO {leo}: {leo - hw} record(s) not readable yet"
        return out
    if flag == "reassigning":
        out = (
            f"target {_ids(f.target)}  adding {_ids(f.adding)}  removing {_ids(f.removing)}  "
            f"ISR {_ids(f.isr)}"
        )
        copied = [
            f"{b}: {human_bytes(c)} of {human_bytes(s)}"
            for b, (c, s) in sorted(f.progress.items())
            if b in f.adding
        ]
        if copied:
            out += "  copied " + ", ".join(copied)
        if "stalled" in f.flags:
            out += "  STALLED (an adding replica's broker is offline)"
        return out
    out = f"{base}  leader {leader}"
    lag = [f"{b} lags {human_bytes(s - c)}" for b, (c, s) in sorted(f.progress.items()) if s > c]
    if lag:
        out += "  (" + ", ".join(lag) + " behind the leader's LEO)"
    return out
