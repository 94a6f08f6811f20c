"""A partition being reassigned counts as its target in a plan's state digest: Kafka lists
target + the replicas being removed until the move completes, then the target, so a move
that completes between plan and apply does not make the plan stale; one that is cancelled
(back to the old replicas) does. Found on Kafka 4.1.2 (tests/realkafka/test_no_wait_race.py)."""

from __future__ import annotations

from kgitops.model import (
    Broker,
    ClusterState,
    PartitionState,
    Reassignment,
    TopicState,
)
from kgitops.plan.fingerprint import topic_digest

BROKERS = (Broker(1, "a"), Broker(2, "b"), Broker(3, "c"))


def state(replicas: tuple[int, ...], moving: Reassignment | None = None) -> ClusterState:
    topic = TopicState(name="t", partitions={0: PartitionState(replicas=replicas)})
    flying = {"t": {0: moving}} if moving is not None else {}
    return ClusterState(brokers=BROKERS, topics={"t": topic}, reassignments=flying)


def test_a_move_in_flight_digests_as_its_target() -> None:
    moving = state((1, 3, 2), Reassignment(adding=(3,), removing=(2,), target=(1, 3)))
    assert topic_digest(moving, "t") == topic_digest(state((1, 3)), "t")


def test_a_cancelled_move_changes_the_digest() -> None:
    moving = state((1, 3, 2), Reassignment(adding=(3,), removing=(2,), target=(1, 3)))
    assert topic_digest(moving, "t") != topic_digest(state((1, 2)), "t")


def test_a_move_that_only_adds_digests_as_its_replicas() -> None:
    moving = state((1, 2, 3), Reassignment(adding=(3,), removing=(), target=(1, 2, 3)))
    assert topic_digest(moving, "t") == topic_digest(state((1, 2, 3)), "t")
