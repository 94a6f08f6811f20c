"""Replication throttles for a reassignment: which to set, and how to take back only ours.

A new replica copies the whole partition from the leader (seed 000, question 3), so moving
data can saturate the network of every broker involved. Kafka's answer, and
kafka-reassign-partitions.sh's, is a throttle in two halves:

* on every broker that holds a current or a target replica of a moving partition, the rates
  ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``;
* on each moving topic, which replicas the rate applies to:
  ``leader.replication.throttled.replicas`` lists the current replicas (the sources the data is
  read from) and ``follower.replication.throttled.replicas`` the replicas being added.

Example: partition 0 of ``a`` moves from [1, 2] to [1, 2, 3] at 50 MB/s::

    brokers 1, 2, 3: leader.replication.throttled.rate = follower... = 50000000
    topic a: leader.replication.throttled.replicas = "0:1,0:2"
             follower.replication.throttled.replicas = "0:3"

Values already set (by an operator, or a previous ``--no-wait`` apply) are merged, never
overwritten, and removal takes away exactly the entries this apply added. ``*`` (throttle
every replica) is left alone. All functions here are pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
RATE_KEYS = (LEADER_RATE, FOLLOWER_RATE)
REPLICA_KEYS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)

Entry = tuple[int, int]  # (partition, broker)


@dataclass(frozen=True)
class MoveSpec:
    """One partition's move as throttling sees it."""

    topic: str
    partition: int
    source: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.target if b not in self.source)


@dataclass(frozen=True)
class ThrottlePlan:
    """The throttle entries a set of moves needs: per topic and key, and the brokers."""

    replicas: Mapping[str, Mapping[str, frozenset[Entry]]] = field(default_factory=dict)
    brokers: frozenset[int] = frozenset()


def parse_entries(value: str | None) -> frozenset[Entry] | None:
    """``"0:1,0:2"`` -> {(0, 1), (0, 2)}; None for ``*``; empty for absent or blank.

    Unparseable items are kept out; the original string is what removal falls back to.
    """
    if value is None or not value.strip():
        return frozenset()
    if value.strip() == "*":
        return None
    out: set[Entry] = set()
    for item in value.split(","):
        part, _, broker = item.strip().partition(":")
        if part.strip().isdigit() and broker.strip().isdigit():
            out.add((int(part), int(broker)))
    return frozenset(out)


def format_entries(entries: Iterable[Entry]) -> str:
    return ",".join(f"{p}:{b}" for p, b in sorted(set(entries)))


def needed(moves: Iterable[MoveSpec]) -> ThrottlePlan:
    """What throttling ``moves`` needs: leaders on the sources, followers on the added
    replicas, rates on every broker holding a source or target replica."""
    per_topic: dict[str, dict[str, set[Entry]]] = {}
    brokers: set[int] = set()
    for m in moves:
        t = per_topic.setdefault(m.topic, {LEADER_REPLICAS: set(), FOLLOWER_REPLICAS: set()})
        t[LEADER_REPLICAS].update((m.partition, b) for b in m.source)
        t[FOLLOWER_REPLICAS].update((m.partition, b) for b in m.adding)
        brokers.update(m.source)
        brokers.update(m.target)
    return ThrottlePlan(
        replicas={
            topic: {k: frozenset(v) for k, v in keys.items() if v}
            for topic, keys in sorted(per_topic.items())
        },
        brokers=frozenset(brokers),
    )


def merged(current: str | None, add: frozenset[Entry]) -> str | None:
    """The value to SET so ``add`` is throttled, or None when nothing needs to change
    (already ``*`` or already covering every entry)."""
    have = parse_entries(current)
    if have is None or add <= have:
        return None
    known = format_entries(have | add)
    unknown = [i.strip() for i in (current or "").split(",") if i.strip() and not _is_entry(i)]
    return ",".join([known, *unknown]) if unknown else known


def _is_entry(item: str) -> bool:
    part, sep, broker = item.strip().partition(":")
    return bool(sep) and part.strip().isdigit() and broker.strip().isdigit()


def removed(current: str | None, ours: frozenset[Entry]) -> str | None:
    """What remains of ``current`` once ``ours`` is taken out: the string to SET, or ``""``
    meaning DELETE the key, or None meaning leave it as it is."""
    have = parse_entries(current)
    if have is None or not (have & ours):
        return None
    rest = have - ours
    return format_entries(rest) if rest else ""
