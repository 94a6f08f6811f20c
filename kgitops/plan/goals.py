"""The diff's bridge to ``kgitops.placement.balance``: the whole cluster in, final targets out.

The diff first works out, per topic, what the spec demands (goal 1: RF, drains, rack rule;
``kgitops.placement.rebalance``). ``settle`` then hands every managed topic to the balancer at
once -- bytes and leaders are cluster-wide goals -- with every other partition (unmanaged
topics, topics this plan creates) as fixed load, and returns the targets that differ from
the live replicas, each reason naming the goal it serves. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kgitops.model import Broker, ClusterState
from kgitops.placement.balance import BYTES_TOLERANCE, Band, Mode, balance
from kgitops.placement.layout import TopicLayout
from kgitops.units import human_bytes


@dataclass(frozen=True)
class Pending:
    """One existing topic after goal 1: ``current`` live replicas (added partitions included,
    as placed), ``targets`` goal 1's changes with reasons, ``sizes`` bytes per partition."""

    topic: str
    current: Mapping[int, tuple[int, ...]]
    targets: Mapping[int, tuple[tuple[int, ...], str]]
    sizes: Mapping[int, int | None]
    rack_aware: bool
    movable: bool
    frozen: Collection[int] = ()
    replaceable: Collection[int] | None = None


def settle(
    pending: Sequence[Pending],
    state: ClusterState,
    fixed: Sequence[tuple[Sequence[int], int | None]],
    *,
    drain: Collection[int],
    mode: Mode,
) -> tuple[dict[str, dict[int, tuple[tuple[int, ...], str]]], Band | None]:
    """Per topic, partition -> (target, reason) for every partition that changes; and where
    the bytes goal ended (``--rebalance`` only)."""
    layouts = [
        TopicLayout(
            name=item.topic,
            replicas={
                p: list(item.targets[p][0] if p in item.targets else r)
                for p, r in item.current.items()
            },
            original=item.current,
            sizes=item.sizes,
            rack_aware=item.rack_aware,
            movable=item.movable,
            frozen=item.frozen,
            # only partitions goal 1 changed can hold replicas this plan places
            replaceable=item.replaceable if item.replaceable is not None else list(item.targets),
        )
        for item in pending
    ]
    band = balance(layouts, _brokers(state), drain=drain, mode=mode, fixed=fixed)
    out: dict[str, dict[int, tuple[tuple[int, ...], str]]] = {}
    for item, layout in zip(pending, layouts, strict=True):
        changed: dict[int, tuple[tuple[int, ...], str]] = {}
        for p, reps in layout.replicas.items():
            target = tuple(reps)
            if target == item.current[p]:
                continue
            why = [goal_one(item.targets[p][1])] if p in item.targets else []
            why += layout.reasons.get(p, [])
            changed[p] = (target, _reason(why))
        if changed:
            out[item.topic] = changed
    return out, band


BAND_SHOWN = 10


def band_unreached(band: Band | None) -> tuple[str, dict[str, object]] | None:
    """The ``BALANCE_BAND_UNREACHED`` warning (message, data) when ``--rebalance`` left
    brokers outside goal 3's band, or None. Bytes are replica counts when a size is unknown::

        bytes per broker stay outside 10% of the mean (2.0 GiB) after --rebalance: broker 0
        3.1 GiB (+55%); the best spread reached is 1.8 GiB .. 3.1 GiB (-10% .. +55%) ...
    """
    if band is None or not band.outside:
        return None
    unit = _replicas if band.by_count else human_bytes
    what = "replicas" if band.by_count else "bytes"

    def pct(v: int) -> str:
        return f"{(v - band.mean) / band.mean:+.0%}"

    outside = band.outside
    named = [f"broker {b} {unit(v)} ({pct(v)})" for b, v in list(outside.items())[:BAND_SHOWN]]
    if len(outside) > BAND_SHOWN:
        named.append(f"and {len(outside) - BAND_SHOWN} more")
    lo, hi = min(band.loads.values()), max(band.loads.values())
    message = (
        f"{what} per broker stay outside {BYTES_TOLERANCE:.0%} of the mean "
        f"({unit(round(band.mean))}) after --rebalance: {', '.join(named)}; the best spread "
        f"reached is {unit(lo)} .. {unit(hi)} ({pct(lo)} .. {pct(hi)}): no further replica "
        "move or swap keeps every topic's even spread and the rack rule (a partition larger than "
        "the band, or too few partitions to share)"
    )
    data: dict[str, object] = {
        "unit": what,
        "mean": round(band.mean),
        "brokers": {str(b): v for b, v in outside.items()},
        "min": lo,
        "max": hi,
        "spread": [round((lo - band.mean) / band.mean, 4), round((hi - band.mean) / band.mean, 4)],
    }
    return message, data


def _replicas(n: int) -> str:
    return f"{n} replica(s)"


def goal_one(reason: str) -> str:
    """Goal 1's reasons (what the spec demands: RF, drains, the rack rule), labelled."""
    return reason if reason.startswith("goal ") else f"goal 1, the spec: {reason}"


def _reason(why: Sequence[str]) -> str:
    """Every goal a move serves, once each, in the order they were met."""
    return "; ".join(dict.fromkeys(w for w in why if w)) or "goal 2, topic spread"


def _brokers(state: ClusterState) -> tuple[Broker, ...]:
    return tuple(sorted(state.brokers, key=lambda b: b.id))


def drain_hotspot(
    moves: Sequence[tuple[Sequence[int], Sequence[int], int, bool]],
    brokers: Sequence[Broker],
    drain: Collection[int],
) -> tuple[int, float, int, int, str] | None:
    """When one broker takes more than half of what the drained brokers hand over:
    (broker, share, bytes it takes, bytes in all, why). ``moves``: (source, target, size,
    rack-aware) per moved partition. Bytes are replica counts when no size is known."""
    drained = set(drain)
    taken: dict[int, int] = {}
    forced: dict[int, int] = {}
    by_count = all(size <= 0 for _, _, size, _ in moves)
    rack_of = {b.id: b.rack for b in brokers}
    racks = {b.rack for b in brokers if b.rack is not None and b.online and b.id not in drained}
    for source, target, size, rack_aware in moves:
        gone = [b for b in source if b in drained]
        if not gone:
            continue
        weight = 1 if by_count else size
        for b in target:
            if b in source:
                continue
            taken[b] = taken.get(b, 0) + weight
            if rack_aware and len(target) >= len(racks) > 0:
                forced[b] = forced.get(b, 0) + weight
    total = sum(taken.values())
    if not total:
        return None
    broker, most = max(taken.items(), key=lambda kv: (kv[1], -kv[0]))
    share = most / total
    if share <= 0.5:
        return None
    rack = rack_of.get(broker)
    peers = [
        b.id
        for b in brokers
        if b.rack == rack and rack is not None and b.online and b.id not in drained
    ]
    if rack is not None and peers == [broker] and forced.get(broker):
        why = (
            f"the replication factor equals the rack count ({len(racks)}), so every partition "
            f"keeps a replica in rack {rack}, and broker {broker} is the only broker of {rack} "
            "left; add a broker to that rack to spread the load"
        )
    elif rack is not None and peers == [broker]:
        why = f"broker {broker} is the only eligible broker of rack {rack}"
    else:
        why = (
            "the other eligible brokers already hold their share of these topics "
            "(a plan with --rebalance evens the cluster out afterwards)"
        )
    return broker, share, most, total, why
