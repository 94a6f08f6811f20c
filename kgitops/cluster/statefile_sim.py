"""The simulated cluster's file: its lock, and its state read and written whole.

The file is the state JSON (``kgitops-state/v1``, docs/simulated-cluster.md) plus a
``simulation`` object with the simulated clock, the network rate, the producers, the bytes
each catching-up replica has copied, the stopped brokers, the pending leader balance and the
owner records; broker-level dynamic configs (the throttle rates) are the state's
``brokerConfigs``. Every write is atomic (``snapshot.write_state``: a new file renamed over
the old one), so a reader sees one whole state, and ``stat`` tells a rewritten file apart.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from kgitops.cluster import partition_sim as partition
from kgitops.cluster import replication as repl
from kgitops.cluster.access_sim import AccessStore
from kgitops.cluster.groups_sim import GroupStore
from kgitops.cluster.snapshot import state_from_json, write_state
from kgitops.cluster.state_sim import MAX_CLOCK, MAX_RATE, SimState
from kgitops.errors import ClusterError, FileRefused, Mark, StateFileError
from kgitops.files import inside
from kgitops.model import Broker, Reassignment
from kgitops.names import STATE_FORMAT
from kgitops.versionrules import KafkaVersion


@contextmanager
def file_lock(path: str, root: str | None = None) -> Iterator[None]:
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


def stat(path: str) -> tuple[int, int, int] | None:
    """What tells a rewritten file apart: every write is a new inode (atomic rename)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def new_cluster(state_file: str, brokers: Sequence[Broker]) -> dict[str, Any]:
    """The state of a new simulated cluster of ``brokers`` and no topic, named after its
    file (``demo.json``: ``simulated-demo``)."""
    if not brokers:
        raise ClusterError(f"{state_file}: a new simulated cluster needs at least one broker")
    name = os.path.splitext(os.path.basename(state_file))[0]
    return {
        "format": STATE_FORMAT,
        "clusterId": f"simulated-{name}",
        "brokers": [{"id": b.id, "rack": b.rack} for b in brokers],
        "topics": {},
    }


def load(
    path: str,
    data: Mapping[str, Any],
    text: str | None,
    *,
    version: KafkaVersion,
    elr: bool,
    leader_balance_seconds: float | None,
) -> SimState:
    """The state a state file's JSON holds (``text``: its text, for error positions); the
    settings are the handle's (``SimulatedCluster.open``)."""
    state = state_from_json(data, source=path, text=text)
    sim = data.get("simulation") or {}
    try:
        clock = float(sim.get("clock", 0.0))
        network = float(sim.get("networkBytesPerSec", repl.NETWORK_BYTES_PER_SEC))
        produce = {str(t): float(r) for t, r in (sim.get("produceBytesPerSec") or {}).items()}
        modes: dict[str, tuple[str, str]] = {}
        for t, mode in (sim.get("producers") or {}).items():
            acks, keys = str(mode.get("acks", "all")), str(mode.get("keys", "none"))
            if acks not in repl.ACKS or keys not in repl.KEYS:
                raise ValueError(f"producers.{t}: acks {acks!r} or keys {keys!r} unknown")
            modes[str(t)] = (acks, keys)
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
        elr_lists = {
            str(t): {int(p): [int(b) for b in bs] for p, bs in ps.items()}
            for t, ps in (sim.get("eligibleLeaderReplicas") or {}).items()
        }
        stopped: dict[int, tuple[float | None, float | None]] = {
            int(b): (
                None if e.get("fenceAt") is None else float(e["fenceAt"]),
                None if e.get("resumeAt") is None else float(e["resumeAt"]),
            )
            for b, e in (sim.get("stoppedBrokers") or {}).items()
        }
        behind = {int(b): float(t) for b, t in (sim.get("behindSince") or {}).items()}
        owners = sim.get("ownerRecords") or {}
        if not isinstance(owners, dict) or not all(isinstance(k, str) for k in owners):
            raise ValueError("ownerRecords is not an object of owner records")
        at = sim.get("leaderBalanceAt")
        balance_at = None if at is None else float(at)
        if not math.isfinite(clock) or not 0 <= clock <= MAX_CLOCK:
            raise ValueError(f"clock {clock:g} is not a time from 0 to {MAX_CLOCK:g} s")
        if balance_at is not None and not 0 <= balance_at < math.inf:
            raise ValueError(f"leaderBalanceAt {balance_at:g} is not a time")
        if not math.isfinite(network) or network <= 0:
            raise ValueError(f"networkBytesPerSec {network:g} is not a rate above 0")
        rates = {"networkBytesPerSec": network}
        rates.update({f"produceBytesPerSec.{t}": r for t, r in produce.items()})
        for name, rate in rates.items():
            if not math.isfinite(rate) or not 0 <= rate <= MAX_RATE:
                raise ValueError(f"{name} {rate:g} is not a rate from 0 to {MAX_RATE:g} B/s")
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise StateFileError(path, [f"simulation: malformed ({exc})"]) from None
    groups = GroupStore(state.groups, sim.get("offsetTimes"))
    brokers = {b.id: b for b in state.brokers}
    online = frozenset(b.id for b in state.brokers if b.online)
    hws: dict[str, dict[int, int]] = {}
    for (name, pid), (_, hw) in groups.logs.items():
        hws.setdefault(name, {})[pid] = hw
    topics: dict[str, partition.Topic] = {}
    for name, t in state.topics.items():
        moves = state.reassignments.get(name, {})
        topic_hws, topic_ends, topic_epochs = hws.get(name), ends.get(name), epochs.get(name)
        parts: list[partition.Part] = []
        for pid in range(t.partition_count):
            ps = t.partitions[pid]
            move = moves.get(pid, Reassignment())
            isr = list(ps.isr) if ps.isr is not None else [b for b in ps.replicas if b in online]
            part = partition.Part(
                replicas=list(ps.replicas),
                isr=isr,
                leader=ps.leader,
                size=ps.size_bytes or 0,
                adding=list(move.adding),
                removing=list(move.removing),
                copied=dict(progress.get(name, {}).get(pid, {})),
                elr=[b for b in elr_lists.get(name, {}).get(pid, []) if b in ps.replicas],
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
                    path,
                    [
                        f"reassignments.{name}.{pid}: adding and removing must be "
                        f"replicas of the partition (replicas {part.replicas})"
                    ],
                )
            parts.append(part)
        topics[name] = partition.Topic(parts, dict(t.config))
    loaded = SimState(
        cluster_id=state.cluster_id,
        brokers=brokers,
        topics=topics,
        broker_configs={b: dict(c) for b, c in state.broker_configs.items()},
        broker_defaults=dict(state.broker_defaults),
        access=AccessStore(state.access),
        groups=groups,
        version=version,
        elr=elr,
        leader_balance_seconds=leader_balance_seconds,
        clock=clock,
        network=network,
        produce=produce,
        modes=modes,
        stopped=stopped,
        behind=behind,
        owner_records=dict(owners),
        balance_at=balance_at,
    )
    loaded.refresh()
    for parts, _ in topics.values():
        for part in parts:
            part.elect(online)
            part.bump_epoch()
    return loaded


def write(path: str, s: SimState, root: str | None) -> None:
    """Write the state whole to ``path`` (atomically; ``root``: see ``file_lock``)."""
    s.sync_logs()
    topics = sorted(s.topics.items())
    progress = {
        name: {
            str(pid): {str(b): v for b, v in sorted(part.copied.items())}
            for pid, part in enumerate(parts)
            if part.copied
        }
        for name, (parts, _) in topics
    }
    extra = {
        "simulation": {
            "clock": s.clock,
            "networkBytesPerSec": s.network,
            "produceBytesPerSec": {t: r for t, r in sorted(s.produce.items()) if t in s.topics},
            "producers": {
                t: {"acks": acks, "keys": keys}
                for t, (acks, keys) in sorted(s.modes.items())
                if t in s.produce and t in s.topics and (acks, keys) != ("all", "none")
            },
            "logEndOffsets": {
                name: {str(pid): p.end for pid, p in enumerate(parts) if p.end > p.hw}
                for name, (parts, _) in topics
                if any(p.end > p.hw for p in parts)
            },
            "leaderEpochs": {
                name: {str(pid): p.epoch for pid, p in enumerate(parts) if p.epoch}
                for name, (parts, _) in topics
                if any(p.epoch for p in parts)
            },
            "progress": {t: p for t, p in progress.items() if p},
            "eligibleLeaderReplicas": {
                name: {str(pid): list(p.elr) for pid, p in enumerate(parts) if p.elr}
                for name, (parts, _) in topics
                if any(p.elr for p in parts)
            },
            "leaderBalanceAt": s.balance_at,
            "stoppedBrokers": {
                str(b): {"fenceAt": fence, "resumeAt": resume}
                for b, (fence, resume) in sorted(s.stopped.items())
            },
            "behindSince": {str(b): t for b, t in sorted(s.behind.items())},
            "offsetTimes": s.groups.times_json(),
            "ownerRecords": dict(sorted(s.owner_records.items())),
        }
    }
    write_state(path, s.view(None, reported=False), extra, root=root)


def record_offset(value: object) -> int:
    """The ``offset`` of an owner record in the state file (-1: from before offsets)."""
    got = value.get("offset", -1) if isinstance(value, dict) else -1
    return got if isinstance(got, int) and not isinstance(got, bool) else -1
