"""`kgitops simulate DIR ACTION`: what-if on a simulated cluster (cluster.yaml `simulated:`).

    kgitops simulate topics/demo fail-broker 3      what if broker 3 dies?
    kgitops simulate topics/demo restore-broker 3   it comes back
    kgitops simulate topics/demo advance 5m         let time pass: replicas catch up
    kgitops simulate topics/demo set-size orders 2GB   give a topic's partitions data
    kgitops simulate topics/demo produce orders 5MB/s  keep writing to it as time passes
    kgitops simulate topics/demo show               clock, brokers, health, copies in flight
    kgitops simulate topics/demo consume billing orders     a consumer joins group billing
    kgitops simulate topics/demo commit billing orders --lag 10   the group commits
    kgitops simulate topics/demo leave billing billing-1    that consumer leaves

Each prints what changed; `kgitops status DIR` shows the full health and `kgitops plan DIR`
the plan (with `decommission: [3]` in cluster.yaml, the plan that re-replicates away from a
dead broker 3).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from kgitops.commands._console import add_limit
from kgitops.commands._units import integer

if TYPE_CHECKING:
    from kgitops.cluster.simulated import SimulatedCluster
    from kgitops.plan.health import Health

NAME = "simulate"
HELP = "what-if on a simulated cluster: fail or restore a broker, let time pass, show"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the cluster folder (simulated cluster.yaml)")
    sub = parser.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    p = sub.add_parser(
        "fail-broker",
        help="a broker dies: broker.session.timeout.ms later the controller fences it and it "
        "leaves every ISR (the clock moves on by that much)",
    )
    p.add_argument("broker", type=integer, metavar="ID")
    p = sub.add_parser(
        "pause-broker",
        help="a broker stalls for DURATION (a long GC pause): it serves and fetches nothing; "
        "fenced if the pause outlasts broker.session.timeout.ms (the clock moves on)",
    )
    p.add_argument("broker", type=integer, metavar="ID")
    p.add_argument("duration", metavar="DURATION")
    p = sub.add_parser("restore-broker", help="bring a failed broker back")
    p.add_argument("broker", type=integer, metavar="ID")
    p = sub.add_parser("advance", help="let simulated time pass (90, 90s, 5m, 1h30m)")
    p.add_argument("duration", metavar="DURATION")
    p = sub.add_parser("set-size", help="set the bytes a topic's partitions hold (e.g. 2GB)")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("size", metavar="SIZE")
    p.add_argument("--partition", type=integer, default=None, help="only this partition")
    p = sub.add_parser("produce", help="write to a topic at a rate as time passes (5MB/s; 0 stops)")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("rate", metavar="RATE")
    p.add_argument(
        "--acks",
        choices=("all", "1", "0"),
        default="all",
        help="all (default, Kafka's): refused while the ISR is below min ISR; 1, 0: "
        "written to the leader, readable up to the high watermark",
    )
    p.add_argument(
        "--keys",
        choices=("none", "uniform"),
        default="none",
        help="none (default): keyless, spread over partitions that have a leader; "
        "uniform: keys hashed over every partition (an offline one refuses its share)",
    )
    p = sub.add_parser("consume", help="a consumer joins a group on a topic (range assignor)")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("--member", metavar="ID", help="its member id (default GROUP-N)")
    p = sub.add_parser("leave", help="a consumer leaves its group")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("member", metavar="ID")
    p = sub.add_parser("commit", help="a group commits offsets on a topic, N behind the end")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument(
        "--lag", type=integer, default=0, metavar="N", help="this far behind (default 0)"
    )
    p = sub.add_parser("show", help="the clock, brokers, health and replicas catching up")
    add_limit(p, "replicas listed")


def run(args: argparse.Namespace) -> int:
    from kgitops.cluster.simulated import SimulatedCluster
    from kgitops.commands._clusterdir import load_cluster
    from kgitops.errors import KgitopsError
    from kgitops.plan.health import assess
    from kgitops.spec.include import repository_root
    from kgitops.units import human_bytes, human_seconds, parse_duration, parse_size

    spec = load_cluster(args.dir)
    if spec.simulated is None:
        raise KgitopsError(
            f"{spec.mark_of('name')}: cluster {spec.name} is not simulated (simulate needs "
            "`simulated:` in cluster.yaml); it will not touch a real cluster"
        )
    sim = SimulatedCluster.from_spec(spec.simulated, root=repository_root(spec.directory))

    def health() -> Health:  # as `kgitops status` judges it, so the two never disagree
        return assess(sim.describe(), sim.replica_progress(), decommission=spec.decommission)

    before = health()
    cmd = args.sim_command
    if cmd == "fail-broker":
        wait = sim.state.session_timeout
        sim.stop_broker(args.broker)
        sim.advance(wait)
        print(
            f"broker {args.broker} stopped; {human_seconds(wait)} later "
            "(broker.session.timeout.ms) the controller fenced it: it is now offline; "
            f"clock now {human_seconds(sim.state.clock)}"
        )
    elif cmd == "pause-broker":
        seconds = _parsed(parse_duration, args.duration)
        sim.stop_broker(args.broker, seconds)
        sim.advance(seconds)
        fenced = seconds >= sim.state.session_timeout
        print(
            f"broker {args.broker} paused for {human_seconds(seconds)}"
            + (
                f": fenced after {human_seconds(sim.state.session_timeout)} "
                "(broker.session.timeout.ms), back now"
                if fenced
                else " and back; not fenced (shorter than broker.session.timeout.ms)"
            )
            + f"; clock now {human_seconds(sim.state.clock)}"
        )
    elif cmd == "restore-broker":
        sim.restore_broker(args.broker)
        print(f"broker {args.broker} is back online")
    elif cmd == "advance":
        seconds = _parsed(parse_duration, args.duration)
        sim.advance(seconds)
        print(f"advanced {human_seconds(seconds)}; clock now {human_seconds(sim.state.clock)}")
    elif cmd == "set-size":
        size = _parsed(parse_size, args.size)
        sim.set_size(args.topic, size, args.partition)
        where = "every partition" if args.partition is None else f"partition {args.partition}"
        print(f"{args.topic}: {where} now holds {size} bytes")
    elif cmd == "produce":
        text = args.rate.strip()
        text = text[:-2] if text.lower().endswith("/s") else text
        rate = _parsed(parse_size, text, " per second")
        sim.set_produce_rate(args.topic, rate, args.acks, args.keys)
        print(
            f"{args.topic}: written at {rate} bytes/s (acks={args.acks}, keys {args.keys})"
            if rate
            else f"{args.topic}: no writes"
        )
        if rate:
            _, refused = sim.produce_now(args.topic)
            if refused:
                print(
                    f"  refused now: {human_bytes(refused)}/s of {human_bytes(rate)}/s "
                    f"({_refusal(args.acks)}); nothing of it is written"
                )
    elif cmd in ("consume", "leave", "commit"):
        _group_action(sim, args)
    for topic, refused in sorted(sim.refused.items()):
        print(f"{topic}: the producer had {human_bytes(refused)} refused (nothing written)")
    for topic, pid, loss in sim.state.take_losses():
        print(
            f"{topic}-{pid}: {'an unclean' if loss.kind == 'unclean' else 'an ELR'} election "
            f"of broker {loss.leader} lost {loss.records} record(s), "
            f"{human_bytes(loss.bytes)} (the log is cut to what it held)"
        )
    after = health()
    if cmd == "show":
        _show(sim, after, args.limit)
    else:
        for line in _changes(before, after):
            print(f"  {line}")
    undrained = [b for b in after.offline_brokers if b not in spec.decommission]
    if undrained and cmd != "restore-broker":
        dead = ", ".join(map(str, undrained))
        print(
            f"hint: to re-replicate away from broker(s) {dead}, list them in cluster.yaml "
            f"`decommission:` and run `kgitops plan {args.dir}`"
        )
    return 0


_T = TypeVar("_T")


def _parsed(parse: Callable[[str], _T], text: str, suffix: str = "") -> _T:
    """``parse(text)`` (a size, a duration); its ValueError is the one line a user reads."""
    from kgitops.errors import KgitopsError

    try:
        return parse(text)
    except ValueError as exc:
        raise KgitopsError(f"{exc}{suffix}") from None


def _refusal(acks: str) -> str:
    if acks == "all":
        return "NOT_ENOUGH_REPLICAS where the ISR is below min ISR; no leader elsewhere"
    return "partitions without a leader"


def _changes(before: Health, after: Health) -> list[str]:
    out = []
    if before.offline_brokers != after.offline_brokers:
        was = ", ".join(map(str, before.offline_brokers)) or "none"
        now = ", ".join(map(str, after.offline_brokers)) or "none"
        out.append(f"offline brokers: {was} -> {now}")
    for flag, words in (
        ("offline", "offline partitions"),
        ("under_replicated", "under-replicated partitions"),
        ("under_min_isr", "partitions under min ISR"),
        ("reassigning", "reassignments in flight"),
        ("leader_off_preferred", "leaders off preferred"),
    ):
        a, b = before.count(flag), after.count(flag)
        if a != b or b:
            out.append(f"{words}: {a} -> {b}" if a != b else f"{words}: {b}")
    out.append("HEALTHY" if after.healthy else "UNHEALTHY (kgitops status for details)")
    return out


def _show(sim: SimulatedCluster, health: Health, limit: int) -> None:
    from kgitops.units import human_bytes, human_rate, human_seconds

    state = sim.describe()
    print(f"simulated cluster {state.cluster_id}: clock {human_seconds(sim.state.clock)}")
    for b in sorted(state.brokers):
        leaders = sum(
            1 for t in state.topics.values() for p in t.partitions.values() if p.leader == b.id
        )
        replicas = sum(
            1 for t in state.topics.values() for p in t.partitions.values() if b.id in p.replicas
        )
        print(
            f"  broker {b.id:<4} rack {b.rack or '-':<8} {'online ' if b.online else 'OFFLINE'}"
            f"  {replicas} replica(s), {leaders} leader(s)"
        )
    for topic, producer in sorted(sim.state.producers().items()):
        written, refused = sim.produce_now(topic)
        print(
            f"  producing to {topic} at {human_rate(producer.rate)} (acks={producer.acks}, "
            f"keys {producer.keys}): {human_rate(written)} written"
            + (f", {human_rate(refused)} refused" if refused else "")
        )
    unread = []
    for name in sorted(state.topics):
        for pid in sorted(state.topics[name].partitions):
            offsets = state.offsets_of(name, pid)
            if offsets is None:
                continue
            ends = dict(offsets.log_end_offsets)
            leader = state.topics[name].partitions[pid].leader
            leo = ends.get(leader) if leader is not None else None
            hw = offsets.high_watermark
            if leo is not None and leo > hw:
                each = ", ".join(f"{b}: {o}" for b, o in offsets.log_end_offsets)
                unread.append(
                    f"  {name}-{pid}: HW {hw}, LEO {each}, leader epoch "
                    f"{offsets.leader_epoch}: {leo - hw} record(s) not readable yet"
                )
    if unread:
        print("high watermark behind the leader's log end (consumers read up to the HW)")
        print("\n".join(unread if limit <= 0 else unread[:limit]))
        if limit > 0 and len(unread) > limit:
            print(f"  ... and {len(unread) - limit} more (show --limit 0 lists all)")
    rates = sim.rates()
    progress = sim.replica_progress()
    lines: list[str] = []
    for (topic, pid), lag in sorted(progress.items()):
        for broker, (copied, size) in sorted(lag.items()):
            rate = rates.get((topic, pid, broker), 0.0)
            head = (
                f"  {topic}-{pid} on broker {broker}: {human_bytes(copied)} of {human_bytes(size)}"
            )
            if broker not in sim.state.online:
                lines.append(f"{head}, stalled: broker {broker} is offline")
            elif rate > 0:
                grows = sim.partition_write_rate(topic, pid)
                if rate > grows:
                    eta = human_seconds((size - copied) / (rate - grows))
                    lines.append(f"{head} at {human_bytes(rate)}/s, ETA {eta}")
                else:
                    lines.append(f"{head} at {human_bytes(rate)}/s: never, the log grows as fast")
            else:
                lines.append(f"{head}, stalled: the partition has no leader to copy from")
    if lines:
        print("replicas catching up (copied of the leader's log; ETA at the current rate)")
        shown = lines if limit <= 0 else lines[:limit]
        print("\n".join(shown))
        if len(lines) > len(shown):
            print(f"  ... and {len(lines) - len(shown)} more (show --limit 0 lists all)")
    print("HEALTHY" if health.healthy else "UNHEALTHY (kgitops status for details)")


def _group_action(sim: SimulatedCluster, args: argparse.Namespace) -> None:
    """consume / leave / commit: what a consumer group does, on the simulated cluster."""
    from kgitops.errors import KgitopsError

    cmd = args.sim_command
    if cmd == "leave":
        sim.leave_group(args.group, args.member)
        print(f"group {args.group}: {args.member} left")
        return
    counts = {t: ts.partition_count for t, ts in sim.describe([args.topic]).topics.items()}
    if args.topic not in counts:
        raise KgitopsError(f"no topic {args.topic!r} in the simulated cluster")
    if cmd == "consume":
        known = sim.describe_groups([args.group]).groups[args.group]
        member = args.member or f"{args.group}-{len(known.members) + 1}"
        sim.join_group(args.group, member, [args.topic])
        mine = next(
            m
            for m in sim.describe_groups([args.group]).groups[args.group].members
            if m.member_id == member
        )
        parts = ", ".join(f"{t}-{p}" for t, p in mine.assignment) or "nothing"
        print(f"group {args.group}: {member} joined; it is assigned {parts}")
        return
    if args.lag < 0:
        raise KgitopsError("--lag cannot be negative")
    keys = [(args.topic, p) for p in range(counts[args.topic])]
    ends = sim.list_offsets(keys, -1)
    offsets = {k: max(ends[k] - args.lag, 0) for k in keys}
    sim.commit(args.group, offsets)
    shown = ", ".join(f"{p}: {o}" for (_, p), o in sorted(offsets.items()))
    print(f"group {args.group} committed on {args.topic}: {shown}")
