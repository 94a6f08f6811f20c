"""The diff: (specs, live state, lock) -> the plan of actions, and the lock it would write. Pure.

What moves and what never does (docs/planning.md): existing partitions keep their replicas
unless the spec demands a change (a new replication factor, a changed static assignment, a broker in
``decommission``, a rack rule the live assignment breaks, ``--rebalance``); new topics get an
explicit assignment (Kafka 3.3+ would otherwise place them at random); added partitions follow
Kafka's rule for added partitions; configs are compared only where set on the topic.

Topics to create are processed sorted by name and each one's placement is added to running
per-broker counts, so the start index chosen for a topic accounts for the cluster plus every
topic planned before it: the plan is a pure function of its inputs.

The start index is chosen by ``kgitops.placement.startindex`` (worked example there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Protocol

from kgitops.access import version_topic_problems
from kgitops.errors import AssignmentError, Diagnostic, PlanError, SpecError
from kgitops.model import (
    OWNER_TOPIC,
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionTable,
    TopicSpec,
    TopicState,
    replica_lists,
)
from kgitops.names import (
    KAFKA_METADATA_TOPIC,
    MIN_ISR,
    THROTTLED_REPLICAS_CONFIGS,
    is_internal_topic,
)
from kgitops.placement.assignment import assign_added_partitions, assign_replicas
from kgitops.placement.balance import Mode
from kgitops.placement.racks import RackRule
from kgitops.placement.startindex import Load, arranged_brokers, choose_start_index
from kgitops.plan.actions import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Move,
    Reassign,
    RemoveThrottles,
)
from kgitops.plan.digests import state_fingerprint
from kgitops.plan.goals import Pending, band_unreached, drain_hotspot, goal_one, settle
from kgitops.plan.health import is_under_replicated
from kgitops.plan.isrlag import Shrink, isr_pressure, lag_time_max
from kgitops.plan.isrlag import write_rates as topic_write_rates
from kgitops.plan.retention import RETENTION, DropStep, retention_cut
from kgitops.plan.spread import broker_spread
from kgitops.plan.throttles import MoveThrottle, stale_throttles, throttle_pressure
from kgitops.plan.transfer import estimate_transfer
from kgitops.plan.value import Plan, PlanWarning, min_isr_order
from kgitops.spec.durability import replication_warnings
from kgitops.spec.lock import Lock, LockEntry, same_brokers
from kgitops.spec.topic_configs import CONFIGS, normalize_config
from kgitops.units import human_bytes, human_rate, human_seconds

LARGE_MOVE_SHARE = 0.10


class SpecsLike(Protocol):
    """What the diff reads of ``specs.Specs``."""

    @property
    def cluster(self) -> ClusterSpec | None: ...

    @property
    def topics(self) -> Sequence[TopicSpec]: ...


@lru_cache(maxsize=1 << 16)
def _normal(name: str, value: str) -> str:
    """``normalize_config``, remembered: thousands of topics share a few config values."""
    return normalize_config(name, value)


def effective_placement(spec: TopicSpec, brokers: Sequence[Broker]) -> str:
    """The spec's placement, or its default: rack-aware when every broker has a rack."""
    if spec.placement is not None:
        return spec.placement
    if spec.assignment is not None:
        return "static"
    if brokers and _all_racked(brokers):
        return "rack-aware"
    return "rack-unaware"


_RACKED: list[Any] = [None, False]  # the last broker list asked about, and its answer


def _all_racked(brokers: Sequence[Broker]) -> bool:
    """Whether every broker has a rack; remembered for the last tuple asked about (the plan
    asks for every topic with the same tuple of eligible brokers)."""
    if brokers is not _RACKED[0] or type(brokers) is not tuple:
        _RACKED[:] = [brokers, all(b.rack is not None for b in brokers)]
    return bool(_RACKED[1])


@dataclass
class _Context:
    specs: SpecsLike
    cluster: ClusterSpec
    state: ClusterState
    lock: Lock | None
    rebalance: bool
    eligible: tuple[Broker, ...]
    actions: list[Action] = field(default_factory=list)
    warnings: list[PlanWarning] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    entries: dict[str, LockEntry] = field(default_factory=dict)
    verdicts: tuple[dict[tuple[int, ...], bool], dict[tuple[int, ...], bool]] = field(
        default_factory=lambda: ({}, {})
    )
    #: (rack_aware, rf) -> the replica lists found to need no move (``_needs_moves``)
    fine: dict[tuple[bool, int], set[tuple[int, ...]]] = field(default_factory=dict)
    _load: Load | None = None
    _rack_rule: RackRule | None = None
    _arranged: dict[bool, list[int]] = field(default_factory=dict)
    online: frozenset[int] = frozenset()
    mode: Mode = "placed"
    allow_retention_drop: bool = False
    pending: list[
        tuple[TopicSpec, TopicState, dict[int, tuple[int, ...]], AlterConfig | None, Pending]
    ] = field(default_factory=list)
    #: (source, target, size, rack-aware) of every partition moved off a drained broker,
    #: managed or not: what DRAIN_HOTSPOT weighs
    drain_moves: list[tuple[Sequence[int], Sequence[int], int, bool]] = field(default_factory=list)

    def arranged(self, rack_aware: bool) -> list[int]:
        """The eligible brokers in Kafka's placement order (rack-alternated when rack-aware)."""
        found = self._arranged.get(rack_aware)
        if found is None:
            found = self._arranged[rack_aware] = arranged_brokers(self.eligible, rack_aware)
        return found

    def breaks_rule(self, replicas: tuple[int, ...], rack_aware: bool) -> bool:
        """A replica on a drained broker, or (rack-aware) a broken rack rule."""
        drained = self.cluster.decommission
        if drained and any(b in drained for b in replicas):
            return True
        if not rack_aware:
            return False
        if self._rack_rule is None:
            self._rack_rule = RackRule.of(self.state.brokers, drained)
        return self._rack_rule.broken(replicas)

    def error(self, spec: TopicSpec, path: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(spec.mark_of(path), "error", message))

    def warn(self, topic: str, code: str, message: str, **data: object) -> None:
        self.warnings.append(PlanWarning(topic, code, message, data))

    @property
    def load(self) -> Load:
        """Computed on first use: a plan that creates and moves nothing never needs it."""
        if self._load is None:
            load = Load()
            deleted = {t.name for t in self.specs.topics if t.delete}
            load.add(
                replicas
                for name, topic in self.state.topics.items()
                if name not in deleted
                for replicas in replica_lists(topic.partitions)
            )
            self._load = load
        return self._load


def compute_plan(
    specs: SpecsLike,
    state: ClusterState,
    lock: Lock | None,
    *,
    rebalance: bool = False,
    leaders: bool = False,
    large_move_share: float = LARGE_MOVE_SHARE,
    write_rates: Mapping[str, float] | None = None,
    throttle_record: Mapping[str, Any] | None = None,
    allow_retention_drop: bool = False,
) -> tuple[Plan, Lock]:
    """The plan from ``state`` to ``specs``, and the lock it would write.

    ``rebalance`` (``plan --rebalance``) moves replicas and leaders towards the goals of
    ``kgitops.placement.balance``; ``leaders`` (``plan --leaders``) only reorders replicas.
    ``allow_retention_drop`` (``--allow-retention-drop``) cuts retention in one step instead
    of ``retentionDropStep`` steps across applies (``kgitops.plan.retention``).

    Raises SpecError (with file:line:col) for specs the cluster cannot satisfy (a partition
    decrease, a replication factor above the broker count) and PlanError when unmanaged
    topics exist under ``unmanagedTopics: error``.
    """
    cluster = specs.cluster or ClusterSpec(name="default", directory=".")
    drained = set(cluster.decommission)
    eligible = tuple(
        sorted((b for b in state.brokers if b.online and b.id not in drained), key=lambda b: b.id)
    )
    ctx = _Context(specs, cluster, state, lock, rebalance, eligible)
    ctx.online = state.online_broker_ids
    ctx.mode = "all" if rebalance else "leaders" if leaders else "placed"
    ctx.allow_retention_drop = allow_retention_drop

    managed = {t.name for t in specs.topics}
    for spec in sorted(specs.topics, key=lambda t: t.name):
        if spec.delete:
            live = state.topics.get(spec.name)
            if live is not None:
                sizes = [p.size_bytes for p in live.partitions.values()]
                total = None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)
                ctx.actions.append(DeleteTopic(spec.name, live.partition_count, total))
        elif spec.name not in state.topics:
            _create(ctx, spec)
    for spec in sorted(specs.topics, key=lambda t: t.name):
        live = state.topics.get(spec.name)
        if live is not None and not spec.delete:
            _update(ctx, spec, live)
        if not spec.delete:
            _spec_warnings(ctx, spec)
            _unknown_configs(ctx, spec)
    _settle(ctx)

    drained_too = _drain_unmanaged(ctx, managed)
    _drain_hotspot(ctx)
    _unmanaged(ctx, managed)
    _throttles(ctx, throttle_record)
    if any(d.is_error for d in ctx.diagnostics):
        raise SpecError(ctx.diagnostics)
    transfer = estimate_transfer(
        ctx.actions,
        state,
        cluster.reassignment.throttle_bytes_per_sec,
        cluster.reassignment.max_concurrent_moves,
    )
    moved = transfer.total_bytes if transfer is not None else 0
    stored = transfer.cluster_bytes if transfer is not None else 0
    if stored and moved > large_move_share * stored:
        ctx.warn(
            "",
            "LARGE_MOVE",
            f"the plan copies {human_bytes(moved)}, {moved / stored:.0%} of the "
            f"{human_bytes(stored)} "
            f"the cluster stores (threshold {large_move_share:.0%})",
            bytes=moved,
            share=round(moved / stored, 4),
        )
    _throttle_pressure(ctx, write_rates)
    _isr_pressure(ctx, write_rates)
    timeout = cluster.reassignment.timeout_seconds
    eta = transfer.estimated_seconds if transfer is not None else None
    if eta is not None and eta > timeout:
        ctx.warn(
            "",
            "TIMEOUT_TOO_SHORT",
            f"the reassignments take about {human_seconds(eta)}, longer than "
            f"reassignment.timeoutSeconds ({human_seconds(timeout)}): apply refuses to start "
            "unless `--timeout` covers the ETA or `--no-wait` is given (at the timeout it "
            "would cancel the moves in flight and throw their copying away)",
            etaSeconds=eta,
            timeoutSeconds=timeout,
        )
    fingerprint, digests = state_fingerprint(state, managed | drained_too)
    plan = Plan(
        cluster=cluster.name,
        state_fingerprint=fingerprint,
        actions=tuple(ctx.actions),
        warnings=tuple(ctx.warnings),
        state_digests=digests,
        transfer=transfer,
        spread=broker_spread(state, ctx.actions)
        if any(isinstance(a, Reassign) for a in ctx.actions)
        else None,
    )
    return plan, Lock(entries=dict(sorted(ctx.entries.items())))


# ----------------------------------------------------------------------- create


def _usable_entry(ctx: _Context, spec: TopicSpec, placement: str) -> LockEntry | None:
    entry = ctx.lock.get(spec.name) if ctx.lock is not None else None
    if (
        entry is None
        or entry.partitions != spec.partitions
        or entry.replication_factor != spec.replication_factor
        or entry.placement != placement
        or not same_brokers(entry.brokers, ctx.eligible)
        or (spec.start_index is not None and spec.start_index != entry.start_index)
    ):
        return None
    return entry


def _create(ctx: _Context, spec: TopicSpec) -> None:
    placement = effective_placement(spec, ctx.eligible)
    brokers = ctx.eligible
    start: int | None = None
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
    except AssignmentError as exc:
        ctx.error(spec, "replicationFactor", f"cannot place {spec.name}: {exc}")
        return
    ctx.load.add(assignment.values())
    config = _desired_config(spec)
    ctx.actions.append(
        CreateTopic(
            topic=spec.name,
            partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            start_index=start,
            assignment=assignment,
            config=config,
            placement=placement,
            origins=_origins(spec, config),
        )
    )
    ctx.entries[spec.name] = LockEntry(
        spec.name, start, brokers, spec.partitions, spec.replication_factor, placement
    )


def _static_brokers_known(
    ctx: _Context, spec: TopicSpec, assignment: Mapping[int, tuple[int, ...]]
) -> bool:
    known = {b.id for b in ctx.state.brokers}
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


def _desired_config(spec: TopicSpec) -> dict[str, str]:
    return {k: _normal(k, v) for k, v in sorted(spec.config.items())}


# ----------------------------------------------------------------------- update


def _update(ctx: _Context, spec: TopicSpec, live: TopicState) -> None:
    placement = effective_placement(spec, ctx.eligible)
    _lock_existing(ctx, spec, placement)
    config_change = _configs(ctx, spec, live)
    if config_change is not None:
        ctx.actions.append(config_change)
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
    in_flight = ctx.state.reassignments.get(spec.name, {})
    parts = live.partitions
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
    targets = _targets(ctx, spec, placement, live, {**current, **added}, in_flight)
    if targets is None:
        return
    drained = set(ctx.cluster.decommission)
    both = {**current, **added} if added else current
    if ctx.mode == "placed" and not drained:
        # nothing for the balancer: the spec's own changes, as they are (the common plan)
        finals = {p: (t, goal_one(why)) for p, (t, why) in targets.items()}
        _emit(ctx, spec, live, both, config_change, finals, placement == "rack-aware", [])
        return
    sizes: dict[int, int | None] = {p: ps.size_bytes for p, ps in live.partitions.items()}
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
                rack_aware=placement == "rack-aware",
                movable=placement != "static",
                frozen=frozenset(in_flight),
                replaceable=None
                if ctx.mode == "all"
                else [p for p in targets if not drained.isdisjoint(both[p])],
            ),
        )
    )


def _settle(ctx: _Context) -> None:
    """Goals 2-5 over every managed topic at once (``kgitops.plan.goals``), then the moves."""
    pending = ctx.pending
    drained = set(ctx.cluster.decommission)
    needed = ctx.mode != "placed" or any(item.replaceable for *_, item in pending)
    finals: Mapping[str, Mapping[int, tuple[tuple[int, ...], str]]]
    if needed and pending:
        names = {item.topic for *_, item in pending}
        deleted = {t.name for t in ctx.specs.topics if t.delete}
        fixed: list[tuple[Sequence[int], int | None]] = [
            pair
            for name, topic in ctx.state.topics.items()
            if name not in names and name not in deleted
            for pair in _replicas_and_sizes(topic)
        ]
        for a in ctx.actions:
            if isinstance(a, CreateTopic):
                fixed.extend((r, 0) for r in a.assignment.values())
        finals, band = settle(
            [item for *_, item in pending], ctx.state, fixed, drain=drained, mode=ctx.mode
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
        _emit(ctx, spec, live, both, config_change, topic_finals, item.rack_aware, ctx.drain_moves)


def _replicas_and_sizes(topic: TopicState) -> Iterable[tuple[Sequence[int], int | None]]:
    parts = topic.partitions
    if isinstance(parts, PartitionTable):
        return zip(parts.replicas, parts.sizes, strict=True)
    return [(ps.replicas, ps.size_bytes) for ps in parts.values()]


def _drain_hotspot(ctx: _Context) -> None:
    """DRAIN_HOTSPOT, over every replica the drain moves: managed, unmanaged and internal."""
    drained = set(ctx.cluster.decommission)
    drain_moves = ctx.drain_moves
    hot = drain_hotspot(drain_moves, ctx.state.brokers, drained) if drain_moves else None
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


def _emit(
    ctx: _Context,
    spec: TopicSpec,
    live: TopicState,
    both: Mapping[int, tuple[int, ...]],
    config_change: AlterConfig | None,
    finals: Mapping[int, tuple[tuple[int, ...], str]],
    rack_aware: bool,
    drain_moves: list[tuple[Sequence[int], Sequence[int], int, bool]],
) -> None:
    """The topic's reassign action from its final targets, and its leader elections."""
    drained = ctx.cluster.decommission
    moves: dict[int, Move] = {}
    for p, (target, reason) in sorted(finals.items()):
        source = both[p]
        if target == source:
            continue
        ps = live.partitions.get(p)
        size = (ps.size_bytes or 0) if ps is not None else 0
        moves[p] = Move(source=source, target=target, reason=reason, size_bytes=size)
        if drained and not set(drained).isdisjoint(source):
            drain_moves.append((source, target, size, rack_aware))
    if moves:
        ctx.load.add((m.source for m in moves.values()), -1)
        ctx.load.add(m.target for m in moves.values())
        total = sum(m.size_bytes * len(m.adding) for m in moves.values())
        ctx.actions.append(Reassign(spec.name, moves, total))
        if config_change is not None:
            _order_config(ctx, live, config_change, moves)
    in_flight = ctx.state.reassignments.get(spec.name, {})
    _leaders(ctx, spec, live, set(moves), set(in_flight))


def _replicas(n: int) -> str:
    return f"{n} replica(s)"


def _lock_existing(ctx: _Context, spec: TopicSpec, placement: str) -> None:
    old = ctx.lock.get(spec.name) if ctx.lock is not None else None
    if old is None:
        entry = LockEntry(
            spec.name, None, ctx.eligible, spec.partitions, spec.replication_factor, "adopted"
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
    ctx.entries[spec.name] = entry


def _configs(ctx: _Context, spec: TopicSpec, live: TopicState) -> AlterConfig | None:
    desired = _desired_config(spec)
    have = {k: _normal(k, v) for k, v in live.config.items() if k not in THROTTLED_REPLICAS_CONFIGS}
    to_set = {k: v for k, v in desired.items() if have.get(k) != v}
    # a config kgitops does not know (a newer Kafka's, a vendor's) cannot be in a spec, so
    # its absence there asks nothing: it is left as it is (docs/specs.md#topic-configs)
    to_delete = tuple(sorted(k for k in have if k not in desired and k in CONFIGS))
    if RETENTION in to_set and RETENTION in have:
        cut = retention_cut(
            spec.name,
            have[RETENTION],
            to_set[RETENTION],
            DropStep.parse(ctx.cluster.retention_drop_step),
            _topic_size(live),
            allow=ctx.allow_retention_drop,
        )
        if cut is not None:
            value, warning = cut
            ctx.warnings.append(warning)
            if value is None:
                del to_set[RETENTION]
            else:
                to_set[RETENTION] = value
    if to_set or to_delete:
        previous = {k: have[k] for k in [*to_set, *to_delete] if k in have}
        origins = _origins(spec, to_set)
        return AlterConfig(spec.name, to_set, to_delete, previous, origins=origins)
    return None


def _origins(spec: TopicSpec, configs: Iterable[str]) -> dict[str, str]:
    """Where cluster.yaml set each of ``configs`` (defaults, a profile, an override), for a
    reader of the plan: ``{"retention.ms": "profile standard at topics/prod/cluster.yaml:9:21"}``.
    A value the topic file sets itself has no entry (its line is the topic's)."""
    return {
        k: f"{spec.origins[f'config.{k}']} at {spec.mark_of(f'config.{k}')}"
        for k in configs
        if f"config.{k}" in spec.origins
    }


def _topic_size(live: TopicState) -> int | None:
    """The topic's bytes (every partition's leader copy), None when any is unknown."""
    sizes = [p.size_bytes for p in live.partitions.values()]
    if not sizes or any(size is None for size in sizes):
        return None
    return sum(size for size in sizes if size is not None)


def _order_config(
    ctx: _Context, live: TopicState, change: AlterConfig, moves: Mapping[int, Move]
) -> None:
    """Run a min.insync.replicas raise after the moves that raise the replication factor
    (``min_isr_order``): the change is put back after the moves."""
    if MIN_ISR not in change.set and MIN_ISR not in change.delete:
        return
    old = ctx.state.min_insync_replicas(live.config)
    config = {**live.config, **change.set}
    for k in change.delete:
        config.pop(k, None)
    new = ctx.state.min_insync_replicas(config)
    before = [len(p.replicas) for p in live.partitions.values()]
    after = [
        len(moves[pid].target) if pid in moves else len(p.replicas)
        for pid, p in live.partitions.items()
    ]
    if min_isr_order(before, after, old, new) == "after":
        i = ctx.actions.index(change)
        ctx.actions[i] = replace(change, after_reassign=True)


def _add_partitions(
    ctx: _Context, spec: TopicSpec, placement: str, current: dict[int, tuple[int, ...]]
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
            online = tuple(b for b in ctx.state.brokers if b.online)
            pool = ctx.eligible if len(ctx.eligible) >= rf0 else online
            added = assign_added_partitions(
                pool, current, spec.partitions, rack_aware=placement == "rack-aware"
            )
    except AssignmentError as exc:
        ctx.error(spec, "partitions", f"cannot add partitions to {spec.name}: {exc}")
        return {}
    ctx.load.add(added.values())
    ctx.actions.append(AddPartitions(spec.name, count, spec.partitions, None, added))
    ctx.warn(
        spec.name,
        "KEY_REMAP",
        f"partitions {count} -> {spec.partitions}: keyed messages map to other partitions "
        "from now on (per-key ordering breaks across the change; compacted keys split)",
        **{"from": count, "to": spec.partitions},
    )
    return added


def _targets(
    ctx: _Context,
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
    drained = set(ctx.cluster.decommission)
    rf = spec.replication_factor
    rack_aware = placement == "rack-aware"
    if not candidates or not _needs_moves(ctx, candidates, rf, rack_aware):
        return {}
    from kgitops.placement.rebalance import rebalance

    others = Load(Counter(ctx.load.leaders), Counter(ctx.load.replicas))
    others.add(current.values(), -1)  # rebalance counts the topic's own replicas itself
    try:
        result = rebalance(
            candidates,
            ctx.state.brokers,
            replication_factor=rf if any(len(r) != rf for r in candidates.values()) else None,
            drain=tuple(sorted(drained)),
            spread_racks=rack_aware,
            load=others.replicas,
            leader_load=others.leaders,
            placement_brokers=_placed_with(ctx, spec),
        )
    except AssignmentError as exc:
        ctx.error(spec, "replicationFactor", f"cannot reassign {spec.name}: {exc}")
        return None
    return {p: (t.replicas, t.reason) for p, t in result.items()}


def _placed_with(ctx: _Context, spec: TopicSpec) -> tuple[Broker, ...] | None:
    """The broker list the topic was placed with, when the lock recorded its placement."""
    entry = ctx.lock.get(spec.name) if ctx.lock is not None else None
    if entry is None or entry.placement in ("adopted", "static"):
        return None
    return entry.brokers


def _needs_moves(
    ctx: _Context, current: Mapping[int, tuple[int, ...]], rf: int, rack_aware: bool
) -> bool:
    """Whether the spec demands a move: another RF, a drained broker, or a broken rack rule.

    Each distinct replica list is judged once per plan (a cluster of n brokers has few
    distinct lists, and the state loader shares the tuples); a topic whose every list was
    judged fine is one set look-up per partition, in C."""
    fine = ctx.fine.setdefault((rack_aware, rf), set())
    if fine.issuperset(current.values()):
        return False
    cache = ctx.verdicts[rack_aware]
    for replicas in set(current.values()):
        if len(replicas) != rf:
            return True
        bad = cache.get(replicas)
        if bad is None:
            bad = cache[replicas] = ctx.breaks_rule(replicas, rack_aware)
        if bad:
            return True
    fine.update(current.values())
    return False


def _leaders(
    ctx: _Context, spec: TopicSpec, live: TopicState, planned: set[int], flying: set[int]
) -> None:
    """Elections for leaders off their preferred replica, and UNDER_REPLICATED, which says
    of each under-replicated partition what becomes of it: moved by this plan (``planned``),
    being moved now by a reassignment in flight that this plan leaves out (``flying``; counted
    as Kafka counts it then, without the replicas being removed), or left where it is."""
    if isinstance(live.partitions, PartitionTable) and live.partitions.settled:
        return  # every ISR its replica tuple, every leader the preferred one: nothing to say
    online = ctx.online
    moves = ctx.state.reassignments.get(spec.name, {})
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
        ctx.actions.append(ElectLeaders(spec.name, tuple(sorted(elect))))
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


# --------------------------------------------------------------------- warnings


def _spec_warnings(ctx: _Context, spec: TopicSpec) -> None:
    """RF_ONE, MIN_ISR_EQUALS_RF and MIN_ISR_ABOVE_RF, as validate says them
    (spec/durability.py)."""
    min_isr = ctx.state.min_insync_replicas(_desired_config(spec))
    single = len(ctx.state.brokers) == 1
    for w in replication_warnings(
        spec.replication_factor, min_isr, single_broker=single, version=ctx.state.version
    ):
        ctx.warn(spec.name, w.code, w.message)


def _unknown_configs(ctx: _Context, spec: TopicSpec) -> None:
    """A config the cluster's Kafka does not know is an error at its position, before
    anything changes: Kafka refuses it in CreateTopics and IncrementalAlterConfigs
    (``Unknown topic config name``: LogConfig.validateNames), so the apply would stop half
    done and every later plan would repeat it. kgitops knows the configs of Kafka 3.x and
    4.x; the cluster says which its version has (``ClusterState.topic_config_names``:
    Kafka 4.0 dropped ``message.format.version``; trunk's ``remote.copy.lag.ms`` is in no
    4.1 release). Unknown names (None: the simulated cluster, Tansu) are not checked."""
    known = ctx.state.topic_config_names
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
            f"{key}: cluster '{ctx.cluster.name}' does not know this topic config (its "
            f"brokers list {len(known)} topic configs, and Kafka refuses an unknown one: "
            f"'Unknown topic config name'){why}; remove it from {spec.name}",
        )


def _drain_unmanaged(ctx: _Context, managed: set[str]) -> set[str]:
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
    drained = set(ctx.cluster.decommission)
    if not drained:
        return set()
    ignored: dict[str, int] = {}
    blocked: dict[str, int] = {}
    quorum: dict[str, int] = {}
    moved: set[str] = set()
    for name in sorted(n for n in ctx.state.topics if n not in managed):
        live = ctx.state.topics[name]
        in_flight = ctx.state.reassignments.get(name, {})
        current = {
            p: ps.replicas
            for p, ps in live.partitions.items()
            if p not in in_flight and drained.intersection(ps.replicas)
        }
        if not current:
            continue
        internal = is_internal_topic(name, ctx.cluster.own_topics)
        if name == KAFKA_METADATA_TOPIC:
            quorum[name] = len(current)
            continue
        if ctx.cluster.unmanaged_topics == "ignore" and not internal:
            ignored[name] = len(current)
            continue
        moves = _drain_moves(ctx, name, live, current, internal=internal)
        if moves is None:
            blocked[name] = len(current)
            continue
        ctx.load.add((m.source for m in moves.values()), -1)
        ctx.load.add(m.target for m in moves.values())
        total = sum(m.size_bytes * len(m.adding) for m in moves.values())
        ctx.actions.append(Reassign(name, moves, total))
        racked = all(b.rack is not None for b in ctx.state.brokers)
        ctx.drain_moves.extend((m.source, m.target, m.size_bytes, racked) for m in moves.values())
        moved.add(name)
    others = sorted(n for n in moved if not ctx.cluster.owns.topic(n))
    foreign = [n for n in others if not is_internal_topic(n, ctx.cluster.own_topics)]
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
    ctx: _Context,
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
            ctx.state.brokers,
            drain=tuple(sorted(ctx.cluster.decommission)),
            spread_racks=False,
            load=others.replicas,
            leader_load=others.leaders,
        )
    except AssignmentError as exc:
        ctx.warn(name, "DRAIN_BLOCKED", f"cannot move {name} off the drained brokers: {exc}")
        return None
    why = (
        "(an internal topic, not in git: its assignment is the live one)"
        if internal
        else "(the topic is not in git: its assignment is the live one)"
        if ctx.cluster.owns.topic(name)
        else "(a topic this folder does not own, moved because the drain empties the broker: "
        "its assignment is the live one)"
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


def _unmanaged(ctx: _Context, managed: set[str]) -> None:
    policy = ctx.cluster.unmanaged_topics
    if policy == "ignore":
        return
    own = ctx.cluster.own_topics
    not_own: dict[str, list[str]] = {}  # named passwordVersionTopic, but not kgitops' shape
    for n in sorted(own & ctx.state.topics.keys()):
        t = ctx.state.topics[n]
        if problems := version_topic_problems(t.partition_count, t.config.get("cleanup.policy")):
            not_own[n] = problems
    owns = ctx.cluster.owns
    names = sorted(
        n
        for n in ctx.state.topics
        if n not in managed and (n in not_own or (not is_internal_topic(n, own) and owns.topic(n)))
    )
    if not names:
        return
    if policy == "error":
        shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
        raise PlanError(
            f"{ctx.cluster.mark_of('unmanagedTopics')}: error: {len(names)} live topic(s) are "
            f"not in git (unmanagedTopics: error): {shown}; add them with `kgitops import`"
        )
    for n in names:
        if n in not_own:
            ctx.warn(
                n,
                "UNMANAGED_TOPIC",
                (
                    "kgitops keeps its owner records in this topic (docs/ownership.md)"
                    if n == OWNER_TOPIC and n != ctx.cluster.password_version_topic
                    else "cluster.yaml's passwordVersionTopic names this topic"
                )
                + f", but it is not kgitops' ({'; '.join(not_own[n])}): another program's "
                "topic? kgitops will neither read nor write it; "
                + (
                    "rename or delete it"
                    if n == OWNER_TOPIC and n != ctx.cluster.password_version_topic
                    else "name a topic of kgitops' own"
                ),
            )
            continue
        ctx.warn(
            n,
            "UNMANAGED_TOPIC",
            "the topic exists on the cluster but not in git; kgitops leaves it alone "
            "(`kgitops import` adopts it)",
        )


# -------------------------------------------------------------------- throttles


def _throttle_pressure(ctx: _Context, write_rates: Mapping[str, float] | None) -> None:
    """THROTTLE_BELOW_WRITE_RATE: a broker whose in-sync replication of moving partitions
    approaches its throttle (``kgitops.plan.throttles.throttle_pressure``)."""
    settings = ctx.cluster.reassignment
    moves = [
        MoveThrottle(a.topic, p, m.source, m.adding)
        for a in ctx.actions
        if isinstance(a, Reassign)
        for p, m in a.moves.items()
    ]
    for pr in throttle_pressure(
        moves,
        ctx.state,
        settings.throttle_bytes_per_sec,
        settings.max_concurrent_moves,
        write_rates,
    ):
        how = (
            "at the write rates measured"
            if pr.measured
            else "at write rates estimated from partition sizes and retention.ms"
        )
        fate = (
            "new replicas never catch up"
            if pr.left <= 0
            else f"new replicas copy with what is left, {human_bytes(int(pr.left))}/s"
        )
        ctx.warn(
            "",
            "THROTTLE_BELOW_WRITE_RATE",
            f"broker {pr.broker}: the in-sync followers of the moving partitions it leads "
            f"({pr.partitions} at a time) take about {human_bytes(int(pr.in_sync))}/s of its "
            f"{human_rate(pr.rate)} throttle {how} (Kafka charges in-sync traffic of "
            f"throttled partitions to the quota): {fate}; raise throttleBytesPerSec above "
            f"{human_bytes(int(pr.in_sync * 1.25))}/s or lower maxConcurrentMoves",
            broker=pr.broker,
            inSyncBytesPerSec=round(pr.in_sync),
            throttleBytesPerSec=pr.rate,
            measured=pr.measured,
        )


def _isr_pressure(ctx: _Context, measured: Mapping[str, float] | None) -> None:
    """ISR_PRESSURE: a written topic whose followers would fall out of the ISR, now or
    after the plan (``kgitops.plan.isrlag``: the rule the simulated cluster applies). Only
    where the network is known: a simulated cluster's ``networkBytesPerSec``. Every written
    topic loads the brokers; only the folder's own topics are warned about."""
    network = ctx.state.network_bytes_per_sec
    rates = topic_write_rates(ctx.specs.topics, measured)
    if network is None or not rates:
        return
    lag = lag_time_max(ctx.state.broker_defaults)
    specs = {t.name: t for t in ctx.specs.topics}
    found = isr_pressure(ctx.state, ctx.actions, {t: r for t, (r, _) in rates.items()}, network)
    for now, after in found:
        s = after or now
        assert s is not None
        if not ctx.cluster.owns.topic(s.topic):
            continue  # another folder's topic: its writes count, its warning is its own
        when = (
            "now and after this plan"
            if now is not None and after is not None
            else "after this plan"
            if after is not None
            else "now, not after this plan"
        )
        spec = specs.get(s.topic)
        live = ctx.state.topics.get(s.topic)
        config = _desired_config(spec) if spec is not None else live.config if live else {}
        min_isr = ctx.state.effective_min_isr(config, s.replicas)
        below = sorted(p for p, isr in s.isr.items() if len(isr) < min_isr)
        rate, source = rates[s.topic]
        ctx.warn(
            s.topic,
            "ISR_PRESSURE",
            _isr_pressure_message(s, rate, source, network, lag, when, min_isr, below),
            placement="both" if now is not None and after is not None else s.placement,
            rateBytesPerSec=round(rate),
            rateSource=source,
            networkBytesPerSec=round(network),
            lagTimeMaxMs=round(lag * 1000),
            brokers={str(b): round(d) for b, d in s.brokers.items()},
            isr={str(p): list(isr) for p, isr in sorted(s.isr.items())},
            minIsr=min_isr,
            belowMinIsr=len(below),
        )


def _isr_pressure_message(
    s: Shrink,
    rate: float,
    source: str,
    network: float,
    lag: float,
    when: str,
    min_isr: int,
    below: Sequence[int],
) -> str:
    origin = "expectedWriteBytesPerSec" if source == "spec" else "the rate `simulate produce` sends"
    (first, need), *rest = s.brokers.items()
    others = "".join(f", broker {b}: {human_rate(d)}" for b, d in rest)
    also = f" ({others[2:]})" if rest else ""
    shown = [f"{p} to {list(isr)}" for p, isr in sorted(s.isr.items())[:3]]
    more = f" and {len(s.isr) - 3} more" if len(s.isr) > 3 else ""
    if below:
        fate = (
            f"{len(below)} of them fall below min.insync.replicas {min_isr}: acks=all "
            "producers are refused there (NOT_ENOUGH_REPLICAS) until the followers catch up, "
            "and at this rate they fall behind again"
        )
    else:
        fate = f"min.insync.replicas {min_isr} is still met: acks=all writes go on"
    return (
        f"{when}: at {human_rate(rate)} of writes ({origin}), the in-sync followers on broker "
        f"{first} must fetch {human_rate(need)}{also}, counting every written topic, more than "
        f"the {human_rate(network)} network (the simulated cluster's networkBytesPerSec): "
        f"they fall behind and leave the ISR after "
        f"replica.lag.time.max.ms ({human_seconds(lag)}); the ISR of {len(s.isr)} of the "
        f"topic's {s.partitions} partitions shrinks (partition {', '.join(shown)}{more}); "
        f"{fate}"
    )


def _throttles(ctx: _Context, record: Mapping[str, Any] | None) -> None:
    """Throttles are state: every throttle config no move in flight needs is removed (on a
    topic, only when the folder owns it: another team's topic is its own apply's to clean)."""
    for s in stale_throttles(ctx.state, record=record):
        if s.broker is None and s.topic and not ctx.cluster.owns.topic(s.topic):
            continue
        ctx.actions.append(RemoveThrottles(s.topic, s.broker, dict(s.keys), s.reason))
