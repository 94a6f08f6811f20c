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
every replica) is left alone. The functions are pure; ``Throttler`` sends what they decide
and remembers what it set, so that it can take back exactly that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kgitops.cluster.port import ClusterAdmin, ConfigChange
from kgitops.errors import ClusterError
from kgitops.model import ClusterState

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


class Throttler:
    """Sets the throttles some moves need and later removes exactly what it set.

    ``prepare`` decides (pure, from the state read before); ``apply`` sends one
    IncrementalAlterConfigs for the topics and one for the brokers; ``remove`` re-reads the
    topics (someone may have changed them since) and takes out only our entries and rates.
    Entries of moves being *resumed* (left running by a ``--no-wait`` apply) count as ours, as
    does a broker rate equal to ours then.
    """

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.ours_topic: dict[str, dict[str, frozenset[Entry]]] = {}
        self.ours_broker: dict[int, tuple[str, ...]] = {}
        self.after: dict[str, dict[str, str]] = {}
        self.topic_changes: dict[str, ConfigChange] = {}
        self.broker_changes: dict[int, ConfigChange] = {}
        self.notes: list[str] = []
        self.armed = False

    def prepare(
        self, state: ClusterState, moves: Sequence[MoveSpec], resumed: Sequence[MoveSpec]
    ) -> list[int]:
        """Work out the changes; returns the brokers involved."""
        plan, old = needed(moves), needed(resumed)
        for topic, keys in plan.replicas.items():
            config = state.topics[topic].config if topic in state.topics else {}
            sets: dict[str, str] = {}
            ours: dict[str, frozenset[Entry]] = {}
            for key, add in keys.items():
                have = parse_entries(config.get(key))
                if have is None:
                    continue
                ours[key] = (add - have) | old.replicas.get(topic, {}).get(key, frozenset())
                value = merged(config.get(key), add)
                if value is not None:
                    sets[key] = value
                self.after.setdefault(topic, {})[key] = value or config.get(key, "")
            self.ours_topic[topic] = ours
            if sets:
                self.topic_changes[topic] = ConfigChange(set=sets)
        rate = str(self.rate)
        for b in sorted(plan.brokers):
            current = state.broker_configs.get(b, {})
            to_set, ours_b = [], []
            for key in RATE_KEYS:
                value = current.get(key)
                if value is None:
                    to_set.append(key)
                    ours_b.append(key)
                elif value == rate and old.brokers:
                    ours_b.append(key)
                elif value != rate:
                    self.notes.append(f"note: broker {b} already has {key}={value}; left as it is")
            self.ours_broker[b] = tuple(ours_b)
            if to_set:
                self.broker_changes[b] = ConfigChange(set=dict.fromkeys(to_set, rate))
        return sorted(plan.brokers)

    def apply(self, admin: ClusterAdmin) -> list[str]:
        """Send the changes; the errors, one string per refused item."""
        self.armed = True
        errors: list[str] = []
        if self.topic_changes:
            res = admin.alter_topic_configs(self.topic_changes)
            errors += [f"topic {k}: {e}" for k, e in res.items() if e is not None]
        if self.broker_changes:
            res = admin.alter_broker_configs(self.broker_changes)
            errors += [f"{k}: {e}" for k, e in res.items() if e is not None]
        return errors

    def remove(self, admin: ClusterAdmin, *, dry_run: bool = False) -> list[str]:
        """Take back what ``apply`` set; the errors (empty when all went)."""
        self.armed = False
        try:
            if dry_run:
                configs = self.after
            else:
                state = admin.describe(sorted(self.ours_topic))
                configs = {t: dict(s.config) for t, s in state.topics.items()}
            topic_changes: dict[str, ConfigChange] = {}
            for topic, ours in sorted(self.ours_topic.items()):
                sets: dict[str, str] = {}
                deletes: list[str] = []
                for key in REPLICA_KEYS:
                    rest = removed(configs.get(topic, {}).get(key), ours.get(key, frozenset()))
                    if rest == "":
                        deletes.append(key)
                    elif rest is not None:
                        sets[key] = rest
                if sets or deletes:
                    topic_changes[topic] = ConfigChange(set=sets, delete=tuple(sorted(deletes)))
            broker_changes = {
                b: ConfigChange(delete=keys) for b, keys in sorted(self.ours_broker.items()) if keys
            }
            errors: list[str] = []
            if topic_changes:
                res = admin.alter_topic_configs(topic_changes)
                errors += [f"topic {k}: {e}" for k, e in res.items() if e is not None]
            if broker_changes:
                res = admin.alter_broker_configs(broker_changes)
                errors += [f"{k}: {e}" for k, e in res.items() if e is not None]
        except ClusterError as exc:
            errors = [str(exc)]
        return errors

    def listing(self) -> str:
        """What this throttler set, for a person to remove by hand."""
        parts = [
            f"brokers {sorted(b for b, k in self.ours_broker.items() if k)}: {', '.join(RATE_KEYS)}"
        ]
        parts += [
            f"topic {t}: {', '.join(sorted(k for k, v in ours.items() if v))}"
            for t, ours in sorted(self.ours_topic.items())
            if any(ours.values())
        ]
        return "; ".join(parts)
