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

The checks and messages are in ``controller.py``; replication (ISR, leaders, reassignment
catch-up at the throttled rate, produce traffic) is in ``replication.py``; this module holds
the state, its file, and the port's operations.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, TypeVar

from kgitops.access import ACCESS_APIS, Acl, QuotaEntity, ScramCredential
from kgitops.cluster import controller as kraft
from kgitops.cluster import replication as repl
from kgitops.cluster.access_sim import AccessStore
from kgitops.cluster.groups_sim import GroupStore
from kgitops.cluster.port import (
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    QuotaChange,
    Results,
    ScramUpsert,
)
from kgitops.cluster.snapshot import (
    read_state_file,
    state_from_json,
    write_state,
)
from kgitops.errors import ClusterError, ClusterRequestError, FileRefused, Mark, StateFileError
from kgitops.files import inside
from kgitops.groups import GroupsState
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionOffsets,
    PartitionState,
    Reassignment,
    SimulatedSpec,
    TopicPartition,
    TopicState,
)
from kgitops.names import (
    INT64_MAX,
    KAFKA_METADATA_TOPIC,
    MIN_ISR,
    STATE_BROKER_CONFIGS,
    STATE_FORMAT,
    UNCLEAN,
)
from kgitops.plan import isrlag
from kgitops.plan.owners import OwnerRecord, record_from_json, record_json
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion

#: ``simulate produce --acks`` and ``--keys`` (``replication.write_rates``).
ACKS = ("all", "1", "0")
KEYS = ("none", "uniform")
#: Kafka's defaults for the broker-level configs topics inherit (a state file's
#: ``brokerDefaults`` overrides them, as server.properties would).
KAFKA_DEFAULTS = {MIN_ISR: "1", UNCLEAN: "false"}
#: ``leader.imbalance.check.interval.seconds``'s default.
LEADER_IMBALANCE_CHECK_SECONDS = 300.0

#: The fastest network or produce rate a state file may hold, bytes/s (Long.MAX_VALUE).
MAX_RATE = float(INT64_MAX)

#: The latest time the simulated clock can show, in seconds: Kafka's Long.MAX_VALUE
#: milliseconds (about 292 million years). Floats still count whole seconds there, so no step
#: of the clock is lost to rounding (at 1e300, ``clock + 3600 == clock``).
MAX_CLOCK = INT64_MAX / 1000

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def _file_lock(path: str, root: str | None = None) -> Iterator[None]:
    """An exclusive lock on ``path + ".lock"`` (POSIX flock), so that kgitops runs sharing
    one simulated cluster take turns: each operation reads, changes and writes it whole.

    ``root`` (the repository): the state file's folder is created only inside it, and the
    lock file is never opened through a symlink (a committed ``demo.json.lock -> /etc/x``)."""
    folder = os.path.dirname(os.path.abspath(path))
    if root is not None and not inside(os.path.realpath(root), os.path.realpath(folder)):
        raise FileRefused(Mark(path), "the state file would be outside the repository")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise ClusterError(f"{path}: cannot create its folder: {exc.strerror or exc}") from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: one kgitops run at a time
        yield
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path + ".lock", flags, 0o666)
    except OSError as exc:
        raise FileRefused(
            Mark(path + ".lock"),
            f"cannot open the simulated cluster's lock file ({exc.strerror or exc}); "
            "kgitops does not follow a symlink there",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _operation(
    method: Callable[Concatenate[SimulatedCluster, P], R],
) -> Callable[Concatenate[SimulatedCluster, P], R]:
    """Run a public method under the file lock, on the latest state from disk."""

    @functools.wraps(method)
    def wrapper(self: SimulatedCluster, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._locked:
            return method(self, *args, **kwargs)
        with _file_lock(self.path, self.root):
            self._locked = True
            try:
                self._sync()
                self._refresh()
                return method(self, *args, **kwargs)
            except BaseException:
                # interrupted half way (a signal, Ctrl-C): what is on disk is whole (atomic
                # rename), what is in memory may not be; read the file again next time
                self._stamp = None
                raise
            finally:
                self._locked = False

    return wrapper


class SimulatedCluster:
    """The simulated cluster (see the module docstring). Use ``open``."""

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
        self._load(data, text)

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
        with _file_lock(state_file, root):
            if os.path.lexists(state_file):
                text, data = read_state_file(state_file)
                cluster = cls(state_file, data, text, **settings)
                cluster._stamp = cls._stat(state_file)
                if cluster._register(brokers):
                    cluster._save()
                return cluster
            if not brokers:
                raise ClusterError(
                    f"{state_file}: a new simulated cluster needs at least one broker"
                )
            name = os.path.splitext(os.path.basename(state_file))[0]
            data = {
                "format": STATE_FORMAT,
                "clusterId": f"simulated-{name}",
                "brokers": [{"id": b.id, "rack": b.rack} for b in brokers],
                "topics": {},
            }
            cluster = cls(state_file, data, **settings)
            cluster._save()
            return cluster

    @staticmethod
    def _stat(path: str) -> tuple[int, int, int] | None:
        """What tells a rewritten file apart: every write is a new inode (atomic rename)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self, data: Mapping[str, Any], text: str | None = None) -> None:
        state = state_from_json(data, source=self.path, text=text)
        sim = data.get("simulation") or {}
        try:
            self.clock = float(sim.get("clock", 0.0))
            self.network = float(sim.get("networkBytesPerSec", repl.NETWORK_BYTES_PER_SEC))
            self.produce = {
                str(t): float(r) for t, r in (sim.get("produceBytesPerSec") or {}).items()
            }
            self.modes: dict[str, tuple[str, str]] = {}
            for t, mode in (sim.get("producers") or {}).items():
                acks, keys = str(mode.get("acks", "all")), str(mode.get("keys", "none"))
                if acks not in ACKS or keys not in KEYS:
                    raise ValueError(f"producers.{t}: acks {acks!r} or keys {keys!r} unknown")
                self.modes[str(t)] = (acks, keys)
            ends = {
                str(t): {int(p): float(o) for p, o in ps.items()}
                for t, ps in (sim.get("logEndOffsets") or {}).items()
            }
            epochs = {
                str(t): {int(p): int(e) for p, e in ps.items()}
                for t, ps in (sim.get("leaderEpochs") or {}).items()
            }
            progress = {
                str(t): {int(p): {int(b): float(v) for b, v in bs.items()} for p, bs in ps.items()}
                for t, ps in (sim.get("progress") or {}).items()
            }
            elr = {
                str(t): {int(p): [int(b) for b in bs] for p, bs in ps.items()}
                for t, ps in (sim.get("eligibleLeaderReplicas") or {}).items()
            }
            self.stopped: dict[int, tuple[float | None, float | None]] = {
                int(b): (
                    None if e.get("fenceAt") is None else float(e["fenceAt"]),
                    None if e.get("resumeAt") is None else float(e["resumeAt"]),
                )
                for b, e in (sim.get("stoppedBrokers") or {}).items()
            }
            self.behind: dict[int, float] = {
                int(b): float(t) for b, t in (sim.get("behindSince") or {}).items()
            }
            owners = sim.get("ownerRecords") or {}
            if not isinstance(owners, dict) or not all(isinstance(k, str) for k in owners):
                raise ValueError("ownerRecords is not an object of owner records")
            # as written (kgitops/plan/owners.py): one that is not kgitops' is kept, and read
            # as a record with a problem, as Kafka's topic keeps any record
            self.owner_records: dict[str, Any] = dict(owners)
            at = sim.get("leaderBalanceAt")
            self.balance_at: float | None = None if at is None else float(at)
            if not math.isfinite(self.clock) or not 0 <= self.clock <= MAX_CLOCK:
                raise ValueError(f"clock {self.clock:g} is not a time from 0 to {MAX_CLOCK:g} s")
            if self.balance_at is not None and not 0 <= self.balance_at < math.inf:
                raise ValueError(f"leaderBalanceAt {self.balance_at:g} is not a time")
            if not math.isfinite(self.network) or self.network <= 0:
                raise ValueError(f"networkBytesPerSec {self.network:g} is not a rate above 0")
            rates = {"networkBytesPerSec": self.network}
            rates.update({f"produceBytesPerSec.{t}": r for t, r in self.produce.items()})
            for name, rate in rates.items():
                if not math.isfinite(rate) or not 0 <= rate <= MAX_RATE:
                    raise ValueError(f"{name} {rate:g} is not a rate from 0 to {MAX_RATE:g} B/s")
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise StateFileError(self.path, [f"simulation: malformed ({exc})"]) from None
        self.cluster_id = state.cluster_id
        self.access = AccessStore(state.access)  # ACLs, quotas, SCRAM: access_sim.py
        self.groups = GroupStore(state.groups, sim.get("offsetTimes"))  # groups_sim.py
        self.brokers: dict[int, Broker] = {b.id: b for b in state.brokers}
        self.broker_configs: dict[int, dict[str, str]] = {
            b: dict(c) for b, c in state.broker_configs.items()
        }
        self.broker_defaults: dict[str, str] = dict(state.broker_defaults)
        online = self.online
        hws: dict[str, dict[int, int]] = {}
        for (name, pid), (_, hw) in self.groups.logs.items():
            hws.setdefault(name, {})[pid] = hw
        self.topics: dict[str, tuple[list[repl.Part], dict[str, str]]] = {}
        for name, t in state.topics.items():
            moves = state.reassignments.get(name, {})
            topic_hws, topic_ends, topic_epochs = hws.get(name), ends.get(name), epochs.get(name)
            parts: list[repl.Part] = []
            for pid in range(t.partition_count):
                ps = t.partitions[pid]
                move = moves.get(pid, Reassignment())
                isr = (
                    list(ps.isr) if ps.isr is not None else [b for b in ps.replicas if b in online]
                )
                part = repl.Part(
                    replicas=list(ps.replicas),
                    isr=isr,
                    leader=ps.leader,
                    size=ps.size_bytes or 0,
                    adding=list(move.adding),
                    removing=list(move.removing),
                    copied=dict(progress.get(name, {}).get(pid, {})),
                    elr=[b for b in elr.get(name, {}).get(pid, []) if b in ps.replicas],
                )
                # consumerGroups.logOffsets holds what consumers see (the HW, as a real
                # cluster's ListOffsets answers); the leader's LEO only where it is ahead
                if topic_hws:
                    part.hw = part.end = float(topic_hws.get(pid, 0))
                if topic_ends:
                    part.end = max(part.hw, topic_ends.get(pid, 0.0))
                if topic_epochs:
                    part.epoch = topic_epochs.get(pid, 0)
                stray = set(part.adding) | set(part.removing)
                if not stray <= set(part.replicas):
                    raise StateFileError(
                        self.path,
                        [
                            f"reassignments.{name}.{pid}: adding and removing must be "
                            f"replicas of the partition (replicas {part.replicas})"
                        ],
                    )
                parts.append(part)
            self.topics[name] = (parts, dict(t.config))
        self._refresh()
        for parts, _ in self.topics.values():
            for part in parts:
                part.elect(online)
                part.bump_epoch()

    def _refresh(self) -> None:
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

    def _register(self, brokers: Sequence[Broker]) -> bool:
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

    def _sync(self) -> None:
        """Reload if another kgitops run changed the file since we read or wrote it."""
        stamp = self._stat(self.path)
        if stamp is not None and stamp != self._stamp:
            text, data = read_state_file(self.path)
            self._load(data, text)
            self._stamp = stamp

    def _sync_logs(self) -> None:
        """Give the groups' log offsets each partition's high watermark (what ListOffsets
        LATEST answers consumers), and count leader changes into the epochs."""
        logs = self.groups.logs
        for key, (start, end) in list(logs.items()):
            parts = self.topics.get(key[0], ([], {}))[0]
            if 0 <= key[1] < len(parts) and int(parts[key[1]].hw) != end:
                logs[key] = (start, int(parts[key[1]].hw))
        for name, (parts, _) in self.topics.items():
            for pid, part in enumerate(parts):
                if part.leader != part.epoch_leader:
                    part.bump_epoch()
                if part.hw and (name, pid) not in logs:
                    logs[(name, pid)] = (0, int(part.hw))

    def take_losses(self) -> list[tuple[str, int, repl.Loss]]:
        """What elections threw away since the last call: (topic, partition, loss)."""
        out = []
        for name, (parts, _) in sorted(self.topics.items()):
            for pid, part in enumerate(parts):
                out += [(name, pid, loss) for loss in part.losses]
                part.losses.clear()
        return out

    def _save(self) -> None:
        self._schedule_balance()
        self._sync_logs()
        progress = {
            name: {
                str(pid): {str(b): v for b, v in sorted(part.copied.items())}
                for pid, part in enumerate(parts)
                if part.copied
            }
            for name, (parts, _) in sorted(self.topics.items())
        }
        extra = {
            "simulation": {
                "clock": self.clock,
                "networkBytesPerSec": self.network,
                "produceBytesPerSec": {
                    t: r for t, r in sorted(self.produce.items()) if t in self.topics
                },
                "producers": {
                    t: {"acks": acks, "keys": keys}
                    for t, (acks, keys) in sorted(self.modes.items())
                    if t in self.produce and t in self.topics and (acks, keys) != ("all", "none")
                },
                "logEndOffsets": {
                    name: {str(pid): p.end for pid, p in enumerate(parts) if p.end > p.hw}
                    for name, (parts, _) in sorted(self.topics.items())
                    if any(p.end > p.hw for p in parts)
                },
                "leaderEpochs": {
                    name: {str(pid): p.epoch for pid, p in enumerate(parts) if p.epoch}
                    for name, (parts, _) in sorted(self.topics.items())
                    if any(p.epoch for p in parts)
                },
                "progress": {t: p for t, p in progress.items() if p},
                "eligibleLeaderReplicas": {
                    name: {str(pid): list(p.elr) for pid, p in enumerate(parts) if p.elr}
                    for name, (parts, _) in sorted(self.topics.items())
                    if any(p.elr for p in parts)
                },
                "leaderBalanceAt": self.balance_at,
                "stoppedBrokers": {
                    str(b): {"fenceAt": fence, "resumeAt": resume}
                    for b, (fence, resume) in sorted(self.stopped.items())
                },
                "behindSince": {str(b): t for b, t in sorted(self.behind.items())},
                "offsetTimes": self.groups.times_json(),
                "ownerRecords": dict(sorted(self.owner_records.items())),
            }
        }
        write_state(self.path, self._state(None, reported=False), extra, root=self.root)
        self._stamp = self._stat(self.path)

    # ---------------------------------------------------------------- reading

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

    def _state(self, names: Iterable[str] | None, *, reported: bool = True) -> ClusterState:
        """The state; ``reported`` (what describe answers) fills the broker-level defaults
        the file does not set with Kafka's own, as a real broker's DescribeConfigs does."""
        self._sync_logs()
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
            groups=self.groups.state(self._counts()),
            network_bytes_per_sec=self.network,
            kafka_version=self.version,
            offsets=offsets if reported else None,
        )

    @_operation
    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        return self._state(topics)

    # ---------------------------------------------------------------- consumer groups

    def _counts(self) -> dict[str, int]:
        return {name: len(parts) for name, (parts, _) in self.topics.items()}

    @_operation
    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        return self.groups.describe(group_ids, self._counts())

    @_operation
    def list_offsets(
        self, partitions: Iterable[tuple[str, int]], spec: int
    ) -> Mapping[tuple[str, int], int]:
        counts = self._counts()
        return self.groups.offsets((k for k in partitions if 0 <= k[1] < counts.get(k[0], 0)), spec)

    @_operation
    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> PartitionResults:
        results = self.groups.alter_offsets(group_id, offsets, self._counts())
        self._save()
        return results

    @_operation
    def delete_groups(self, group_ids: Sequence[str]) -> Results:
        results = self.groups.delete(group_ids)
        self._save()
        return results

    @_operation
    def join_group(self, group_id: str, member_id: str, topics: Sequence[str]) -> None:
        """What-if: a consumer joins (range assignor); not part of the port."""
        self.groups.join(group_id, member_id, topics, self._counts())
        self._save()

    @_operation
    def leave_group(self, group_id: str, member_id: str) -> None:
        self.groups.leave(group_id, member_id, self._counts())
        self._save()

    @_operation
    def commit(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """What-if: the group's members commit these offsets (as consumers do)."""
        self.groups.commit_as_member(group_id, offsets)
        self._save()

    @_operation
    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        out: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = {}
        for name, (parts, _) in sorted(self.topics.items()):
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
        for name, (parts, _) in sorted(self.topics.items()):
            for pid, p in enumerate(parts):
                lag = {b: (p.copied.get(b, 0.0), p.size) for b in p.replicas if b not in p.isr}
                if lag:
                    out[TopicPartition(name, pid)] = lag
        return out

    def producers(self) -> dict[str, repl.Producer]:
        """Each written topic's producer (``simulate produce``)."""
        return {
            t: repl.Producer(r, *self.modes.get(t, ("all", "none")))
            for t, r in self.produce.items()
            if t in self.topics
        }

    @_operation
    def produce_now(self, topic: str) -> tuple[float, float]:
        """The bytes/s ``topic``'s producer gets written now, and the bytes/s refused."""
        producer = self.producers().get(topic)
        if producer is None:
            return 0.0, 0.0
        accepted, refused = repl.write_rates(self.topics[topic][0], producer)
        return sum(accepted), refused

    @_operation
    def partition_write_rate(self, topic: str, partition: int) -> float:
        """The bytes/s the leader of ``topic``'s ``partition`` appends now."""
        producer = self.producers().get(topic)
        if producer is None:
            return 0.0
        return repl.write_rates(self.topics[topic][0], producer)[0][partition]

    @_operation
    def write_rates(self) -> dict[str, float]:
        """Bytes/s written to each topic (``simulate produce``): what the plan's
        THROTTLE_BELOW_WRITE_RATE and ISR_PRESSURE use where known (Kafka's admin API has no
        such figure)."""
        return {t: r for t, r in sorted(self.produce.items()) if t in self.topics}

    @_operation
    def rates(self) -> dict[tuple[str, int, int], float]:
        """The bytes/s each catching-up replica copies at now: (topic, partition, broker)."""
        growth = {t: repl.write_rates(self.topics[t][0], p)[0] for t, p in self.producers().items()}
        charges = repl.in_sync_charges(self.topics, self.online, growth)
        flows = repl.flows(self.topics, self.online, self.broker_configs, self.network, charges)
        return {(f.key[0], f.key[1], f.broker): f.rate for f in flows}

    # ---------------------------------------------------------------- validation

    def _new_parts(
        self, assignment: Mapping[int, tuple[int, ...]], first: int, rf: int | None, item: str
    ) -> list[repl.Part] | ClusterRequestError:
        parts: list[repl.Part] = []
        online = self.online
        for pid in range(first, first + len(assignment)):
            if pid not in assignment:
                return kraft.error(
                    "INVALID_REPLICA_ASSIGNMENT",
                    "partitions should be a consecutive 0-based integer sequence"
                    if first == 0
                    else f"the new partitions should be {first}..{first + len(assignment) - 1}",
                    item,
                )
            replicas = list(assignment[pid])
            problem = kraft.assignment_error(replicas, self.brokers, rf)
            if problem:
                return kraft.error("INVALID_REPLICA_ASSIGNMENT", problem, item)
            rf = len(replicas)
            isr = [b for b in replicas if b in online]
            if not isr:
                return kraft.error(
                    "INVALID_REPLICA_ASSIGNMENT",
                    f"All brokers specified in the manual partition assignment for partition "
                    f"{pid} are fenced or in controlled shutdown.",
                    item,
                )
            parts.append(repl.Part(replicas=replicas, isr=isr, leader=isr[0], version=self.version))
        return parts

    # ---------------------------------------------------------------- writes

    @_operation
    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        results: dict[str, ClusterError | None] = {}
        counts: dict[str, int] = {}
        for t in topics:
            counts[t.name] = counts.get(t.name, 0) + 1
        for t in topics:
            results[t.name] = self._create(t, counts[t.name])
        self._refresh()
        self._save()
        return results

    def _create(self, t: NewTopic, count: int) -> ClusterRequestError | None:
        name = t.name
        if count > 1:
            return kraft.error("INVALID_REQUEST", "Duplicate topic in request.", name)
        problem = kraft.topic_name_error(name)
        if problem:
            return kraft.error("INVALID_TOPIC_EXCEPTION", problem, name)
        if name == KAFKA_METADATA_TOPIC:  # ControllerApis.scala createTopics
            return kraft.error(
                "INVALID_REQUEST", f"Creation of internal topic {name} is prohibited.", name
            )
        if name in self.topics:
            return kraft.error("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists.", name)
        other = kraft.collision(name, self.topics)
        if other is not None:
            return kraft.error(
                "INVALID_TOPIC_EXCEPTION",
                f"Topic '{name}' collides with existing topic: {other}",
                name,
            )
        if not t.assignment:
            return kraft.error(
                "INVALID_PARTITIONS",
                "Number of partitions was set to an invalid non-positive value.",
                name,
            )
        parts = self._new_parts(t.assignment, 0, None, name)
        if isinstance(parts, ClusterRequestError):
            return parts
        for key, value in t.config.items():
            problem = kraft.topic_config_error(key, value, self.version)
            if problem:
                return kraft.error("INVALID_CONFIG", problem, name)
        self.topics[name] = (parts, dict(t.config))
        return None

    @_operation
    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results:
        results: dict[str, ClusterError | None] = {}
        for a in additions:
            results[a.topic] = self._add(a)
        self._save()
        return results

    def _add(self, a: NewPartitions) -> ClusterRequestError | None:
        if a.topic not in self.topics:
            return kraft.error(
                "UNKNOWN_TOPIC_OR_PARTITION",
                kraft.UNKNOWN,
                a.topic,
            )
        parts, _ = self.topics[a.topic]
        count = len(parts)
        if a.total == count:
            return kraft.error(
                "INVALID_PARTITIONS", f"Topic already has {count} partition(s).", a.topic
            )
        if a.total < count:
            return kraft.error(
                "INVALID_PARTITIONS",
                f"The topic {a.topic} currently has {count} partition(s); {a.total} would not "
                "be an increase.",
                a.topic,
            )
        if len(a.assignment) != a.total - count:
            return kraft.error(
                "INVALID_REPLICA_ASSIGNMENT",
                f"Attempted to add {a.total - count} additional partition(s), but only "
                f"{len(a.assignment)} assignment(s) were specified.",
                a.topic,
            )
        new = self._new_parts(a.assignment, count, len(parts[0].replicas), a.topic)
        if isinstance(new, ClusterRequestError):
            return new
        parts.extend(new)
        return None

    @_operation
    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results:
        results: dict[str, ClusterError | None] = {}
        for name, change in changes.items():
            if name not in self.topics:
                results[name] = kraft.error(
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    kraft.UNKNOWN,
                    name,
                )
                continue
            config = self.topics[name][1]
            sets = dict(change.set)
            problem = kraft.duplicate_keys_error(change)
            for k in [*change.append, *change.subtract]:
                if problem is None:
                    problem = kraft.list_op_error(k)
            if problem is None:
                sets.update(kraft.appended(config, change.append))
                sets.update(kraft.subtracted(config, change.subtract))
                version = self.version
                problem = next(
                    (p for k, v in sets.items() if (p := kraft.topic_config_error(k, v, version))),
                    None,
                )
            if problem is None:
                problem = next(
                    (p for k in change.delete if (p := kraft.topic_config_delete_error(k))), None
                )
            if problem is not None:
                results[name] = kraft.error("INVALID_CONFIG", problem, name)
                continue
            config.update(sets)
            for k in change.delete:
                config.pop(k, None)
            results[name] = None
        self._refresh()
        self._elect_unclean()
        self._save()
        return results

    @_operation
    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        results: dict[str, ClusterError | None] = {}
        for bid, change in changes.items():
            item = f"broker:{bid}"
            if bid not in self.brokers:
                results[item] = kraft.error(
                    "BROKER_NOT_AVAILABLE", f"Broker {bid} is not registered.", item
                )
                continue
            if not self.brokers[bid].online:
                # a broker's dynamic config is changed on that broker (ConfigAdminManager):
                # a client cannot reach a broker that is down
                results[item] = kraft.error(
                    "BROKER_NOT_AVAILABLE",
                    f"Broker {bid} is offline: its configs can only be changed on it.",
                    item,
                )
                continue
            problem = next(
                (
                    p
                    for k, v in [*change.set.items(), *((k, None) for k in change.delete)]
                    if (p := kraft.broker_config_error(k, v))
                ),
                None,
            )
            if problem is not None:
                results[item] = kraft.error("INVALID_CONFIG", problem, item)
                continue
            config = self.broker_configs.setdefault(bid, {})
            config.update(change.set)
            for k in change.delete:
                config.pop(k, None)
            results[item] = None
        self._save()
        return results

    @_operation
    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        results: dict[TopicPartition, ClusterError | None] = {}
        online = self.online
        for (name, pid), target in targets.items():
            key = TopicPartition(name, pid)
            item = str(key)
            parts = self.topics.get(name, ([], {}))[0]
            if not 0 <= pid < len(parts):
                results[key] = kraft.error(
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    kraft.UNKNOWN,
                    item,
                )
                continue
            part = parts[pid]
            if target is None:
                if not part.reassigning:
                    results[key] = kraft.error(
                        "NO_REASSIGNMENT_IN_PROGRESS",
                        f"No ongoing reassignment for partition {item}.",
                        item,
                    )
                    continue
                config = self.topics[name][1]
                if repl.revert_needs_unclean(part) and not self._unclean_allowed(config):
                    results[key] = kraft.error(
                        "INVALID_REPLICA_ASSIGNMENT",
                        f"Unable to revert partition assignment for {name}:{pid} because it "
                        "would require an unclean leader election.",
                        item,
                    )
                    continue
                repl.revert(part, online)
                results[key] = None
                continue
            problem = kraft.assignment_error(target, self.brokers, None)
            if problem:
                results[key] = kraft.error("INVALID_REPLICA_ASSIGNMENT", problem, item)
                continue
            repl.reassign(part, target, online)
            results[key] = None
        self._save()
        return results

    @_operation
    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults:
        results: dict[TopicPartition, ClusterError | None] = {}
        online = self.online
        for name, pid in partitions:
            key = TopicPartition(name, pid)
            item = str(key)
            parts = self.topics.get(name, ([], {}))[0]
            if not 0 <= pid < len(parts):
                results[key] = kraft.error(
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    kraft.UNKNOWN,
                    item,
                )
                continue
            part = parts[pid]
            preferred = part.replicas[0]
            if part.leader == preferred:
                results[key] = None
            elif preferred in part.isr and preferred in online:
                part.leader = preferred
                results[key] = None
            else:
                results[key] = kraft.error(
                    "PREFERRED_LEADER_NOT_AVAILABLE",
                    f"Failed to elect leader for partition {item} under strategy PreferredElection",
                    item,
                )
        self._save()
        return results

    @_operation
    def delete_topics(self, names: Sequence[str]) -> Results:
        results: dict[str, ClusterError | None] = {}
        for name in names:
            self.groups.forget_topic(name)
            if self.topics.pop(name, None) is None and name not in results:
                results[name] = kraft.error(
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    kraft.UNKNOWN,
                    name,
                )
            else:
                results[name] = None
        self._save()
        return results

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
        return frozenset(self.access.acls)

    @_operation
    def create_acls(self, acls: Sequence[Acl]) -> Results:
        results = self.access.create_acls(acls)
        self._save()
        return results

    @_operation
    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        results = self.access.delete_acls(acls)
        self._save()
        return results

    @_operation
    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return self.access.state().quotas

    @_operation
    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        results = self.access.alter_client_quotas(changes)
        self._save()
        return results

    @_operation
    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        # as Kafka's DescribeUserScramCredentials: mechanism and iterations, never the
        # salt or stored key (kept in the simulated cluster's own file only)
        return dict(self.access.state(reported=True).users)

    @_operation
    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        results = self.access.upsert_scram_users(upserts)
        self._save()
        return results

    # ---------------------------------------------------------------- owner records

    @_operation
    def read_owners(self) -> Mapping[str, OwnerRecord]:
        """The state file's ``simulation.ownerRecords`` (the topic a real cluster keeps
        them in: kgitops/cluster/kafka/owners.py)."""
        return {
            k: replace(record_from_json(v), offset=_record_offset(v))
            for k, v in sorted(self.owner_records.items())
        }

    @_operation
    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        for owner, record in records.items():
            if record is None:
                self.owner_records.pop(owner, None)
            else:  # like a log: a later record has a higher offset than every one kept
                after = max((_record_offset(v) for v in self.owner_records.values()), default=-1)
                self.owner_records[owner] = {**record_json(record), "offset": after + 1}
        self._save()

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def close(self) -> None:
        """Nothing to release: every change is already on disk."""

    # ---------------------------------------------------------------- what-if

    @_operation
    def advance(self, seconds: float) -> None:
        """Let simulated time pass: replicas catch up, reassignments complete, and the
        controller's automatic preferred-leader election runs when it is due."""
        end = self.clock + max(0.0, seconds)
        if not math.isfinite(end) or end > MAX_CLOCK:
            raise ClusterError(
                f"cannot advance the simulated clock by {seconds:g} s: it would pass "
                f"{MAX_CLOCK:g} s (Kafka's longest time, about 292 million years)"
            )
        while True:
            self._apply_due()
            due = self._next_due()
            horizon = end if due is None else min(end, due)
            self._schedule_balance()
            if self.balance_at is not None and not self._electable():
                self._idle_until_event(horizon)
                if self.clock >= end and self.balance_at > self.clock:
                    break
                continue
            stop = horizon if self.balance_at is None else min(horizon, self.balance_at)
            spent = repl.advance(
                self.topics,
                self.online,
                self.broker_configs,
                stop - self.clock,
                self.network,
                self.producers(),
                until_event=self._lag_watch(),
                refused=self.refused,
                serving=self.serving,
            )
            self.clock = stop if spent >= stop - self.clock else self.clock + spent
            if self.balance_at is not None and self.clock >= self.balance_at:
                self._balance_leaders()
                continue
            if self.clock >= end:
                break
        self._apply_due()
        self._sync_logs()
        self.groups.checkpoint(self.clock)
        self._save()

    def _growth(self) -> dict[str, list[float]]:
        return {
            t: repl.write_rates(self.topics[t][0], p, self.serving)[0]
            for t, p in self.producers().items()
        }

    def _lag_watch(self) -> bool:
        """Whether an ISR change inside an advance could start a follower lagging (writes
        go on): then time advances event by event, so that lag is noticed when it starts."""
        return bool(self.produce)

    def _next_due(self) -> float | None:
        """The next time a stopped broker is fenced or resumes, or a lagging follower has
        been behind for ``replica.lag.time.max.ms``; None: nothing pending."""
        times = [t for pair in self.stopped.values() for t in pair if t is not None]
        times += [t + self.lag_time_max for t in self.behind.values()]
        return min(times) if times else None

    def _apply_due(self) -> None:
        """What is due at the current clock: stopped brokers resume or are fenced (the
        controller's session timeout, ``handleBrokerFenced``), then followers that have been
        behind for ``replica.lag.time.max.ms`` leave the ISR (``Partition.maybeShrinkIsr``),
        and lagging starts or ends (a follower's in-sync fetches outgrow its network, or its
        broker stops)."""
        for b, (fence, resume) in sorted(self.stopped.items()):
            back = resume is not None and resume <= self.clock
            if back and fence is None:  # back after being fenced
                del self.stopped[b]
                self._set_online(b, True)
                repl.settle([p for parts, _ in self.topics.values() for p in parts], self.online)
                self._elect_unclean()
            elif back and fence is not None and resume is not None and resume <= fence:
                del self.stopped[b]  # back before the controller noticed
                self._resume(b)
            elif fence is not None and fence <= self.clock:
                self._fence(b)
                if resume is None:
                    del self.stopped[b]
                else:
                    self.stopped[b] = (None, resume)
        growth = self._growth()
        demand = repl.follower_demand(self.topics, self.serving, growth)
        slow = isrlag.falling_behind(demand, self.network, self.stopped)
        for b in list(self.behind):
            if b not in slow:
                del self.behind[b]
        shares: dict[int, float] = {}
        for b, share in slow.items():
            since = self.behind.setdefault(b, self.clock)
            if since + self.lag_time_max <= self.clock:
                shares[b] = share
                del self.behind[b]
        if shares:
            repl.drop_lagging(self.topics, shares, growth, self.lag_time_max)

    def _resume(self, broker_id: int) -> None:
        """A stopped broker works again before it was fenced: its in-sync followers fetch
        what they missed (at once: the model does not time that catch-up), and the HW
        they held back moves on."""
        for parts, _ in self.topics.values():
            for part in parts:
                if broker_id in part.isr and broker_id in part.copied:
                    del part.copied[broker_id]
                    part.update_hw()

    @_operation
    def stop_broker(self, broker_id: int, resume_after: float | None = None) -> None:
        """What-if: broker ``broker_id`` stops (a crash, or with ``resume_after`` seconds a
        stall such as a long GC pause). It neither serves nor fetches, but the controller
        knows nothing until ``broker.session.timeout.ms`` passes without a heartbeat: then it
        fences the broker (as ``fail_broker``). Until then the broker stays leader of its
        partitions -- writes to them fail -- and in their ISRs. Time passes with ``advance``."""
        broker = self.brokers.get(broker_id)
        if broker is None or not broker.online:
            self._set_online(broker_id, False)  # raises: unknown, or already offline
        if broker_id in self.stopped:
            raise ClusterError(f"broker {broker_id} is already stopped")
        if resume_after is not None and not (math.isfinite(resume_after) and resume_after > 0):
            raise ClusterError("a pause must last more than 0 s")
        if resume_after is not None and self.clock + resume_after > MAX_CLOCK:
            raise ClusterError(
                f"cannot pause for {resume_after:g} s: the simulated clock would pass "
                f"{MAX_CLOCK:g} s (Kafka's longest time, about 292 million years)"
            )
        resume = None if resume_after is None else self.clock + resume_after
        self.stopped[broker_id] = (self.clock + self.session_timeout, resume)
        for parts, _ in self.topics.values():
            for part in parts:
                if broker_id in part.isr and broker_id != part.leader:
                    part.copied[broker_id] = float(part.size)  # it fetches no more
        self._save()

    def _idle_until_event(self, end: float) -> None:
        """No election is possible until a copy completes (a broker offline, a preferred
        replica out of the ISR): replicate up to ``end`` or that copy, whichever is first;
        the checks due in between ran and elected nothing, so the pending one moves to the
        first interval after the new time (or stays at it, when it can elect there, as
        ``advance`` would have). ``advance 1000d`` with a broker down is then a few steps,
        not 288,000 checks that elect nothing."""
        assert self.balance_at is not None and self.leader_balance_seconds is not None
        left = end - self.clock
        spent = repl.advance(
            self.topics,
            self.online,
            self.broker_configs,
            left,
            self.network,
            self.producers(),
            until_event=True,
            refused=self.refused,
            serving=self.serving,
        )
        self.clock = end if spent >= left else self.clock + spent
        interval = self.leader_balance_seconds
        if self.balance_at < self.clock:
            self.balance_at += math.ceil((self.clock - self.balance_at) / interval) * interval
            self.balance_at = max(self.balance_at, self.clock)  # float dust: never behind
        if self.balance_at <= self.clock and not self._electable():
            self.balance_at = max(self.balance_at, self.clock) + interval

    def _electable(self) -> bool:
        """Whether a balance now would elect anything (``_balance_leaders``' condition)."""
        online = self.online
        return any(
            p.leader != p.replicas[0] and p.replicas[0] in p.isr and p.replicas[0] in online
            for parts, _ in self.topics.values()
            for p in parts
        )

    def _imbalanced(self) -> bool:
        """KRaft's ``imbalancedPartitions``: some partition not led by its first replica."""
        return any(p.leader != p.replicas[0] for parts, _ in self.topics.values() for p in parts)

    def _schedule_balance(self) -> None:
        """``QuorumController.maybeScheduleNextBalancePartitionLeaders``: when leaders are
        imbalanced and no balance is pending, one is scheduled an interval from now."""
        if self.leader_balance_seconds is None:
            self.balance_at = None
        elif self.balance_at is None and self._imbalanced():
            self.balance_at = self.clock + self.leader_balance_seconds

    def _balance_leaders(self) -> None:
        """``ReplicationControlManager.maybeBalancePartitionLeaders``: a preferred election
        for every imbalanced partition whose first replica is in the ISR and online. KRaft
        has no per-broker threshold (``leader.imbalance.per.broker.percentage`` was the
        ZooKeeper controller's, removed in Kafka 4.0: KAFKA-18743)."""
        online = self.online
        for parts, _ in self.topics.values():
            for p in parts:
                preferred = p.replicas[0]
                if p.leader != preferred and preferred in p.isr and preferred in online:
                    p.leader = preferred
        self.balance_at = None

    @_operation
    def set_size(self, topic: str, size_bytes: int, partition: int | None = None) -> None:
        """Give a partition (or every partition of the topic) ``size_bytes`` of data: the
        simulation has no producers, and catch-up time follows from partition sizes. Replicas
        that had the whole log (in sync, or in sync when their broker failed) have it all
        still; a replica part way through catching up keeps the bytes it has."""
        if topic not in self.topics:
            raise ClusterError(f"no topic {topic!r} in the simulated cluster")
        parts = self.topics[topic][0]
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
        self._save()

    @_operation
    def set_produce_rate(
        self, topic: str, bytes_per_sec: float, acks: str = "all", keys: str = "none"
    ) -> None:
        """Write to ``topic`` at ``bytes_per_sec`` while simulated time passes; 0 stops.
        ``acks`` (all, 1, 0) and ``keys`` (none, uniform) say which partitions take the
        records (``replication.write_rates``): acks=all is refused where the ISR is below
        min ISR; keyless records go only to partitions that have a leader. A replica
        catches up only if it copies faster than its partition grows."""
        if topic not in self.topics:
            raise ClusterError(f"no topic {topic!r} in the simulated cluster")
        if bytes_per_sec < 0:
            raise ClusterError("a produce rate cannot be negative")
        if acks not in ACKS:
            raise ClusterError(f"acks must be one of {', '.join(ACKS)}, not {acks!r}")
        if keys not in KEYS:
            raise ClusterError(f"keys must be one of {', '.join(KEYS)}, not {keys!r}")
        if bytes_per_sec:
            self.produce[topic] = float(bytes_per_sec)
            self.modes[topic] = (acks, keys)
        else:
            self.produce.pop(topic, None)
            self.modes.pop(topic, None)
        self._save()

    @_operation
    def fail_broker(self, broker_id: int) -> None:
        """The broker stops: it leaves every ISR and its leaderships move. Without ELR the
        last in-sync replica stays (Kafka never empties an ISR) and its partition goes
        offline; with ELR the ISR may empty, and the replicas that left it below
        min.insync.replicas are eligible leaders when they come back."""
        self.stopped.pop(broker_id, None)
        self._fence(broker_id)
        self._save()

    def _fence(self, broker_id: int) -> None:
        """The controller fences the broker (``ReplicationControlManager.handleBrokerFenced``)."""
        self._set_online(broker_id, False)
        self.behind.pop(broker_id, None)
        online = self.online
        for parts, _ in self.topics.values():
            for part in parts:
                part.leave_isr(broker_id)
                if part.leader == broker_id:
                    part.leader = None
                part.elect(online)
        self._elect_unclean()

    @_operation
    def restore_broker(self, broker_id: int) -> None:
        """The broker returns: offline partitions whose ISR it holds get their leader back,
        and its replicas rejoin the ISR once they have copied what was written while it was
        down (at once when nothing was: see ``set_produce_rate``). A stopped broker not
        fenced yet simply works again."""
        if self.stopped.pop(broker_id, None) is not None and self.brokers[broker_id].online:
            self._resume(broker_id)
            self._save()
            return
        self._set_online(broker_id, True)
        repl.settle([p for parts, _ in self.topics.values() for p in parts], self.online)
        self._elect_unclean()
        self._save()

    def _unclean_allowed(self, config: Mapping[str, str]) -> bool:
        """``uncleanLeaderElectionEnabledForTopic``: the topic's value, else the broker
        default (Kafka's: false)."""
        value = config.get(UNCLEAN, self.broker_defaults.get(UNCLEAN, "false"))
        return value.strip().lower() == "true"

    def _elect_unclean(self) -> None:
        """Kafka's controller does an unclean election for offline partitions of topics that
        allow it (``unclean.leader.election.enable``, topic or broker default)."""
        online = self.online
        for parts, config in self.topics.values():
            if self._unclean_allowed(config):
                for part in parts:
                    repl.elect_unclean(part, online)

    def _set_online(self, broker_id: int, online: bool) -> None:
        broker = self.brokers.get(broker_id)
        if broker is None:
            known = ", ".join(str(b) for b in sorted(self.brokers))
            raise ClusterError(f"broker {broker_id} is not in the cluster (brokers: {known})")
        if broker.online == online:
            raise ClusterError(f"broker {broker_id} is already {'online' if online else 'offline'}")
        self.brokers[broker_id] = Broker(broker.id, broker.rack, online)


def _kept(configs: Mapping[int, Mapping[str, str]], *, every: bool) -> dict[int, dict[str, str]]:
    """Per broker, its dynamic configs: ``every`` one (the simulated cluster's own file), or
    as describe reports them to a plan or snapshot, only ``STATE_BROKER_CONFIGS`` (as the
    Kafka adapter keeps them)."""
    out = {
        b: {k: v for k, v in c.items() if every or k in STATE_BROKER_CONFIGS}
        for b, c in configs.items()
    }
    return {b: c for b, c in out.items() if c}


def _record_offset(value: object) -> int:
    """The ``offset`` of an owner record in the state file (-1: from before offsets)."""
    got = value.get("offset", -1) if isinstance(value, dict) else -1
    return got if isinstance(got, int) and not isinstance(got, bool) else -1
