"""Throttles as state (kgitops.plan.throttles): what is stale is exactly what no move in
flight needs -- never less (a leak), never more (a move starved of its throttle)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kgitops.apply.moves import classify
from kgitops.model import Broker, ClusterState, PartitionState, Reassignment, TopicState
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)
from kgitops.plan.actions import Move
from kgitops.plan.throttles import (
    format_entries,
    in_flight,
    needed,
    parse_entries,
    stale_throttles,
)

BROKERS = tuple(Broker(b) for b in range(6))


@st.composite
def states(draw: st.DrawFn) -> ClusterState:
    topics: dict[str, TopicState] = {}
    moves: dict[str, dict[int, Reassignment]] = {}
    for name in ("a", "b"):
        parts: dict[int, PartitionState] = {}
        for p in range(draw(st.integers(1, 4))):
            replicas = tuple(draw(st.permutations(range(6)))[: draw(st.integers(1, 3))])
            adding: tuple[int, ...] = ()
            if draw(st.booleans()):
                extra = [b for b in range(6) if b not in replicas][:1]
                adding = tuple(extra)
                replicas = replicas + adding
                moves.setdefault(name, {})[p] = Reassignment(adding=adding)
            parts[p] = PartitionState(
                replicas, replicas[: len(replicas) - len(adding)], replicas[0]
            )
        entries = draw(st.frozensets(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=6))
        config = {}
        if entries:
            config[
                draw(st.sampled_from([THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS]))
            ] = format_entries(entries)
        topics[name] = TopicState(name, parts, config)
    rated = draw(st.frozensets(st.integers(0, 5)))
    rates = {b: {THROTTLE_LEADER_RATE: "1", THROTTLE_FOLLOWER_RATE: "1"} for b in rated}
    return ClusterState(BROKERS, topics, moves, broker_configs=rates)


@given(states())
def test_stale_is_exactly_what_no_move_in_flight_needs(state: ClusterState) -> None:
    need = needed(in_flight(state))
    stale = stale_throttles(state)
    rates = {s.broker for s in stale if s.broker is not None}
    assert rates == set(state.broker_configs) - need.brokers
    for name, topic in state.topics.items():
        (found,) = [s for s in stale if s.topic == name] or [None]
        for key, value in topic.config.items():
            have = parse_entries(value) or frozenset()
            keep = need.replicas.get(name, {}).get(key, frozenset())
            gone = parse_entries(found.keys.get(key)) if found is not None else frozenset()
            assert gone == have - keep  # every leftover, and nothing a move needs


def test_a_move_is_classified_without_io() -> None:
    m = Move((1, 2), (1, 3))
    assert classify(m, (1, 2), None, set()) == ("queue", "")
    assert classify(m, (1, 3), None, set()) == ("done", "")
    assert classify(m, (1, 3, 2), ((1, 3, 2), (3,), (2,)), set()) == ("resume", "")
    assert classify(m, (1, 2), None, {3})[0] == "fail"
    assert classify(m, (2, 1), None, set())[1].startswith("replicas are [2, 1]")
    assert classify(m, None, None, set()) == ("fail", "the partition does not exist")
