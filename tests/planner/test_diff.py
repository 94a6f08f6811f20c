"""The diff: what changes, what never moves, and what the reviewer is warned about."""

from __future__ import annotations

import pytest
from planner_builders import brokers, live, specs, state, topic

from kgitops.errors import PlanError, SpecError
from kgitops.model import Broker, PartitionState, Reassignment, TopicState
from kgitops.plan.actions import (
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Reassign,
)
from kgitops.plan.diff import compute_plan
from kgitops.spec.lock import Lock, LockEntry


def test_empty_specs_and_empty_cluster_give_an_empty_plan() -> None:
    plan, lock = compute_plan(specs(), state(brokers(3)), None)
    assert plan.actions == ()
    assert lock.entries == {}


def test_new_topic_gets_an_explicit_rack_aware_assignment_when_every_broker_has_a_rack() -> None:
    bs = brokers(6, ["a", "b", "c"])
    plan, lock = compute_plan(specs(topic("t", 6, 3)), state(bs), None)
    (create,) = plan.actions
    assert isinstance(create, CreateTopic)
    assert create.placement == "rack-aware"
    rack = {b.id: b.rack for b in bs}
    for replicas in create.assignment.values():
        assert len({rack[b] for b in replicas}) == 3
    assert lock.entries["t"].start_index == create.start_index
    assert lock.entries["t"].placement == "rack-aware"


def test_new_topic_is_rack_unaware_when_a_broker_has_no_rack() -> None:
    bs = (Broker(0, "a"), Broker(1, None), Broker(2, "b"))
    plan, _ = compute_plan(specs(topic("t", 3, 2)), state(bs), None)
    (create,) = plan.actions
    assert isinstance(create, CreateTopic)
    assert create.placement == "rack-unaware"


def test_start_index_fills_the_brokers_with_fewest_preferred_leaders() -> None:
    bs = brokers(3)
    # broker 0 and 1 already lead one partition each; broker 2 leads none
    existing = live("x", {0: [0, 1], 1: [1, 2]})
    plan, _ = compute_plan(specs(topic("t", 1, 1), topic("x", 2, 2)), state(bs, existing), None)
    (create,) = plan.of_kind(CreateTopic)
    assert isinstance(create, CreateTopic)
    assert create.start_index == 2
    assert create.assignment == {0: (2,)}


def test_topics_planned_earlier_count_when_choosing_the_start_index() -> None:
    bs = brokers(4)
    plan, _ = compute_plan(
        specs(topic("a", 1, 1), topic("b", 1, 1), topic("c", 1, 1), topic("d", 1, 1)),
        state(bs),
        None,
    )
    leaders = sorted(a.assignment[0][0] for a in plan.actions if isinstance(a, CreateTopic))
    assert leaders == [0, 1, 2, 3]


def test_start_index_from_the_spec_wins() -> None:
    plan, lock = compute_plan(specs(topic("t", 3, 1, start_index=2)), state(brokers(3)), None)
    (create,) = plan.actions
    assert isinstance(create, CreateTopic)
    assert create.start_index == 2 and create.assignment[0] == (2,)
    assert lock.entries["t"].start_index == 2


def test_a_fresh_lock_entry_fixes_the_start_index_even_if_the_cluster_changed() -> None:
    bs = brokers(3)
    entry = LockEntry("t", 1, bs, 3, 1, "rack-unaware")
    crowded = live("x", {0: [1], 1: [1], 2: [1]})
    plan, lock = compute_plan(
        specs(topic("t", 3, 1), topic("x", 3, 1)), state(bs, crowded), Lock({"t": entry})
    )
    create = plan.of_kind(CreateTopic)[0]
    assert isinstance(create, CreateTopic)
    assert create.start_index == 1
    assert lock.entries["t"] == entry


def test_expansion_keeps_existing_partitions_in_place_and_warns_about_keys() -> None:
    bs = brokers(3)
    t = live("t", {0: [0, 1], 1: [1, 2]})
    plan, lock = compute_plan(specs(topic("t", 4, 2)), state(bs, t), None)
    (add,) = plan.actions
    assert isinstance(add, AddPartitions)
    assert (add.from_count, add.to_count) == (2, 4)
    assert set(add.assignment) == {2, 3}
    assert [w.code for w in plan.warnings] == ["KEY_REMAP"]
    assert lock.entries["t"].placement == "adopted" and lock.entries["t"].partitions == 4


def test_a_partition_decrease_is_an_error_at_the_partitions_field() -> None:
    t = live("t", {0: [0], 1: [1], 2: [2]})
    with pytest.raises(SpecError) as exc:
        compute_plan(specs(topic("t", 2, 1)), state(brokers(3), t), None)
    assert exc.value.lines()[0].startswith("topics/t.yaml:3:13: error: partitions: 2 is fewer")


def test_configs_compare_normalised_and_throttles_are_never_drift() -> None:
    t = live(
        "t",
        {0: [0]},
        {
            "retention.ms": "604800000",
            "leader.replication.throttled.replicas": "0:0",
        },
    )
    spec = topic("t", 1, 1, config={"retention.ms": "604800000"})
    plan, _ = compute_plan(specs(spec), state(brokers(1), t), None)
    assert plan.of_kind(AlterConfig) == []


def test_config_set_and_a_live_config_not_in_git_is_deleted() -> None:
    t = live("t", {0: [0]}, {"retention.ms": "1000", "segment.ms": "5000"})
    spec = topic("t", 1, 1, config={"retention.ms": "2000"})
    plan, _ = compute_plan(specs(spec), state(brokers(1), t), None)
    (alter,) = plan.of_kind(AlterConfig)
    assert isinstance(alter, AlterConfig)
    assert alter.set == {"retention.ms": "2000"}
    assert alter.delete == ("segment.ms",)
    assert alter.previous == {"retention.ms": "1000", "segment.ms": "5000"}


def test_delete_only_when_marked_and_unmanaged_topics_are_reported_never_deleted() -> None:
    bs = brokers(1)
    old = live("old", {0: [0]})
    stray = live("stray", {0: [0]})
    offsets = live("__consumer_offsets", {0: [0]})
    plan, lock = compute_plan(
        specs(topic("old", 1, 1, delete=True)), state(bs, old, stray, offsets), None
    )
    assert [type(a) for a in plan.actions] == [DeleteTopic]
    assert [(w.topic, w.code) for w in plan.warnings] == [("stray", "UNMANAGED_TOPIC")]
    assert "old" not in lock.entries


def test_unmanaged_topics_fail_the_plan_under_policy_error() -> None:
    with pytest.raises(PlanError, match="stray"):
        compute_plan(
            specs(unmanaged_topics="error"), state(brokers(1), live("stray", {0: [0]})), None
        )


def test_unmanaged_topics_are_silent_under_policy_ignore() -> None:
    plan, _ = compute_plan(
        specs(unmanaged_topics="ignore"), state(brokers(1), live("stray", {0: [0]})), None
    )
    assert plan.warnings == ()


def test_leaders_off_preferred_are_elected_only_when_the_preferred_is_in_sync() -> None:
    t = TopicState(
        "t",
        {
            0: PartitionState((0, 1), (0, 1), 1),  # drifted, preferred in ISR -> elect
            1: PartitionState((1, 0), (0,), 0),  # drifted, preferred out of ISR -> no
            2: PartitionState((0, 1), (0, 1), 0),  # fine
        },
    )
    plan, _ = compute_plan(specs(topic("t", 3, 2)), state(brokers(2), t), None)
    (elect,) = plan.of_kind(ElectLeaders)
    assert isinstance(elect, ElectLeaders)
    assert elect.partitions == (0,)
    assert [w.code for w in plan.warnings] == ["UNDER_REPLICATED"]


def test_rf_one_and_min_isr_equal_to_rf_are_flagged() -> None:
    plan, _ = compute_plan(
        specs(topic("one", 1, 1), topic("tight", 1, 2, config={"min.insync.replicas": "2"})),
        state(brokers(2)),
        None,
    )
    assert {(w.topic, w.code) for w in plan.warnings} == {
        ("one", "RF_ONE"),
        ("tight", "MIN_ISR_EQUALS_RF"),
    }


def test_rf_above_the_broker_count_is_an_error_at_the_field() -> None:
    with pytest.raises(SpecError) as exc:
        compute_plan(specs(topic("t", 1, 4)), state(brokers(3)), None)
    assert exc.value.lines()[0].startswith("topics/t.yaml:4:20: error:")


def test_rf_up_adds_one_replica_per_partition_and_counts_the_bytes() -> None:
    bs = brokers(3)
    t = live("t", {0: [0, 1], 1: [1, 2], 2: [2, 0]}, size=500)
    plan, _ = compute_plan(specs(topic("t", 3, 3)), state(bs, t), None)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    for p, move in reassign.moves.items():
        assert move.target[:2] == t.partitions[p].replicas
        assert len(move.target) == 3
        assert "replication factor 2 -> 3" in move.reason
    assert reassign.bytes_to_move == 3 * 500
    assert plan.to_json()["transfer"]["totalBytes"] == 1500


def test_rf_down_removes_a_replica_and_keeps_the_leader() -> None:
    t = live("t", {0: [0, 1, 2], 1: [1, 2, 0]})
    plan, _ = compute_plan(specs(topic("t", 2, 2)), state(brokers(3), t), None)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    assert {p: m.target[0] for p, m in reassign.moves.items()} == {0: 0, 1: 1}
    assert all(len(m.target) == 2 for m in reassign.moves.values())
    assert reassign.bytes_to_move == 0


def test_a_decommissioned_broker_is_drained_and_nothing_else_moves() -> None:
    t = live("t", {0: [0, 1], 1: [1, 2], 2: [2, 3]})
    plan, _ = compute_plan(specs(topic("t", 3, 2), decommission=(3,)), state(brokers(4), t), None)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    assert list(reassign.moves) == [2]
    assert 3 not in reassign.moves[2].target
    assert "broker 3 is drained" in reassign.moves[2].reason


def test_new_topics_avoid_decommissioned_and_offline_brokers() -> None:
    bs = (Broker(0), Broker(1), Broker(2, online=False), Broker(3))
    plan, lock = compute_plan(specs(topic("t", 4, 2), decommission=(3,)), state(bs), None)
    (create,) = plan.actions
    assert isinstance(create, CreateTopic)
    assert {b for r in create.assignment.values() for b in r} == {0, 1}
    assert [b.id for b in lock.entries["t"].brokers] == [0, 1]


def test_a_rack_rule_the_live_assignment_breaks_is_repaired() -> None:
    bs = brokers(4, ["a", "b"])  # 0:a 1:b 2:a 3:b
    t = live("t", {0: [0, 2], 1: [1, 0]})
    plan, _ = compute_plan(specs(topic("t", 2, 2)), state(bs, t), None)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    assert list(reassign.moves) == [0]
    rack = {b.id: b.rack for b in bs}
    assert len({rack[b] for b in reassign.moves[0].target}) == 2


def test_rack_unaware_topics_are_not_repaired() -> None:
    bs = brokers(4, ["a", "b"])
    t = live("t", {0: [0, 2], 1: [1, 0]})
    plan, _ = compute_plan(specs(topic("t", 2, 2, placement="rack-unaware")), state(bs, t), None)
    assert plan.of_kind(Reassign) == []


def test_partitions_being_reassigned_are_left_out_with_a_warning() -> None:
    t = live("t", {0: [0, 1], 1: [1, 2]})
    st = state(brokers(3), t, reassignments={"t": {0: Reassignment(adding=(2,))}})
    plan, _ = compute_plan(specs(topic("t", 2, 3)), st, None)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    assert list(reassign.moves) == [1]
    assert "REASSIGNMENT_IN_FLIGHT" in [w.code for w in plan.warnings]


def test_static_assignment_changes_move_exactly_the_changed_partitions() -> None:
    t = live("t", {0: [0, 1], 1: [1, 2]})
    spec = topic("t", 3, 2, placement="static", assignment=((0, 1), (2, 0), (1, 2)))
    plan, _ = compute_plan(specs(spec), state(brokers(3), t), None)
    add, reassign = plan.of_kind(AddPartitions)[0], plan.of_kind(Reassign)[0]
    assert isinstance(add, AddPartitions) and isinstance(reassign, Reassign)
    assert add.assignment == {2: (1, 2)}
    assert {p: m.target for p, m in reassign.moves.items()} == {1: (2, 0)}
    assert reassign.moves[1].reason == "goal 1, the spec: static assignment changed"


def test_a_large_move_is_flagged() -> None:
    t = live("t", {0: [0], 1: [1]}, size=10_000)
    plan, _ = compute_plan(specs(topic("t", 2, 2)), state(brokers(2), t), None)
    (large,) = [w for w in plan.warnings if w.code == "LARGE_MOVE"]
    assert large.data["bytes"] == 20_000 and large.data["share"] == 1.0


def test_rebalance_flag_evens_out_a_crowded_broker() -> None:
    t = live("t", {p: [0] for p in range(4)})
    plan, _ = compute_plan(specs(topic("t", 4, 1)), state(brokers(2), t), None, rebalance=True)
    (reassign,) = plan.of_kind(Reassign)
    assert isinstance(reassign, Reassign)
    assert len(reassign.moves) == 2
    plan2, _ = compute_plan(specs(topic("t", 4, 1)), state(brokers(2), t), None)
    assert plan2.of_kind(Reassign) == []


def test_a_live_topic_without_partition_zero_is_an_error_not_a_crash() -> None:
    t = TopicState("t", {})
    with pytest.raises(SpecError) as exc:
        compute_plan(specs(topic("t", 2, 1)), state(brokers(2), t), None)
    assert "without a partition 0" in exc.value.lines()[0]


def _with_broker_down(down: int) -> tuple[tuple[Broker, ...], TopicState]:
    bs = tuple(Broker(b.id, b.rack, online=b.id != down) for b in brokers(4))
    t = TopicState(
        "t",
        {
            0: PartitionState((0, 1), (0, 1), 0, 10),
            1: PartitionState((1, 3), (1,), 1, 10),  # replica on the dead broker is out of sync
        },
    )
    return bs, t


def test_under_replication_on_a_dead_broker_says_how_to_restore_it() -> None:
    bs, t = _with_broker_down(3)
    plan, _ = compute_plan(specs(topic("t", 2, 2)), state(bs, t), None)
    (warning,) = [w for w in plan.warnings if w.code == "UNDER_REPLICATED"]
    assert warning.data["partitions"] == [1]
    assert "out-of-sync replicas on broker(s) 3" in warning.message
    assert "1 stay where they are: bring the broker back, or list it under decommission" in (
        warning.message
    )


def test_decommissioning_the_dead_broker_moves_its_replicas_and_says_so() -> None:
    bs, t = _with_broker_down(3)
    plan, _ = compute_plan(specs(topic("t", 2, 2), decommission=(3,)), state(bs, t), None)
    (move,) = plan.of_kind(Reassign)
    assert isinstance(move, Reassign)
    assert set(move.moves) == {1}
    assert 3 not in move.moves[1].target and move.moves[1].target[0] == 1
    (warning,) = [w for w in plan.warnings if w.code == "UNDER_REPLICATED"]
    assert warning.data["moved"] == [1]
    assert "1 of them move in this plan" in warning.message


def test_under_replicated_partitions_a_reassignment_in_flight_moves_are_not_claimed_as_moved() -> (
    None
):
    bs = tuple(Broker(b.id, b.rack, online=b.id != 3) for b in brokers(4))
    t = TopicState(
        "t",
        {
            0: PartitionState((0, 1), (0, 1), 0, 10),
            1: PartitionState((1, 3), (1,), 1, 10),  # broker 3 dead: under-replicated
            2: PartitionState((2, 0, 3), (2,), 2, 10),  # moving 3 -> 0, 0 still copying
        },
    )
    flying = {"t": {2: Reassignment(adding=(0,), removing=(3,))}}
    plan, _ = compute_plan(
        specs(topic("t", 3, 2), decommission=(3,)), state(bs, t, reassignments=flying), None
    )
    (move,) = plan.of_kind(Reassign)
    assert set(move.moves) == {1}  # partition 2 is left out: it is moving already
    (warning,) = [w for w in plan.warnings if w.code == "UNDER_REPLICATED"]
    assert warning.data["moved"] == [1] and warning.data["inFlight"] == [2]
    assert "1 of them move in this plan" in warning.message
    assert "1 are being reassigned now and are left out of this plan" in warning.message
    assert "2 of them move" not in warning.message


def test_a_live_config_kgitops_does_not_know_is_left_alone() -> None:
    """A newer Kafka's or a vendor's config cannot be in a spec (unknown topic config), so its
    absence from git asks nothing: the plan never deletes it, and still deletes a known one."""
    t = live(
        "t",
        {0: [0]},
        {"confluent.placement.constraints": "{}", "segment.ms": "5000", "x.new.in.kafka.9": "1"},
    )
    plan, _ = compute_plan(specs(topic("t", 1, 1)), state(brokers(1), t), None)
    (alter,) = plan.of_kind(AlterConfig)
    assert isinstance(alter, AlterConfig)
    assert (alter.set, alter.delete, alter.previous) == (
        {},
        ("segment.ms",),
        {"segment.ms": "5000"},
    )
    t = live("t", {0: [0]}, {"confluent.placement.constraints": "{}"})
    plan, _ = compute_plan(specs(topic("t", 1, 1)), state(brokers(1), t), None)
    assert plan.actions == ()
