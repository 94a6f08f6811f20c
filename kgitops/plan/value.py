"""The plan: a sorted, frozen, versioned value owning its gates; apply runs exactly what it says.

Its actions are of the kinds in ``kgitops.plan.actions`` (one registry: order, symbol, JSON);
its ``transfer`` is the typed estimate of ``kgitops.plan.transfer``. The gates apply runs
before touching anything live here, on the value:

* ``raise_if_stale(state)``: the cluster changed since the plan was made (StalePlan names
  the topics or brokers that changed);
* ``raise_if_deletes(allow_delete=...)``: a delete_topic without --allow-delete;
* ``raise_if_unsafe(allow_delete=..., state=...)``: every safety gate (deletion, replication
  factor below min.insync.replicas, replicas on offline brokers).

The JSON form (``to_json`` / ``from_json``, format ``kgitops-plan/v1``, schema
kgitops/schemas/plan.json) is the contract described in docs/planning.md; renderers read it,
so text, markdown and JSON can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kgitops.errors import (
    DeletionNotAllowed,
    OfflineTarget,
    PlanError,
    StalePlan,
    TimeoutTooShort,
    UnsafePlan,
    UnsafeReplication,
)
from kgitops.model import ClusterState
from kgitops.names import MIN_ISR
from kgitops.plan.access_actions import DeleteAcl
from kgitops.plan.actions import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    Reassign,
    action_from_json,
    kinds,
)
from kgitops.plan.fields import (
    FIELDS,
    PlanOptions,
    access_parts_of,
    fields_from_json,
    fields_json,
)
from kgitops.plan.fingerprint import state_fingerprint, topic_digest
from kgitops.plan.kinds import ACCESS_KINDS
from kgitops.plan.statediff import describe_changes
from kgitops.plan.transfer import Transfer
from kgitops.units import human_seconds
from kgitops.versionrules import DEFAULT_VERSION, caps_min_isr

FORMAT = "kgitops-plan/v1"

A = TypeVar("A", bound=Action)


@dataclass(frozen=True)
class PlanWarning:
    """Something a reviewer should see. ``data`` carries measured figures (e.g. key shares)."""

    topic: str
    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "code": self.code, "message": self.message}
        if self.data:
            out["data"] = dict(self.data)
        return out


@dataclass(frozen=True)
class Finding:
    """Something about the change itself that a reviewer must see first and the pull-request
    check refuses without an explicit allow (CONNECTION_CHANGED: cluster.yaml now connects
    elsewhere or with other credentials). Kept in the order found."""

    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data:
            out["data"] = dict(self.data)
        return out


@dataclass(frozen=True)
class Plan:
    """What apply will do. ``actions`` are sorted by (kind order, topic) on construction.

    ``cluster_dir`` says where cluster.yaml lives so ``apply --plan`` can reach the cluster;
    ``state_digests`` (topic -> digest) lets a stale plan say which topics changed;
    ``transfer`` is the data the reassignments copy (None when they copy nothing);
    ``spread`` the per-broker figures before and after its moves (``kgitops.plan.spread``;
    only when it moves replicas); ``access_fingerprint`` the digest of the live ACLs, SCRAM
    users and quotas it was made on, over the parts ``access_parts`` (both None when the plan
    does not cover access); ``targets`` the ``--target`` selectors of a partial plan (None:
    a whole plan). A saved plan (``plan --out``) also has ``options`` (how it was made) and
    ``recorded_state`` (the state it was made on, as ``kgitops-state/v1`` JSON, which the
    shell reads). ``extra`` carries only JSON fields this version does not know, untouched.
    """

    cluster: str
    state_fingerprint: str
    actions: tuple[Action, ...] = ()
    warnings: tuple[PlanWarning, ...] = ()
    cluster_dir: str | None = None
    state_digests: Mapping[str, str] = field(default_factory=dict)
    transfer: Transfer | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    spread: Mapping[str, Any] | None = None
    access_fingerprint: str | None = None
    access_parts: tuple[str, ...] | None = None
    targets: tuple[str, ...] | None = None
    options: PlanOptions | None = None
    recorded_state: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.actions, key=lambda a: a.sort_key))
        object.__setattr__(self, "actions", ordered)
        warn = tuple(sorted(self.warnings, key=lambda w: (w.topic, w.code, w.message)))
        object.__setattr__(self, "warnings", warn)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions)

    @property
    def needs_review(self) -> bool:
        """Actions to run or findings to read: ``plan --detailed-exitcode`` exits 2."""
        return bool(self.actions or self.findings)

    @property
    def topics(self) -> list[str]:
        """The topics the plan depends on: those it recorded digests for, else its actions'
        (a broker's action, ``remove_throttles`` of a broker, names none)."""
        return sorted(self.state_digests) or sorted(
            {a.topic for a in self.actions if a.kind not in ACCESS_KINDS and a.topic}
        )

    def summary(self) -> dict[str, int]:
        """Actions per kind, in order; the access kinds only when the plan has them."""
        counts = {k.kind: 0 for k in kinds() if k.kind not in ACCESS_KINDS}
        for a in self.actions:
            counts[a.kind] = counts.get(a.kind, 0) + 1
        return {k.kind: counts[k.kind] for k in kinds() if k.kind in counts}

    def of_kind(self, kind: type[A]) -> list[A]:
        """The plan's actions of one kind, in order: ``plan.of_kind(Reassign)``."""
        return [a for a in self.actions if isinstance(a, kind)]

    # ------------------------------------------------------------------- gates

    def stale_reasons(self, state: ClusterState, recorded: ClusterState | None = None) -> list[str]:
        """What changed in ``state`` since the plan was made; empty when the plan is fresh.

        The fingerprint covers brokers (ids, racks, liveness) and, for every topic the plan
        names, its replicas and topic configs; the per-topic digests say which topics changed.
        With ``recorded`` (the state the plan was made on, as ``plan --out`` saves it) each
        change is explained: which partition's replicas, which config, which broker
        (kgitops/plan/statediff.py).
        """
        access = access_stale_reasons(self.access_fingerprint, self.access_parts, state)
        topics = self.topics
        fingerprint, digests = state_fingerprint(state, topics)
        if fingerprint == self.state_fingerprint:
            return access
        stale = [
            t for t in topics if t in self.state_digests and digests[t] != self.state_digests[t]
        ]
        if recorded is not None:
            explained = describe_changes(recorded, state, stale, plan_only=True)
            if explained:
                return explained + access
        absent = topic_digest(ClusterState(brokers=(), topics={}), "")
        changes = []
        for t in stale:
            if t not in state.topics:
                changes.append(f"topic {t}: deleted since the plan was made")
            elif self.state_digests[t] == absent:
                changes.append(f"topic {t}: created since the plan was made")
            else:
                changes.append(
                    f"topic {t}: its replicas or configs changed since the plan was made"
                )
        if not changes:
            live = ", ".join(
                f"{b.id}" + (f"@{b.rack}" if b.rack else "") + ("" if b.online else " (offline)")
                for b in sorted(state.brokers)
            )
            changes = [f"the brokers changed (ids, racks or liveness); now: {live}"]
        return changes + access

    def raise_if_stale(self, state: ClusterState, recorded: ClusterState | None = None) -> None:
        """StalePlan, naming what changed, when ``state`` is not the state the plan was made
        on; with ``recorded`` (that state), each change in detail (see ``stale_reasons``)."""
        changes = self.stale_reasons(state, recorded)
        if changes:
            raise StalePlan(
                f"the plan for cluster {self.cluster!r} is stale: the cluster changed since it "
                "was made; run `kgitops plan` again and review the new plan",
                changes,
            )

    def raise_if_deletes(self, *, allow_delete: bool) -> None:
        """DeletionNotAllowed when the plan deletes topics and ``allow_delete`` is not given."""
        if not allow_delete:
            _raise_first(_deletion_reasons(self))

    def raise_if_too_slow(self, timeout_seconds: float) -> None:
        """TimeoutTooShort when the plan's ETA (``transfer.estimated_seconds``, the schedule
        apply follows) is longer than ``timeout_seconds``: every apply would cancel its moves
        at the timeout and start over. ``apply --timeout`` or ``--no-wait`` are the ways out."""
        eta = self.transfer.estimated_seconds if self.transfer is not None else None
        if eta is None or eta <= timeout_seconds:
            return
        raise TimeoutTooShort(
            f"the plan's reassignments take about {human_seconds(eta)}, longer than the "
            f"apply timeout ({human_seconds(timeout_seconds)}): at the timeout apply would "
            "cancel the moves in flight and throw their copying away",
            [
                f"pass `--timeout {_ceil_duration(eta)}` (or more), or raise "
                "reassignment.timeoutSeconds in cluster.yaml",
                "or `--no-wait`: submit a window of moves, leave it running, and run apply "
                "again later (each run submits the next window)",
            ],
        )

    def raise_if_unsafe(self, *, allow_delete: bool, state: ClusterState | None = None) -> None:
        """The safety gates apply runs before touching anything: DeletionNotAllowed (a
        delete_topic without --allow-delete), UnsafeReplication (a topic whose replication
        factor would be below its min.insync.replicas), OfflineTarget (replicas placed on a
        broker that is offline). Raises the first kind found, listing every reason."""
        _raise_first(unsafe_reasons(self, allow_delete=allow_delete, state=state))

    # -------------------------------------------------------------------- JSON

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "cluster": self.cluster}
        if self.findings:
            out["findings"] = [f.to_json() for f in self.findings]
        out |= {
            "clusterDir": self.cluster_dir,
            "stateFingerprint": self.state_fingerprint,
            "stateDigests": dict(sorted(self.state_digests.items())),
            "actions": [a.to_json() for a in self.actions],
            "warnings": [w.to_json() for w in self.warnings],
            "summary": self.summary(),
        }
        if self.transfer is not None:
            out["transfer"] = self.transfer.to_json()
        out |= fields_json(
            spread=self.spread,
            access_fingerprint=self.access_fingerprint,
            access_parts=self.access_parts,
            targets=self.targets,
            options=self.options,
            recorded_state=self.recorded_state,
        )
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise PlanError(f"not a kgitops plan (expected format {FORMAT!r})")
        digests = data.get("stateDigests", {})
        bad = [
            where
            for where, value in [
                ("stateFingerprint", data.get("stateFingerprint")),
                *((f"stateDigests.{k}", v) for k, v in (digests or {}).items()),
            ]
            if not (isinstance(value, str) and _DIGEST.fullmatch(value))
        ]
        if bad or not isinstance(digests, Mapping):
            # a hand-edited or truncated plan: not "the cluster changed"
            where = bad[0] if bad else "stateDigests"
            raise PlanError(f"malformed plan: {where} is not a sha256:<64 hex digits> digest")
        try:
            transfer = data.get("transfer")
            return cls(
                cluster=str(data["cluster"]),
                state_fingerprint=str(data["stateFingerprint"]),
                actions=tuple(action_from_json(a) for a in data.get("actions", [])),
                warnings=tuple(
                    PlanWarning(
                        topic=str(w.get("topic", "")),
                        code=str(w["code"]),
                        message=str(w.get("message", "")),
                        data=dict(w.get("data", {})),
                    )
                    for w in data.get("warnings", [])
                ),
                cluster_dir=data.get("clusterDir"),
                state_digests={str(k): str(v) for k, v in data.get("stateDigests", {}).items()},
                transfer=None if transfer is None else Transfer.from_json(transfer),
                extra={k: v for k, v in data.items() if k not in _KNOWN},
                findings=tuple(
                    Finding(str(f["code"]), str(f.get("message", "")), dict(f.get("data", {})))
                    for f in data.get("findings", [])
                ),
                **fields_from_json(data),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PlanError(f"malformed plan: missing or wrong field {exc}") from None


_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

_KNOWN = frozenset(
    {
        "format",
        "cluster",
        "clusterDir",
        "stateFingerprint",
        "stateDigests",
        "actions",
        "warnings",
        "summary",
        "transfer",
        "findings",
        *FIELDS,
    }
)


# ------------------------------------------------------------------ fingerprint


def access_stale_reasons(
    recorded: str | None, parts: tuple[str, ...] | None, state: ClusterState
) -> list[str]:
    """A plan that covers access recorded ``AccessState.digest(parts)``; say so if it
    changed."""
    if recorded is None:
        return []
    read = access_parts_of(parts)
    live = state.access.digest(read) if state.access is not None else None
    if live == recorded:
        return []
    return ["ACL bindings, SCRAM users or client quotas changed since the plan was made"]


# ---------------------------------------------------------------------- safety


def min_isr_order(
    rf_before: Iterable[int], rf_after: Iterable[int], old: int, new: int
) -> str | None:
    """When a topic's ``min.insync.replicas`` change must run relative to its moves so that
    no state in between is less safe than both ends: ``"before"``, ``"after"`` or None when
    neither order is (an unsafe plan).

    Safety is the number of broker failures acks=all producers survive, RF - min ISR, over
    the topic's partitions (``rf_before``/``rf_after``: each partition's RF before and after
    the moves). Raise the RF before raising min ISR; lower min ISR before lowering the RF.

    ==========================  =====  ============  ===========  ===  ======
    failures survived           start  config first  moves first  end  order
    ==========================  =====  ============  ===========  ===  ======
    RF 2 -> 3, min ISR 1 -> 2   1      0 (worse)     2            1    after
    RF 3 -> 2, min ISR 2 -> 1   1      2             0 (worse)    1    before
    ==========================  =====  ============  ===========  ===  ======
    """
    before, after = list(rf_before), list(rf_after)
    if not before or old == new:
        return "before"
    floor = min(min(before) - old, min(after) - new)
    if min(before) - new >= floor:
        return "before"
    if min(after) - old >= floor:
        return "after"
    return None


def unsafe_reasons(
    plan: Plan, *, allow_delete: bool, state: ClusterState | None = None
) -> list[tuple[type[UnsafePlan], str]]:
    """Every reason the plan is unsafe, with the UnsafePlan subclass each one raises."""
    out = [] if allow_delete else _deletion_reasons(plan)
    effective = (state or ClusterState(brokers=(), topics={})).min_insync_replicas
    version = state.version if state is not None else DEFAULT_VERSION
    live_config: dict[str, Mapping[str, str]] = {}
    if state is not None:
        live_config = {n: t.config for n, t in state.topics.items()}
    config_after: dict[str, dict[str, str]] = {n: dict(c) for n, c in live_config.items()}
    rf_after: dict[str, int] = {}
    if state is not None:
        rf_after = {n: t.replication_factor for n, t in state.topics.items()}
    for a in plan.actions:
        if isinstance(a, CreateTopic):
            config_after[a.topic] = dict(a.config)
            rf_after[a.topic] = a.replication_factor
        elif isinstance(a, AlterConfig):
            cfg = config_after.setdefault(a.topic, {})
            cfg.update(a.set)
            for k in a.delete:
                cfg.pop(k, None)
        elif isinstance(a, Reassign) and a.moves:
            rf_after[a.topic] = min(len(m.target) for m in a.moves.values())
    touched = {a.topic for a in plan.actions if not isinstance(a, DeleteTopic)}
    for topic in sorted(touched):
        if topic not in rf_after:
            continue
        rf = rf_after[topic]
        need = effective(config_after.get(topic, {}))
        if rf < need and not caps_min_isr(version):  # 3.7+: capped at RF, a warning
            out.append(
                (
                    UnsafeReplication,
                    f"{topic}: replication factor {rf} is below min.insync.replicas={need}; "
                    "producers with acks=all could never write",
                )
            )
    if state is not None:
        out.extend((UnsafeReplication, r) for r in _order_reasons(plan, state))
        offline = {b.id for b in state.brokers if not b.online}
        known = {b.id for b in state.brokers}
        for a in plan.actions:
            targets: set[int] = set()
            if isinstance(a, (CreateTopic, AddPartitions)):
                for replicas in a.assignment.values():
                    targets.update(replicas)
            elif isinstance(a, Reassign):
                for m in a.moves.values():
                    targets.update(m.adding)
            for b in sorted(targets & offline):
                out.append((OfflineTarget, f"{a.topic}: places replicas on offline broker {b}"))
            for b in sorted(targets - known):
                out.append((OfflineTarget, f"{a.topic}: places replicas on unknown broker {b}"))
    return out


def _order_reasons(plan: Plan, state: ClusterState) -> list[str]:
    """Each min.insync.replicas change whose place relative to the topic's moves leaves a
    state in between less safe than both ends (see ``min_isr_order``)."""
    out: list[str] = []
    moves = {a.topic: a.moves for a in plan.actions if isinstance(a, Reassign)}
    for a in plan.actions:
        if not isinstance(a, AlterConfig) or a.topic not in state.topics:
            continue
        if MIN_ISR not in a.set and MIN_ISR not in a.delete:
            continue
        live = state.topics[a.topic]
        config = dict(live.config)
        old = state.min_insync_replicas(config)
        config.update(a.set)
        for k in a.delete:
            config.pop(k, None)
        new = state.min_insync_replicas(config)
        moved = moves.get(a.topic, {})
        before = [len(p.replicas) for p in live.partitions.values()]
        after = [
            len(moved[pid].target) if pid in moved else len(p.replicas)
            for pid, p in live.partitions.items()
        ]
        order = min_isr_order(before, after, old, new)
        phase = "after" if a.after_reassign else "before"
        if order == phase:
            continue
        rf = min(before) if phase == "before" else min(after)
        when = "before its moves" if phase == "before" else "after its moves"
        out.append(
            f"{a.topic}: min.insync.replicas {old} -> {new} {when} leaves partitions with "
            f"{rf} replica(s) meanwhile, less safe than before and after the change"
            + (
                "; no order of config change and moves avoids it: change them in two plans"
                if order is None
                else ""
            )
        )
    return out


def _deletion_reasons(plan: Plan) -> list[tuple[type[UnsafePlan], str]]:
    out: list[tuple[type[UnsafePlan], str]] = []
    out += [
        (DeletionNotAllowed, f"{a.topic}: deletes the topic") for a in plan.of_kind(DeleteTopic)
    ]
    out += [(DeletionNotAllowed, f"{a.topic}: deletes the ACL") for a in plan.of_kind(DeleteAcl)]
    return out


_HEADLINES: Mapping[type[UnsafePlan], str] = {
    DeletionNotAllowed: "the plan deletes topics or ACLs; run apply with --allow-delete to "
    "allow it",
    UnsafeReplication: "the plan leaves topics with too few replicas",
    OfflineTarget: "the plan places replicas on brokers that are offline",
}


def _raise_first(reasons: list[tuple[type[UnsafePlan], str]]) -> None:
    """Raise the kind of the first reason, listing its reasons first, then every other."""
    if not reasons:
        return
    first = reasons[0][0]
    same = [r for cls, r in reasons if cls is first]
    others = [r for cls, r in reasons if cls is not first]
    raise first(_HEADLINES.get(first, "the plan is unsafe"), same + others)


def _ceil_duration(seconds: float) -> str:
    """A ``--timeout`` value covering ``seconds`` with a margin: whole hours (or minutes)."""
    if seconds >= 3600:
        return f"{int(seconds * 1.1 // 3600) + 1}h"
    return f"{int(seconds * 1.1 // 60) + 1}m"
