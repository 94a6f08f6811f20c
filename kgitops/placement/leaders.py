"""Goals 2 and 4 of a rebalance for preferred leaders: per topic within one of the even
share, then even across the cluster, by reordering replicas (no data moves). ``plan
--leaders`` runs only these. A hand-over goes from a broker above the share to a follower of
the same partition below it, or along the shortest chain of such hand-overs through brokers
at their share (A leads p where B follows, B leads q where C follows, ...).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from kgitops.placement.layout import Cluster, Topic, note


def _lead_swap(topic: Topic, p: int, slot: int, why: str) -> None:
    reps = topic.layout.replicas[p]
    old, new = reps[0], reps[slot]
    reps[0], reps[slot] = new, old
    load = topic.cluster.load
    for b, sign in ((old, -1), (new, +1)):
        if b in topic.leads:
            topic.leads[b] += sign
            load[b].leaders += sign
    note(topic.layout, p, why)


def spread_leaders(topic: Topic) -> None:
    """Per topic, preferred leaders per broker inside the even share: a follower of a
    partition takes its leadership, or a chain of such swaps through brokers at their share
    (A leads p where B follows, B leads q where C follows...), C being below it."""
    cluster, layout = topic.cluster, topic.layout
    leads = topic.leads
    led: dict[int, list[int]] = {b: [] for b in cluster.eligible}
    for p in sorted(layout.replicas):
        reps = layout.replicas[p]
        if reps and reps[0] in led and p not in layout.frozen:
            led[reps[0]].append(p)
    stuck: set[int] = set()
    for strict in (True, False):
        while True:
            under_any = any(leads[b] < topic.lead_shares[b][0] for b in cluster.eligible)
            donors = [
                b
                for b in cluster.eligible
                if b not in stuck
                and (
                    leads[b] > topic.lead_shares[b][1]
                    or (not strict and under_any and leads[b] > topic.lead_shares[b][0])
                )
            ]
            if not donors or (not strict and not under_any):
                break
            donor = max(donors, key=lambda b: (leads[b], cluster.load[b].leaders, -b))
            path = _lead_path(topic, led, donor, strict)
            if path is None:
                stuck.add(donor)
                continue
            for giver, p, taker in path:
                lo, hi = topic.lead_shares[taker]
                even = f"{lo}" if lo == hi else f"{lo}-{hi}"
                _lead_swap(
                    topic,
                    p,
                    layout.replicas[p].index(taker),
                    f"goal 2, leader spread: {layout.name} had {leads[giver]} preferred "
                    f"leader(s) on broker {giver} and {leads[taker]} on broker {taker}, "
                    f"even is {even}",
                )
                led[giver].remove(p)
                led[taker].append(p)
            stuck.clear()
        stuck.clear()


def _lead_path(
    topic: Topic, led: Mapping[int, list[int]], donor: int, strict: bool
) -> list[tuple[int, int, int]] | None:
    """The shortest chain of leadership hand-overs from ``donor`` to a broker below the
    share, as (giver, partition, taker) from the end back to the donor."""
    cluster, layout, leads = topic.cluster, topic.layout, topic.leads
    eligible = cluster.eligible_set
    parent: dict[int, tuple[int, int]] = {donor: (-1, -1)}
    queue = [donor]
    for b in queue:
        for p in led.get(b, ()):
            for f in layout.replicas[p][1:]:
                if f in parent or f not in eligible:
                    continue
                parent[f] = (b, p)
                lo, hi = topic.lead_shares[f]
                if leads[f] < (hi if strict else lo):
                    path = []
                    node = f
                    while node != donor:
                        giver, q = parent[node]
                        path.append((giver, q, node))
                        node = giver
                    return path
                queue.append(f)
    return None


def even_leaders(cluster: Cluster, topics: Sequence[Topic], rounds: int = 1_000_000) -> None:
    """Goal 4: hand preferred leadership from brokers above the cluster's even share to
    followers below it, where both stay inside the topic's leader share."""
    load = cluster.load
    n = len(cluster.eligible)
    total = sum(v.leaders for v in load.values())
    lo, hi = total // n, -(-total // n)
    if all(lo <= load[b].leaders <= hi for b in cluster.eligible):
        return
    # per broker, per topic (index), the partitions it leads
    led: dict[int, dict[int, list[int]]] = {b: {} for b in cluster.eligible}
    for ti, t in enumerate(topics):
        frozen = t.layout.frozen
        for p, reps in t.layout.replicas.items():
            if reps and reps[0] in led and not (frozen and p in frozen):
                led[reps[0]].setdefault(ti, []).append(p)
    even = f"{lo}" if lo == hi else f"{lo}-{hi}"
    stuck: set[int] = set()
    for _ in range(rounds):
        over = [b for b in cluster.eligible if load[b].leaders > hi and b not in stuck]
        under = {b for b in cluster.eligible if load[b].leaders < lo}
        if not over and not under:
            return
        donors = over or [b for b in cluster.eligible if load[b].leaders > lo and b not in stuck]
        takers = under or {b for b in cluster.eligible if load[b].leaders < hi}
        if not donors or not takers:
            return
        donor = max(donors, key=lambda b: (load[b].leaders, -b))
        found = _lead_candidate(topics, led[donor], donor, takers)
        if found is None:
            stuck.add(donor)
            continue
        ti, i, slot = found
        p = led[donor][ti].pop(i)
        t = topics[ti]
        taker = t.layout.replicas[p][slot]
        _lead_swap(
            t,
            p,
            slot,
            f"goal 4, leaders: broker {donor} led {load[donor].leaders} partitions and broker "
            f"{taker} {load[taker].leaders}, even is {even}",
        )
        led[taker].setdefault(ti, []).append(p)
        stuck.clear()


def _lead_candidate(
    topics: Sequence[Topic], led: Mapping[int, list[int]], donor: int, takers: Collection[int]
) -> tuple[int, int, int] | None:
    """(topic index, index in its list, follower slot) of a partition the donor leads whose
    follower in ``takers`` may take it, both staying inside the topic's leader share. Topics
    where the donor is at its lower share are skipped whole."""
    for ti, parts in led.items():
        t = topics[ti]
        if not parts or t.leads[donor] - 1 < t.lead_shares[donor][0]:
            continue
        replicas, leads, shares = t.layout.replicas, t.leads, t.lead_shares
        for i, p in enumerate(parts):
            reps = replicas[p]
            for slot in range(1, len(reps)):
                b = reps[slot]
                if b in takers and leads[b] + 1 <= shares[b][1]:
                    return ti, i, slot
    return None
