"""The fingerprint covers exactly what a plan depends on; the safety gates live on the plan."""

from __future__ import annotations

import dataclasses

import pytest

from kgitops.errors import DeletionNotAllowed, OfflineTarget, StalePlan, UnsafeReplication
from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.plan.actions import AlterConfig, CreateTopic, DeleteTopic, Move, Reassign
from kgitops.plan.fingerprint import state_fingerprint
from kgitops.plan.value import Plan


def _state(**topic_kw: object) -> ClusterState:
    t = TopicState(
        "t",
        {0: PartitionState((0, 1), (0, 1), 0, 100)},
        {"retention.ms": "1000"},
    )
    t = dataclasses.replace(t, **topic_kw)  # type: ignore[arg-type]
    return ClusterState(brokers=(Broker(0, "a"), Broker(1, "b"), Broker(2, "c")), topics={"t": t})


def test_fingerprint_ignores_isr_leaders_sizes_and_throttles() -> None:
    base = state_fingerprint(_state(), ["t", "new"])
    moved_on = _state(
        partitions={0: PartitionState((0, 1), (0,), 1, 999_999)},
        config={"retention.ms": "1000", "leader.replication.throttled.replicas": "0:0"},
    )
    assert state_fingerprint(moved_on, ["t", "new"]) == base


def test_fingerprint_changes_with_replicas_configs_brokers_and_new_topics() -> None:
    base, _ = state_fingerprint(_state(), ["t", "new"])
    assert state_fingerprint(_state(partitions={0: PartitionState((1, 0))}), ["t"])[0] != base
    assert state_fingerprint(_state(config={}), ["t", "new"])[0] != base
    offline = dataclasses.replace(_state(), brokers=(Broker(0, "a", online=False),))
    assert state_fingerprint(offline, ["t", "new"])[0] != base
    created = dataclasses.replace(
        _state(), topics={**_state().topics, "new": TopicState("new", {})}
    )
    assert state_fingerprint(created, ["t", "new"])[0] != base


def test_a_stale_plan_names_the_topics_that_changed() -> None:
    fp, digests = state_fingerprint(_state(), ["t", "u"])
    plan = Plan("c", fp, state_digests=digests)
    assert plan.stale_reasons(_state()) == []
    plan.raise_if_stale(_state())
    assert plan.stale_reasons(_state(config={})) == [
        "topic t: its replicas or configs changed since the plan was made"
    ]
    with pytest.raises(StalePlan, match="is stale"):
        plan.raise_if_stale(_state(config={}))


def test_a_stale_plan_names_created_and_deleted_topics_and_changed_brokers() -> None:
    fp, digests = state_fingerprint(_state(), ["t", "u"])
    plan = Plan("c", fp, state_digests=digests)
    created = dataclasses.replace(_state(), topics={**_state().topics, "u": TopicState("u", {})})
    assert plan.stale_reasons(created) == ["topic u: created since the plan was made"]
    assert plan.stale_reasons(dataclasses.replace(_state(), topics={})) == [
        "topic t: deleted since the plan was made"
    ]
    offline = dataclasses.replace(_state(), brokers=(Broker(0, "a", online=False),))
    assert plan.stale_reasons(offline) == [
        "the brokers changed (ids, racks or liveness); now: 0@a (offline)"
    ]


def test_deletion_needs_permission() -> None:
    plan = Plan("c", "x", (DeleteTopic("t", 1),))
    with pytest.raises(DeletionNotAllowed) as exc:
        plan.raise_if_unsafe(allow_delete=False, state=_state())
    assert exc.value.reasons == ["t: deletes the topic"]
    plan.raise_if_unsafe(allow_delete=True, state=_state())


def test_rf_below_min_insync_replicas_is_refused_before_kafka_3_7() -> None:
    def old(config: dict[str, str] | None = None) -> ClusterState:
        state = _state() if config is None else _state(config=config)
        return dataclasses.replace(state, kafka_version=(3, 6))

    create = CreateTopic(
        "n",
        partitions=1,
        replication_factor=1,
        assignment={0: (0,)},
        config={"min.insync.replicas": "2"},
    )
    with pytest.raises(UnsafeReplication, match="too few replicas"):
        Plan("c", "x", (create,)).raise_if_unsafe(allow_delete=False, state=old())
    raise_min_isr = AlterConfig("t", {"min.insync.replicas": "3"})
    with pytest.raises(UnsafeReplication):
        Plan("c", "x", (raise_min_isr,)).raise_if_unsafe(allow_delete=False, state=old())
    shrink = Reassign("t", {0: Move((0, 1), (0,))})
    Plan("c", "x", (shrink,)).raise_if_unsafe(allow_delete=False, state=old())
    with pytest.raises(UnsafeReplication):
        Plan("c", "x", (shrink,)).raise_if_unsafe(
            allow_delete=False, state=old({"min.insync.replicas": "2"})
        )


def test_rf_below_min_insync_replicas_is_not_unsafe_from_kafka_3_7() -> None:
    # Kafka 3.7+ caps min.insync.replicas at the replica count (Partition.effectiveMinIsr):
    # acks=all producers still write; the plan warns instead (MIN_ISR_ABOVE_RF)
    create = CreateTopic(
        "n",
        partitions=1,
        replication_factor=1,
        assignment={0: (0,)},
        config={"min.insync.replicas": "2"},
    )
    for version in [(3, 7), (4, 1), None]:
        state = dataclasses.replace(_state(), kafka_version=version)
        Plan("c", "x", (create,)).raise_if_unsafe(allow_delete=False, state=state)
        shrink = Reassign("t", {0: Move((0, 1), (0,))})
        state = dataclasses.replace(
            _state(config={"min.insync.replicas": "2"}), kafka_version=version
        )
        Plan("c", "x", (shrink,)).raise_if_unsafe(allow_delete=False, state=state)


def test_moves_onto_offline_brokers_are_refused() -> None:
    state = dataclasses.replace(
        _state(), brokers=(Broker(0, "a"), Broker(1, "b"), Broker(2, "c", online=False))
    )
    plan = Plan("c", "x", (Reassign("t", {0: Move((0, 1), (0, 2))}),))
    with pytest.raises(OfflineTarget, match="offline") as exc:
        plan.raise_if_unsafe(allow_delete=False, state=state)
    assert exc.value.reasons == ["t: places replicas on offline broker 2"]
