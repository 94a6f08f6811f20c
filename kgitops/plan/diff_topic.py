"""The diff of one managed topic: create it, or compare it with the live topic.

A topic to create gets an explicit assignment and a lock entry; an existing one gets its
config changes, added partitions, the replica targets its spec demands (a new replication
factor, a changed static assignment, a drained broker, a broken rack rule) and its lock
entry. Its moves are emitted at once (``kgitops.plan.diff_moves.emit_moves``) or, when the
balancer has a say (``--rebalance``, ``--leaders``, a drain), queued for it. The spec checks
against the cluster (RF_ONE and kin, unknown configs) are here too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping

from kgitops.errors import AssignmentError
from kgitops.model import (
    Broker,
    PartitionTable,
    TopicSpec,
    TopicState,
    partition_sizes,
    replica_lists,
)
from kgitops.names import THROTTLED_REPLICAS_CONFIGS
from kgitops.placement.assignment import assign_added_partitions, assign_replicas
from kgitops.placement.startindex import Counts, Load, choose_start_index
from kgitops.plan.actions import AddPartitions, AlterConfig, CreateTopic
from kgitops.plan.diff_context import (
    Context,
    config_origins,
    desired_config,
    effective_placement,
    normal_config,
)
from kgitops.plan.diff_moves import emit_moves
from kgitops.plan.goals import Pending, goal_one
from kgitops.plan.retention import RETENTION, DropStep, retention_cut
from kgitops.spec.durability import replication_warnings
from kgitops.spec.lock import LockEntry, same_brokers
from kgitops.spec.topic_configs import CONFIGS


def _usable_entry(ctx: Context, spec: TopicSpec, placement: str) -> LockEntry | None:
    entry = ctx.inputs.lock.get(spec.name) if ctx.inputs.lock is not None else None
    if (
        entry is None
        or entry.partitions != spec.partitions
        or entry.replication_factor != spec.replication_factor
        or entry.placement != placement
        or not same_brokers(entry.brokers, ctx.inputs.eligible)
        or (spec.start_index is not None and spec.start_index != entry.start_index)
    ):
        return None
    return entry


def create_topic(ctx: Context, spec: TopicSpec) -> None:
    placement = effective_placement(spec, ctx.inputs.eligible)
    brokers = ctx.inputs.eligible
    start: int | None = None
    counts: Counts | None = None
    try:
        if placement == "static":
            assert spec.assignment is not None, "static placement without an assignment"
            assignment = {p: tuple(r) for p, r in enumerate(spec.assignment)}
            if not _static_brokers_known(ctx, spec, assignment):
                return
        else:
            rack_aware = placement == "rack-aware"
            if not brokers:
                raise AssignmentError("no online broker to place the topic on")
            entry = _usable_entry(ctx, spec, placement)
            if spec.start_index is not None:
                start = spec.start_index
            elif entry is not None and entry.start_index is not None:
                start = entry.start_index
            else:
                start = choose_start_index(ctx.arranged(rack_aware), spec.partitions, ctx.load)
            if start >= len(brokers) and spec.start_index is not None:
                ctx.error(
                    spec,
                    "startIndex",
                    f"startIndex {start} is not below the number of brokers ({len(brokers)})",
                )
                return
            assignment = assign_replicas(
                brokers,
                spec.partitions,
                spec.replication_factor,
                start_index=start,
                rack_aware=rack_aware,
            )
            # the same four (on the same brokers) make the same assignment: counted once
            key = (start, spec.partitions, spec.replication_factor, rack_aware)
            counts = ctx.counts.get(key)
            if counts is None:
                counts = ctx.counts[key] = Counts.of(assignment.values())
    except AssignmentError as exc:
        ctx.error(spec, "replicationFactor", f"cannot place {spec.name}: {exc}")
        return
    if counts is None:
        ctx.load.add(assignment.values())
    else:
        ctx.load.add_counts(counts)
    config = desired_config(spec)
    ctx.out.actions.append(
        CreateTopic(
            topic=spec.name,
            partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            start_index=start,
            assignment=assignment,
            config=config,
            placement=placement,
            origins=config_origins(spec, config),
        )
    )
    ctx.out.entries[spec.name] = LockEntry(
        spec.name, start, brokers, spec.partitions, spec.replication_factor, placement
    )


def _static_brokers_known(
    ctx: Context, spec: TopicSpec, assignment: Mapping[int, tuple[int, ...]]
) -> bool:
    known = {b.id for b in ctx.inputs.state.brokers}
    ok = True
    for p, replicas in assignment.items():
        unknown = sorted(set(replicas) - known)
        if unknown:
            ctx.error(
                spec,
                f"assignment.{p}",
                f"partition {p} is assigned to broker(s) {unknown} that the cluster does not have",
            )
            ok = False
    return ok


def update_topic(ctx: Context, spec: TopicSpec, live: TopicState) -> None:
    placement = effective_placement(spec, ctx.inputs.eligible)
    _lock_existing(ctx, spec, placement)
    config_change = _configs(ctx, spec, live)
    if config_change is not None:
        ctx.out.actions.append(config_change)
    count = live.partition_count
    if 0 not in live.partitions:
        ctx.error(
            spec,
            "partitions",
            f"{spec.name} exists on the cluster without a partition 0 (it may be being "
            "deleted); plan again later",
        )
        return
    if spec.partitions < count:
        ctx.error(
            spec,
            "partitions",
            f"partitions: {spec.partitions} is fewer than the {count} that {spec.name} has; "
            "Kafka cannot remove partitions (create a new topic instead)",
        )
        return
    in_flight = ctx.inputs.state.reassignments.get(spec.name, {})
    parts = live.partitions
    rack_aware = placement == "rack-aware"
    if _as_spec_wants(ctx, spec, live, placement, bool(in_flight)):
        # no target: nothing reads the current replicas, whose mapping is not built (a
        # million partitions' worth for a big cluster)
        emit_moves(ctx, spec, live, {}, config_change, {}, rack_aware, [])
        return
    current = (
        dict(enumerate(parts.replicas))
        if isinstance(parts, PartitionTable)
        else {p: ps.replicas for p, ps in parts.items()}
    )
    added: dict[int, tuple[int, ...]] = {}
    if spec.partitions > count and in_flight:
        ctx.warn(
            spec.name,
            "PARTITIONS_DEFERRED",
            f"partitions {count} -> {spec.partitions} waits: {len(in_flight)} partition(s) of "
            "the topic are being reassigned, and while they are KRaft takes the replication "
            "factor of new partitions from partition 0's full replica list (target + removing); "
            "plan again when the reassignment finishes",
            **{"from": count, "to": spec.partitions, "reassigning": sorted(in_flight)},
        )
    elif spec.partitions > count:
        added = _add_partitions(ctx, spec, placement, current)
        if not added:
            return
    both = {**current, **added} if added else current
    targets = _targets(ctx, spec, placement, live, both, in_flight)
    if targets is None:
        return
    drained = set(ctx.inputs.cluster.decommission)
    if ctx.inputs.mode == "placed" and not drained:
        # nothing for the balancer: the spec's own changes, as they are
        finals = {p: (t, goal_one(why)) for p, (t, why) in targets.items()}
        emit_moves(ctx, spec, live, both, config_change, finals, rack_aware, [])
        return
    sizes: dict[int, int | None] = dict(zip(parts, partition_sizes(parts), strict=True))
    sizes.update(dict.fromkeys(added, 0))
    ctx.pending.append(
        (
            spec,
            live,
            both,
            config_change,
            Pending(
                topic=spec.name,
                current=both,
                targets=targets,
                sizes=sizes,
                rack_aware=rack_aware,
                movable=placement != "static",
                frozen=frozenset(in_flight),
                replaceable=None
                if ctx.inputs.mode == "all"
                else [p for p in targets if not drained.isdisjoint(both[p])],
            ),
        )
    )


def _as_spec_wants(
    ctx: Context, spec: TopicSpec, live: TopicState, placement: str, in_flight: bool
) -> bool:
    """The common case of ``update_topic``: the plan only places what the spec changes
    (no balancer, no drain), the topic has the partitions the spec asks for, none is being
    reassigned, and no replica list breaks the spec's rules. Then ``_targets`` would find
    no target, and only the leader elections remain."""
    return (
        ctx.inputs.mode == "placed"
        and not ctx.inputs.cluster.decommission
        and not in_flight
        and placement != "static"
        and spec.partitions == live.partition_count
        and not _needs_moves(
            ctx,
            replica_lists(live.partitions),
            spec.replication_factor,
            placement == "rack-aware",
        )
    )


def _lock_existing(ctx: Context, spec: TopicSpec, placement: str) -> None:
    old = ctx.inputs.lock.get(spec.name) if ctx.inputs.lock is not None else None
    if old is None:
        entry = LockEntry(
            spec.name,
            None,
            ctx.inputs.eligible,
            spec.partitions,
            spec.replication_factor,
            "adopted",
        )
    elif (
        old.partitions == spec.partitions
        and old.replication_factor == spec.replication_factor
        and old.placement in ("adopted", placement)
    ):
        entry = old
    else:
        keep = old.placement == "adopted"
        entry = LockEntry(
            spec.name,
            None if placement == "static" else old.start_index,
            old.brokers,
            spec.partitions,
            spec.replication_factor,
            "adopted" if keep else placement,
        )
    ctx.out.entries[spec.name] = entry


def _configs(ctx: Context, spec: TopicSpec, live: TopicState) -> AlterConfig | None:
    desired = ctx.desired(spec)
    have = {
        k: normal_config(k, v)
        for k, v in live.config.items()
        if k not in THROTTLED_REPLICAS_CONFIGS
    }
    to_set = {k: v for k, v in desired.items() if have.get(k) != v}
    # a config kgitops does not know (a newer Kafka's, a vendor's) cannot be in a spec, so
    # its absence there asks nothing: it is left as it is (docs/specs.md#topic-configs)
    to_delete = tuple(sorted(k for k in have if k not in desired and k in CONFIGS))
    if RETENTION in to_set and RETENTION in have:
        cut = retention_cut(
            spec.name,
            have[RETENTION],
            to_set[RETENTION],
            DropStep.parse(ctx.inputs.cluster.retention_drop_step),
            _topic_size(live),
            allow=ctx.inputs.allow_retention_drop,
        )
        if cut is not None:
            value, warning = cut
            ctx.out.warnings.append(warning)
            if value is None:
                del to_set[RETENTION]
            else:
                to_set[RETENTION] = value
    if to_set or to_delete:
        previous = {k: have[k] for k in [*to_set, *to_delete] if k in have}
        origins = config_origins(spec, to_set)
        return AlterConfig(spec.name, to_set, to_delete, previous, origins=origins)
    return None


def _topic_size(live: TopicState) -> int | None:
    """The topic's bytes (every partition's leader copy), None when any is unknown."""
    sizes = partition_sizes(live.partitions)
    if not sizes or any(size is None for size in sizes):
        return None
    return sum(size for size in sizes if size is not None)


def _add_partitions(
    ctx: Context, spec: TopicSpec, placement: str, current: dict[int, tuple[int, ...]]
) -> dict[int, tuple[int, ...]]:
    count = len(current)
    try:
        if placement == "static":
            assert spec.assignment is not None, "static placement without an assignment"
            added = {p: tuple(spec.assignment[p]) for p in range(count, spec.partitions)}
        else:
            # Kafka places added partitions with partition 0's RF; when draining leaves too
            # few brokers for it, place on every online broker and let the reassign drain.
            rf0 = len(current[0])
            online = tuple(b for b in ctx.inputs.state.brokers if b.online)
            pool = ctx.inputs.eligible if len(ctx.inputs.eligible) >= rf0 else online
            added = assign_added_partitions(
                pool, current, spec.partitions, rack_aware=placement == "rack-aware"
            )
    except AssignmentError as exc:
        ctx.error(spec, "partitions", f"cannot add partitions to {spec.name}: {exc}")
        return {}
    ctx.load.add(added.values())
    ctx.out.actions.append(AddPartitions(spec.name, count, spec.partitions, None, added))
    ctx.warn(
        spec.name,
        "KEY_REMAP",
        f"partitions {count} -> {spec.partitions}: keyed messages map to other partitions "
        "from now on (per-key ordering breaks across the change; compacted keys split)",
        **{"from": count, "to": spec.partitions},
    )
    return added


def _targets(
    ctx: Context,
    spec: TopicSpec,
    placement: str,
    live: TopicState,
    current: dict[int, tuple[int, ...]],
    in_flight: Mapping[int, object],
) -> dict[int, tuple[tuple[int, ...], str]] | None:
    """Target replicas per partition that must change, with the reason, or None on error."""
    if in_flight:
        ctx.warn(
            spec.name,
            "REASSIGNMENT_IN_FLIGHT",
            f"{len(in_flight)} partition(s) are being reassigned now; they are left out of "
            "this plan (plan again when the reassignment finishes)",
            partitions=sorted(in_flight),
        )
    candidates = {p: r for p, r in current.items() if p not in in_flight} if in_flight else current
    if placement == "static":
        assert spec.assignment is not None, "static placement without an assignment"
        return {
            p: (tuple(spec.assignment[p]), "static assignment changed")
            for p, r in candidates.items()
            if p < len(spec.assignment) and tuple(spec.assignment[p]) != r
        }
    drained = set(ctx.inputs.cluster.decommission)
    rf = spec.replication_factor
    rack_aware = placement == "rack-aware"
    if not candidates or not _needs_moves(ctx, candidates.values(), rf, rack_aware):
        return {}
    from kgitops.placement.rebalance import rebalance

    if in_flight:  # rebalance counts the candidates' replicas itself, not the rest
        others = Load(Counter(ctx.load.leaders), Counter(ctx.load.replicas))
        others.add(current.values(), -1)
        load, counted = others, False
    else:  # the plan's load counts every partition of ``current``, as rebalance would
        load, counted = ctx.load, True
    try:
        result = rebalance(
            candidates,
            ctx.inputs.state.brokers,
            replication_factor=rf if any(len(r) != rf for r in candidates.values()) else None,
            drain=tuple(sorted(drained)),
            spread_racks=rack_aware,
            load=load.replicas,
            leader_load=load.leaders,
            counted=counted,
            placement_brokers=_placed_with(ctx, spec),
            rack_fine=ctx.rack_fine,
        )
    except AssignmentError as exc:
        ctx.error(spec, "replicationFactor", f"cannot reassign {spec.name}: {exc}")
        return None
    return {p: (t.replicas, t.reason) for p, t in result.items()}


def _placed_with(ctx: Context, spec: TopicSpec) -> tuple[Broker, ...] | None:
    """The broker list the topic was placed with, when the lock recorded its placement."""
    entry = ctx.inputs.lock.get(spec.name) if ctx.inputs.lock is not None else None
    if entry is None or entry.placement in ("adopted", "static"):
        return None
    return entry.brokers


def _needs_moves(
    ctx: Context, current: Collection[tuple[int, ...]], rf: int, rack_aware: bool
) -> bool:
    """Whether the spec demands a move: another RF, a drained broker, or a broken rack rule.

    Each distinct replica list is judged once per plan (a cluster of n brokers has few
    distinct lists, and the state loader shares the tuples); a topic whose every list was
    judged fine is one set look-up per partition, in C."""
    fine = ctx.fine.setdefault((rack_aware, rf), set())
    if fine.issuperset(current):
        return False
    cache = ctx.verdicts[rack_aware]
    for replicas in set(current):
        if len(replicas) != rf:
            return True
        bad = cache.get(replicas)
        if bad is None:
            bad = cache[replicas] = ctx.breaks_rule(replicas, rack_aware)
        if bad:
            return True
    fine.update(current)
    return False


def warn_spec(ctx: Context, spec: TopicSpec) -> None:
    """RF_ONE, MIN_ISR_EQUALS_RF and MIN_ISR_ABOVE_RF, as validate says them
    (spec/durability.py)."""
    min_isr = ctx.inputs.state.min_insync_replicas(ctx.desired(spec))
    single = len(ctx.inputs.state.brokers) == 1
    for w in replication_warnings(
        spec.replication_factor, min_isr, single_broker=single, version=ctx.inputs.state.version
    ):
        ctx.warn(spec.name, w.code, w.message)


def check_unknown_configs(ctx: Context, spec: TopicSpec) -> None:
    """A config the cluster's Kafka does not know is an error at its position, before
    anything changes: Kafka refuses it in CreateTopics and IncrementalAlterConfigs
    (``Unknown topic config name``: LogConfig.validateNames), so the apply would stop half
    done and every later plan would repeat it. kgitops knows the configs of Kafka 3.x and
    4.x; the cluster says which its version has (``ClusterState.topic_config_names``:
    Kafka 4.0 dropped ``message.format.version``; trunk's ``remote.copy.lag.ms`` is in no
    4.1 release). Unknown names (None: the simulated cluster, Tansu) are not checked."""
    known = ctx.inputs.state.topic_config_names
    if known is None:
        return
    for key in sorted(spec.config):
        if key in known:
            continue
        entry = CONFIGS.get(key)
        why = (
            f"; Kafka {entry.removed_in} removed it"
            if entry is not None and entry.removed_in
            else f"; it needs Kafka {entry.since} or later"
            if entry is not None and entry.since
            else ""
        )
        ctx.error(
            spec,
            f"config.{key}",
            f"{key}: cluster '{ctx.inputs.cluster.name}' does not know this topic config (its "
            f"brokers list {len(known)} topic configs, and Kafka refuses an unknown one: "
            f"'Unknown topic config name'){why}; remove it from {spec.name}",
        )
