"""The diff's shared parts: what it reads of the specs, a spec's effective placement and
configs, and ``Context``, one plan's work: its read-only ``Inputs``, its accumulating
``Outputs`` (actions, warnings, errors, lock entries), the running per-broker load and the
caches and queues the passes of ``kgitops.plan.diff`` share.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from kgitops.errors import Diagnostic
from kgitops.model import Broker, ClusterSpec, ClusterState, TopicSpec, TopicState, replica_lists
from kgitops.names import KAFKA_INTERNAL_TOPICS
from kgitops.placement.balance import Mode
from kgitops.placement.racks import RackRule
from kgitops.placement.startindex import Counts, Load, arranged_brokers
from kgitops.plan.actions import Action, AlterConfig
from kgitops.plan.goals import Pending
from kgitops.plan.value import PlanWarning
from kgitops.spec.lock import Lock, LockEntry
from kgitops.spec.topic_configs import normalize_config


class SpecsLike(Protocol):
    """What the diff reads of ``specs.Specs``."""

    @property
    def cluster(self) -> ClusterSpec | None: ...

    @property
    def topics(self) -> Sequence[TopicSpec]: ...


@lru_cache(maxsize=1 << 16)
def normal_config(name: str, value: str) -> str:
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


def desired_config(spec: TopicSpec) -> dict[str, str]:
    return {k: normal_config(k, v) for k, v in sorted(spec.config.items())}


def config_origins(spec: TopicSpec, configs: Iterable[str]) -> dict[str, str]:
    """Where cluster.yaml set each of ``configs`` (defaults, a profile, an override), for a
    reader of the plan: ``{"retention.ms": "profile standard at topics/prod/cluster.yaml:9:21"}``.
    A value the topic file sets itself has no entry (its line is the topic's)."""
    return {
        k: f"{spec.origins[f'config.{k}']} at {spec.mark_of(f'config.{k}')}"
        for k in configs
        if f"config.{k}" in spec.origins
    }


@dataclass(frozen=True, slots=True)
class Inputs:
    """What the plan is computed from; read only. ``mode`` is the balancer's (``placed``, or
    ``leaders`` for ``--leaders``, ``all`` for ``--rebalance``); ``eligible``: the online
    brokers not being drained, by id; ``online``: every online broker's id."""

    specs: SpecsLike
    cluster: ClusterSpec
    state: ClusterState
    lock: Lock | None
    eligible: tuple[Broker, ...]
    online: frozenset[int]
    mode: Mode
    allow_retention_drop: bool


@dataclass(slots=True)
class Outputs:
    """What the diff makes: the actions and warnings of the plan, the errors that stop it,
    and the lock entries it would write."""

    actions: list[Action] = field(default_factory=list)
    warnings: list[PlanWarning] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    entries: dict[str, LockEntry] = field(default_factory=dict)


@dataclass
class Context:
    """One plan's work: its inputs, its outputs, the running load and the caches and queues
    the passes share (``kgitops.plan.diff`` runs the passes in order)."""

    inputs: Inputs
    out: Outputs = field(default_factory=Outputs)
    #: rack_aware -> replica list -> whether it breaks the rule (``breaks_rule``), remembered
    verdicts: tuple[dict[tuple[int, ...], bool], dict[tuple[int, ...], bool]] = field(
        default_factory=lambda: ({}, {})
    )
    #: replica list -> whether it keeps the rack rule of the state's brokers and the drain
    #: (``rebalance``'s ``rack_fine``), remembered across topics
    rack_fine: dict[tuple[int, ...], bool] = field(default_factory=dict)
    #: (rack_aware, rf) -> the replica lists found to need no move (``diff_topic._needs_moves``)
    fine: dict[tuple[bool, int], set[tuple[int, ...]]] = field(default_factory=dict)
    _load: Load | None = None
    _rack_rule: RackRule | None = None
    _arranged: dict[bool, list[int]] = field(default_factory=dict)
    #: (start index, partitions, replication factor, rack-aware) -> the per-broker counts
    #: of the assignment ``assign_replicas`` makes of them on the eligible brokers
    counts: dict[tuple[int, int, int, bool], Counts] = field(default_factory=dict)
    #: the last spec ``desired`` was asked about, and its answer (the diff asks twice in a row)
    _desired: tuple[TopicSpec | None, dict[str, str]] = (None, {})
    #: topics whose moves wait for the balancer (``settle_pending``): spec, live topic,
    #: current replicas (with the added partitions), its config change, what the balancer reads
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
            found = self._arranged[rack_aware] = arranged_brokers(self.inputs.eligible, rack_aware)
        return found

    def desired(self, spec: TopicSpec) -> dict[str, str]:
        """``desired_config(spec)``, made once for the update and the warnings of one spec
        (not to be changed: the next call for the same spec returns the same dict)."""
        last, config = self._desired
        if last is not spec:
            config = desired_config(spec)
            self._desired = (spec, config)
        return config

    def breaks_rule(self, replicas: tuple[int, ...], rack_aware: bool) -> bool:
        """A replica on a drained broker, or (rack-aware) a broken rack rule."""
        drained = self.inputs.cluster.decommission
        if drained and any(b in drained for b in replicas):
            return True
        if not rack_aware:
            return False
        if self._rack_rule is None:
            self._rack_rule = RackRule.of(self.inputs.state.brokers, drained)
        return self._rack_rule.broken(replicas)

    def error(self, spec: TopicSpec, path: str, message: str) -> None:
        self.out.diagnostics.append(Diagnostic(spec.mark_of(path), "error", message))

    def warn(self, topic: str, code: str, message: str, **data: object) -> None:
        self.out.warnings.append(PlanWarning(topic, code, message, data))

    def someone_elses(self, topic: str) -> bool:
        """A topic another folder may own: one this folder does not own (``owns:``), but
        neither Kafka's own (no folder may manage them) nor kgitops' records (this folder's
        ``own_topics``), which are nobody's, so every folder's. ``__`` or not: a ``__`` name
        outside ``owns:`` (another folder's, Connect's, Streams') is someone's."""
        cluster = self.inputs.cluster
        return (
            not cluster.owns.topic(topic)
            and topic not in KAFKA_INTERNAL_TOPICS
            and topic not in cluster.own_topics
        )

    @property
    def load(self) -> Load:
        """Per-broker replica and leader counts of the cluster as planned so far (every
        topic but the deleted ones, plus what is created and moved); computed on first use:
        a plan that creates and moves nothing never needs it."""
        if self._load is None:
            load = Load()
            deleted = {t.name for t in self.inputs.specs.topics if t.delete}
            load.add(
                replicas
                for name, topic in self.inputs.state.topics.items()
                if name not in deleted
                for replicas in replica_lists(topic.partitions)
            )
            self._load = load
        return self._load
