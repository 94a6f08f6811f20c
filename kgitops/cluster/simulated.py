"""A file-backed simulated Kafka cluster of many brokers, following the KRaft controller's rules.

For demos, what-if plans ("what if broker 3 dies?") and tests. It implements the same port as
the real adapter, so plan, apply, status, snapshot and import cannot tell the difference.

The file is the state JSON (``kgitops-state/v1``, docs/simulated-cluster.md) plus a
``simulation`` object with the simulated clock, the network rate and the bytes each catching-up
replica has copied; broker-level dynamic configs (the throttle rates) are the state's
``brokerConfigs``. It is created on first use from the cluster file's brokers and rewritten
atomically after every change, so separate ``kgitops`` runs see one cluster. A broker added to
cluster.yaml is registered on the next open (scaling out); one removed from it is unregistered
once it holds no replica (until then it stays, as Kafka keeps a dead broker's replicas
assigned).

Requests are validated as the KRaft controller validates them, item by item, with Kafka's
error codes (``ClusterRequestError.code``) and messages::

    TOPIC_ALREADY_EXISTS        Topic 'a' already exists.
    INVALID_REPLICA_ASSIGNMENT  The manual partition assignment includes broker 9, but no such
                                broker is registered.
    INVALID_PARTITIONS          The topic a currently has 6 partition(s); 3 would not be an
                                increase.
    UNKNOWN_TOPIC_OR_PARTITION  This server does not host this topic-partition.
    INVALID_CONFIG              Unknown topic config name: retention.mss
The checks and messages are in ``controller.py``, the topic requests in ``topics_sim.py``;
the partitions (ISR, leaders, elections, reassignment steps) are ``partition_sim.py``,
catch-up at the throttled rate and produce traffic ``replication.py``. The state in memory is
``state_sim.py``, its file (lock, read, write) ``statefile_sim.py``, time passing and brokers
stopping and returning ``clock_sim.py``; this module serves the port's operations on that
state, each under the file lock on the latest state from disk.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, TypeVar

from kgitops.access import ACCESS_APIS, Acl, QuotaEntity, ScramCredential
from kgitops.cluster import clock_sim as clock
from kgitops.cluster import port, topics_sim
from kgitops.cluster import replication as repl
from kgitops.cluster import statefile_sim as statefile
from kgitops.cluster.snapshot import read_state_file
from kgitops.cluster.state_sim import SimState
from kgitops.errors import ClusterError
from kgitops.groups import GroupsState
from kgitops.model import Broker, ClusterState, SimulatedSpec, TopicPartition
from kgitops.plan.owners import OwnerRecord, record_from_json, record_json
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion

#: ``leader.imbalance.check.interval.seconds``'s default.
LEADER_IMBALANCE_CHECK_SECONDS = 300.0

P = ParamSpec("P")
R = TypeVar("R")


def _operation(
    method: Callable[Concatenate[SimulatedCluster, P], R],
) -> Callable[Concatenate[SimulatedCluster, P], R]:
    """Run a public method under the file lock, on the latest state from disk."""

    @functools.wraps(method)
    def wrapper(self: SimulatedCluster, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._locked:
            return method(self, *args, **kwargs)
        with statefile.file_lock(self.path, self.root):
            self._locked = True
            try:
                self._sync()
                self.state.refresh()
                return method(self, *args, **kwargs)
            except BaseException:
                # interrupted half way (a signal, Ctrl-C): what is on disk is whole (atomic
                # rename), what is in memory may not be; read the file again next time
                self._stamp = None
                raise
            finally:
                self._locked = False

    return wrapper


def _write(
    method: Callable[Concatenate[SimulatedCluster, P], R],
) -> Callable[Concatenate[SimulatedCluster, P], R]:
    """An ``_operation`` that changes the state: the file is written once it returns."""

    @functools.wraps(method)
    def saving(self: SimulatedCluster, /, *args: P.args, **kwargs: P.kwargs) -> R:
        result = method(self, *args, **kwargs)
        self._save()
        return result

    return _operation(saving)


class SimulatedCluster:
    """The simulated cluster (see the module docstring). Use ``open``. ``state`` is what
    it holds (``state_sim.SimState``), as of this handle's last operation."""

    def __init__(
        self,
        path: str,
        data: Mapping[str, Any],
        text: str | None = None,
        *,
        leader_balance_seconds: float | None = LEADER_IMBALANCE_CHECK_SECONDS,
        eligible_leader_replicas: bool = True,
        kafka_version: KafkaVersion = DEFAULT_VERSION,
        root: str | None = None,
    ) -> None:
        self.path = path
        self.version = kafka_version
        #: bytes each topic's producer had refused (acks=all under min ISR, no leader) in
        #: this handle's advances: what ``simulate`` reports; not kept in the file
        self.refused: dict[str, float] = {}
        self.root = root
        self._stamp: tuple[int, int, int] | None = None
        self._locked = False
        self.leader_balance_seconds = (
            None if leader_balance_seconds is None else max(1.0, leader_balance_seconds)
        )
        self.elr = eligible_leader_replicas
        self.state = self._load(data, text)

    # ---------------------------------------------------------------- persistence

    @classmethod
    def from_spec(cls, spec: SimulatedSpec, *, root: str | None = None) -> SimulatedCluster:
        """The simulated cluster a cluster.yaml ``simulated`` block describes; ``root`` is
        the repository the cluster folder is in (see ``open``)."""
        return cls.open(
            spec.state_file,
            spec.brokers,
            leader_balance_seconds=spec.leader_imbalance_check_seconds
            if spec.auto_leader_rebalance
            else None,
            eligible_leader_replicas=spec.eligible_leader_replicas,
            kafka_version=spec.kafka_version,
            root=root,
        )

    @classmethod
    def open(
        cls,
        state_file: str,
        brokers: Sequence[Broker],
        *,
        leader_balance_seconds: float | None = LEADER_IMBALANCE_CHECK_SECONDS,
        eligible_leader_replicas: bool = True,
        kafka_version: KafkaVersion = DEFAULT_VERSION,
        root: str | None = None,
    ) -> SimulatedCluster:
        """The cluster kept in ``state_file``, created from ``brokers`` if it does not exist.
        ``leader_balance_seconds``: the controller's automatic preferred-leader election
        interval (None: ``auto.leader.rebalance.enable=false``); ``eligible_leader_replicas``:
        whether the controller keeps ELR (KIP-966, on by default for new Kafka 4.1+ clusters);
        ``kafka_version``: the Kafka whose rules apply (``versionrules.py``).
        ``root`` (the repository, ``spec.include.repository_root``): the file, its folder and
        its lock stay inside it, and are never written through a symlink."""
        settings: dict[str, Any] = {
            "leader_balance_seconds": leader_balance_seconds,
            "eligible_leader_replicas": eligible_leader_replicas,
            "kafka_version": kafka_version,
            "root": root,
        }
        with statefile.file_lock(state_file, root):
            if os.path.lexists(state_file):
                text, data = read_state_file(state_file)
                cluster = cls(state_file, data, text, **settings)
                cluster._stamp = statefile.stat(state_file)
                if cluster.state.register(brokers):
                    cluster._save()
                return cluster
            cluster = cls(state_file, statefile.new_cluster(state_file, brokers), **settings)
            cluster._save()
            return cluster

    def _load(self, data: Mapping[str, Any], text: str | None = None) -> SimState:
        return statefile.load(
            self.path,
            data,
            text,
            version=self.version,
            elr=self.elr,
            leader_balance_seconds=self.leader_balance_seconds,
        )

    def _sync(self) -> None:
        """Reload if another kgitops run changed the file since we read or wrote it."""
        stamp = statefile.stat(self.path)
        if stamp is not None and stamp != self._stamp:
            text, data = read_state_file(self.path)
            self.state = self._load(data, text)
            self._stamp = stamp

    def _save(self) -> None:
        clock.schedule_balance(self.state)
        statefile.write(self.path, self.state, self.root)
        self._stamp = statefile.stat(self.path)

    # ---------------------------------------------------------------- reading

    @_operation
    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        return self.state.view(topics)

    # ---------------------------------------------------------------- consumer groups

    @_operation
    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        return self.state.groups.describe(group_ids, self.state.counts())

    @_operation
    def list_offsets(
        self, partitions: Iterable[tuple[str, int]], spec: int
    ) -> Mapping[tuple[str, int], int]:
        counts = self.state.counts()
        return self.state.groups.offsets(
            (k for k in partitions if 0 <= k[1] < counts.get(k[0], 0)), spec
        )

    @_write
    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> port.PartitionResults:
        return self.state.groups.alter_offsets(group_id, offsets, self.state.counts())

    @_write
    def delete_groups(self, group_ids: Sequence[str]) -> port.Results:
        return self.state.groups.delete(group_ids)

    @_write
    def join_group(self, group_id: str, member_id: str, topics: Sequence[str]) -> None:
        """What-if: a consumer joins (range assignor); not part of the port."""
        self.state.groups.join(group_id, member_id, topics, self.state.counts())

    @_write
    def leave_group(self, group_id: str, member_id: str) -> None:
        self.state.groups.leave(group_id, member_id, self.state.counts())

    @_write
    def commit(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """What-if: the group's members commit these offsets (as consumers do)."""
        self.state.groups.commit_as_member(group_id, offsets)

    @_operation
    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        out: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = {}
        for name, (parts, _) in sorted(self.state.topics.items()):
            for pid, p in enumerate(parts):
                if p.reassigning:
                    out.setdefault(name, {})[pid] = (
                        tuple(p.replicas),
                        tuple(p.adding),
                        tuple(p.removing),
                    )
        return out

    @_operation
    def replica_progress(self) -> dict[TopicPartition, dict[int, tuple[float, int]]]:
        """For each out-of-sync replica: (bytes copied, partition size). What a real cluster
        shows only as LEO lag; ``kgitops status`` prints it when the adapter has it."""
        out: dict[TopicPartition, dict[int, tuple[float, int]]] = {}
        for name, (parts, _) in sorted(self.state.topics.items()):
            for pid, p in enumerate(parts):
                lag = {b: (p.copied.get(b, 0.0), p.size) for b in p.replicas if b not in p.isr}
                if lag:
                    out[TopicPartition(name, pid)] = lag
        return out

    @_operation
    def produce_now(self, topic: str) -> tuple[float, float]:
        """The bytes/s ``topic``'s producer gets written now, and the bytes/s refused."""
        producer = self.state.producers().get(topic)
        if producer is None:
            return 0.0, 0.0
        accepted, refused = repl.write_rates(self.state.topics[topic].parts, producer)
        return sum(accepted), refused

    @_operation
    def partition_write_rate(self, topic: str, partition: int) -> float:
        """The bytes/s the leader of ``topic``'s ``partition`` appends now."""
        producer = self.state.producers().get(topic)
        if producer is None:
            return 0.0
        return repl.write_rates(self.state.topics[topic].parts, producer)[0][partition]

    @_operation
    def write_rates(self) -> dict[str, float]:
        """Bytes/s written to each topic (``simulate produce``): what the plan's
        THROTTLE_BELOW_WRITE_RATE and ISR_PRESSURE use where known (Kafka's admin API has no
        such figure)."""
        return {t: r for t, r in sorted(self.state.produce.items()) if t in self.state.topics}

    @_operation
    def rates(self) -> dict[tuple[str, int, int], float]:
        """The bytes/s each catching-up replica copies at now: (topic, partition, broker)."""
        growth = {
            t: repl.write_rates(self.state.topics[t].parts, p)[0]
            for t, p in self.state.producers().items()
        }
        charges = repl.in_sync_charges(self.state.topics, self.state.online, growth)
        flows = repl.flows(
            self.state.topics,
            self.state.online,
            self.state.broker_configs,
            self.state.network,
            charges,
        )
        return {(f.key[0], f.key[1], f.broker): f.rate for f in flows}

    # ---------------------------------------------------------------- topic writes (topics_sim.py)

    @_write
    def create_topics(self, topics: Sequence[port.NewTopic]) -> port.Results:
        return topics_sim.create_topics(self.state, topics)

    @_write
    def create_partitions(self, additions: Sequence[port.NewPartitions]) -> port.Results:
        return topics_sim.create_partitions(self.state, additions)

    @_write
    def alter_topic_configs(self, changes: Mapping[str, port.ConfigChange]) -> port.Results:
        return topics_sim.alter_topic_configs(self.state, changes)

    @_write
    def alter_broker_configs(self, changes: Mapping[int, port.ConfigChange]) -> port.Results:
        return topics_sim.alter_broker_configs(self.state, changes)

    @_write
    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> port.PartitionResults:
        return topics_sim.alter_reassignments(self.state, targets)

    @_write
    def elect_preferred_leaders(
        self, partitions: Iterable[TopicPartition]
    ) -> port.PartitionResults:
        return topics_sim.elect_preferred_leaders(self.state, partitions)

    @_write
    def delete_topics(self, names: Sequence[str]) -> port.Results:
        return topics_sim.delete_topics(self.state, names)

    # ---------------------------------------------------------------- access

    def probe_access(self, apis: Collection[str]) -> None:
        """The simulated cluster serves every access API (its AccessStore keeps them all)."""
        unknown = sorted(set(apis) - ACCESS_APIS)
        if unknown:
            raise ValueError(f"not an access API: {', '.join(unknown)}")

    def ready_scram_versions(self) -> None:
        """The state file records each credential's passwordVersion: nothing to prepare."""

    @_operation
    def describe_acls(self) -> frozenset[Acl]:
        return frozenset(self.state.access.acls)

    @_write
    def create_acls(self, acls: Sequence[Acl]) -> port.Results:
        return self.state.access.create_acls(acls)

    @_write
    def delete_acls(self, acls: Sequence[Acl]) -> port.Results:
        return self.state.access.delete_acls(acls)

    @_operation
    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return self.state.access.state().quotas

    @_write
    def alter_client_quotas(self, changes: Mapping[QuotaEntity, port.QuotaChange]) -> port.Results:
        return self.state.access.alter_client_quotas(changes)

    @_operation
    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        # as Kafka's DescribeUserScramCredentials: mechanism and iterations, never the
        # salt or stored key (kept in the simulated cluster's own file only)
        return dict(self.state.access.state(reported=True).users)

    @_write
    def upsert_scram_users(self, upserts: Sequence[port.ScramUpsert]) -> port.Results:
        return self.state.access.upsert_scram_users(upserts)

    # ---------------------------------------------------------------- owner records

    @_operation
    def read_owners(self) -> Mapping[str, OwnerRecord]:
        """The state file's ``simulation.ownerRecords`` (the topic a real cluster keeps
        them in: kgitops/cluster/kafka/owners.py)."""
        return {
            k: replace(record_from_json(v), offset=statefile.record_offset(v))
            for k, v in sorted(self.state.owner_records.items())
        }

    @_write
    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        for owner, record in records.items():
            if record is None:
                self.state.owner_records.pop(owner, None)
            else:  # like a log: a later record has a higher offset than every one kept
                after = max(
                    (statefile.record_offset(v) for v in self.state.owner_records.values()),
                    default=-1,
                )
                self.state.owner_records[owner] = {**record_json(record), "offset": after + 1}

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def close(self) -> None:
        """Nothing to release: every change is already on disk."""

    # ---------------------------------------------------------------- what-if

    @_write
    def advance(self, seconds: float) -> None:
        """Let simulated time pass: replicas catch up, reassignments complete, and the
        controller's automatic preferred-leader election runs when it is due."""
        clock.advance(self.state, seconds, self.refused)

    @_write
    def stop_broker(self, broker_id: int, resume_after: float | None = None) -> None:
        """What-if: the broker stops, or pauses for ``resume_after`` seconds; the
        controller fences it after ``broker.session.timeout.ms`` (``clock_sim.stop_broker``)."""
        clock.stop_broker(self.state, broker_id, resume_after)

    @_write
    def fail_broker(self, broker_id: int) -> None:
        """What-if: the broker fails and is fenced at once (``clock_sim.fail_broker``)."""
        clock.fail_broker(self.state, broker_id)

    @_write
    def restore_broker(self, broker_id: int) -> None:
        """What-if: the broker returns (``clock_sim.restore_broker``)."""
        clock.restore_broker(self.state, broker_id)

    @_write
    def set_size(self, topic: str, size_bytes: int, partition: int | None = None) -> None:
        """Give a partition (or every partition of the topic) ``size_bytes`` of data: the
        simulation has no producers, and catch-up time follows from partition sizes. Replicas
        that had the whole log (in sync, or in sync when their broker failed) have it all
        still; a replica part way through catching up keeps the bytes it has."""
        if topic not in self.state.topics:
            raise ClusterError(f"no topic {topic!r} in the simulated cluster")
        parts = self.state.topics[topic].parts
        if partition is not None and not 0 <= partition < len(parts):
            raise ClusterError(f"topic {topic!r} has no partition {partition}")
        if size_bytes < 0:
            raise ClusterError("a partition size cannot be negative")
        for pid, part in enumerate(parts):
            if partition is None or pid == partition:
                for b, copied in part.copied.items():
                    if copied >= part.size:  # it had the whole log (a failed in-sync replica)
                        part.copied[b] = float(size_bytes)
                part.size = size_bytes

    @_write
    def set_produce_rate(
        self, topic: str, bytes_per_sec: float, acks: str = "all", keys: str = "none"
    ) -> None:
        """Write to ``topic`` at ``bytes_per_sec`` while simulated time passes; 0 stops.
        ``acks`` (all, 1, 0) and ``keys`` (none, uniform) say which partitions take the
        records (``replication.write_rates``): acks=all is refused where the ISR is below
        min ISR; keyless records go only to partitions that have a leader. A replica
        catches up only if it copies faster than its partition grows."""
        if topic not in self.state.topics:
            raise ClusterError(f"no topic {topic!r} in the simulated cluster")
        if bytes_per_sec < 0:
            raise ClusterError("a produce rate cannot be negative")
        if acks not in repl.ACKS:
            raise ClusterError(f"acks must be one of {', '.join(repl.ACKS)}, not {acks!r}")
        if keys not in repl.KEYS:
            raise ClusterError(f"keys must be one of {', '.join(repl.KEYS)}, not {keys!r}")
        if bytes_per_sec:
            self.state.produce[topic] = float(bytes_per_sec)
            self.state.modes[topic] = (acks, keys)
        else:
            self.state.produce.pop(topic, None)
            self.state.modes.pop(topic, None)
