"""Replication throttles as state: their names, their entries, and which ones are owed to a
move in flight. Pure; the one home of this rule for the diff, ``status`` and apply.

Kafka's throttle has two halves (docs/ops.html, "Limiting Bandwidth Usage during Data
Migration"; ConfigAdminManager.scala, ReplicationQuotaManager.scala):

* per broker, the rates ``leader.replication.throttled.rate`` and
  ``follower.replication.throttled.rate`` (bytes/s);
* per topic, which replicas the rates apply to: ``leader.replication.throttled.replicas``
  (``partition:broker`` of the replicas data is read from) and
  ``follower.replication.throttled.replicas`` (the replicas being added), or ``*``.

kgitops owns them (docs/apply.md, "Throttles are state"): a throttle entry is needed only
while the move it belongs to is in flight. A move in flight of partition ``p`` of topic ``t``
with replicas ``R`` (Kafka's target + removing) of which ``A`` are being added needs::

    leader.replication.throttled.replicas   of t:  p:b for every b in R - A  (the sources)
    follower.replication.throttled.replicas of t:  p:b for every b in A      (the new replicas)
    both rates                               on every online broker in R

Anything else is a leftover (a ``--no-wait`` apply whose moves have finished, a killed apply,
an operator's ``kafka-reassign-partitions.sh`` without ``--verify``) and ``stale_throttles``
names it, with the reason, for the plan to remove and for ``status`` to report. Example: no
move in flight, broker 2 has both rates and topic ``a`` has
``follower.replication.throttled.replicas = "0:3"``::

    Stale(broker=2, topic="", keys={rate keys: ""}, reason="no move in flight involves broker 2")
    Stale(broker=None, topic="a", keys={"follower...replicas": "0:3"},
          reason="no move in flight on topic a")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.model import ClusterState, partition_row
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)

RATE_KEYS = (THROTTLE_LEADER_RATE, THROTTLE_FOLLOWER_RATE)
REPLICA_KEYS = (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
ALL = "*"

Entry = tuple[int, int]  # (partition, broker)


def parse_entries(value: str | None) -> frozenset[Entry] | None:
    """``"0:1, 0:2"`` -> {(0, 1), (0, 2)}; None for ``*``; empty for absent or blank.
    Items that are not ``int:int`` are left out (Kafka's validator refuses them anyway)."""
    if value is None or not value.strip():
        return frozenset()
    if value.strip() == ALL:
        return None
    out: set[Entry] = set()
    for item in value.split(","):
        part, _, broker = item.strip().partition(":")
        if part.strip().isdigit() and broker.strip().isdigit():
            out.add((int(part), int(broker)))
    return frozenset(out)


def format_entries(entries: Iterable[Entry]) -> str:
    """{(1, 3), (0, 2)} -> ``"0:2,1:3"``: sorted, the form Kafka's list configs take."""
    return ",".join(f"{p}:{b}" for p, b in sorted(set(entries)))


@dataclass(frozen=True)
class MoveThrottle:
    """What one partition's move needs throttled: ``source`` are the replicas the data is
    read from (the leader's side), ``adding`` the replicas being created (the follower's)."""

    topic: str
    partition: int
    source: tuple[int, ...]
    adding: tuple[int, ...]

    @property
    def brokers(self) -> frozenset[int]:
        return frozenset(self.source) | frozenset(self.adding)


@dataclass(frozen=True)
class Needed:
    """The throttle entries a set of moves needs: per topic and key, and the brokers."""

    replicas: Mapping[str, Mapping[str, frozenset[Entry]]] = field(default_factory=dict)
    brokers: frozenset[int] = frozenset()


def needed(moves: Iterable[MoveThrottle]) -> Needed:
    """Leader entries on the sources, follower entries on the added replicas, rates on
    every broker holding a source or an added replica."""
    per_topic: dict[str, dict[str, set[Entry]]] = {}
    brokers: set[int] = set()
    for m in moves:
        t = per_topic.setdefault(
            m.topic, {THROTTLE_LEADER_REPLICAS: set(), THROTTLE_FOLLOWER_REPLICAS: set()}
        )
        t[THROTTLE_LEADER_REPLICAS].update((m.partition, b) for b in m.source)
        t[THROTTLE_FOLLOWER_REPLICAS].update((m.partition, b) for b in m.adding)
        brokers |= m.brokers
    return Needed(
        replicas={
            topic: {k: frozenset(v) for k, v in keys.items() if v}
            for topic, keys in sorted(per_topic.items())
        },
        brokers=frozenset(brokers),
    )


def in_flight(state: ClusterState) -> list[MoveThrottle]:
    """The moves in flight in ``state`` as throttling sees them."""
    out: list[MoveThrottle] = []
    for topic, parts in sorted(state.reassignments.items()):
        live = state.topics.get(topic)
        for p, move in sorted(parts.items()):
            ps = live.partitions.get(p) if live is not None else None
            if ps is None or not (move.adding or move.removing):
                continue
            source = tuple(b for b in ps.replicas if b not in move.adding)
            out.append(MoveThrottle(topic, p, source, tuple(move.adding)))
    return out


@dataclass(frozen=True)
class Stale:
    """Throttle configs no move in flight needs: on a broker (``broker`` set, ``keys`` the
    rate keys) or on a topic (``keys``: key -> the entries to take out, ``*`` or ``""`` for a
    value that goes whole)."""

    topic: str
    broker: int | None
    keys: Mapping[str, str]
    reason: str

    @property
    def name(self) -> str:
        return f"broker {self.broker}" if self.broker is not None else self.topic


def recorded_by(record: Mapping[str, Any] | None, *, broker: int | None, topic: str) -> str:
    """Who set a leftover, from the record an apply keeps (``kgitops.apply.record``):
    ``; set by `kgitops apply --no-wait` (pid 4242 on ci-7, 2026-...) ...``, or ``""`` when
    the record does not name this broker or topic."""
    if record is None:
        return ""
    brokers = record.get("brokers", [])
    topics = record.get("topics", {})
    named = (broker in brokers) if broker is not None else (topic in topics)
    if not named:
        return ""
    who = f"{record.get('by', '?')}, {record.get('since', '?')}"
    if record.get("state") == "no-wait":
        return f"; set by `kgitops apply --no-wait` ({who}) for moves that have finished"
    if record.get("state") == "left-running":  # at its timeout, or a cancel that failed
        return f"; set by a `kgitops apply` that left moves running ({who}), since finished"
    return f"; set by a `kgitops apply` that did not finish ({who})"


def stale_throttles(
    state: ClusterState,
    *,
    keep: Iterable[MoveThrottle] = (),
    record: Mapping[str, Any] | None = None,
) -> list[Stale]:
    """Every throttle config in ``state`` that no move in flight (nor any of ``keep``) needs;
    ``record`` (what an apply wrote down it set) words who left it.

    Brokers that are offline are left out: Kafka takes a broker's config change only on that
    broker, so their rates are removed once they are back."""
    moves = [*in_flight(state), *keep]
    need = needed(moves)
    moving_topics = {m.topic for m in moves}
    online = state.online_broker_ids
    out: list[Stale] = []
    for b in sorted(state.broker_configs):
        keys = [k for k in RATE_KEYS if k in state.broker_configs[b]]
        if keys and b not in need.brokers and b in online:
            out.append(
                Stale(
                    "",
                    b,
                    dict.fromkeys(keys, ""),
                    f"no move in flight involves broker {b}"
                    + recorded_by(record, broker=b, topic=""),
                )
            )
    for name in sorted(state.topics):
        config = state.topics[name].config
        remove: dict[str, str] = {}
        why: list[str] = []
        for key in REPLICA_KEYS:
            if key not in config:
                continue
            value = config[key]
            have = parse_entries(value)
            if have is None:
                if name not in moving_topics:
                    remove[key] = ALL
            elif not have:
                remove[key] = ""
            else:
                extra = have - need.replicas.get(name, {}).get(key, frozenset())
                if extra:
                    remove[key] = format_entries(extra)
        if not remove:
            continue
        if name not in moving_topics:
            why.append(f"no move in flight on topic {name}")
        else:
            why.append("the partitions listed are not moving")
        out.append(
            Stale(name, None, remove, "; ".join(why) + recorded_by(record, broker=None, topic=name))
        )
    return out


DEFAULT_RETENTION_MS = 604_800_000  # Kafka's retention.ms default: 7 days
PRESSURE_SHARE = 0.8


@dataclass(frozen=True)
class Pressure:
    """A broker whose throttled in-sync replication approaches its leader throttle while
    its partitions move: ``in_sync`` bytes/s of the ``rate``; ``measured`` when the write
    rates were known (else estimated from sizes and retention.ms)."""

    broker: int
    in_sync: float
    rate: int
    partitions: int
    measured: bool

    @property
    def left(self) -> float:
        return max(0.0, self.rate - self.in_sync)


def write_rate(
    state: ClusterState, topic: str, partition: int, write_rates: Mapping[str, float] | None
) -> tuple[float | None, bool]:
    """A partition's write rate in bytes/s and whether it was measured: the topic's known
    rate spread over its partitions, else its size over its retention (a partition that keeps
    ``retention.ms`` of data and holds ``size`` bytes is written at about size/retention)."""
    live = state.topics.get(topic)
    if live is None:
        return None, False
    if write_rates is not None and topic in write_rates:
        return write_rates[topic] / max(1, live.partition_count), True
    row = partition_row(live.partitions, partition)
    size = row[3] if row is not None else None
    try:
        retention_ms = int(live.config.get("retention.ms", DEFAULT_RETENTION_MS))
    except ValueError:
        return None, False
    if not size or retention_ms <= 0:
        return None, False
    return size / (retention_ms / 1000), False


def throttle_pressure(
    moves: Iterable[MoveThrottle],
    state: ClusterState,
    rate: int | None,
    max_concurrent_moves: int,
    write_rates: Mapping[str, float] | None = None,
) -> list[Pressure]:
    """Brokers whose leader throttle the in-sync followers of moving partitions use up.

    Kafka charges the fetches of in-sync followers of a throttled partition to the quota (it
    only never holds them back), so while a partition moves its leader's quota pays its write
    rate once per in-sync follower, and a new replica copies with what is left. Per leader
    broker, the worst window is its ``max_concurrent_moves`` busiest moving partitions.
    Example: 20 MB/s of writes, RF 3 (two in-sync followers), a 30 MB/s throttle: 40 MB/s of
    in-sync traffic, nothing left -- the move never completes."""
    if not rate:
        return []
    per: dict[int, list[float]] = {}
    measured: dict[int, bool] = {}
    for m in moves:
        live = state.topics.get(m.topic)
        row = partition_row(live.partitions, m.partition) if live is not None else None
        if row is None:
            continue
        replicas, isr, leader, _ = row
        if leader is None:
            leader = m.source[0] if m.source else None
        if leader is None:
            continue
        w, known = write_rate(state, m.topic, m.partition, write_rates)
        if not w:
            continue
        followers = [b for b in (isr or replicas) if b != leader]
        per.setdefault(leader, []).append(w * len(followers))
        measured[leader] = measured.get(leader, True) and known
    out = []
    for b, loads in sorted(per.items()):
        top = sorted(loads, reverse=True)[: max(1, max_concurrent_moves)]
        total = sum(top)
        if total >= PRESSURE_SHARE * rate:
            out.append(Pressure(b, total, rate, len(top), measured[b]))
    return out
