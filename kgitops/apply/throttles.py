"""Replication throttles around a reassignment, one window at a time, and leftovers removed.

What a move needs throttled, and which throttle configs are leftovers, is decided in
``kgitops.plan.throttles`` (pure). Here they are sent:

* ``enter(moves)``: as partitions enter the ``maxConcurrentMoves`` window, APPEND their
  entries to the topics' ``leader/follower.replication.throttled.replicas`` (one
  IncrementalAlterConfigs for all topics) and SET both rates on the *online* brokers newly
  involved (one request per broker: Kafka takes a broker's config only on that broker);
* ``leave(moves, still)``: as partitions complete (or are cancelled), SUBTRACT their entries
  and DELETE the rates of brokers no move still in the window involves;
* ``finish()``: take out whatever is still listed (a request a signal cut short), DELETE the
  throttled-replicas keys SUBTRACT left empty (Kafka keeps ``""``), and read the cluster back.

One window model for every request: what a request may set is in ``present`` / ``rated``
(and the throttle record) *before* it is sent; what it removes leaves them only once the
cluster acknowledged it. So a signal anywhere leaves the record a superset of the cluster.

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
    Needed,
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
        self.ever_rated: set[int] = set()
        self.sent_entries: dict[tuple[str, str], set[Entry]] = {}
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
                self.sent_entries.setdefault((topic, key), set()).update(entries)
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
            self.ever_rated.add(b)
        self.write_record()  # before the throttles are set: a kill -9 leaves a true record
        return self._send(topic_changes, broker_changes)[0]

    def leave(self, moves: Sequence[MoveThrottle], still: Iterable[MoveThrottle]) -> list[str]:
        """Take out the throttles of ``moves`` (completed or cancelled) that none of ``still``
        (the moves left in the window) needs; the errors. An entry or a rate counts as gone
        (and leaves the record) only once the cluster answered its removal: one the request
        did not reach, or that was cut short by a signal, stays listed, and ``finish`` tries
        it again."""
        if not moves or self.rate is None:
            return []
        gone, keep = needed(moves), needed(still)
        topic_changes = _subtract_changes(self._unneeded(gone, keep))
        return self._take_out(topic_changes, sorted(self.rated - keep.brokers))

    def _unneeded(self, gone: Needed, keep: Needed) -> dict[tuple[str, str], frozenset[Entry]]:
        """The entries of ``gone`` that ``keep`` does not need, per (topic, key); a key this
        throttler set to ``*`` (``everything``) is left to ``finish``."""
        out: dict[tuple[str, str], frozenset[Entry]] = {}
        for topic, keys in gone.replicas.items():
            for key, entries in keys.items():
                if (topic, key) in self.everything:
                    continue
                left = entries - keep.replicas.get(topic, {}).get(key, frozenset())
                if left:
                    out[(topic, key)] = left
        return out

    def _take_out(
        self, topic_changes: Mapping[str, ConfigChange], brokers: Sequence[int]
    ) -> list[str]:
        """Send the SUBTRACTs of ``topic_changes`` and DELETE the rates of ``brokers``; what
        the cluster acknowledged leaves ``present`` / ``rated`` and the record."""
        broker_changes = {b: ConfigChange(delete=RATE_KEYS) for b in brokers}
        errors, refused = self._send(topic_changes, broker_changes)
        for topic, change in topic_changes.items():
            if topic in refused:
                continue
            for key, value in change.subtract.items():
                self.present.setdefault((topic, key), set()).difference_update(
                    parse_entries(value) or ()
                )
        self.rated -= {b for b in brokers if f"broker:{b}" not in refused}
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
        unneeded = self._unneeded(gone, need)
        for topic_key, out in unneeded.items():
            self.present.setdefault(topic_key, set()).difference_update(out)
            self.touched.add(topic_key)
        topic_changes = _subtract_changes(unneeded)
        broker_changes = {
            b: ConfigChange(delete=tuple(k for k in RATE_KEYS if k in self._rates_before[b]))
            for b in sorted(gone.brokers - need.brokers - self.rated)
            if b in self.online and self._rates_before.get(b)
        }
        return self._send(topic_changes, broker_changes)[0]

    def finish(self, *, read: bool = True) -> list[str]:
        """The end of a run with no move of its own left in flight: take out every entry and
        rate this throttler may still have set (those a cut-short request left behind
        included), DELETE the throttled-replicas keys that left empty (Kafka's SUBTRACT keeps
        ``""``), then read the cluster back: the errors name whatever of this run is still
        set, so "removed" is said only of what is gone. ``read=False`` (a dry run) decides
        from what was sent."""
        if self.rate is None:
            return []
        leftover: dict[str, ConfigChange] = {}
        for topic, key in sorted(self.touched):
            entries = self.present.get((topic, key), set()) & self.sent_entries.get(
                (topic, key), set()
            )
            if entries and (topic, key) not in self.everything:
                old = leftover.get(topic, ConfigChange())
                leftover[topic] = ConfigChange(
                    subtract={**old.subtract, key: format_entries(entries)}
                )
        errors = self._take_out(leftover, sorted(self.rated))
        topics = sorted({t for t, _ in self.touched})
        if not topics and not self.ever_rated:
            return errors
        try:
            if not read:
                empty = {k for k in self.touched if not self.present.get(k)}
                self.touched -= empty
                changes = _deletes(empty)
                return errors + self._send(changes, {})[0]
            errors += self._drop_empty()
            errors += self._still_set(self.admin.describe(topics))
        except ClusterError as exc:
            errors.append(f"could not read the cluster back: {exc}")
        return errors

    def drop_empty(self) -> list[str]:
        """The end of a run that leaves moves running (their throttles stay): DELETE the
        throttled-replicas keys SUBTRACT left ``""`` on the topics this throttler touched,
        as ``finish`` does; the errors."""
        try:
            return self._drop_empty()
        except ClusterError as exc:
            return [f"could not read the cluster back: {exc}"]

    def _drop_empty(self) -> list[str]:
        """``drop_empty``, raising ClusterError when the topics cannot be read."""
        topics = sorted({t for t, _ in self.touched})
        if not topics:
            return []
        state = self.admin.describe(topics)
        empty = {
            (n, k)
            for n, t in state.topics.items()
            for k in REPLICA_KEYS
            if (n, k) in self.touched and k in t.config and not t.config[k].strip()
        }
        errors, refused = self._send(_deletes(empty), {})
        self.touched -= {(t, k) for t, k in empty if t not in refused}
        self.write_record()
        return errors

    def _still_set(self, state: ClusterState) -> list[str]:
        """What ``state`` still holds of the throttles this throttler set: its entries on the
        topics it touched, a rate on a broker it rated."""
        left = []
        for (topic, key), entries in sorted(self.sent_entries.items()):
            t = state.topics.get(topic)
            if t is None or key not in t.config or (topic, key) in self.everything:
                continue
            live = parse_entries(t.config[key])
            still = sorted(entries if live is None else entries & live)
            if still:
                left.append(f"topic {topic}: {key} still holds {format_entries(still)}")
        for b in sorted(self.ever_rated):
            keys = [k for k in RATE_KEYS if k in state.broker_configs.get(b, {})]
            if keys:
                left.append(f"broker {b}: {', '.join(keys)} still set")
                self.rated.add(b)
        return left

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
    ) -> tuple[list[str], set[str]]:
        """Send the changes; (the errors, the items -- topic names, ``broker:N`` -- not
        acknowledged). A request that failed as a whole leaves all its items unacknowledged."""
        errors: list[str] = []
        refused: set[str] = set()
        if topic_changes:
            try:
                res = self.admin.alter_topic_configs(topic_changes)
            except ClusterError as exc:
                errors.append(str(exc))
                refused |= set(topic_changes)
            else:
                errors += [f"topic {k}: {e}" for k, e in res.items() if e is not None]
                refused |= {k for k, e in res.items() if e is not None}
        if broker_changes:
            try:
                res = self.admin.alter_broker_configs(broker_changes)
            except ClusterError as exc:
                errors.append(str(exc))
                refused |= {f"broker:{b}" for b in broker_changes}
            else:
                errors += [f"{k}: {e}" for k, e in res.items() if e is not None]
                refused |= {k for k, e in res.items() if e is not None}
        return errors, refused

    def listing(self) -> str:
        """What may be left, for a person to remove by hand (or the next plan)."""
        parts = []
        if self.rated:
            parts.append(f"brokers {sorted(self.rated)}: {', '.join(RATE_KEYS)}")
        parts += [f"topic {t}: {k}" for t, k in sorted(self.touched) if self.present.get((t, k))]
        return "; ".join(parts) or "nothing"


def _deletes(keys: Iterable[tuple[str, str]]) -> dict[str, ConfigChange]:
    """One ConfigChange per topic DELETEing its ``keys``."""
    changes: dict[str, ConfigChange] = {}
    for topic, key in sorted(keys):
        old = changes.get(topic, ConfigChange())
        changes[topic] = ConfigChange(delete=(*old.delete, key))
    return changes


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


def _subtract_changes(
    unneeded: Mapping[tuple[str, str], frozenset[Entry]],
) -> dict[str, ConfigChange]:
    """One SUBTRACT per topic of the entries ``unneeded`` lists per (topic, key)."""
    per_topic: dict[str, dict[str, str]] = {}
    for (topic, key), entries in unneeded.items():
        per_topic.setdefault(topic, {})[key] = format_entries(entries)
    return {topic: ConfigChange(subtract=subtract) for topic, subtract in per_topic.items()}


def needed_now(
    state: ClusterState,
) -> tuple[Mapping[str, Mapping[str, frozenset[Entry]]], frozenset[int]]:
    """What the moves in flight in ``state`` need throttled (per topic and key; brokers)."""
    need = needed(in_flight(state))
    return need.replicas, need.brokers
