"""An in-memory ClusterAdmin with Kafka's reassignment behaviour, for apply's own tests.

Small on purpose: partitions, configs, broker configs, and reassignments that copy
``speed`` bytes per second per adding replica while the adding brokers are online; ACLs,
quotas and SCRAM users are the simulated cluster's own store (access_sim.AccessStore). Faults
are injected by hooks: ``refuse`` (per-item errors), ``down`` (every call raises
ClusterUnreachable), ``on_sleep`` (called with the clock after each sleep), ``unserved``
(access APIs whose probe is refused, as a cluster that does not answer them).

tests/cluster/test_port_contract.py runs the same contract against this fake, the simulated
cluster and the kafka-python adapter: where they disagree, this fake is the one to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.cluster import controller as kraft
from kgitops.cluster.access_sim import AccessStore
from kgitops.cluster.port import (
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    QuotaChange,
    Results,
    ScramUpsert,
)
from kgitops.errors import (
    AccessUnsupported,
    ClusterError,
    ClusterRequestError,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionState,
    Reassignment,
    TopicPartition,
    TopicState,
)
from kgitops.plan.owners import OwnerRecord


@dataclass
class Flight:
    original: tuple[int, ...]
    target: tuple[int, ...]
    copied: int = 0


@dataclass
class FakeCluster:
    brokers: list[Broker]
    replicas: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[int, dict[str, str]] = field(default_factory=dict)
    sizes: dict[tuple[str, int], int] = field(default_factory=dict)
    flights: dict[tuple[str, int], Flight] = field(default_factory=dict)
    speed: int = 1_000_000
    clock: float = 0.0
    down: bool = False
    refuse: dict[str, ClusterError] = field(default_factory=dict)
    on_sleep: Callable[[FakeCluster], None] | None = None
    calls: list[tuple[str, object]] = field(default_factory=list)
    max_in_flight: int = 0
    leaders: dict[tuple[str, int], int] = field(default_factory=dict)
    access: AccessStore = field(default_factory=AccessStore)
    unserved: frozenset[str] = frozenset()  # access APIs this cluster does not serve
    owners: dict[str, OwnerRecord] = field(default_factory=dict)  # the owner records

    # ---------------------------------------------------------------- helpers

    def _check(self, name: str, payload: object) -> None:
        if self.down:
            raise ClusterUnreachable("cannot reach the cluster at 127.0.0.1:1 (refused)")
        self.calls.append((name, payload))

    def _refused(self, item: str) -> ClusterError | None:
        return self.refuse.get(item)

    def _unknown(self, topic: str, partition: int | None = None) -> ClusterError | None:
        """Kafka's answer for a topic (or partition) the cluster does not have."""
        parts = self.replicas.get(topic)
        if parts is None or (partition is not None and partition not in parts):
            item = topic if partition is None else f"{topic}-{partition}"
            return ClusterRequestError(
                f"{item}: {kraft.UNKNOWN}", "UNKNOWN_TOPIC_OR_PARTITION", item
            )
        return None

    def writes(self) -> list[str]:
        reads = {
            "describe",
            "list_reassignments",
            "sleep",
            "describe_acls",
            "describe_client_quotas",
            "describe_scram_users",
            "probe_access",
        }
        return [n for n, _ in self.calls if n not in reads]

    def fail_broker(self, broker_id: int) -> None:
        self.brokers = [Broker(b.id, b.rack, b.id != broker_id and b.online) for b in self.brokers]

    def online(self) -> set[int]:
        return {b.id for b in self.brokers if b.online}

    # ------------------------------------------------------------------ reads

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        self._check("describe", None)
        names = sorted(self.replicas) if topics is None else sorted(set(topics))
        out: dict[str, TopicState] = {}
        for name in names:
            if name not in self.replicas:
                continue
            parts = {}
            for p, r in self.replicas[name].items():
                f = self.flights.get((name, p))
                shown = (
                    r if f is None else f.target + tuple(b for b in f.original if b not in f.target)
                )
                live = tuple(b for b in shown if b in self.online())
                leader = self.leaders.get((name, p))
                parts[p] = PartitionState(
                    replicas=shown,
                    isr=live,
                    leader=leader if leader in live else (live[0] if live else None),
                    size_bytes=self.sizes.get((name, p), 0),
                )
            out[name] = TopicState(name, parts, dict(self.configs.get(name, {})))
        reass: dict[str, dict[int, Reassignment]] = {}
        for (t, p), f in self.flights.items():
            reass.setdefault(t, {})[p] = Reassignment(
                adding=tuple(b for b in f.target if b not in f.original),
                removing=tuple(b for b in f.original if b not in f.target),
                target=f.target,
            )
        return ClusterState(
            brokers=tuple(self.brokers),
            topics=out,
            reassignments=reass,
            broker_configs={b: dict(c) for b, c in self.broker_configs.items()},
        )

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        self._check("list_reassignments", None)
        out: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = {}
        for (t, p), f in self.flights.items():
            adding = tuple(b for b in f.target if b not in f.original)
            removing = tuple(b for b in f.original if b not in f.target)
            out.setdefault(t, {})[p] = (f.target + removing, adding, removing)
        return out

    # ----------------------------------------------------------------- writes

    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        self._check("create_topics", [t.name for t in topics])
        res: dict[str, ClusterError | None] = {}
        for t in topics:
            err = self._refused(t.name)
            if err is None and t.name in self.replicas:
                err = ClusterRequestError(
                    f"Topic '{t.name}' already exists.", "TOPIC_ALREADY_EXISTS"
                )
            if err is None:
                self.replicas[t.name] = dict(t.assignment)
                self.configs[t.name] = dict(t.config)
            res[t.name] = err
        return res

    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results:
        self._check("create_partitions", [a.topic for a in additions])
        res: dict[str, ClusterError | None] = {}
        for a in additions:
            err = self._refused(a.topic) or self._unknown(a.topic)
            if err is None:
                self.replicas[a.topic].update(a.assignment)
            res[a.topic] = err
        return res

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results:
        self._check(
            "alter_topic_configs",
            {
                t: (dict(c.set), c.delete, dict(c.append), dict(c.subtract))
                for t, c in changes.items()
            },
        )
        res: dict[str, ClusterError | None] = {}
        for t, c in changes.items():
            err = self._refused(t) or self._unknown(t)
            if err is None:
                cfg = self.configs.setdefault(t, {})
                cfg.update(c.set)
                cfg.update(kraft.appended(cfg, c.append))
                cfg.update(kraft.subtracted(cfg, c.subtract))
                for k in c.delete:
                    cfg.pop(k, None)
            res[t] = err
        return res

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        self._check(
            "alter_broker_configs", {b: (dict(c.set), c.delete) for b, c in changes.items()}
        )
        res: dict[str, ClusterError | None] = {}
        for b, c in changes.items():
            cfg = self.broker_configs.setdefault(b, {})
            cfg.update(c.set)
            for k in c.delete:
                cfg.pop(k, None)
            res[f"broker:{b}"] = None
        return res

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        self._check("alter_reassignments", dict(targets))
        res: dict[TopicPartition, ClusterError | None] = {}
        for (t, p), target in targets.items():
            key = TopicPartition(t, p)
            err = self._refused(str(key)) or self._unknown(t, p)
            if err is None and target is None:
                f = self.flights.pop((t, p), None)
                if f is None:
                    err = ClusterRequestError("no reassignment", "NO_REASSIGNMENT_IN_PROGRESS")
                else:
                    self.replicas[t][p] = f.original
            elif err is None and target is not None:
                self.flights[(t, p)] = Flight(self.replicas[t][p], tuple(target))
            res[key] = err
        self.max_in_flight = max(self.max_in_flight, len(self.flights))
        return res

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults:
        parts = [TopicPartition(*tp) for tp in partitions]
        self._check("elect_preferred_leaders", parts)
        res: dict[TopicPartition, ClusterError | None] = {}
        for t, p in parts:
            res[TopicPartition(t, p)] = err = self._unknown(t, p)
            if err is None:
                self.leaders[(t, p)] = self.replicas[t][p][0]
        return res

    def delete_topics(self, names: Sequence[str]) -> Results:
        self._check("delete_topics", list(names))
        res: dict[str, ClusterError | None] = {}
        for n in names:
            err = self._refused(n) or self._unknown(n)
            if err is None:
                self.replicas.pop(n, None)
                self.configs.pop(n, None)
            res[n] = err
        return res

    def probe_access(self, apis: Collection[str]) -> None:
        self._check("probe_access", sorted(apis))
        for api in sorted(apis):
            if api in self.unserved:
                raise AccessUnsupported(api, f"the cluster did not answer {api} (a probe)")

    def ready_scram_versions(self) -> None:
        self._check("ready_scram_versions", None)

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        self._check("read_owners", None)
        return dict(self.owners)

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        self._check("record_owners", dict(records))
        for owner, record in records.items():
            if record is None:
                self.owners.pop(owner, None)
            else:
                self.owners[owner] = record

    def describe_acls(self) -> frozenset[Acl]:
        self._check("describe_acls", None)
        return frozenset(self.access.acls)

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        self._check("create_acls", [a.key for a in acls])
        return self.access.create_acls(acls)

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        self._check("delete_acls", [a.key for a in acls])
        return self.access.delete_acls(acls)

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        self._check("describe_client_quotas", None)
        return self.access.state().quotas

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        self._check("alter_client_quotas", [e.key for e in changes])
        return self.access.alter_client_quotas(changes)

    # consumer groups: apply never reads or writes them; this fake has none to offer
    def describe_groups(self, group_ids: Iterable[str] | None = None) -> Any:
        raise UnsupportedOperation("DescribeGroups")

    def list_offsets(self, partitions: Iterable[tuple[str, int]], spec: int) -> Any:
        raise UnsupportedOperation("ListOffsets")

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> Any:
        raise UnsupportedOperation("OffsetCommit")

    def delete_groups(self, group_ids: Sequence[str]) -> Any:
        raise UnsupportedOperation("DeleteGroups")

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        self._check("describe_scram_users", None)
        return dict(self.access.users)

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        self._check("upsert_scram_users", [u.key for u in upserts])
        return self.access.upsert_scram_users(upserts)

    def sleep(self, seconds: float) -> None:
        self._check("sleep", seconds)
        self.clock += seconds
        for (t, p), f in list(self.flights.items()):
            adding = [b for b in f.target if b not in f.original]
            if any(b not in self.online() for b in adding):
                continue
            f.copied += int(self.speed * seconds)
            if f.copied >= self.sizes.get((t, p), 0):
                leader = self.leaders.get((t, p), f.original[0])
                self.leaders[(t, p)] = leader if leader in f.target else f.target[0]
                self.replicas[t][p] = f.target
                del self.flights[(t, p)]
        if self.on_sleep is not None:
            self.on_sleep(self)

    def close(self) -> None:
        pass
