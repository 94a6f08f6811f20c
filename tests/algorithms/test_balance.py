"""The goals of ``plan --rebalance`` (kgitops.placement.balance), through the planner: worked
examples with exact answers, the demo scale-out of issue 14, and hypothesis properties (a
second rebalance right after finds nothing; racks never fewer; shares within one)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.placement.assignment import assign_replicas
from kgitops.placement.balance import balance
from kgitops.placement.layout import TopicLayout
from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan
from kgitops.plan.value import Plan
from tests.planner.planner_builders import specs, topic

GiB, MiB = 1 << 30, 1 << 20
AZ = ("az1", "az2", "az3")
DEMO_SIZES = {"shop.orders": 2 * GiB, "web.clicks": 500 * MiB, "payments.transactions": 100 * MiB}
DEMO_SHAPE = {
    "shop.orders": (12, 3, 0),
    "web.clicks": (48, 2, 2),
    "payments.transactions": (24, 3, 1),
}


def racked(n: int) -> tuple[Broker, ...]:
    return tuple(Broker(i, AZ[i % 3]) for i in range(n))


def cluster_state(
    brokers: Sequence[Broker],
    assignments: Mapping[str, Mapping[int, Sequence[int]]],
    sizes: Mapping[str, int | None],
) -> ClusterState:
    return ClusterState(
        brokers=tuple(brokers),
        topics={
            name: TopicState(
                name,
                {p: PartitionState(tuple(r), tuple(r), r[0], sizes[name]) for p, r in a.items()},
            )
            for name, a in assignments.items()
        },
    )


def after(state: ClusterState, plan: Plan) -> ClusterState:
    """The cluster once ``plan``'s moves are done (preferred leaders elected)."""
    topics = dict(state.topics)
    for a in plan.of_kind(Reassign):
        t = topics[a.topic]
        parts = dict(t.partitions)
        for p, m in a.moves.items():
            ps = parts[p]
            parts[p] = PartitionState(m.target, m.target, m.target[0], ps.size_bytes)
        topics[a.topic] = TopicState(t.name, parts, t.config)
    return ClusterState(brokers=state.brokers, topics=topics)


def demo(n_brokers: int) -> tuple[ClusterState, list[object]]:
    """The demo cluster of issue 14, placed by AdminUtils on brokers 0-5, seen with
    ``n_brokers`` brokers."""
    old = racked(6)
    assignments = {
        name: assign_replicas(old, p, rf, start_index=start, rack_aware=True)
        for name, (p, rf, start) in DEMO_SHAPE.items()
    }
    wanted = [topic(name, p, rf, placement="rack-aware") for name, (p, rf, _) in DEMO_SHAPE.items()]
    return cluster_state(racked(n_brokers), assignments, DEMO_SIZES), wanted


def per_broker(state: ClusterState) -> tuple[Counter[int], Counter[int], Counter[int]]:
    size, count, lead = Counter[int](), Counter[int](), Counter[int]()
    for t in state.topics.values():
        for ps in t.partitions.values():
            for i, b in enumerate(ps.replicas):
                size[b] += ps.size_bytes or 0
                count[b] += 1
                lead[b] += i == 0
    return size, count, lead


def spread(values: Sequence[int]) -> int:
    return max(values) - min(values)


# ------------------------------------------------------------------ worked examples


def test_docstring_example_gives_the_new_broker_its_share_and_a_leader() -> None:
    current = {0: (0, 1), 1: (1, 0), 2: (0, 1)}
    layout = TopicLayout("t", {p: list(r) for p, r in current.items()}, current,
                         dict.fromkeys(current, 100), True)  # fmt: skip
    balance([layout], [Broker(0, "a"), Broker(1, "a"), Broker(2, "a")])
    assert layout.replicas == {0: [1, 2], 1: [2, 0], 2: [0, 1]}
    assert layout.reasons[1] == [
        "goal 2, topic spread: t had 3 replica(s) on broker 1 and 1 on broker 2, even is 2"
    ]


def test_scale_out_gives_new_brokers_their_share_of_every_topic() -> None:
    state, wanted = demo(9)
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    final = after(state, plan)
    for name, t in final.topics.items():
        counts = Counter(b for ps in t.partitions.values() for b in ps.replicas)
        leads = Counter(ps.replicas[0] for ps in t.partitions.values())
        assert spread([counts[b] for b in range(9)]) <= 1, name
        assert spread([leads[b] for b in range(9)]) <= 1, name
        for ps in t.partitions.values():
            assert len({AZ[b % 3] for b in ps.replicas}) == len(ps.replicas)
    size, _, lead = per_broker(final)
    mean = sum(size.values()) / 9
    assert all(abs(size[b] - mean) <= 0.10 * mean for b in range(9))
    assert spread([lead[b] for b in range(9)]) <= 1
    # the least the new brokers must receive: each topic's lower share, in whole partitions
    floor = sum((p * rf // 9) * DEMO_SIZES[name] * 3 for name, (p, rf, _) in DEMO_SHAPE.items())
    moved = sum(a.bytes_to_move for a in plan.of_kind(Reassign))
    assert floor <= moved <= 1.05 * floor
    for a in plan.of_kind(Reassign):
        assert all(m.reason.startswith("goal ") for m in a.moves.values())


def test_a_second_rebalance_right_after_finds_nothing() -> None:
    state, wanted = demo(9)
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    again, _ = compute_plan(specs(*wanted), after(state, plan), None, rebalance=True)  # type: ignore[arg-type]
    assert again.actions == ()


def test_a_balanced_cluster_is_left_alone() -> None:
    state, wanted = demo(6)
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    assert plan.of_kind(Reassign) == []


def test_drain_spreads_over_every_eligible_broker_of_the_rack() -> None:
    state, wanted = demo(9)
    grown, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    state = after(state, grown)
    plan, _ = compute_plan(specs(*wanted, decommission=(3,)), state, None)  # type: ignore[arg-type]
    received: Counter[int] = Counter()
    same_rack: Counter[int] = Counter()
    for a in plan.of_kind(Reassign):
        for m in a.moves.values():
            assert m.removing == (3,) and len(m.adding) == 1
            assert m.reason.startswith("goal 1, the spec: broker 3 is drained")
            received[m.adding[0]] += m.size_bytes
            if len(m.target) == 3:  # RF 3 on 3 racks: the replica must stay in az1
                same_rack[m.adding[0]] += 1
    assert set(same_rack) == {0, 6}  # az1 has brokers 0 and 6 left
    assert max(same_rack.values()) - min(same_rack.values()) <= 2
    assert max(received.values()) <= 0.5 * sum(received.values())
    assert not [w for w in plan.warnings if w.code == "DRAIN_HOTSPOT"]


def test_drain_hotspot_says_why_when_rf_equals_the_rack_count() -> None:
    state, wanted = demo(6)
    plan, _ = compute_plan(specs(*wanted, decommission=(3,)), state, None)  # type: ignore[arg-type]
    (hot,) = [w for w in plan.warnings if w.code == "DRAIN_HOTSPOT"]
    assert hot.data["broker"] == 0
    assert "az1" in hot.message and "replication factor" in hot.message
    assert hot.data["share"] > 0.5


def test_leaders_only_reorders_replicas() -> None:
    brokers = racked(6)
    assignment = {p: (0, 1, 2) if p % 2 else (3, 4, 5) for p in range(12)}
    state = cluster_state(brokers, {"t": assignment}, {"t": GiB})
    wanted = topic("t", 12, 3, placement="rack-aware")
    plan, _ = compute_plan(specs(wanted), state, None, leaders=True)
    (reassign,) = plan.of_kind(Reassign)
    assert reassign.bytes_to_move == 0
    for m in reassign.moves.values():
        assert sorted(m.source) == sorted(m.target) and m.adding == ()
    _, _, lead = per_broker(after(state, plan))
    assert [lead[b] for b in range(6)] == [2] * 6


def test_unknown_sizes_balance_replica_counts() -> None:
    brokers = tuple(Broker(i) for i in range(4))
    state = cluster_state(
        brokers,
        {"a": {p: (0, 1) for p in range(6)}, "b": {p: (0, 1) for p in range(6)}},
        {"a": None, "b": None},
    )
    wanted = [topic("a", 6, 2), topic("b", 6, 2)]
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)
    _, count, _ = per_broker(after(state, plan))
    assert [count[b] for b in range(4)] == [6, 6, 6, 6]


# ------------------------------------------------------------------------ properties


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, list[object]]:
    n_racks = draw(st.integers(0, 3))
    n = draw(st.integers(2, 8))
    brokers = tuple(Broker(i, f"r{i % n_racks}" if n_racks else None) for i in range(n))
    assignments: dict[str, dict[int, tuple[int, ...]]] = {}
    sizes: dict[str, int | None] = {}
    wanted = []
    for ti in range(draw(st.integers(1, 3))):
        rf = draw(st.integers(1, min(3, n)))
        parts = draw(st.integers(1, 12))
        reps = st.lists(st.integers(0, n - 1), min_size=rf, max_size=rf, unique=True)
        a = {p: tuple(draw(reps)) for p in range(parts)}
        name = f"t{ti}"
        assignments[name] = a
        sizes[name] = draw(st.sampled_from([None, 0, 10, 1000, 7 * MiB]))
        wanted.append(topic(name, parts, rf, placement="rack-unaware"))
    return cluster_state(brokers, assignments, sizes), wanted


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_rebalance_twice_is_rebalance_once(case: tuple[ClusterState, list[object]]) -> None:
    state, wanted = case
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    final = after(state, plan)
    again, _ = compute_plan(specs(*wanted), final, None, rebalance=True)  # type: ignore[arg-type]
    assert again.of_kind(Reassign) == [], [a.to_json() for a in again.of_kind(Reassign)]
    for name, t in final.topics.items():
        before = state.topics[name]
        for ps in t.partitions.values():
            assert len(set(ps.replicas)) == len(ps.replicas)
        counts = Counter(b for ps in t.partitions.values() for b in ps.replicas)
        assert spread([counts[b.id] for b in state.brokers]) <= 1, name  # no racks in the way
        assert sum(counts.values()) == sum(len(ps.replicas) for ps in before.partitions.values())
    for a in plan.of_kind(Reassign):
        assert all(m.reason.startswith("goal ") for m in a.moves.values())


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_rack_aware_rebalance_never_loses_a_rack(case: tuple[ClusterState, list[object]]) -> None:
    state, wanted = case
    rack_of = {b.id: b.rack for b in state.brokers}
    aware = [topic(t.name, t.partitions, t.replication_factor, placement="rack-aware")  # type: ignore[attr-defined]
             for t in wanted]  # fmt: skip
    plan, _ = compute_plan(specs(*aware), state, None, rebalance=True)
    final = after(state, plan)
    racks = {r for r in rack_of.values() if r is not None}
    for name, t in final.topics.items():
        for p, ps in t.partitions.items():
            had = {rack_of[b] for b in state.topics[name].partitions[p].replicas}
            now = {rack_of[b] for b in ps.replicas}
            # never fewer racks, and at least min(RF, racks) once the rule is repaired
            assert len(now) >= min(len(ps.replicas), len(racks)) or len(now) >= len(had)
    again, _ = compute_plan(specs(*aware), final, None, rebalance=True)
    assert again.of_kind(Reassign) == []


def _layout(current: Mapping[int, tuple[int, ...]], size: int = 100) -> TopicLayout:
    return TopicLayout("t", {p: list(r) for p, r in current.items()}, current,
                       dict.fromkeys(current, size), False)  # fmt: skip


def test_a_piled_up_topic_is_spread_and_its_leaders_evened() -> None:
    layout = _layout({p: (0, 1, 2) for p in range(20)})
    balance([layout], [Broker(i) for i in range(6)])
    replicas = Counter(b for r in layout.replicas.values() for b in r)
    leaders = Counter(r[0] for r in layout.replicas.values())
    assert sorted(replicas.values()) == [10] * 6
    assert spread([leaders[b] for b in range(6)]) <= 1


def test_leaders_even_out_through_a_chain_of_swaps() -> None:
    # 0 leads three partitions whose only follower is 1, and 1 already has its share:
    # the fix is 0 -> 1 on one partition and 1 -> 2 on another (no data moves)
    current = {0: (0, 1), 1: (0, 1), 2: (0, 1), 3: (1, 2), 4: (1, 2), 5: (2, 3), 6: (3, 0),
               7: (3, 2)}  # fmt: skip
    layout = _layout(current)
    balance([layout], [Broker(i) for i in range(4)], mode="leaders")
    final = {p: tuple(r) for p, r in layout.replicas.items()}
    assert all(sorted(final[p]) == sorted(current[p]) for p in current)  # only swaps
    assert Counter(r[0] for r in final.values()) == dict.fromkeys(range(4), 2)
    assert sum(final[p] != current[p] for p in current) == 2


def test_other_topics_load_steers_where_bytes_go() -> None:
    # brokers 3-5 already carry a heavy topic that never moves: the light topic's
    # replicas leave them for the bytes goal, within the topic's share
    layout = _layout({p: (p % 6, (p + 1) % 6) for p in range(12)}, size=10)
    fixed = [((b,), 1000) for b in (3, 4, 5)]
    balance([layout], [Broker(i) for i in range(6)], fixed=fixed)
    counts = Counter(b for r in layout.replicas.values() for b in r)
    assert spread([counts[b] for b in range(6)]) <= 1  # goal 2 first: still 4 each


# ------------------------------------------------------------------ the band not reached


def test_a_band_the_moves_cannot_reach_is_a_warning_naming_the_brokers_and_the_spread() -> None:
    # one 10 GiB partition cannot be shared: broker 0 stays at +200 %, 1 and 2 near -100 %
    brokers = tuple(Broker(i) for i in range(3))
    state = cluster_state(
        brokers,
        {"big": {0: (0,)}, "small": {p: (p,) for p in range(3)}},
        {"big": 10 * GiB, "small": MiB},
    )
    wanted = [topic("big", 1, 1), topic("small", 3, 1)]
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    (w,) = [w for w in plan.warnings if w.code == "BALANCE_BAND_UNREACHED"]
    mean = (10 * GiB + 3 * MiB) / 3
    assert w.data["brokers"] == {"0": 10 * GiB + MiB, "1": MiB, "2": MiB}
    assert w.data["unit"] == "bytes" and w.data["mean"] == round(mean)
    assert w.data["min"] == MiB and w.data["max"] == 10 * GiB + MiB
    assert w.data["spread"] == [round(MiB / mean - 1, 4), round((10 * GiB + MiB) / mean - 1, 4)]
    assert "broker 0 10.0 GiB (+200%), broker 1 1.0 MiB (-100%), broker 2 1.0 MiB" in w.message
    assert "outside 10% of the mean (3.3 GiB) after --rebalance" in w.message
    plain, _ = compute_plan(specs(*wanted), state, None)  # type: ignore[arg-type]
    assert not [w for w in plain.warnings if w.code == "BALANCE_BAND_UNREACHED"]


def test_a_band_reached_says_nothing() -> None:
    state, wanted = demo(9)
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    assert plan.of_kind(Reassign)
    assert not [w for w in plan.warnings if w.code == "BALANCE_BAND_UNREACHED"]


def test_unknown_sizes_name_the_band_in_replicas() -> None:
    brokers = tuple(Broker(i) for i in range(3))
    state = cluster_state(brokers, {"a": {0: (0, 1)}}, {"a": None})
    plan, _ = compute_plan(specs(topic("a", 1, 2)), state, None, rebalance=True)
    (w,) = [w for w in plan.warnings if w.code == "BALANCE_BAND_UNREACHED"]
    assert w.data["unit"] == "replicas" and w.data["brokers"] == {"0": 1, "1": 1, "2": 0}
    assert "replicas per broker stay outside 10%" in w.message


# ------------------------------------------------------------------ swaps


def _sized_layout(name: str, current: Mapping[int, tuple[int, ...]],
                  sizes: Mapping[int, int]) -> TopicLayout:  # fmt: skip
    return TopicLayout(name, {p: list(r) for p, r in current.items()}, current, sizes, False)


def test_a_swap_evens_bytes_when_each_topic_already_has_its_share() -> None:
    # each topic holds one partition per broker (its even share): no single move may go, but
    # a-0 (8 GiB) and a-1 (2 GiB) changing places brings both brokers to the mean
    a = _sized_layout("a", {0: (0,), 1: (1,)}, {0: 8 * GiB, 1: 2 * GiB})
    b = _sized_layout("b", {0: (0,), 1: (1,)}, {0: 8 * GiB, 1: 2 * GiB})
    single = [_sized_layout(t.name, t.original, t.sizes) for t in (a, b)]
    band = balance(single, [Broker(0), Broker(1)], swaps=False)
    assert band is not None and band.outside == {0: 16 * GiB, 1: 4 * GiB}
    band = balance([a, b], [Broker(0), Broker(1)])
    assert band is not None and band.outside == {}
    assert band.loads == {0: 10 * GiB, 1: 10 * GiB}
    moved = [(t.name, p, tuple(r)) for t in (a, b) for p, r in t.replicas.items()
             if tuple(r) != t.original[p]]  # fmt: skip
    assert len(moved) == 2 and moved[0][0] == moved[1][0]  # one swap, inside one topic
    (why,) = {w for t in (a, b) for ws in t.reasons.values() for w in ws}
    assert why.startswith("goal 3, bytes (a swap): broker 0 held 16.0 GiB and broker 1 4.0 GiB")


@st.composite
def sized_clusters(draw: st.DrawFn) -> tuple[list[TopicLayout], tuple[Broker, ...]]:
    """Small clusters whose partitions differ in size (swaps need that), racks or not."""
    n_racks = draw(st.integers(0, 3))
    n = draw(st.integers(2, 6))
    brokers = tuple(Broker(i, f"r{i % n_racks}" if n_racks else None) for i in range(n))
    layouts = []
    for ti in range(draw(st.integers(1, 3))):
        rf = draw(st.integers(1, min(3, n)))
        parts = draw(st.integers(1, 8))
        reps = st.lists(st.integers(0, n - 1), min_size=rf, max_size=rf, unique=True)
        current = {p: tuple(draw(reps)) for p in range(parts)}
        sizes = {p: draw(st.sampled_from([1, 10, 100, 1000, 5000])) * MiB for p in range(parts)}
        aware = n_racks > 0 and draw(st.booleans())
        layouts.append(TopicLayout(f"t{ti}", {p: list(r) for p, r in current.items()},
                                   current, sizes, aware))  # fmt: skip
    return layouts, brokers


def _copy(layouts: Sequence[TopicLayout]) -> list[TopicLayout]:
    return [TopicLayout(t.name, {p: list(r) for p, r in t.original.items()}, t.original,
                        t.sizes, t.rack_aware) for t in layouts]  # fmt: skip


def _bytes_moved(layouts: Sequence[TopicLayout]) -> int:
    return sum(
        (t.sizes[p] or 0) * len(set(r) - set(t.original[p]))
        for t in layouts
        for p, r in t.replicas.items()
    )


def _out(band: object) -> float:
    b = band  # a Band: how far, in all, the brokers lie outside it
    return sum(max(0.0, v - b.high, b.low - v) for v in b.loads.values())  # type: ignore[attr-defined]


@settings(max_examples=80, deadline=None)
@given(sized_clusters())
def test_swaps_never_move_bytes_single_moves_do_not_need_nor_break_a_rule(
    case: tuple[list[TopicLayout], tuple[Broker, ...]],
) -> None:
    layouts, brokers = case
    rack_of = {b.id: b.rack for b in brokers}
    single = _copy(layouts)
    plain = balance(single, brokers, swaps=False)
    band = balance(layouts, brokers)
    assert band is not None and plain is not None
    if not plain.outside:  # single moves reach the band: swaps add nothing, not a byte
        assert [t.replicas for t in layouts] == [t.replicas for t in single]
    else:  # a swap is made only to come closer to the band
        assert _out(band) <= _out(plain)
        if _bytes_moved(layouts) > _bytes_moved(single):
            assert _out(band) < _out(plain)
    for t in layouts:
        counts = Counter(b for r in t.replicas.values() for b in r)
        before = Counter(b for r in t.original.values() for b in r)
        assert sum(counts.values()) == sum(before.values())
        for p, r in t.replicas.items():
            assert len(set(r)) == len(r) == len(t.original[p])
            if t.rack_aware:
                had = {rack_of[b] for b in t.original[p]}
                assert len({rack_of[b] for b in r}) >= min(len(had), len(r))
        if not any(rack_of.values()):
            assert spread([counts[b.id] for b in brokers]) <= max(
                1, spread([before[b.id] for b in brokers])
            )


@settings(max_examples=60, deadline=None)
@given(sized_clusters())
def test_a_second_rebalance_after_swaps_finds_nothing(
    case: tuple[list[TopicLayout], tuple[Broker, ...]],
) -> None:
    layouts, brokers = case
    state = ClusterState(
        brokers=brokers,
        topics={
            t.name: TopicState(
                t.name,
                {p: PartitionState(r, r, r[0], t.sizes[p]) for p, r in t.original.items()},
            )
            for t in layouts
        },
    )
    wanted = [
        topic(t.name, len(t.original), len(t.original[0]),
              placement="rack-aware" if t.rack_aware else "rack-unaware")
        for t in layouts
    ]  # fmt: skip
    plan, _ = compute_plan(specs(*wanted), state, None, rebalance=True)  # type: ignore[arg-type]
    final = after(state, plan)
    again, _ = compute_plan(specs(*wanted), final, None, rebalance=True)  # type: ignore[arg-type]
    assert again.of_kind(Reassign) == [], [a.to_json() for a in again.of_kind(Reassign)]
