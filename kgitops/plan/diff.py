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

``compute_plan`` runs the passes in order over one ``diff_context.Context`` (its read-only
``Inputs``, its accumulating ``Outputs``, the running load, caches and queues): each managed
topic (``diff_topic``: create, or configs, partitions, replica targets, lock entry, spec
checks), the balancer over the queued topics and each topic's moves and elections, then the
drain of unmanaged topics (``diff_moves``), unmanaged topics, stale throttles and the load
warnings (``diff_cluster``), and last the transfer estimate with LARGE_MOVE and
TIMEOUT_TOO_SHORT (here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgitops.errors import SpecError
from kgitops.model import ClusterSpec, ClusterState
from kgitops.placement.balance import Mode
from kgitops.plan.actions import DeleteTopic, Reassign
from kgitops.plan.diff_cluster import (
    remove_stale_throttles,
    warn_isr_pressure,
    warn_throttle_pressure,
    warn_unmanaged,
)
from kgitops.plan.diff_context import Context, Inputs, SpecsLike
from kgitops.plan.diff_moves import drain_unmanaged, settle_pending, warn_drain_hotspot
from kgitops.plan.diff_topic import check_unknown_configs, create_topic, update_topic, warn_spec
from kgitops.plan.fingerprint import state_fingerprint
from kgitops.plan.spread import broker_spread
from kgitops.plan.transfer import estimate_transfer
from kgitops.plan.value import Plan
from kgitops.spec.lock import Lock
from kgitops.units import human_bytes, human_seconds

LARGE_MOVE_SHARE = 0.10


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
    mode: Mode = "all" if rebalance else "leaders" if leaders else "placed"
    inputs = Inputs(
        specs, cluster, state, lock, eligible, state.online_broker_ids, mode, allow_retention_drop
    )
    ctx = Context(inputs)

    managed = {t.name for t in specs.topics}
    for spec in sorted(specs.topics, key=lambda t: t.name):
        if spec.delete:
            live = state.topics.get(spec.name)
            if live is not None:
                sizes = [p.size_bytes for p in live.partitions.values()]
                total = None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)
                ctx.out.actions.append(DeleteTopic(spec.name, live.partition_count, total))
        elif spec.name not in state.topics:
            create_topic(ctx, spec)
    for spec in sorted(specs.topics, key=lambda t: t.name):
        live = state.topics.get(spec.name)
        if live is not None and not spec.delete:
            update_topic(ctx, spec, live)
        if not spec.delete:
            warn_spec(ctx, spec)
            check_unknown_configs(ctx, spec)
    settle_pending(ctx)

    drained_too = drain_unmanaged(ctx, managed)
    warn_drain_hotspot(ctx)
    warn_unmanaged(ctx, managed)
    remove_stale_throttles(ctx, throttle_record)
    if any(d.is_error for d in ctx.out.diagnostics):
        raise SpecError(ctx.out.diagnostics)
    transfer = estimate_transfer(
        ctx.out.actions,
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
    warn_throttle_pressure(ctx, write_rates)
    warn_isr_pressure(ctx, write_rates)
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
        actions=tuple(ctx.out.actions),
        warnings=tuple(ctx.out.warnings),
        state_digests=digests,
        transfer=transfer,
        spread=broker_spread(state, ctx.out.actions)
        if any(isinstance(a, Reassign) for a in ctx.out.actions)
        else None,
    )
    return plan, Lock(entries=dict(sorted(ctx.out.entries.items())))
