"""Replication throttles around a reassignment, one window at a time, and leftovers removed.

What a move needs throttled, and which throttle configs are leftovers, is decided in
``kgitops.plan.throttles`` (pure). Here they are sent:

* ``enter(moves)``: as partitions enter the ``maxConcurrentMoves`` window, APPEND their
  entries to the topics' ``leader/follower.replication.throttled.replicas`` (one
  IncrementalAlterConfigs for all topics) and SET both rates on the *online* brokers newly
  involved (one request per broker: Kafka takes a broker's config only on that broker);
* ``leave(moves, still)``: as partitions complete (or are cancelled), SUBTRACT their entries
  and DELETE the rates of brokers no move still in the window involves;
* ``finish()``: DELETE the throttled-replicas keys SUBTRACT left empty (Kafka keeps ``""``).

Example: partition 0 of ``a`` moves from [1, 2] to [1, 2, 3] at 50 MB/s; while it is in the
window::

    brokers 1, 2, 3: leader.replication.throttled.rate = follower... = 50000000
    topic a: leader.replication.throttled.replicas   APPEND "0:1,0:2"
             follower.replication.throttled.replicas APPEND "0:3"

APPEND/SUBTRACT (ops 2 and 3) change only these items, so entries another writer adds in
between are kept -- no read-then-SET. Throttles are kgitops' own (docs/apply.md): a rate
already set on a broker is replaced by the configured one, and a plan removes any throttle
no move in flight needs (``~ remove_throttles``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kgitops.apply.record import ThrottleRecord
from kgitops.cluster.port import ClusterAdmin, ConfigChange
from kgitops.errors import ClusterError
from kgitops.model import ClusterState
from kgitops.plan.throttles import (
    ALL,
    RATE_KEYS,
    REPLICA_KEYS,
    Entry,
    MoveThrottle,
    format_entries,
    in_flight,
    needed,
    parse_entries,
)


class Throttler:
    """Sends the throttle changes of a window as it fills and drains (module docstring).

    ``state`` is the cluster as read before the first window: it says which topics already
    throttle every replica (``*``: nothing to append) and which brokers are online.
    ``rate`` None means the cluster.yaml sets no throttle: nothing is sent."""

    def __init__(
        self,
        admin: ClusterAdmin,
        rate: int | None,
        state: ClusterState,
        record: ThrottleRecord | None = None,
    ) -> None:
        self.admin = admin
        self.record = record
        self.rate = rate
        self.online = state.online_broker_ids
        self.everything = {
            (name, key)
            for name, t in state.topics.items()
            for key in REPLICA_KEYS
            if parse_entries(t.config.get(key)) is None
        }
        self.present: dict[tuple[str, str], set[Entry]] = {
            (name, key): set(parse_entries(t.config.get(key)) or ())
            for name, t in state.topics.items()
            for key in REPLICA_KEYS
        }
        self.rated: set[int] = set()
        self.touched: set[tuple[str, str]] = set()
        self.notes: list[str] = []
        self._rates_before = {
            b: {k: v for k, v in c.items() if k in RATE_KEYS}
            for b, c in state.broker_configs.items()
        }

    @property
    def armed(self) -> bool:
        """Whether some throttle this throttler set may still be on the cluster."""
        return bool(self.rated) or any(self.present.get(k) for k in self.touched)

    def enter(self, moves: Sequence[MoveThrottle]) -> list[str]:
        """Throttle ``moves`` as they enter the window; the errors, one string per item."""
        if self.rate is None or not moves:
            return []
        need = needed(moves)
        topic_changes: dict[str, ConfigChange] = {}
        for topic, keys in need.replicas.items():
            append = {}
            for key, entries in keys.items():
                if (topic, key) in self.everything:
                    continue
                append[key] = format_entries(entries)
                self.present.setdefault((topic, key), set()).update(entries)
                self.touched.add((topic, key))
            if append:
                topic_changes[topic] = ConfigChange(append=append)
        rate = str(self.rate)
        broker_changes = {}
        for b in sorted(need.brokers - self.rated):
            if b not in self.online:
                continue  # Kafka takes a broker's config only on that broker
            before = self._rates_before.get(b, {})
            for key, value in sorted(before.items()):
                if value != rate:
                    self.notes.append(f"note: broker {b} had {key}={value}; set to {rate}")
            broker_changes[b] = ConfigChange(set=dict.fromkeys(RATE_KEYS, rate))
            self.rated.add(b)
        self.write_record()  # before the throttles are set: a kill -9 leaves a true record
        return self._send(topic_changes, broker_changes)

    def leave(self, moves: Sequence[MoveThrottle], still: Iterable[MoveThrottle]) -> list[str]:
        """Take out the throttles of ``moves`` (completed or cancelled) that none of ``still``
        (the moves left in the window) needs; the errors."""
        if not moves or self.rate is None:
            return []
        gone, keep = needed(moves), needed(still)
        topic_changes: dict[str, ConfigChange] = {}
        for topic, keys in gone.replicas.items():
            subtract = {}
            for key, entries in keys.items():
                if (topic, key) in self.everything:
                    continue
                out = entries - keep.replicas.get(topic, {}).get(key, frozenset())
                if out:
                    subtract[key] = format_entries(out)
                    self.present.setdefault((topic, key), set()).difference_update(out)
            if subtract:
                topic_changes[topic] = ConfigChange(subtract=subtract)
        broker_changes = {
            b: ConfigChange(delete=RATE_KEYS) for b in sorted(self.rated - keep.brokers)
        }
        self.rated &= keep.brokers
        errors = self._send(topic_changes, broker_changes)
        self.write_record()
        return errors

    def clear(self, moves: Sequence[MoveThrottle], keep: Iterable[MoveThrottle]) -> list[str]:
        """Take out what an earlier (``--no-wait``) apply set for ``moves`` that have ended:
        their entries, and the rates of their brokers that neither this throttler nor any
        of ``keep`` (moves in flight another tool started) still needs. Unlike
        :meth:`leave`, also when this run sets no throttle itself; ``finish`` then deletes
        the keys left empty."""
        if not moves:
            return []
        gone, need = needed(moves), needed(keep)
        topic_changes: dict[str, ConfigChange] = {}
        for topic, keys in gone.replicas.items():
            subtract = {}
            for key, entries in keys.items():
                if (topic, key) in self.everything:
                    continue
                out = entries - need.replicas.get(topic, {}).get(key, frozenset())
                if out:
                    subtract[key] = format_entries(out)
                    self.present.setdefault((topic, key), set()).difference_update(out)
                    self.touched.add((topic, key))
            if subtract:
                topic_changes[topic] = ConfigChange(subtract=subtract)
        broker_changes = {
            b: ConfigChange(delete=tuple(k for k in RATE_KEYS if k in self._rates_before[b]))
            for b in sorted(gone.brokers - need.brokers - self.rated)
            if b in self.online and self._rates_before.get(b)
        }
        return self._send(topic_changes, broker_changes)

    def finish(self, *, read: bool = True) -> list[str]:
        """DELETE the throttled-replicas keys this throttler left empty (Kafka's SUBTRACT
        keeps ``""``); ``read=False`` (a dry run) decides from what was sent."""
        topics = sorted({t for t, _ in self.touched})
        if not topics:
            return []
        try:
            if read:
                state = self.admin.describe(topics)
                configs: Mapping[str, Mapping[str, str]] = {
                    n: t.config for n, t in state.topics.items()
                }
                empty = {
                    (n, k)
                    for n, c in configs.items()
                    for k in REPLICA_KEYS
                    if (n, k) in self.touched and k in c and not c[k].strip()
                }
            else:
                empty = {k for k in self.touched if not self.present.get(k)}
        except ClusterError as exc:
            return [str(exc)]
        changes: dict[str, ConfigChange] = {}
        for topic, key in sorted(empty):
            old = changes.get(topic, ConfigChange())
            changes[topic] = ConfigChange(delete=(*old.delete, key))
        self.touched -= empty
        errors = self._send(changes, {})
        self.write_record()
        return errors

    def write_record(self, state: str = "running") -> None:
        """Write down what this throttler has (or is about to have) set."""
        if self.record is None:
            return
        topics: dict[str, dict[str, set[Entry]]] = {}
        for topic, key in sorted(self.touched):
            entries = self.present.get((topic, key))
            if entries:
                topics.setdefault(topic, {})[key] = entries
        self.record.save(self.rated, topics, state=state)

    def _send(
        self, topic_changes: Mapping[str, ConfigChange], broker_changes: Mapping[int, ConfigChange]
    ) -> list[str]:
        errors: list[str] = []
        try:
            if topic_changes:
                res = self.admin.alter_topic_configs(topic_changes)
                errors += [f"topic {k}: {e}" for k, e in res.items() if e is not None]
            if broker_changes:
                res = self.admin.alter_broker_configs(broker_changes)
                errors += [f"{k}: {e}" for k, e in res.items() if e is not None]
        except ClusterError as exc:
            errors.append(str(exc))
        return errors

    def listing(self) -> str:
        """What may be left, for a person to remove by hand (or the next plan)."""
        parts = []
        if self.rated:
            parts.append(f"brokers {sorted(self.rated)}: {', '.join(RATE_KEYS)}")
        parts += [f"topic {t}: {k}" for t, k in sorted(self.touched) if self.present.get((t, k))]
        return "; ".join(parts) or "nothing"


def removal(
    remove: Mapping[str, str], keep: frozenset[Entry] | None, key: str
) -> tuple[str | None, bool]:
    """How to take ``remove[key]`` out of a topic: (entries to SUBTRACT, whether to DELETE
    the key). ``*`` and ``""`` go whole; listed entries go except those in ``keep`` (needed
    by a move in flight now)."""
    value = remove[key]
    if value.strip() in (ALL, ""):
        return None, True
    entries = parse_entries(value) or frozenset()
    out = entries - (keep or frozenset())
    return (format_entries(out) if out else None), False


def needed_now(
    state: ClusterState,
) -> tuple[Mapping[str, Mapping[str, frozenset[Entry]]], frozenset[int]]:
    """What the moves in flight in ``state`` need throttled (per topic and key; brokers)."""
    need = needed(in_flight(state))
    return need.replicas, need.brokers
