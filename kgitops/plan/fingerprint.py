"""The state fingerprint: the digest of exactly the live state a plan depends on.

``state_fingerprint(state, topics)`` is ``("sha256:...", {topic: digest})``: broker ids,
racks and liveness, and per named topic its replicas per partition and topic configs (not
ISR, leaders or sizes). A plan records it; apply recomputes it and refuses a plan made on a
cluster that has changed since, and the per-topic digests (``topic_digest``) say which
topics changed. ``fingerprint_of`` checks a saved plan's fingerprint against its digests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from kgitops.model import Broker, ClusterState, PartitionTable
from kgitops.names import THROTTLED_REPLICAS_CONFIGS


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class _Reprs(dict[tuple[int, ...], str]):
    """repr of each distinct replica list, made once (lists repeat across partitions); and
    of each partition id list ``0..n-1`` (``ids``), the ids of nearly every topic."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: dict[int, str] = {}

    def __missing__(self, key: tuple[int, ...]) -> str:
        value = self[key] = repr(key)
        return value

    def ids(self, ids: list[int]) -> str:
        """``repr(ids)`` of sorted distinct partition ids, remembered when they are 0..n-1."""
        n = len(ids)
        if not n or ids[0] != 0 or ids[-1] != n - 1:  # distinct and sorted: then 0..n-1
            return repr(ids)
        return self.first(n)

    def first(self, n: int) -> str:
        """``repr`` of the ids ``0..n-1`` as a list, made once per ``n``."""
        found = self.ranges.get(n)
        if found is None:
            found = self.ranges[n] = repr(list(range(n)))
        return found


def topic_digest(state: ClusterState, topic: str, reprs: _Reprs | None = None) -> str:
    """The digest of one topic as a plan depends on it: replicas per partition and the configs
    set on the topic (throttles excepted), or ``absent``. Not ISR, leaders or sizes, which
    change all the time without making a plan wrong. A partition being reassigned counts as
    its target (Kafka lists target + removing until the move completes, then the target):
    a move that completes on its own between plan and apply does not make the plan stale,
    one that is cancelled (back to the old replicas) does. The text hashed is the ``repr`` of
    tuples of ints and strings, which is stable across machines and Python versions."""
    t = state.topics.get(topic)
    if t is None:
        return _digest("absent")
    cache = _Reprs() if reprs is None else reprs
    parts = t.partitions
    flying = state.reassignments.get(topic, {})
    ids: Sequence[int]
    replicas: Sequence[tuple[int, ...]]
    if isinstance(parts, PartitionTable):  # ids 0..n-1, the replica column as it is
        ids = range(len(parts))
        ids_text = cache.first(len(parts))
        replicas = parts.replicas
    else:
        ids = sorted(parts)
        ids_text = cache.ids(ids)
        replicas = [parts[p].replicas for p in ids]
    if flying:
        replicas = list(replicas)
        for i, p in enumerate(ids):
            move = flying.get(p)
            if move is not None and move.removing:
                replicas[i] = tuple(b for b in replicas[i] if b not in move.removing)
    text = ";".join(map(cache.__getitem__, replicas))
    config = sorted((k, v) for k, v in t.config.items() if k not in THROTTLED_REPLICAS_CONFIGS)
    return _digest(f"{ids_text}|{text}|{config!r}")


def state_fingerprint(state: ClusterState, topics: Iterable[str]) -> tuple[str, dict[str, str]]:
    """``("sha256:...", {topic: digest})`` over exactly the live state a plan depends on:
    broker ids, racks and liveness, and for each named topic (present or absent) its replicas
    per partition and topic configs. Apply recomputes it and refuses a plan made against a
    cluster that has changed since; the per-topic digests say which topics changed."""
    reprs = _Reprs()
    digests = {name: topic_digest(state, name, reprs) for name in sorted(set(topics))}
    return fingerprint_of(state.brokers, digests), digests


def fingerprint_of(brokers: Iterable[Broker], digests: Mapping[str, str]) -> str:
    """The state fingerprint of ``brokers`` and per-topic ``digests`` (``state_fingerprint``
    without the digesting): a saved plan's fingerprint can be checked against its digests."""
    ordered = [[b.id, b.rack, b.online] for b in sorted(brokers, key=lambda b: b.id)]
    hasher = hashlib.sha256()
    hasher.update(json.dumps(ordered).encode())
    for name in sorted(digests):
        hasher.update(f"\n{name}={digests[name]}".encode())
    return "sha256:" + hasher.hexdigest()


#: The digest of a topic that does not exist (``topic_digest`` of a name no state holds).
ABSENT_DIGEST = _digest("absent")
