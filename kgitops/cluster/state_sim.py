"""The simulated cluster's state in memory: brokers, topics (``partition_sim.Topic``: mutable
partitions and configs), the simulated clock's pending events, the producers, and what a
describe reports of it.

``statefile_sim.py`` reads it from and writes it to the state file; ``clock_sim.py`` lets
time pass and brokers stop, fail and return; ``simulated.py`` serves the port's operations on
it under the file lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgitops.cluster import partition_sim as partition
from kgitops.cluster import replication as repl
from kgitops.cluster.access_sim import AccessStore
from kgitops.cluster.groups_sim import GroupStore
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionOffsets,
    PartitionState,
    Reassignment,
    TopicState,
)
from kgitops.names import INT64_MAX, MIN_ISR, STATE_BROKER_CONFIGS, UNCLEAN
from kgitops.plan import isrlag
from kgitops.versionrules import KafkaVersion

#: Kafka's defaults for the broker-level configs topics inherit (a state file's
#: ``brokerDefaults`` overrides them, as server.properties would).
KAFKA_DEFAULTS = {MIN_ISR: "1", UNCLEAN: "false"}

#: The fastest network or produce rate a state file may hold, bytes/s (Long.MAX_VALUE).
MAX_RATE = float(INT64_MAX)

#: The latest time the simulated clock can show, in seconds: Kafka's Long.MAX_VALUE
#: milliseconds (about 292 million years). Floats still count whole seconds there, so no step
#: of the clock is lost to rounding (at 1e300, ``clock + 3600 == clock``).
MAX_CLOCK = INT64_MAX / 1000


@dataclass
class SimState:
    """Everything the state file holds, as the simulation changes it, plus the settings of
    the handle that read it (``version``, ``elr``, ``leader_balance_seconds``: from
    cluster.yaml, not from the file)."""

    cluster_id: str | None
    brokers: dict[int, Broker]
    topics: dict[str, partition.Topic]
    broker_configs: dict[int, dict[str, str]]
    broker_defaults: dict[str, str]
    access: AccessStore  # ACLs, quotas, SCRAM: access_sim.py
    groups: GroupStore  # consumer groups and log offsets: groups_sim.py
    version: KafkaVersion
    #: whether the controller keeps eligible leader replicas (KIP-966)
    elr: bool
    #: the automatic preferred-leader election interval (None: disabled)
    leader_balance_seconds: float | None
    clock: float = 0.0
    network: float = repl.NETWORK_BYTES_PER_SEC
    #: bytes/s written to each topic, and its producer's (acks, keys)
    produce: dict[str, float] = field(default_factory=dict)
    modes: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: stopped brokers: (when the controller fences it, when it resumes), None: never
    stopped: dict[int, tuple[float | None, float | None]] = field(default_factory=dict)
    #: brokers whose in-sync followers fall behind, since when
    behind: dict[int, float] = field(default_factory=dict)
    #: as written (kgitops/plan/owners.py): one that is not kgitops' is kept, and read as a
    #: record with a problem, as Kafka's topic keeps any record
    owner_records: dict[str, Any] = field(default_factory=dict)
    #: when the next automatic preferred-leader election is due
    balance_at: float | None = None

    @property
    def online(self) -> frozenset[int]:
        return frozenset(b.id for b in self.brokers.values() if b.online)

    @property
    def serving(self) -> frozenset[int]:
        """The online brokers that work: not stopped (``stop_broker``) awaiting fencing."""
        return self.online - set(self.stopped)

    def _timeout(self, name: str, default_ms: int) -> float:
        """A broker-level timeout in seconds: the state file's ``brokerDefaults``, else
        Kafka's default."""
        try:
            return max(0.0, int(self.broker_defaults.get(name, str(default_ms))) / 1000)
        except ValueError:
            return default_ms / 1000

    @property
    def session_timeout(self) -> float:
        """``broker.session.timeout.ms`` (Kafka's default 9 s): how long the controller
        waits for a silent broker's heartbeat before it fences it."""
        return self._timeout("broker.session.timeout.ms", 9000)

    @property
    def lag_time_max(self) -> float:
        """``replica.lag.time.max.ms`` (Kafka's default 30 s): how long a follower may stay
        behind the leader's log end before the leader drops it from the ISR."""
        return isrlag.lag_time_max(self.broker_defaults)

    def unclean_allowed(self, config: Mapping[str, str]) -> bool:
        """``uncleanLeaderElectionEnabledForTopic``: the topic's value, else the broker
        default (Kafka's: false)."""
        value = config.get(UNCLEAN, self.broker_defaults.get(UNCLEAN, "false"))
        return value.strip().lower() == "true"

    def counts(self) -> dict[str, int]:
        """Each topic's partition count."""
        return {name: len(t.parts) for name, t in self.topics.items()}

    def producers(self) -> dict[str, repl.Producer]:
        """Each written topic's producer (``simulate produce``)."""
        return {
            t: repl.Producer(r, *self.modes.get(t, ("all", "none")))
            for t, r in self.produce.items()
            if t in self.topics
        }

    def refresh(self) -> None:
        """Give every partition what its controller rules need: the topic's effective
        min.insync.replicas and whether ELR is on."""
        view = ClusterState(
            brokers=(),
            topics={},
            broker_configs=self.broker_configs,
            broker_defaults={**KAFKA_DEFAULTS, **self.broker_defaults},
        )
        for parts, config in self.topics.values():
            min_isr = view.min_insync_replicas(config)
            for part in parts:
                part.min_isr_config = min_isr
                part.version = self.version
                part.elr_enabled = self.elr
                if not self.elr:
                    part.elr = []

    def register(self, brokers: Sequence[Broker]) -> bool:
        """Register brokers new in cluster.yaml, update racks, drop empty removed ones."""
        changed = False
        wanted = {b.id: b for b in brokers}
        for b in brokers:
            have = self.brokers.get(b.id)
            if have is None:
                self.brokers[b.id] = Broker(b.id, b.rack, True)
                changed = True
            elif have.rack != b.rack:
                self.brokers[b.id] = Broker(b.id, b.rack, have.online)
                changed = True
        if wanted:
            used = {r for parts, _ in self.topics.values() for p in parts for r in p.replicas}
            for bid in list(self.brokers):
                if bid not in wanted and bid not in used:
                    del self.brokers[bid]
                    self.broker_configs.pop(bid, None)
                    changed = True
        return changed

    def sync_logs(self) -> None:
        """Give the groups' log offsets each partition's high watermark (what ListOffsets
        LATEST answers consumers), and count leader changes into the epochs."""
        logs = self.groups.logs
        for key, (start, end) in list(logs.items()):
            topic = self.topics.get(key[0])
            parts = topic.parts if topic is not None else []
            if 0 <= key[1] < len(parts) and int(parts[key[1]].hw) != end:
                logs[key] = (start, int(parts[key[1]].hw))
        for name, (parts, _) in self.topics.items():
            for pid, part in enumerate(parts):
                if part.leader != part.epoch_leader:
                    part.bump_epoch()
                if part.hw and (name, pid) not in logs:
                    logs[(name, pid)] = (0, int(part.hw))

    def take_losses(self) -> list[tuple[str, int, partition.Loss]]:
        """What elections threw away since the last call: (topic, partition, loss)."""
        out = []
        for name, (parts, _) in sorted(self.topics.items()):
            for pid, part in enumerate(parts):
                out += [(name, pid, loss) for loss in part.losses]
                part.losses.clear()
        return out

    def view(self, names: Iterable[str] | None, *, reported: bool = True) -> ClusterState:
        """The state; ``reported`` (what describe answers) fills the broker-level defaults
        the file does not set with Kafka's own, as a real broker's DescribeConfigs does."""
        self.sync_logs()
        wanted = sorted(self.topics) if names is None else sorted(set(names) & set(self.topics))
        topics: dict[str, TopicState] = {}
        moves: dict[str, dict[int, Reassignment]] = {}
        offsets: dict[str, dict[int, PartitionOffsets]] = {}
        for name in wanted:
            parts, config = self.topics[name]
            if reported:  # what describe answers; the file keeps them in ``simulation``
                known = {
                    pid: PartitionOffsets(
                        int(p.hw), tuple((b, p.leo(b)) for b in p.replicas), p.epoch
                    )
                    for pid, p in enumerate(parts)
                    if p.end or p.epoch
                }
                if known:
                    offsets[name] = known
            topics[name] = TopicState(
                name=name,
                partitions={
                    pid: PartitionState(tuple(p.replicas), tuple(p.isr), p.leader, p.size)
                    for pid, p in enumerate(parts)
                },
                config=dict(config),
            )
            inflight = {
                pid: Reassignment(tuple(p.adding), tuple(p.removing), tuple(p.target))
                for pid, p in enumerate(parts)
                if p.reassigning
            }
            if inflight:
                moves[name] = inflight
        return ClusterState(
            brokers=tuple(sorted(self.brokers.values())),
            topics=topics,
            reassignments=moves,
            cluster_id=self.cluster_id,
            controller_id=min(self.online) if self.online else None,
            broker_configs=_kept(self.broker_configs, every=not reported),
            broker_defaults={**KAFKA_DEFAULTS, **self.broker_defaults}
            if reported
            else dict(self.broker_defaults),
            access=self.access.state(reported=reported),
            groups=self.groups.state(self.counts()),
            network_bytes_per_sec=self.network,
            kafka_version=self.version,
            offsets=offsets if reported else None,
        )


def _kept(configs: Mapping[int, Mapping[str, str]], *, every: bool) -> dict[int, dict[str, str]]:
    """Per broker, its dynamic configs: ``every`` one (the simulated cluster's own file), or
    as describe reports them to a plan or snapshot, only ``STATE_BROKER_CONFIGS`` (as the
    Kafka adapter keeps them)."""
    out = {
        b: {k: v for k, v in c.items() if every or k in STATE_BROKER_CONFIGS}
        for b, c in configs.items()
    }
    return {b: c for b, c in out.items() if c}
