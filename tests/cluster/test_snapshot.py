"""The state JSON (kgitops-state/v1) <-> ClusterState: round trip, sorted output, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.cluster.snapshot import (
    StateFileError,
    dumps_state,
    read_state,
    state_from_json,
    state_json_line,
    state_to_json,
    write_state,
)
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionState,
    PartitionTable,
    Reassignment,
    TopicState,
)

PRODUCT_EXAMPLE = {
    "format": "kgitops-state/v1",
    "clusterId": "abc",
    "brokers": [{"id": 1, "rack": "az1"}, {"id": 2, "rack": "az2"}],
    "topics": {
        "payments.orders": {
            "partitions": {
                "0": {"replicas": [1, 2], "isr": [1, 2], "leader": 1, "sizeBytes": 1048576}
            },
            "config": {"retention.ms": "604800000"},
        }
    },
    "reassignments": {"payments.orders": {"0": {"adding": [3], "removing": [1]}}},
}


def test_the_product_example_loads_into_the_model() -> None:
    state = state_from_json(PRODUCT_EXAMPLE)
    assert state.cluster_id == "abc"
    assert state.brokers == (Broker(1, "az1"), Broker(2, "az2"))
    topic = state.topics["payments.orders"]
    assert topic.partitions == {0: PartitionState((1, 2), (1, 2), 1, 1048576)}
    assert topic.config == {"retention.ms": "604800000"}
    assert state.reassignments == {"payments.orders": {0: Reassignment((3,), (1,))}}


def test_a_hand_written_state_may_omit_isr_leader_size_and_reassignments() -> None:
    state = state_from_json(
        {
            "format": "kgitops-state/v1",
            "brokers": [{"id": 0}, {"id": 1, "online": False}],
            "topics": {"t": {"partitions": {"1": {"replicas": [1, 0]}, "0": {"replicas": [0, 1]}}}},
            "somethingElse": {"ignored": True},
        }
    )
    assert state.brokers == (Broker(0, None), Broker(1, None, online=False))
    assert state.online_broker_ids == frozenset({0})
    assert state.topics["t"].partitions[1] == PartitionState((1, 0))
    assert state.topics["t"].config == {}
    assert state.reassignments == {}


def test_leader_minus_one_means_no_leader_as_kafka_reports_it() -> None:
    data = json.loads(json.dumps(PRODUCT_EXAMPLE))
    data["topics"]["payments.orders"]["partitions"]["0"]["leader"] = -1
    assert state_from_json(data).topics["payments.orders"].partitions[0].leader is None


def _state() -> ClusterState:
    return ClusterState(
        brokers=(Broker(2, "b"), Broker(0, "a"), Broker(1, None, online=False)),
        topics={
            "z": TopicState("z", {0: PartitionState((0, 2), (0,), None, 5)}, {"b": "2", "a": "1"}),
            "a": TopicState(
                "a",
                {i: PartitionState((i % 3, (i + 1) % 3), None, None, None) for i in range(12)},
            ),
        },
        reassignments={"z": {0: Reassignment((2,), (1,), (0, 2))}},
        cluster_id="c1",
        controller_id=0,
        broker_configs={0: {"leader.replication.throttled.rate": "1000"}},
    )


def test_round_trip_through_a_file_keeps_every_field(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_state(str(path), _state())
    back = read_state(str(path))
    assert back.brokers == tuple(sorted(_state().brokers))  # written sorted by id
    assert back == ClusterState(**{**_state().__dict__, "brokers": back.brokers})


def test_output_is_sorted_and_deterministic() -> None:
    data = state_to_json(_state())
    assert [b["id"] for b in data["brokers"]] == [0, 1, 2]
    assert list(data["topics"]) == ["a", "z"]
    assert list(data["topics"]["a"]["partitions"]) == [str(i) for i in range(12)]
    assert list(data["topics"]["z"]["config"]) == ["a", "b"]
    assert data["brokers"][1] == {"id": 1, "rack": None, "online": False}
    assert "online" not in data["brokers"][0]
    text = dumps_state(_state())
    assert json.loads(text) == data
    assert dumps_state(_state()) == text


def test_an_offline_partition_is_written_with_a_null_leader() -> None:
    z = state_to_json(_state())["topics"]["z"]["partitions"]["0"]
    assert z == {"replicas": [0, 2], "isr": [0], "leader": None, "sizeBytes": 5}


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "kgitops-state/v1",\n  "brokers": [1,,]\n}\n')
    with pytest.raises(StateFileError) as info:
        read_state(str(path))
    assert info.value.lines() == [f"{path}:3:17: error: invalid JSON: Expecting value"]


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match="no such state file"):
        read_state(str(tmp_path / "nope.json"))


def test_wrong_shapes_are_all_reported_with_their_json_path() -> None:
    bad = {
        "format": "kgitops-state/v1",
        "brokers": [{"id": 1}, {"id": 1}, {"id": "2"}],
        "topics": {
            "t": {
                "partitions": {
                    "0": {"replicas": [1, 1]},
                    "2": {"replicas": [1], "isr": "1", "sizeBytes": -4},
                    "x": {"replicas": []},
                },
                "config": {"retention.ms": 100},
            }
        },
    }
    with pytest.raises(StateFileError) as info:
        state_from_json(bad, source="s.json")
    lines = info.value.lines()
    expected = [
        "s.json: error: brokers[1].id: broker 1 is listed twice",
        "s.json: error: brokers[2].id: expected a broker id (an integer 0..2147483647)",
        "s.json: error: topics.t.partitions.0.replicas: a broker id appears more than once",
        "s.json: error: topics.t.partitions.2.isr: expected a list of broker ids "
        "(integers 0..2147483647)",
        "s.json: error: topics.t.partitions.2.sizeBytes: expected a non-negative integer",
        "s.json: error: topics.t.partitions.x: partition ids must be non-negative integer strings",
        "s.json: error: topics.t.partitions.x.replicas: expected at least one broker id",
        "s.json: error: topics.t.partitions: partition ids must run 0, 1, ... without gaps",
        "s.json: error: topics.t.config.retention.ms: config values are strings as Kafka holds "
        "them: 100",
    ]
    assert lines == expected


@pytest.mark.parametrize(
    "replicas",
    [[1.0, 2], [True, 2], ["1", 2], "12"],
)
def test_broker_ids_must_be_integers_even_when_an_equal_list_was_seen(replicas: object) -> None:
    data = json.loads(json.dumps(PRODUCT_EXAMPLE))
    parts = data["topics"]["payments.orders"]["partitions"]
    parts["1"] = {"replicas": [1, 2]}
    parts["2"] = {"replicas": replicas}
    with pytest.raises(StateFileError, match=r"partitions\.2\.replicas: expected a list"):
        state_from_json(data)


def test_a_wrong_format_is_refused() -> None:
    with pytest.raises(StateFileError, match="expected 'kgitops-state/v1'"):
        state_from_json({**PRODUCT_EXAMPLE, "format": "kgitops-plan/v1"})
    with pytest.raises(StateFileError, match="expected a JSON object"):
        state_from_json([1, 2])


def test_replica_tuples_are_shared_between_partitions() -> None:
    data = {
        "format": "kgitops-state/v1",
        "brokers": [{"id": 0}, {"id": 1}],
        "topics": {"t": {"partitions": {str(i): {"replicas": [0, 1]} for i in range(3)}}},
    }
    parts = state_from_json(data).topics["t"].partitions
    assert parts[0].replicas is parts[2].replicas


_ids = st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True).map(tuple)


@st.composite
def _partition(draw: st.DrawFn) -> PartitionState:
    """A partition as Kafka reports one: ISR and leader among the replicas."""
    replicas = draw(_ids)
    isr = draw(st.none() | st.lists(st.sampled_from(replicas), unique=True).map(tuple))
    leader = draw(st.none() | st.sampled_from(replicas))
    return PartitionState(replicas, isr, leader, draw(st.none() | st.integers(0, 2**40)))


@st.composite
def _states(draw: st.DrawFn) -> ClusterState:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9._-]{0,8}", fullmatch=True), unique=True))
    topics = {}
    for name in names:
        parts = draw(st.lists(_partition(), min_size=1, max_size=4))
        config = draw(st.dictionaries(st.sampled_from(["a.b", "c", "d.e"]), st.text(max_size=4)))
        topics[name] = TopicState(name, dict(enumerate(parts)), config)
    brokers = tuple(
        Broker(i, draw(st.none() | st.sampled_from(["r1", "r2"])), draw(st.booleans()))
        for i in range(draw(st.integers(1, 6)))
    )
    return ClusterState(brokers=brokers, topics=topics, cluster_id=draw(st.none() | st.text()))


@settings(max_examples=60, deadline=None)
@given(_states())
def test_any_state_survives_the_round_trip(state: ClusterState) -> None:
    back = state_from_json(json.loads(dumps_state(state)))
    assert back.topics == state.topics
    assert sorted(back.brokers) == sorted(state.brokers)
    assert back.cluster_id == state.cluster_id


def _one_line(state: ClusterState) -> str:
    return json.dumps(state_to_json(state), separators=(", ", ": "))


@settings(max_examples=60, deadline=None)
@given(_states(), st.text(min_size=1, max_size=6))
def test_the_recorded_state_line_is_the_one_line_json_of_the_state(
    state: ClusterState, odd: str
) -> None:
    """``plan --out`` writes its recordedState with state_json_line: the text json.dumps
    gives for state_to_json, byte for byte, whatever the names and values hold (quotes,
    non-ASCII, control characters)."""
    topic = TopicState(odd, {0: PartitionState((1, 0), (1,), None, None)}, {"x": odd})
    state = ClusterState(
        brokers=state.brokers,
        topics={**state.topics, odd: topic},
        reassignments={odd: {0: Reassignment((2,), (1,))}},
        cluster_id=state.cluster_id,
        controller_id=1,
        broker_defaults={"min.insync.replicas": odd},
    )
    assert state_json_line(state) == _one_line(state)


def test_the_recorded_state_line_of_partitions_loaded_as_columns(tmp_path: Path) -> None:
    """The same text from a state file's columns (a PartitionTable per topic) as from the
    PartitionState dicts it was written from."""
    built = _state()
    built = ClusterState(
        **{
            **built.__dict__,
            "topics": {**built.topics, "é": TopicState("q", {}, {"a": 'é"\\n\u0001'})},
        }
    )
    path = tmp_path / "s.json"
    write_state(str(path), _state())
    loaded = read_state(str(path))
    assert isinstance(loaded.topics["a"].partitions, PartitionTable)
    assert state_json_line(loaded) == _one_line(loaded) == _one_line(_state())
    assert state_json_line(built) == _one_line(built)
    empty = ClusterState(brokers=(), topics={})
    assert state_json_line(empty) == _one_line(empty)


def test_shape_errors_in_a_file_carry_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"format": "kgitops-state/v1",\n'
        ' "brokers": [{"id": 1}, {"id": "2"}],\n'
        ' "topics": {"a.b": {"partitions": {\n'
        '    "0": {"replicas": [1, 1], "isr": [1]}},\n'
        '   "config": {"retention.ms": 5}}}}\n'
    )
    with pytest.raises(StateFileError) as info:
        read_state(str(path))
    assert info.value.lines() == [
        f"{path}:2:32: error: brokers[1].id: expected a broker id (an integer 0..2147483647)",
        f"{path}:4:23: error: topics.a.b.partitions.0.replicas: a broker id appears more than once",
        f"{path}:5:31: error: topics.a.b.config.retention.ms: config values are strings as Kafka "
        "holds them: 5",
    ]


def test_a_missing_field_points_at_its_parent(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"format": "kgitops-state/v1", "brokers": [],\n'
        ' "topics": {"t": {"partitions": {"0": {}}}}}'
    )
    with pytest.raises(StateFileError) as info:
        read_state(str(path))
    assert info.value.lines() == [f"{path}:2:39: error: topics.t.partitions.0: missing replicas"]


def test_partition_lines_are_exactly_what_json_dumps_writes() -> None:
    text = dumps_state(_state())
    data = state_to_json(_state())
    for name, topic in data["topics"].items():
        for pid, pdata in topic["partitions"].items():
            assert f'"{pid}": {json.dumps(pdata)}' in text, (name, pid)


def test_partitions_built_slot_by_slot_equal_constructed_ones() -> None:
    from kgitops.cluster import statefast

    assert statefast._SLOTS_KNOWN  # PartitionState has the four fields the fast path sets
    loaded = state_from_json(PRODUCT_EXAMPLE).topics["payments.orders"].partitions[0]
    made = PartitionState((1, 2), (1, 2), 1, 1048576)
    assert loaded == made
    assert hash(loaded) == hash(made)
    assert repr(loaded) == repr(made)


@pytest.mark.parametrize("big", ["2147483648", "99999999999999999999999", "-2"])
def test_a_broker_id_beyond_kafkas_int32_is_refused_where_it_is(tmp_path: Path, big: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"format": "kgitops-state/v1",\n'
        f' "brokers": [{{"id": 1}}, {{"id": {big}}}],\n'
        ' "topics": {"a": {"partitions": {\n'
        f'    "0": {{"replicas": [1, {big}], "isr": [1]}}}}}}}}}}\n'
    )
    with pytest.raises(StateFileError) as info:
        read_state(str(path))
    assert info.value.lines() == [
        f"{path}:2:32: error: brokers[1].id: expected a broker id (an integer 0..2147483647)",
        f"{path}:4:23: error: topics.a.partitions.0.replicas: expected a list of broker ids "
        "(integers 0..2147483647)",
    ]
