"""The kafka-python adapter reads Kafka's internal topics (``__consumer_offsets``...) from the
same Metadata request as every other topic, so a drain moves them and ``status`` sees them.

The local broker (Tansu) keeps a consumer group's committed offsets without any
``__consumer_offsets`` topic: after a real group commits, Metadata answers that name with
UNKNOWN_TOPIC_OR_PARTITION, and a topic created by hand under that name comes back with
``is_internal`` false. So these tests drive the adapter with real kafka-python Metadata
responses (encoded and decoded on the wire format, ``is_internal`` set as Kafka sets it:
KRaftMetadataCache.scala ``setIsInternal(Topic.isInternal(topic))``) through the recording
fake transport of tests/fidelity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from kgitops.model import Broker
from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan
from kgitops.plan.health import assess
from tests.planner.planner_builders import specs, topic

OFFSETS, TXN = "__consumer_offsets", "__transaction_state"
DYNAMIC_TOPIC_CONFIG = 1
RACKS = {1: "az1", 2: "az2", 3: "az3", 4: "az1"}
# name -> (is_internal, {partition: (replicas, isr)})
TOPICS: dict[str, tuple[bool, dict[int, tuple[list[int], list[int]]]]] = {
    OFFSETS: (
        True,
        {0: ([1, 2], [1, 2]), 1: ([2, 3], [2]), 2: ([3, 4], [3, 4])},
    ),
    TXN: (True, {0: ([4, 3, 1], [3, 1])}),  # moving [3, 1] -> [4, 3]
    "orders": (False, {0: ([1, 2], [1, 2])}),
}


def metadata_response(topics: Sequence[str], version: int = 12) -> Any:
    """A real MetadataResponse, through its wire encoding, as a broker would answer."""
    from kafka.protocol.metadata import MetadataResponse as R

    T, B = R.MetadataResponseTopic, R.MetadataResponseBroker
    P = T.MetadataResponsePartition
    built = R(
        version=version,
        throttle_time_ms=0,
        brokers=[
            B(version=version, node_id=b, host=f"k{b}", port=9092, rack=r) for b, r in RACKS.items()
        ],
        cluster_id="c1",
        controller_id=1,
        topics=[
            T(
                version=version,
                error_code=0,
                name=name,
                is_internal=TOPICS[name][0],
                partitions=[
                    P(
                        version=version,
                        error_code=0,
                        partition_index=p,
                        leader_id=isr[0],
                        replica_nodes=replicas,
                        isr_nodes=isr,
                    )
                    for p, (replicas, isr) in TOPICS[name][1].items()
                ],
            )
            for name in topics
        ],
    )
    return R.decode(bytes(built.encode(version=version)), version=version)


def answer_for(topics: Sequence[str]) -> Any:
    """Each request's answer, from a cluster holding ``topics``."""

    def answer(request: Any, node: int | None) -> Any:
        name = type(request).__name__
        if name == "MetadataRequest":
            return metadata_response(topics)
        if name == "DescribeConfigsRequest":
            results = []
            for r in request.resources:
                configs = []
                if r.resource_type == 2 and r.resource_name.startswith("__"):
                    configs = [
                        SimpleNamespace(
                            name="cleanup.policy",
                            value="compact",
                            config_source=DYNAMIC_TOPIC_CONFIG,
                            synonyms=[],
                        )
                    ]
                results.append(
                    SimpleNamespace(
                        resource_name=r.resource_name,
                        error_code=0,
                        error_message=None,
                        configs=configs,
                    )
                )
            return SimpleNamespace(results=results)
        if name == "DescribeLogDirsRequest":
            held = [
                SimpleNamespace(
                    name=t,
                    partitions=[
                        SimpleNamespace(partition_index=p, partition_size=1000, is_future_key=False)
                        for p, (replicas, _) in TOPICS[t][1].items()
                        if node in replicas
                    ],
                )
                for t in topics
            ]
            return SimpleNamespace(results=[SimpleNamespace(error_code=0, topics=held)])
        if name == "ListPartitionReassignmentsRequest":
            moving = SimpleNamespace(
                partition_index=0, replicas=[4, 3, 1], adding_replicas=[4], removing_replicas=[1]
            )
            listed = [SimpleNamespace(name=TXN, partitions=[moving])] if TXN in topics else []
            return SimpleNamespace(error_code=0, error_message=None, topics=listed)
        if name == "DescribeClusterRequest":
            brokers = [
                SimpleNamespace(broker_id=b, rack=r, is_fenced=False) for b, r in RACKS.items()
            ]
            return SimpleNamespace(error_code=0, brokers=brokers)
        raise AssertionError(f"describe sent an unexpected {name}")

    return answer


def described(topics: Sequence[str]) -> tuple[Any, list[tuple[Any, int | None]]]:
    from tests.fidelity.kraft_fakes import RecordingManager, adapter

    manager = RecordingManager(answer_for(topics))
    return adapter(manager).describe(), manager.sent


def test_the_metadata_reader_keeps_internal_topics_and_skips_absent_ones() -> None:
    """KRaftMetadataCache.scala answers Metadata from the TopicsImage, where the internal
    topics are topics like any other, flagged ``is_internal``; ``__cluster_metadata`` is
    not in it, so it never appears. A topic named in the request but absent comes back
    with UNKNOWN_TOPIC_OR_PARTITION and is left out."""
    from kgitops.cluster.kafka.describe import partitions_from

    md = metadata_response([OFFSETS, "orders"])
    assert [(t.name, t.is_internal) for t in md.topics] == [(OFFSETS, True), ("orders", False)]
    absent = SimpleNamespace(name="gone", error_code=3, is_internal=False, partitions=[])
    read = partitions_from([*md.topics, absent])
    assert sorted(read) == [OFFSETS, "orders"]
    assert {p: (s.replicas, s.isr, s.leader) for p, s in read[OFFSETS].items()} == {
        0: ((1, 2), (1, 2), 1),
        1: ((2, 3), (2,), 2),
        2: ((3, 4), (3, 4), 3),
    }


def test_describe_reads_internal_topics_with_their_configs_sizes_and_moves() -> None:
    state, _ = described([OFFSETS, TXN, "orders"])
    assert sorted(state.topics) == [OFFSETS, TXN, "orders"]
    offsets = state.topics[OFFSETS]
    assert offsets.config == {"cleanup.policy": "compact"}
    assert [p.size_bytes for p in offsets.partitions.values()] == [1000, 1000, 1000]
    assert set(state.reassignments) == {TXN}, "an internal topic's move in flight is seen"
    assert state.reassignments[TXN][0].removing == (1,)


def test_reading_internal_topics_costs_no_request_more() -> None:
    """The same requests, one Metadata among them, with or without internal topics: they
    ride in the one Metadata and the one topic DescribeConfigs that every topic shares."""
    _, with_internal = described([OFFSETS, TXN, "orders"])
    _, without = described(["orders"])

    def kinds(sent: list[tuple[Any, int | None]]) -> Counter[str]:
        return Counter(type(r).__name__ for r, _ in sent)

    assert kinds(with_internal) == kinds(without)
    assert kinds(with_internal)["MetadataRequest"] == 1
    (topic_configs,) = [
        r
        for r, _ in with_internal
        if type(r).__name__ == "DescribeConfigsRequest" and r.resources[0].resource_type == 2
    ]
    assert sorted(r.resource_name for r in topic_configs.resources) == [OFFSETS, TXN, "orders"]


def test_status_sees_an_under_replicated_consumer_offsets_partition() -> None:
    state, _ = described([OFFSETS, TXN, "orders"])
    health = assess(state)
    assert [(f.topic, f.partition) for f in health.of("under_replicated")] == [(OFFSETS, 1)]
    assert not health.healthy


def test_a_drain_on_a_real_cluster_moves_consumer_offsets_off_the_broker() -> None:
    """What the adapter reads is what the drain plans from: every ``__consumer_offsets``
    replica on the decommissioned broker moves, by the minimal-movement rule (the other
    replica stays), and a partition not on it stays where it is."""
    state, _ = described([OFFSETS, TXN, "orders"])
    assert [b.id for b in state.brokers] == [1, 2, 3, 4]
    assert all(isinstance(b, Broker) and b.online for b in state.brokers)
    plan, _ = compute_plan(
        specs(topic("orders", 1, 2), decommission=(2,), unmanaged_topics="ignore"), state, None
    )
    moves = {a.topic: a for a in plan.actions if isinstance(a, Reassign)}
    assert set(moves) == {OFFSETS, "orders"}
    offsets = moves[OFFSETS].moves
    assert sorted(offsets) == [0, 1], "partition 2 holds nothing on broker 2"
    for m in offsets.values():
        assert 2 not in m.target and len(m.target) == 2
        assert set(m.source) - {2} <= set(m.target)
        assert "internal topic" in m.reason
    assert not [w for w in plan.warnings if w.code == "DRAIN_INCOMPLETE"]
    assert not [w for w in plan.warnings if w.topic.startswith("__")]
