"""The diff's moves and elections: the queued topics settled by the balancer at once, each
topic's reassign and leader elections (UNDER_REPLICATED with them), the drain of the
unmanaged and internal topics on a decommissioned broker, and DRAIN_HOTSPOT over every move
the drain makes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from kgitops.errors import AssignmentError
from kgitops.model import (
    PartitionTable,
    TopicSpec,
    TopicState,
    partition_row,
    replica_lists,
    replicas_and_sizes,
)
from kgitops.names import KAFKA_METADATA_TOPIC, MIN_ISR, is_internal_topic
from kgitops.placement.startindex import Load
from kgitops.plan.actions import AlterConfig, CreateTopic, ElectLeaders, Move, Reassign
from kgitops.plan.diff_context import Context
from kgitops.plan.goals import band_unreached, drain_hotspot, goal_one, settle
from kgitops.plan.health import is_under_replicated
from kgitops.plan.value import min_isr_order
from kgitops.units import human_bytes


def settle_pending(ctx: Context) -> None:
    """Goals 2-5 over every managed topic at once (``kgitops.plan.goals``), then the moves."""
    pending = ctx.pending
    drained = set(ctx.inputs.cluster.decommission)
    needed = ctx.inputs.mode != "placed" or any(item.replaceable for *_, item in pending)
    finals: Mapping[str, Mapping[int, tuple[tuple[int, ...], str]]]
    if needed and pending:
        names = {item.topic for *_, item in pending}
        deleted = {t.name for t in ctx.inputs.specs.topics if t.delete}
        fixed: list[tuple[Sequence[int], int | None]] = [
            pair
            for name, topic in ctx.inputs.state.topics.items()
            if name not in names and name not in deleted
            for pair in replicas_and_sizes(topic.partitions)
        ]
        for a in ctx.out.actions:
            if isinstance(a, CreateTopic):
                fixed.extend((r, 0) for r in a.assignment.values())
        finals, band = settle(
            [item for *_, item in pending],
            ctx.inputs.state,
            fixed,
            drain=drained,
            mode=ctx.inputs.mode,
        )
        unreached = band_unreached(band)
        if unreached is not None:
            message, data = unreached
            ctx.warn("", "BALANCE_BAND_UNREACHED", message, **data)
    else:
        finals = {
            item.topic: {p: (t, goal_one(why)) for p, (t, why) in item.targets.items()}
            for *_, item in pending
        }
    for spec, live, both, config_change, item in pending:
        topic_finals = finals.get(spec.name, {})
        emit_moves(
            ctx, spec, live, both, config_change, topic_finals, item.rack_aware, ctx.drain_moves
        )


def emit_moves(
    ctx: Context,
    spec: TopicSpec,
    live: TopicState,
    both: Mapping[int, tuple[int, ...]],
    config_change: AlterConfig | None,
    finals: Mapping[int, tuple[tuple[int, ...], str]],
    rack_aware: bool,
    drain_moves: list[tuple[Sequence[int], Sequence[int], int, bool]],
) -> None:
    """The topic's reassign action from its final targets, and its leader elections."""
    drained = ctx.inputs.cluster.decommission
    moves: dict[int, Move] = {}
    for p, (target, reason) in sorted(finals.items()):
        source = both[p]
        if target == source:
            continue
        row = partition_row(live.partitions, p)
        size = (row[3] or 0) if row is not None else 0
        moves[p] = Move(source=source, target=target, reason=reason, size_bytes=size)
        if drained and not set(drained).isdisjoint(source):
            drain_moves.append((source, target, size, rack_aware))
    if moves:
        ctx.load.add((m.source for m in moves.values()), -1)
        ctx.load.add(m.target for m in moves.values())
        total = sum(m.size_bytes * len(m.adding) for m in moves.values())
        ctx.out.actions.append(Reassign(spec.name, moves, total))
        if config_change is not None:
            _order_config(ctx, live, config_change, moves)
    in_flight = ctx.inputs.state.reassignments.get(spec.name, {})
    _leaders(ctx, spec, live, set(moves), set(in_flight))


def _order_config(
    ctx: Context, live: TopicState, change: AlterConfig, moves: Mapping[int, Move]
) -> None:
    """Run a min.insync.replicas raise after the moves that raise the replication factor
    (``min_isr_order``): the change is put back after the moves."""
    if MIN_ISR not in change.set and MIN_ISR not in change.delete:
        return
    old = ctx.inputs.state.min_insync_replicas(live.config)
    config = {**live.config, **change.set}
    for k in change.delete:
        config.pop(k, None)
    new = ctx.inputs.state.min_insync_replicas(config)
    before = [len(p.replicas) for p in live.partitions.values()]
    after = [
        len(moves[pid].target) if pid in moves else len(p.replicas)
        for pid, p in live.partitions.items()
    ]
    if min_isr_order(before, after, old, new) == "after":
        i = ctx.out.actions.index(change)
        ctx.out.actions[i] = replace(change, after_reassign=True)


def _leaders(
    ctx: Context, spec: TopicSpec, live: TopicState, planned: set[int], flying: set[int]
) -> None:
    """Elections for leaders off their preferred replica, and UNDER_REPLICATED, which says
    of each under-replicated partition what becomes of it: moved by this plan (``planned``),
    being moved now by a reassignment in flight that this plan leaves out (``flying``; counted
    as Kafka counts it then, without the replicas being removed), or left where it is."""
    if isinstance(live.partitions, PartitionTable) and live.partitions.settled:
        return  # every ISR its replica tuple, every leader the preferred one: nothing to say
    online = ctx.inputs.online
    moves = ctx.inputs.state.reassignments.get(spec.name, {})
    removing = {p: set(r.removing) for p, r in moves.items()}
    skip = planned | flying if flying else planned
    elect, under = [], []
    for p, ps in live.partitions.items():
        replicas, isr, leader = ps.replicas, ps.isr, ps.leader
        if isr is None or not replicas:
            continue
        # status's rule (plan/health.py); an ISR that is the replica list itself (the state
        # loaders share equal tuples) is never under-replicated, reassigning or not
        if isr is not replicas and is_under_replicated(ps, moves.get(p)):
            under.append(p)
        if leader is None or leader == replicas[0] or p in skip:
            continue
        if replicas[0] in online and replicas[0] in isr:
            elect.append(p)
    if elect:
        ctx.out.actions.append(ElectLeaders(spec.name, tuple(sorted(elect))))
    if under:
        moved = sorted(p for p in under if p in planned)
        moving = sorted(p for p in under if p in flying and p not in planned)
        left = sorted(p for p in under if p not in planned and p not in flying)
        lagging = sorted(
            {
                b
                for p in under
                for b in live.partitions[p].replicas
                if b not in (live.partitions[p].isr or ()) and b not in removing.get(p, ())
            }
        )
        where = f" (out-of-sync replicas on broker(s) {', '.join(map(str, lagging))})"
        parts = [f"{len(under)} partition(s) are under-replicated now{where}"]
        if moved:
            parts.append(
                f"{len(moved)} of them move in this plan: their new replicas copy from the "
                "leader and the out-of-sync ones are dropped, restoring full replication"
            )
        if moving:
            parts.append(
                f"{len(moving)} are being reassigned now and are left out of this plan: "
                "that reassignment restores them when it completes (if its target brokers "
                "are online)"
            )
        if left:
            parts.append(
                f"{len(left)} stay where they are: bring the broker back, or list it under "
                "decommission in cluster.yaml to re-replicate elsewhere"
            )
        ctx.warn(
            spec.name,
            "UNDER_REPLICATED",
            "; ".join(parts),
            partitions=sorted(under),
            moved=moved,
            inFlight=moving,
        )


def warn_drain_hotspot(ctx: Context) -> None:
    """DRAIN_HOTSPOT, over every replica the drain moves: managed, unmanaged and internal."""
    drained = set(ctx.inputs.cluster.decommission)
    drain_moves = ctx.drain_moves
    hot = drain_hotspot(drain_moves, ctx.inputs.state.brokers, drained) if drain_moves else None
    if hot is not None:
        broker, share, most, total, why = hot
        unit = human_bytes if any(size for _, _, size, _ in drain_moves) else _replicas
        ctx.warn(
            "",
            "DRAIN_HOTSPOT",
            f"draining broker(s) {', '.join(map(str, sorted(drained)))} sends {unit(most)} of "
            f"{unit(total)} ({share:.0%}) to broker {broker}: {why}",
            broker=broker,
            share=round(share, 4),
            bytes=most,
            total=total,
        )


def _replicas(n: int) -> str:
    return f"{n} replica(s)"


def drain_unmanaged(ctx: Context, managed: set[str]) -> set[str]:
    """A drain covers every replica on the broker, managed or not: unmanaged topics on a
    decommissioned broker are moved by the same minimal-movement rule (only the replicas on
    drained brokers move; nothing else about the topic is touched). Their assignment is not
    in git, so each move says so. With ``unmanagedTopics: ignore`` they are left, and the plan
    says the drain is not complete, naming every topic left. Returns the topics moved.

    Internal topics (``__consumer_offsets``..., kgitops' own passwordVersion topic:
    ``names.is_internal_topic``) are never unmanaged, so they are moved whatever
    ``unmanagedTopics`` says: removing a broker that still holds a ``__consumer_offsets``
    replica loses consumer offsets. The KRaft metadata log (``__cluster_metadata``) is never
    reassigned: it is the controller quorum's."""
    drained = set(ctx.inputs.cluster.decommission)
    if not drained:
        return set()
    ignored: dict[str, int] = {}
    blocked: dict[str, int] = {}
    quorum: dict[str, int] = {}
    moved: set[str] = set()
    for name in sorted(n for n in ctx.inputs.state.topics if n not in managed):
        live = ctx.inputs.state.topics[name]
        in_flight = ctx.inputs.state.reassignments.get(name, {})
        current = {
            p: ps.replicas
            for p, ps in live.partitions.items()
            if p not in in_flight and drained.intersection(ps.replicas)
        }
        if not current:
            continue
        internal = is_internal_topic(name, ctx.inputs.cluster.own_topics)
        if name == KAFKA_METADATA_TOPIC:
            quorum[name] = len(current)
            continue
        if ctx.inputs.cluster.unmanaged_topics == "ignore" and not internal:
            ignored[name] = len(current)
            continue
        moves = _drain_moves(ctx, name, live, current, internal=internal)
        if moves is None:
            blocked[name] = len(current)
            continue
        ctx.load.add((m.source for m in moves.values()), -1)
        ctx.load.add(m.target for m in moves.values())
        total = sum(m.size_bytes * len(m.adding) for m in moves.values())
        ctx.out.actions.append(Reassign(name, moves, total))
        racked = all(b.rack is not None for b in ctx.inputs.state.brokers)
        ctx.drain_moves.extend((m.source, m.target, m.size_bytes, racked) for m in moves.values())
        moved.add(name)
    foreign = sorted(n for n in moved if ctx.someone_elses(n))
    if foreign:
        ctx.warn(
            "",
            "DRAIN_MOVES_OTHERS",
            f"the drain of broker(s) {sorted(drained)} also moves topics this folder does not "
            f"own (owns.topics in cluster.yaml), as a drain moves every replica off the "
            f"broker: {', '.join(foreign)}; tell their owners",
            topics=foreign,
        )
    left = {**ignored, **blocked, **quorum}
    if left:
        reasons = []
        if ignored:
            reasons.append(
                "unmanagedTopics: ignore leaves them alone -- set it to warn (or import them) "
                "so that the plan moves them"
                if len(ignored) == len(left)
                else f"unmanagedTopics: ignore leaves {', '.join(sorted(ignored))} alone -- set "
                "it to warn (or import them) so that the plan moves them"
            )
        if blocked:
            reasons.append(
                "they could not be placed elsewhere"
                if len(blocked) == len(left)
                else f"{', '.join(sorted(blocked))} could not be placed elsewhere"
            )
        if quorum:
            reasons.append(
                f"{KAFKA_METADATA_TOPIC} is KRaft's metadata log, never reassigned: remove "
                "the broker from the controller quorum (kafka-metadata-quorum.sh "
                "remove-controller)"
            )
        shown = ", ".join(f"{n} ({k} partition(s))" for n, k in sorted(left.items()))
        ctx.warn(
            "",
            "DRAIN_INCOMPLETE",
            f"the drain of broker(s) {sorted(drained)} is not complete: topics not in git "
            f"keep replicas there ({shown}); " + "; ".join(reasons),
            topics=sorted(left),
        )
    return moved


def _drain_moves(
    ctx: Context,
    name: str,
    live: TopicState,
    current: dict[int, tuple[int, ...]],
    *,
    internal: bool,
) -> dict[int, Move] | None:
    from kgitops.placement.rebalance import rebalance

    others = Load(Counter(ctx.load.leaders), Counter(ctx.load.replicas))
    others.add(replica_lists(live.partitions), -1)
    try:
        result = rebalance(
            current,
            ctx.inputs.state.brokers,
            drain=tuple(sorted(ctx.inputs.cluster.decommission)),
            spread_racks=False,
            load=others.replicas,
            leader_load=others.leaders,
        )
    except AssignmentError as exc:
        ctx.warn(name, "DRAIN_BLOCKED", f"cannot move {name} off the drained brokers: {exc}")
        return None
    why = (
        "(a topic this folder does not own, moved because the drain empties the broker: "
        "its assignment is the live one)"
        if ctx.someone_elses(name)
        else "(an internal topic, not in git: its assignment is the live one)"
        if internal
        else "(the topic is not in git: its assignment is the live one)"
    )
    moves = {}
    for p, t in sorted(result.items()):
        ps = live.partitions[p]
        moves[p] = Move(
            source=ps.replicas,
            target=t.replicas,
            reason=f"{t.reason} {why}",
            size_bytes=ps.size_bytes or 0,
        )
    return moves
