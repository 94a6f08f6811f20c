"""Kafka's internal topics in the simulated cluster and the planner: what the controller
accepts for them, and the one "topic" a drain must never touch, KRaft's metadata log."""

from __future__ import annotations

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.names import KAFKA_METADATA_TOPIC
from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan
from tests.planner.planner_builders import brokers, live, specs, state


def test_creating_the_metadata_log_as_a_topic_is_refused(sim: SimulatedCluster) -> None:
    """ControllerApis.scala createTopics: "Creation of internal topic __cluster_metadata is
    prohibited." (INVALID_REQUEST); ``__consumer_offsets`` may be created like any topic."""
    results = sim.create_topics(
        [NewTopic(KAFKA_METADATA_TOPIC, {0: (1,)}), NewTopic("__consumer_offsets", {0: (1, 2)})]
    )
    err = results[KAFKA_METADATA_TOPIC]
    assert err is not None and err.code == "INVALID_REQUEST"
    assert "Creation of internal topic __cluster_metadata is prohibited." in str(err)
    assert results["__consumer_offsets"] is None
    assert sorted(sim.describe().topics) == ["__consumer_offsets"]


def test_a_drain_never_reassigns_the_metadata_log_and_says_the_drain_is_not_done() -> None:
    """KRaftMetadataCache.scala answers Metadata from the TopicsImage, which never holds
    ``__cluster_metadata``, and ReplicationControlManager.java alterPartitionReassignment
    does not know it: its replicas are the controller quorum's voters, changed with
    kafka-metadata-quorum.sh. A state that claims it anyway (a hand-written file, a broker
    that lists it) gets no move for it, and the plan says the drain is not complete."""
    live_state = state(
        brokers(4),
        live(KAFKA_METADATA_TOPIC, {0: [1, 2, 3]}),
        live("__consumer_offsets", {0: [1, 2], 1: [2, 3]}),
    )
    plan, _ = compute_plan(specs(decommission=(2,)), live_state, None)
    moved = {a.topic for a in plan.actions if isinstance(a, Reassign)}
    assert moved == {"__consumer_offsets"}
    (warning,) = [w for w in plan.warnings if w.code == "DRAIN_INCOMPLETE"]
    assert warning.data["topics"] == [KAFKA_METADATA_TOPIC]
    assert "kafka-metadata-quorum.sh remove-controller" in warning.message
