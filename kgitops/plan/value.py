"""The plan: a sorted, frozen, versioned value. Apply runs exactly what it says.

Action kinds form a closed, ordered set; the order is the order apply runs them in::

    +  create_topic      one CreateTopics request for all
    ~  alter_config      one IncrementalAlterConfigs
    ~  add_partitions    one CreatePartitions
    ~  reassign          throttled, at most maxConcurrentMoves partitions at a time
    ~  elect_leaders     preferred-leader election where leaders drifted
    -  delete_topic      only with --allow-delete

The JSON form (``to_json`` / ``from_json``) is the contract of PRODUCT.md; renderers read it,
so text, markdown and JSON can never disagree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kgitops.errors import (
    DeletionNotAllowed,
    OfflineTarget,
    PlanError,
    UnsafePlan,
    UnsafeReplication,
)
from kgitops.model import ClusterState

# Topic configs that apply sets and removes around a reassignment: never drift, never state.
THROTTLE_CONFIGS = frozenset(
    {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
)

FORMAT = "kgitops-plan/v1"

KIND_ORDER: tuple[str, ...] = (
    "create_topic",
    "alter_config",
    "add_partitions",
    "reassign",
    "elect_leaders",
    "delete_topic",
)
SYMBOLS: Mapping[str, str] = {
    "create_topic": "+",
    "alter_config": "~",
    "add_partitions": "~",
    "reassign": "~",
    "elect_leaders": "~",
    "delete_topic": "-",
}


_KEYS = [str(i) for i in range(10_000)]


def _key(p: int) -> str:
    return _KEYS[p] if 0 <= p < 10_000 else str(p)


def _assignment_json(assignment: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
    return {_key(p): list(r) for p, r in sorted(assignment.items())}


def _assignment_from(data: Mapping[str, Any]) -> dict[int, tuple[int, ...]]:
    return {int(p): tuple(int(b) for b in r) for p, r in data.items()}


@dataclass(frozen=True)
class Action:
    """Base of all actions. ``kind`` is the JSON ``type``; ``topic`` sorts within a kind."""

    kind: ClassVar[str] = ""
    topic: str

    @property
    def sort_key(self) -> tuple[int, str]:
        return (KIND_ORDER.index(self.kind), self.topic)

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.kind]

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class CreateTopic(Action):
    kind: ClassVar[str] = "create_topic"
    partitions: int = 0
    replication_factor: int = 0
    start_index: int | None = None
    assignment: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, str] = field(default_factory=dict)
    placement: str = "rack-unaware"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "topic": self.topic,
            "partitions": self.partitions,
            "replicationFactor": self.replication_factor,
            "startIndex": self.start_index,
            "placement": self.placement,
            "assignment": _assignment_json(self.assignment),
            "config": dict(sorted(self.config.items())),
        }


@dataclass(frozen=True)
class AlterConfig(Action):
    kind: ClassVar[str] = "alter_config"
    set: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    previous: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "topic": self.topic,
            "set": dict(sorted(self.set.items())),
            "delete": sorted(self.delete),
            "previous": dict(sorted(self.previous.items())),
        }


@dataclass(frozen=True)
class AddPartitions(Action):
    kind: ClassVar[str] = "add_partitions"
    from_count: int = 0
    to_count: int = 0
    start_index: int | None = None
    assignment: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "topic": self.topic,
            "from": self.from_count,
            "to": self.to_count,
            "startIndex": self.start_index,
            "assignment": _assignment_json(self.assignment),
        }


@dataclass(frozen=True)
class Move:
    """One partition's replica change and why it is needed."""

    source: tuple[int, ...]
    target: tuple[int, ...]
    reason: str = ""
    size_bytes: int = 0

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.target if b not in self.source)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(b for b in self.source if b not in self.target)


@dataclass(frozen=True)
class Reassign(Action):
    kind: ClassVar[str] = "reassign"
    moves: Mapping[int, Move] = field(default_factory=dict)
    bytes_to_move: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "topic": self.topic,
            "moves": {
                str(p): {
                    "from": list(m.source),
                    "to": list(m.target),
                    "reason": m.reason,
                    "sizeBytes": m.size_bytes,
                }
                for p, m in sorted(self.moves.items())
            },
            "bytesToMove": self.bytes_to_move,
        }


@dataclass(frozen=True)
class ElectLeaders(Action):
    kind: ClassVar[str] = "elect_leaders"
    partitions: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "topic": self.topic, "partitions": list(self.partitions)}


@dataclass(frozen=True)
class DeleteTopic(Action):
    kind: ClassVar[str] = "delete_topic"
    partitions: int = 0
    size_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "topic": self.topic,
            "partitions": self.partitions,
            "sizeBytes": self.size_bytes,
        }


def action_from_json(data: Mapping[str, Any]) -> Action:
    """The inverse of ``Action.to_json``; PlanError for an unknown or malformed action."""
    try:
        kind = data["type"]
        topic = str(data["topic"])
        if kind == "create_topic":
            return CreateTopic(
                topic=topic,
                partitions=int(data["partitions"]),
                replication_factor=int(data["replicationFactor"]),
                start_index=data.get("startIndex"),
                assignment=_assignment_from(data["assignment"]),
                config={str(k): str(v) for k, v in data.get("config", {}).items()},
                placement=str(data.get("placement", "rack-unaware")),
            )
        if kind == "alter_config":
            return AlterConfig(
                topic=topic,
                set={str(k): str(v) for k, v in data.get("set", {}).items()},
                delete=tuple(str(k) for k in data.get("delete", [])),
                previous={str(k): str(v) for k, v in data.get("previous", {}).items()},
            )
        if kind == "add_partitions":
            return AddPartitions(
                topic=topic,
                from_count=int(data["from"]),
                to_count=int(data["to"]),
                start_index=data.get("startIndex"),
                assignment=_assignment_from(data["assignment"]),
            )
        if kind == "reassign":
            moves = {
                int(p): Move(
                    source=tuple(int(b) for b in m["from"]),
                    target=tuple(int(b) for b in m["to"]),
                    reason=str(m.get("reason", "")),
                    size_bytes=int(m.get("sizeBytes") or 0),
                )
                for p, m in data["moves"].items()
            }
            return Reassign(
                topic=topic, moves=moves, bytes_to_move=int(data.get("bytesToMove") or 0)
            )
        if kind == "elect_leaders":
            return ElectLeaders(
                topic=topic, partitions=tuple(int(p) for p in data.get("partitions", []))
            )
        if kind == "delete_topic":
            return DeleteTopic(
                topic=topic,
                partitions=int(data.get("partitions") or 0),
                size_bytes=data.get("sizeBytes"),
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanError(f"malformed {data.get('type', 'action')!s} action in plan: {exc}") from None
    raise PlanError(f"unknown action type in plan: {kind!r}")


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
class Plan:
    """What apply will do. ``actions`` are sorted by (kind order, topic) on construction.

    ``cluster_dir`` says where cluster.yaml lives so ``apply --plan`` can reach the cluster;
    ``state_digests`` (topic -> digest) lets a stale plan say which topics changed;
    ``extra`` carries more JSON fields (e.g. per-broker transfer figures) untouched.
    """

    cluster: str
    state_fingerprint: str
    actions: tuple[Action, ...] = ()
    warnings: tuple[PlanWarning, ...] = ()
    cluster_dir: str | None = None
    state_digests: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.actions, key=lambda a: a.sort_key))
        object.__setattr__(self, "actions", ordered)
        warn = tuple(sorted(self.warnings, key=lambda w: (w.topic, w.code, w.message)))
        object.__setattr__(self, "warnings", warn)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions)

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(KIND_ORDER, 0)
        for a in self.actions:
            counts[a.kind] += 1
        return counts

    def of_kind(self, kind: str) -> list[Action]:
        return [a for a in self.actions if a.kind == kind]

    def raise_if_unsafe(self, *, allow_delete: bool, state: ClusterState | None = None) -> None:
        """The safety gates apply runs before touching anything: DeletionNotAllowed (a
        delete_topic without --allow-delete), UnsafeReplication (a topic whose replication
        factor would be below its min.insync.replicas), OfflineTarget (replicas placed on a
        broker that is offline). Raises the first kind found, listing every reason."""
        _raise_if_unsafe(self, allow_delete=allow_delete, state=state)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "cluster": self.cluster,
            "clusterDir": self.cluster_dir,
            "stateFingerprint": self.state_fingerprint,
            "stateDigests": dict(sorted(self.state_digests.items())),
            "actions": [a.to_json() for a in self.actions],
            "warnings": [w.to_json() for w in self.warnings],
            "summary": self.summary(),
        }
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise PlanError(f"not a kgitops plan (expected format {FORMAT!r})")
        known = {
            "format",
            "cluster",
            "clusterDir",
            "stateFingerprint",
            "stateDigests",
            "actions",
            "warnings",
            "summary",
        }
        try:
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
                extra={k: v for k, v in data.items() if k not in known},
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise PlanError(f"malformed plan: missing or wrong field {exc}") from None


# ------------------------------------------------------------------ fingerprint


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class _Reprs(dict[tuple[int, ...], str]):
    """repr of each distinct replica list, made once (lists repeat across partitions)."""

    def __missing__(self, key: tuple[int, ...]) -> str:
        value = self[key] = repr(key)
        return value


def topic_digest(state: ClusterState, topic: str, reprs: _Reprs | None = None) -> str:
    """The digest of one topic as a plan depends on it: replicas per partition and the configs
    set on the topic (throttles excepted), or ``absent``. Not ISR, leaders or sizes, which
    change all the time without making a plan wrong. The text hashed is the ``repr`` of
    tuples of ints and strings, which is stable across machines and Python versions."""
    t = state.topics.get(topic)
    if t is None:
        return _digest("absent")
    cache = _Reprs() if reprs is None else reprs
    parts = t.partitions
    ids = sorted(parts)
    text = ";".join(map(cache.__getitem__, [parts[p].replicas for p in ids]))
    config = sorted((k, v) for k, v in t.config.items() if k not in THROTTLE_CONFIGS)
    return _digest(f"{ids!r}|{text}|{config!r}")


def state_fingerprint(state: ClusterState, topics: Iterable[str]) -> tuple[str, dict[str, str]]:
    """``("sha256:...", {topic: digest})`` over exactly the live state a plan depends on:
    broker ids, racks and liveness, and for each named topic (present or absent) its replicas
    per partition and topic configs. Apply recomputes it and refuses a plan made against a
    cluster that has changed since; the per-topic digests say which topics changed."""
    reprs = _Reprs()
    digests = {name: topic_digest(state, name, reprs) for name in sorted(set(topics))}
    brokers = [[b.id, b.rack, b.online] for b in sorted(state.brokers, key=lambda b: b.id)]
    hasher = hashlib.sha256()
    hasher.update(json.dumps(brokers).encode())
    for name, digest in digests.items():
        hasher.update(f"\n{name}={digest}".encode())
    return "sha256:" + hasher.hexdigest(), digests


def stale_topics(plan: Plan, state: ClusterState) -> list[str]:
    """The topics whose live digest differs from the one the plan recorded."""
    return [t for t, d in sorted(plan.state_digests.items()) if topic_digest(state, t) != d]


# ---------------------------------------------------------------------- safety


def _min_isr(config: Mapping[str, str], default: int) -> int:
    try:
        return int(config.get("min.insync.replicas", default))
    except ValueError:
        return default


def _broker_min_isr(state: ClusterState | None) -> int:
    if state is None:
        return 1
    values = []
    for cfg in state.broker_configs.values():
        try:
            values.append(int(cfg["min.insync.replicas"]))
        except (KeyError, ValueError):
            continue
    return max(values, default=1)


def unsafe_reasons(
    plan: Plan, *, allow_delete: bool, state: ClusterState | None = None
) -> list[tuple[type[UnsafePlan], str]]:
    """Every reason the plan is unsafe, with the UnsafePlan subclass each one raises."""
    out: list[tuple[type[UnsafePlan], str]] = []
    if not allow_delete:
        for a in plan.of_kind("delete_topic"):
            out.append((DeletionNotAllowed, f"{a.topic}: deletes the topic"))
    broker_default = _broker_min_isr(state)
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
        need = _min_isr(config_after.get(topic, {}), broker_default)
        if rf < need:
            out.append(
                (
                    UnsafeReplication,
                    f"{topic}: replication factor {rf} is below min.insync.replicas={need}; "
                    "producers with acks=all could never write",
                )
            )
    if state is not None:
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


def _raise_if_unsafe(plan: Plan, *, allow_delete: bool, state: ClusterState | None) -> None:
    reasons = unsafe_reasons(plan, allow_delete=allow_delete, state=state)
    if not reasons:
        return
    first = reasons[0][0]
    same = [r for cls, r in reasons if cls is first]
    others = [r for cls, r in reasons if cls is not first]
    headline = {
        DeletionNotAllowed: "the plan deletes topics; run apply with --allow-delete to allow it",
        UnsafeReplication: "the plan leaves topics with too few replicas",
        OfflineTarget: "the plan places replicas on brokers that are offline",
    }.get(first, "the plan is unsafe")
    raise first(headline, same + others)
