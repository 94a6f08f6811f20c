"""After apply: read the cluster again and compare it with the plan, action by action.

An action the cluster accepted but whose effect is not visible (a topic created with another
partition count, a config that did not stick, a move that did not end on its target) is an
error: its outcome becomes "NOT done (verification: ...)". Kafka applies some changes
asynchronously (deletion, metadata propagation), so a difference is re-read a few times
before it counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kgitops.access import AccessState
from kgitops.apply.access import access_differences
from kgitops.cluster.port import ClusterAdmin, describe_access
from kgitops.errors import ActionOutcome, ClusterError, Status
from kgitops.model import ClusterState
from kgitops.plan.actions import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Reassign,
    RemoveThrottles,
)
from kgitops.plan.kinds import ACCESS_KINDS, ACCESS_PART
from kgitops.plan.throttles import in_flight, needed, parse_entries
from kgitops.plan.value import Plan


def differences(
    action: Action,
    state: ClusterState,
    *,
    wait: bool = True,
    moved: frozenset[tuple[str, int]] = frozenset(),
) -> list[str]:
    """What about ``action`` the cluster state does not show; empty when it is all there.

    ``moved`` names partitions a later reassign action of the same plan moves: their
    placement is checked against the move's target, not against where they were created
    (Kafka adds partitions at partition 0's RF, so a plan that also changes the RF adds
    them at the old RF and then reassigns them).
    """
    if isinstance(action, RemoveThrottles):
        return _throttles_left(action, state)
    topic = state.topics.get(action.topic)
    if isinstance(action, DeleteTopic):
        return ["the topic still exists"] if topic is not None else []
    if topic is None:
        return ["the topic does not exist"]
    out: list[str] = []
    parts = topic.partitions
    if isinstance(action, CreateTopic | AddPartitions):
        want = action.partitions if isinstance(action, CreateTopic) else action.to_count
        if len(parts) != want:
            out.append(f"{len(parts)} partitions, the plan said {want}")
        for p, replicas in sorted(action.assignment.items()):
            got = parts.get(p)
            if (action.topic, p) in moved:
                continue
            if got is not None and got.replicas != replicas:
                out.append(f"partition {p} on {list(got.replicas)}, the plan said {list(replicas)}")
    if isinstance(action, CreateTopic | AlterConfig):
        sets = action.config if isinstance(action, CreateTopic) else action.set
        for key, value in sorted(sets.items()):
            if topic.config.get(key) != value:
                out.append(f"config {key}={topic.config.get(key)!r}, the plan said {value!r}")
    if isinstance(action, AlterConfig):
        out += [f"config {k} is still set" for k in sorted(action.delete) if k in topic.config]
    if isinstance(action, Reassign) and wait:
        for p, move in sorted(action.moves.items()):
            got = parts.get(p)
            if got is None or got.replicas != move.target:
                now = list(got.replicas) if got else "missing"
                out.append(f"partition {p} on {now}, the plan said {list(move.target)}")
    if isinstance(action, ElectLeaders):
        for p in action.partitions:
            got = parts.get(p)
            if got is not None and got.leader is not None and got.leader != got.replicas[0]:
                out.append(f"partition {p} led by {got.leader}, not preferred {got.replicas[0]}")
    return out


def _throttles_left(action: RemoveThrottles, state: ClusterState) -> list[str]:
    """What of a ``remove_throttles`` is still there, other than what a move in flight needs."""
    need = needed(in_flight(state))
    if action.broker is not None:
        have = state.broker_configs.get(action.broker, {})
        if action.broker in need.brokers:
            return []
        return [f"{k} is still set on broker {action.broker}" for k in action.remove if k in have]
    topic = state.topics.get(action.topic)
    if topic is None:
        return []
    out = []
    for key, value in sorted(action.remove.items()):
        if key not in topic.config:
            continue
        now = parse_entries(topic.config[key])
        gone = parse_entries(value)
        keep = need.replicas.get(action.topic, {}).get(key, frozenset())
        if now is None or gone is None:
            if action.topic not in {m.topic for m in in_flight(state)}:
                out.append(f"{key} is still set")
        elif (now & gone) - keep:
            out.append(f"{key} still lists {sorted((now & gone) - keep)}")
        elif not now:
            out.append(f"{key} is still set (empty)")
    return out


def verify_applied(
    plan: Plan,
    admin: ClusterAdmin,
    outcomes: Sequence[ActionOutcome],
    *,
    wait: bool = True,
    attempts: int = 4,
    pause: float = 1.0,
) -> list[ActionOutcome]:
    """``outcomes`` with each done action whose effect the cluster does not show marked
    failed (verification) or in doubt (the cluster could not be read back)."""
    out = list(outcomes)
    checked = [(n, a, o) for n, (a, o) in enumerate(zip(plan.actions, out, strict=True)) if o.done]
    if not checked:
        return out
    access = sorted({ACCESS_PART[a.kind] for _, a, _ in checked if a.kind in ACCESS_PART})
    topics = sorted({a.topic for _, a, _ in checked if a.kind not in ACCESS_KINDS})
    moved = frozenset(
        (a.topic, p) for a in plan.actions if isinstance(a, Reassign) for p in a.moves
    )
    found: dict[int, list[str]] = {}
    for attempt in range(attempts):
        try:
            state = admin.describe(topics)
            if access:
                state = replace(state, access=describe_access(admin, access))
        except ClusterError as exc:
            for n, _, o in checked:
                out[n] = replace(
                    o, status=Status.IN_DOUBT, reason=f"sent, but could not be verified: {exc}"
                )
            return out
        found = {
            i: (
                access_differences(a, state.access or AccessState())
                if a.kind in ACCESS_KINDS
                else differences(a, state, wait=wait, moved=moved)
            )
            for i, (_, a, _) in enumerate(checked)
        }
        if not any(found.values()) or attempt == attempts - 1:
            break
        admin.sleep(pause)
    for i, (n, _, o) in enumerate(checked):
        if found.get(i):
            out[n] = replace(o, status=Status.FAILED, reason="verification: " + "; ".join(found[i]))
    return out


def read_back_in_doubt(
    plan: Plan, admin: ClusterAdmin, outcomes: Sequence[ActionOutcome]
) -> list[ActionOutcome]:
    """``outcomes`` with each topic action left in doubt (its request timed out or was cut
    short) whose effect the cluster now shows marked done: a create answered too late is
    still a create. One read; when it fails, or shows the effect missing or partial, the
    action stays in doubt (a later plan shows)."""
    out = list(outcomes)
    doubtful = [
        (n, a, o)
        for n, (a, o) in enumerate(zip(plan.actions, out, strict=False))
        if o.status is Status.IN_DOUBT and a.kind not in ACCESS_KINDS
    ]
    if not doubtful:
        return out
    try:
        state = admin.describe(sorted({a.topic for _, a, _ in doubtful if a.topic}))
    except ClusterError:
        return out
    for n, a, o in doubtful:
        if not differences(a, state):
            out[n] = replace(
                o, status=Status.DONE, reason="read back: it took effect (the answer came late)"
            )
    return out
