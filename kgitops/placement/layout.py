"""The balancer's model: each topic's layout, the per-broker and per-topic counters, and the
one way a replica moves (``move_replica``), shared by ``kgitops.placement.balance`` (goals 2
and 3, replicas and bytes) and ``kgitops.placement.leaders`` (goals 2 and 4, preferred
leaders). A broker's replicas of a topic are indexed as sorted ints (``index_key``) so that
picking a partition by size is a bisect.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from kgitops.model import Broker
from kgitops.placement.racks import RackRule
from kgitops.units import human_bytes


@dataclass
class TopicLayout:
    """One topic as the balancer sees it. ``replicas``: after goal 1 (mutable lists);
    ``original``: live replicas; ``sizes``: bytes per partition (None: unknown);
    ``movable``: False for a static topic (it counts, never moves); ``frozen``: partitions
    that never move (in flight); ``replaceable``: the partitions whose new replicas may be
    placed again (None: all)."""

    name: str
    replicas: dict[int, list[int]]
    original: Mapping[int, Sequence[int]]
    sizes: Mapping[int, int | None]
    rack_aware: bool
    movable: bool = True
    frozen: Collection[int] = ()
    replaceable: Collection[int] | None = None
    reasons: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class BrokerLoad:
    bytes: int = 0
    replicas: int = 0
    leaders: int = 0


class Cluster:
    def __init__(self, brokers: Sequence[Broker], drain: Collection[int], by_count: bool) -> None:
        self.eligible = sorted(b.id for b in brokers if b.online and b.id not in set(drain))
        self.eligible_set = frozenset(self.eligible)
        racked = bool(brokers) and all(b.rack is not None for b in brokers)
        self.rack_of: dict[int, str] = {b.id: str(b.rack) for b in brokers} if racked else {}
        self.racked = racked
        self.racks = sorted({self.rack_of[b] for b in self.eligible}) if racked else []
        #: rack -> its eligible brokers, by id
        self.members = {r: [b for b in self.eligible if self.rack_of[b] == r] for r in self.racks}
        self.rule = RackRule.of(brokers, drain)
        self.by_count = by_count
        self.load: dict[int, BrokerLoad] = {b: BrokerLoad() for b in self.eligible}
        self.mean = 0.0
        self.replicas_mean = 0.0
        self._receivers: dict[tuple[tuple[int, ...], int, bool], list[int]] = {}

    def weight(self, size: int | None) -> int:
        return 1 if self.by_count else (size or 0)

    def amount(self, value: int) -> str:
        """A load as a reason words it: ``2.0 GiB``, or ``12 replicas`` when counting."""
        return f"{value} replicas" if self.by_count else human_bytes(value)

    def can_swap(self, replicas: Sequence[int], slot: int, new: int, rack_aware: bool) -> bool:
        """Whether ``replicas[slot]`` may become ``new``: not already there, and (rack-aware)
        the partition keeps as many racks and does not break the rack rule
        (``kgitops.placement.racks``)."""
        if new in replicas:
            return False
        if not rack_aware or not self.racked:
            return True
        old = replicas[slot]
        if self.rack_of.get(old) == self.rack_of.get(new):
            return True
        rule = self.rule
        after = [new if i == slot else b for i, b in enumerate(replicas)]
        if len(rule.racks(after)) < len(rule.racks(replicas)):
            return False
        return not rule.broken(after) or rule.broken(replicas)

    def receivers(self, replicas: Sequence[int], slot: int, rack_aware: bool) -> list[int]:
        """The eligible brokers ``replicas[slot]`` may become (``can_swap``), by id. The
        answer depends on the values alone, and a drain asks it of the same few replica lists
        in topic after topic: it is worked out once per distinct question for this balance."""
        key = (tuple(replicas), slot, rack_aware)
        found = self._receivers.get(key)
        if found is None:
            found = [n for n in self.eligible if self.can_swap(replicas, slot, n, rack_aware)]
            self._receivers[key] = found
        return found


def quota(total: int, holders: Sequence[int]) -> tuple[int, int]:
    n = len(holders)
    if n == 0:
        return 0, 0
    return total // n, -(-total // n)


P_BITS, S_BITS = 40, 60
P_MASK, S_MASK = (1 << P_BITS) - 1, (1 << S_BITS) - 1
PAID = 1 << (P_BITS + S_BITS)


def index_key(paid: bool, size: int, p: int) -> int:
    """A replica in a broker's index as one int, so that sorting and bisecting are fast:
    free replicas (placed by this plan) first, then by size, then partition."""
    return (PAID if paid else 0) | (min(size, S_MASK) << P_BITS) | p


class Topic:
    """Per-topic counters and shares for one ``TopicLayout``; adds its load to the cluster."""

    def __init__(self, layout: TopicLayout, cluster: Cluster) -> None:
        self.layout = layout
        self.cluster = cluster
        sizes, lists = layout.sizes, layout.replicas.values()
        count = Counter(chain.from_iterable(lists))  # counted in C
        leads = Counter(reps[0] for reps in lists if reps)
        weights: dict[int, int]
        weight_on: Mapping[int, int]
        if cluster.by_count:
            weights = dict.fromkeys(layout.replicas, 1)
            weight_on = count
        else:
            weights = {p: sizes.get(p) or 0 for p in layout.replicas}
            on: dict[int, int] = {}
            for reps, w in zip(lists, weights.values(), strict=True):
                for b in reps:
                    on[b] = on.get(b, 0) + w
            weight_on = on
        self.weights = weights
        for b, load in cluster.load.items():
            load.bytes += weight_on.get(b, 0)
            load.replicas += count[b]
            load.leaders += leads[b]
        self.count: dict[int, int] = {b: count[b] for b in cluster.eligible}
        self.leads: dict[int, int] = {b: leads[b] for b in cluster.eligible}
        self.shares: dict[int, tuple[int, int]] = {}
        self.avg = sum(weights.values()) / max(1, len(weights))
        self._index: dict[int, list[int]] | None = None
        self._set_shares()

    def _set_shares(self) -> None:
        cluster, layout = self.cluster, self.layout
        total = sum(self.count.values())
        parts = len(layout.replicas)
        rf = max((len(r) for r in layout.replicas.values()), default=0)
        per_rack = layout.rack_aware and cluster.racked and rf >= len(cluster.racks) > 0
        self.per_rack = per_rack
        if per_rack:
            for members in cluster.members.values():
                share = quota(sum(self.count[b] for b in members), members)
                for b in members:
                    self.shares[b] = share
        else:
            share = quota(total, cluster.eligible)
            self.shares = dict.fromkeys(cluster.eligible, share)
        lead_share = quota(parts, cluster.eligible)
        self.lead_shares = dict.fromkeys(cluster.eligible, lead_share)

    def size(self, p: int) -> int:
        return self.weights[p]

    def paid(self, p: int, broker: int) -> bool:
        """Moving ``broker``'s replica of ``p`` copies data (it was there before this plan)."""
        return broker in self.layout.original.get(p, ())

    def index(self) -> dict[int, list[int]]:
        """Per broker, its movable replicas of the topic as sorted ``_key`` ints."""
        if self._index is None:
            layout = self.layout
            original, weights, frozen = layout.original, self.weights, layout.frozen
            out: dict[int, list[int]] = {}
            for p, reps in layout.replicas.items():
                if frozen and p in frozen:
                    continue
                before = original.get(p, ())
                base = (min(weights[p], S_MASK) << P_BITS) | p
                for b in reps:
                    entries = out.get(b)
                    if entries is None:
                        entries = out[b] = []
                    entries.append(base | PAID if b in before else base)
            for entries in out.values():
                entries.sort()
            self._index = out
        return self._index

    def reindex(self, p: int, old: int, new: int) -> None:
        """Keep the index true after ``p``'s replica moved from ``old`` to ``new``."""
        if self._index is None:
            return
        size = self.weights[p]
        entries = self._index.get(old, [])
        key = index_key(self.paid(p, old), size, p)
        i = bisect_left(entries, key)
        if i < len(entries) and entries[i] == key:
            entries.pop(i)
        insort(self._index.setdefault(new, []), index_key(self.paid(p, new), size, p))


def note(layout: TopicLayout, p: int, why: str) -> None:
    layout.reasons.setdefault(p, []).append(why)


def move_replica(topic: Topic, p: int, slot: int, new: int, why: str) -> None:
    cluster = topic.cluster
    reps = topic.layout.replicas[p]
    old = reps[slot]
    size = topic.size(p)
    reps[slot] = new
    topic.reindex(p, old, new)
    for b, sign in ((old, -1), (new, +1)):
        if b in topic.count:
            topic.count[b] += sign
            load = cluster.load[b]
            load.bytes += sign * size
            load.replicas += sign
            if slot == 0:
                topic.leads[b] += sign
                load.leaders += sign
    note(topic.layout, p, why)
