"""The simulated cluster follows the KRaft controller's rules, one test per rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cluster.port import ClusterAdmin, ConfigChange, NewPartitions, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import ClusterError, ClusterRequestError, StateFileError
from kgitops.model import Broker, TopicPartition

BROKERS = [Broker(0, "az1"), Broker(1, "az2"), Broker(2, "az3"), Broker(3, "az1")]


@pytest.fixture
def sim(tmp_path: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(tmp_path / "state.json"), BROKERS)


def code(results: object, item: object) -> str | None:
    assert isinstance(results, dict)
    err = results[item]
    return err.code if isinstance(err, ClusterRequestError) else None


def make(sim: SimulatedCluster, name: str, assignment: dict[int, tuple[int, ...]]) -> None:
    assert sim.create_topics([NewTopic(name, assignment)]) == {name: None}


def part(sim: SimulatedCluster, name: str, pid: int = 0):  # type: ignore[no-untyped-def]
    return sim.describe([name]).topics[name].partitions[pid]


def test_it_implements_the_port(sim: SimulatedCluster) -> None:
    assert isinstance(sim, ClusterAdmin)


def test_created_on_first_use_from_the_cluster_file_brokers(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "state.json"
    sim = SimulatedCluster.open(str(path), BROKERS)
    assert path.exists()
    assert sim.describe().brokers == tuple(BROKERS[i] for i in (0, 1, 2, 3))
    assert sim.describe().topics == {}


def test_every_change_is_persisted_for_the_next_run(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (0, 1), 1: (1, 2)})
    again = SimulatedCluster.open(sim.path, BROKERS)
    assert again.describe() == sim.describe()


def test_a_second_handle_sees_changes_made_through_another(sim: SimulatedCluster) -> None:
    other = SimulatedCluster.open(sim.path, BROKERS)
    make(other, "a", {0: (0, 1)})
    assert "a" in sim.describe().topics


def test_a_broker_added_to_the_cluster_file_is_registered(sim: SimulatedCluster) -> None:
    grown = SimulatedCluster.open(sim.path, [*BROKERS, Broker(4, "az2")])
    assert grown.describe().broker_ids == (0, 1, 2, 3, 4)


def test_a_removed_broker_stays_registered_while_it_holds_replicas(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (3, 0)})
    kept = SimulatedCluster.open(sim.path, BROKERS[:2] + BROKERS[3:])
    assert kept.describe().broker_ids == (0, 1, 3)  # 2 held nothing, 3 holds a replica


# ------------------------------------------------------------------ create topics


def test_create_leader_is_the_first_replica_and_isr_all_replicas(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (2, 0, 1), 1: (3, 1, 2)})
    assert part(sim, "a", 0).leader == 2
    assert part(sim, "a", 0).isr == (2, 0, 1)
    assert part(sim, "a", 1).replicas == (3, 1, 2)


def test_create_an_existing_topic_is_topic_already_exists(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (0,)})
    res = sim.create_topics([NewTopic("a", {0: (1,)})])
    assert code(res, "a") == "TOPIC_ALREADY_EXISTS"
    assert "Topic 'a' already exists." in str(res["a"])


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ({0: (0, 9)}, "includes broker 9, but no such broker is registered"),
        ({0: (1, 1)}, "includes the broker 1 more than once"),
        ({0: (0, 1), 1: (2,)}, "a partition with 1 replica(s), but this is not consistent"),
        ({0: (0, 1), 2: (1, 2)}, "partitions should be a consecutive 0-based integer sequence"),
        ({0: ()}, "includes an empty replica list"),
    ],
)
def test_create_validates_the_assignment_as_the_controller_does(
    sim: SimulatedCluster, assignment: dict[int, tuple[int, ...]], message: str
) -> None:
    res = sim.create_topics([NewTopic("a", assignment)])
    assert code(res, "a") == "INVALID_REPLICA_ASSIGNMENT"
    assert message in str(res["a"])
    assert "a" not in sim.describe().topics


def test_create_is_per_item_one_bad_topic_does_not_stop_the_others(sim: SimulatedCluster) -> None:
    res = sim.create_topics([NewTopic("ok", {0: (0, 1)}), NewTopic("bad", {0: (7,)})])
    assert res["ok"] is None
    assert code(res, "bad") == "INVALID_REPLICA_ASSIGNMENT"
    assert set(sim.describe().topics) == {"ok"}


@pytest.mark.parametrize("name", ["", ".", "..", "a b", "x" * 250, "é"])
def test_illegal_topic_names_are_refused(sim: SimulatedCluster, name: str) -> None:
    assert code(sim.create_topics([NewTopic(name, {0: (0,)})]), name) == "INVALID_TOPIC_EXCEPTION"


def test_topics_colliding_on_dot_and_underscore_are_refused(sim: SimulatedCluster) -> None:
    make(sim, "a.b", {0: (0,)})
    res = sim.create_topics([NewTopic("a_b", {0: (0,)})])
    assert code(res, "a_b") == "INVALID_TOPIC_EXCEPTION"
    assert "collides with existing topic: a.b" in str(res["a_b"])


def test_create_checks_config_names_and_values(sim: SimulatedCluster) -> None:
    res = sim.create_topics(
        [
            NewTopic("u", {0: (0,)}, {"retention.mss": "1"}),
            NewTopic("v", {0: (0,)}, {"min.insync.replicas": "0"}),
            NewTopic("w", {0: (0,)}, {"cleanup.policy": "compact"}),
        ]
    )
    assert code(res, "u") == "INVALID_CONFIG"
    assert "Unknown topic config name: retention.mss" in str(res["u"])
    assert code(res, "v") == "INVALID_CONFIG"
    assert res["w"] is None
    assert sim.describe().topics["w"].config == {"cleanup.policy": "compact"}


def test_create_with_some_replicas_on_a_dead_broker_leaves_them_out_of_the_isr(
    sim: SimulatedCluster,
) -> None:
    sim.fail_broker(0)
    make(sim, "a", {0: (0, 1, 2)})
    assert part(sim, "a").isr == (1, 2)
    assert part(sim, "a").leader == 1
    res = sim.create_topics([NewTopic("b", {0: (0,)})])
    assert "are fenced or in controlled shutdown" in str(res["b"])


# ------------------------------------------------------------------ add partitions


def test_add_partitions_appends_with_the_given_assignment(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (0, 1)})
    assert sim.create_partitions([NewPartitions("a", 3, {1: (1, 2), 2: (2, 3)})]) == {"a": None}
    assert sim.describe().topics["a"].partitions[2].replicas == (2, 3)


@pytest.mark.parametrize(
    ("addition", "want", "message"),
    [
        (NewPartitions("a", 2, {}), "INVALID_PARTITIONS", "Topic already has 2 partition(s)."),
        (NewPartitions("a", 1, {}), "INVALID_PARTITIONS", "1 would not be an increase"),
        (NewPartitions("a", 4, {2: (0, 1)}), "INVALID_REPLICA_ASSIGNMENT", "only 1 assignment"),
        (NewPartitions("a", 3, {2: (0,)}), "INVALID_REPLICA_ASSIGNMENT", "which have 2 replica"),
        (NewPartitions("a", 3, {3: (0, 1)}), "INVALID_REPLICA_ASSIGNMENT", "should be 2..2"),
        (NewPartitions("zz", 3, {}), "UNKNOWN_TOPIC_OR_PARTITION", "does not host"),
    ],
)
def test_add_partitions_rules(
    sim: SimulatedCluster, addition: NewPartitions, want: str, message: str
) -> None:
    make(sim, "a", {0: (0, 1), 1: (1, 2)})
    res = sim.create_partitions([addition])
    assert code(res, addition.topic) == want
    assert message in str(res[addition.topic])
    assert sim.describe().topics["a"].partition_count == 2


# ------------------------------------------------------------------ configs


def test_incremental_config_set_and_delete(sim: SimulatedCluster) -> None:
    sim.create_topics([NewTopic("a", {0: (0,)}, {"retention.ms": "1", "cleanup.policy": "delete"})])
    res = sim.alter_topic_configs(
        {"a": ConfigChange(set={"retention.ms": "2"}, delete=("cleanup.policy",))}
    )
    assert res == {"a": None}
    assert sim.describe().topics["a"].config == {"retention.ms": "2"}


def test_a_bad_config_change_changes_nothing_on_that_topic(sim: SimulatedCluster) -> None:
    sim.create_topics([NewTopic("a", {0: (0,)}, {"retention.ms": "1"})])
    res = sim.alter_topic_configs(
        {"a": ConfigChange(set={"retention.ms": "5", "segment.bytes": "x"}), "b": ConfigChange()}
    )
    assert code(res, "a") == "INVALID_CONFIG"
    assert code(res, "b") == "UNKNOWN_TOPIC_OR_PARTITION"
    assert sim.describe().topics["a"].config == {"retention.ms": "1"}


def test_broker_configs_hold_the_throttle_rates(sim: SimulatedCluster) -> None:
    res = sim.alter_broker_configs(
        {
            0: ConfigChange(set={"leader.replication.throttled.rate": "1000"}),
            1: ConfigChange(set={"follower.replication.throttled.rate": "ten"}),
            9: ConfigChange(set={"leader.replication.throttled.rate": "1"}),
        }
    )
    assert res["broker:0"] is None
    assert code(res, "broker:1") == "INVALID_CONFIG"
    assert code(res, "broker:9") == "BROKER_NOT_AVAILABLE"
    assert sim.describe().broker_configs == {0: {"leader.replication.throttled.rate": "1000"}}
    sim.alter_broker_configs({0: ConfigChange(delete=("leader.replication.throttled.rate",))})
    assert sim.describe().broker_configs == {}


def test_delete_topics(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (0,)})
    res = sim.delete_topics(["a", "b"])
    assert res["a"] is None
    assert code(res, "b") == "UNKNOWN_TOPIC_OR_PARTITION"
    assert sim.describe().topics == {}


# ------------------------------------------------------------------ broker failure


def test_a_failed_broker_leaves_the_isr_and_its_leaderships_move(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (1, 2, 3), 1: (2, 3, 1)})
    sim.fail_broker(1)
    p0, p1 = part(sim, "a", 0), part(sim, "a", 1)
    assert (p0.isr, p0.leader) == ((2, 3), 2)  # next live replica in the ISR leads
    assert (p1.isr, p1.leader) == ((2, 3), 2)
    assert not {b.id: b for b in sim.describe().brokers}[1].online


def test_a_partition_whose_last_isr_replica_fails_is_offline(tmp_path: Path) -> None:
    sim = SimulatedCluster.open(
        str(tmp_path / "state.json"), BROKERS, eligible_leader_replicas=False
    )
    make(sim, "a", {0: (1, 2)})
    sim.fail_broker(1)
    sim.fail_broker(2)
    p = part(sim, "a")
    assert p.leader is None
    assert p.isr == (2,)  # without ELR Kafka never empties the ISR: the last member stays
    sim.restore_broker(1)  # not in the ISR: no unclean election, still offline
    assert part(sim, "a").leader is None
    sim.restore_broker(2)
    p = part(sim, "a")
    assert p.leader == 2
    assert p.isr == (1, 2)


def test_a_restored_broker_rejoins_the_isr_but_leadership_stays_until_election(
    sim: SimulatedCluster,
) -> None:
    make(sim, "a", {0: (1, 2)})
    sim.fail_broker(1)
    sim.restore_broker(1)
    p = part(sim, "a")
    assert p.isr == (1, 2)
    assert p.leader == 2
    assert sim.elect_preferred_leaders([("a", 0)]) == {TopicPartition("a", 0): None}
    assert part(sim, "a").leader == 1


def test_preferred_election_fails_when_the_preferred_replica_is_down(
    sim: SimulatedCluster,
) -> None:
    make(sim, "a", {0: (1, 2)})
    sim.fail_broker(1)
    res = sim.elect_preferred_leaders([("a", 0), ("a", 5)])
    assert code(res, TopicPartition("a", 0)) == "PREFERRED_LEADER_NOT_AVAILABLE"
    assert code(res, TopicPartition("a", 5)) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_failing_an_unknown_or_failed_broker_is_an_error(sim: SimulatedCluster) -> None:
    with pytest.raises(ClusterError, match="broker 9 is not in the cluster"):
        sim.fail_broker(9)
    sim.fail_broker(0)
    with pytest.raises(ClusterError, match="already offline"):
        sim.fail_broker(0)


# ------------------------------------------------------------------ reassignment

GB = 1_000_000_000


def sized(sim: SimulatedCluster, name: str, replicas: tuple[int, ...], size: int) -> None:
    """A one-partition topic holding ``size`` bytes (the simulation has no producers)."""
    make(sim, name, {0: replicas})
    sim.set_size(name, size)


def test_reassignment_adds_then_removes_replicas(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), GB)
    assert sim.alter_reassignments({("a", 0): (2, 1)}) == {TopicPartition("a", 0): None}
    p = part(sim, "a")
    assert p.replicas == (2, 1, 0)  # AR = target + removing while in flight
    assert p.isr == (1, 0)
    assert sim.list_reassignments() == {"a": {0: ((2, 1, 0), (2,), (0,))}}
    moves = sim.describe().reassignments["a"][0]
    assert (moves.adding, moves.removing, moves.target) == ((2,), (0,), (2, 1))
    sim.advance(9.9)  # 1 GB at the unthrottled 100 MB/s takes 10 s
    assert part(sim, "a").replicas == (2, 1, 0)
    sim.advance(0.1)
    p = part(sim, "a")
    # leader 0 left: the first target replica in the ISR leads (Kafka's reassignment election)
    assert (p.replicas, p.isr, p.leader) == ((2, 1), (2, 1), 2)
    assert sim.list_reassignments() == {}
    assert sim.describe().reassignments == {}


def test_a_removed_leader_is_replaced_by_the_first_target_replica_in_sync(
    sim: SimulatedCluster,
) -> None:
    sized(sim, "a", (0, 1, 2), 0)
    sim.alter_reassignments({("a", 0): (3, 2, 1)})
    sim.advance(0)
    p = part(sim, "a")
    assert (p.replicas, p.leader) == ((3, 2, 1), 3)


def test_a_reorder_completes_at_once_and_keeps_the_leader(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_reassignments({("a", 0): (1, 0)})
    p = part(sim, "a")
    assert (p.replicas, p.leader) == ((1, 0), 0)
    assert sim.list_reassignments() == {}


def test_throttled_replicas_catch_up_at_the_throttled_rate(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_broker_configs(
        {2: ConfigChange(set={"follower.replication.throttled.rate": "10000000"})}
    )
    sim.alter_topic_configs(
        {"a": ConfigChange(set={"follower.replication.throttled.replicas": "0:2"})}
    )
    sim.alter_reassignments({("a", 0): (0, 1, 2)})
    sim.advance(104)  # 1 GB at the 23/24 of 10 MB/s Kafka's quota lets through: 104.3 s
    assert 2 not in part(sim, "a").isr
    sim.advance(1)
    assert part(sim, "a").isr == (0, 1, 2)


def test_the_leader_side_throttle_is_shared_by_the_replicas_it_serves(
    sim: SimulatedCluster,
) -> None:
    sized(sim, "a", (0,), GB)
    sized(sim, "b", (0,), GB)
    sim.alter_broker_configs(
        {0: ConfigChange(set={"leader.replication.throttled.rate": "20000000"})}
    )
    for t in ("a", "b"):
        sim.alter_topic_configs(
            {t: ConfigChange(set={"leader.replication.throttled.replicas": "*"})}
        )
    sim.alter_reassignments({("a", 0): (0, 1), ("b", 0): (0, 2)})
    sim.advance(104)  # 23/24 of 20 MB/s shared: 9.58 MB/s each, 104.3 s
    assert sim.list_reassignments() != {}
    sim.advance(1)
    assert sim.list_reassignments() == {}


def test_an_unthrottled_replica_ignores_a_rate_set_on_its_broker(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0,), GB)
    sim.alter_broker_configs({1: ConfigChange(set={"follower.replication.throttled.rate": "1"})})
    sim.alter_reassignments({("a", 0): (0, 1)})
    sim.advance(10)
    assert part(sim, "a").isr == (0, 1)


def test_a_broker_failure_during_a_reassignment_stalls_it_until_restored(
    sim: SimulatedCluster,
) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_reassignments({("a", 0): (2, 1)})
    sim.advance(4)  # 40% copied
    sim.fail_broker(2)
    sim.advance(3600)
    assert sim.list_reassignments() == {"a": {0: ((2, 1, 0), (2,), (0,))}}
    sim.restore_broker(2)
    sim.advance(5.9)  # resumes where it stopped: 6 s left
    assert sim.list_reassignments() != {}
    sim.advance(0.1)
    assert sim.list_reassignments() == {}
    assert part(sim, "a").replicas == (2, 1)


def test_a_leader_failure_during_a_reassignment_moves_the_source(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_reassignments({("a", 0): (2, 3)})
    sim.advance(5)
    sim.fail_broker(0)
    assert part(sim, "a").leader == 1  # copying goes on from the new leader
    sim.advance(5)
    p = part(sim, "a")
    assert (p.replicas, p.isr, p.leader) == ((2, 3), (2, 3), 2)


def test_cancelling_a_reassignment_reverts_to_the_original_replicas(
    sim: SimulatedCluster,
) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_reassignments({("a", 0): (2, 3)})
    sim.advance(5)
    assert sim.alter_reassignments({("a", 0): None}) == {TopicPartition("a", 0): None}
    p = part(sim, "a")
    assert (p.replicas, p.isr, p.leader) == ((0, 1), (0, 1), 0)
    res = sim.alter_reassignments({("a", 0): None})
    assert code(res, TopicPartition("a", 0)) == "NO_REASSIGNMENT_IN_PROGRESS"


def test_reassignment_errors(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), 0)
    res = sim.alter_reassignments({("a", 0): (0, 9), ("a", 3): (0,), ("b", 0): (0,)})
    assert code(res, TopicPartition("a", 0)) == "INVALID_REPLICA_ASSIGNMENT"
    assert code(res, TopicPartition("a", 3)) == "UNKNOWN_TOPIC_OR_PARTITION"
    assert code(res, TopicPartition("b", 0)) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_progress_and_clock_survive_a_new_process(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0, 1), GB)
    sim.alter_reassignments({("a", 0): (2, 1)})
    sim.advance(6)
    again = SimulatedCluster.open(sim.path, BROKERS)
    assert again.state.clock == 6
    again.advance(4)
    assert again.list_reassignments() == {}


def test_a_state_file_with_an_inconsistent_reassignment_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"format": "kgitops-state/v1", "brokers": [{"id": 0}, {"id": 1}],'
        ' "topics": {"a": {"partitions": {"0": {"replicas": [0]}}}},'
        ' "reassignments": {"a": {"0": {"adding": [1], "removing": []}}}}'
    )
    with pytest.raises(StateFileError, match=r"reassignments\.a\.0: adding and removing"):
        SimulatedCluster.open(str(path), [])


def test_a_hand_written_state_gets_isr_and_leaders_from_live_brokers(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"format": "kgitops-state/v1", "brokers": [{"id": 0, "online": false}, {"id": 1}],'
        ' "topics": {"a": {"partitions": {"0": {"replicas": [0, 1]}}}}}'
    )
    p = SimulatedCluster.open(str(path), []).describe().topics["a"].partitions[0]
    assert (p.isr, p.leader) == ((1,), 1)


def test_growing_a_partition_keeps_a_failed_in_sync_replica_complete(
    sim: SimulatedCluster,
) -> None:
    make(sim, "a", {0: (0, 1)})
    sim.fail_broker(1)
    sim.set_size("a", GB)
    sim.restore_broker(1)
    assert part(sim, "a").isr == (0, 1)  # it had every byte when it failed


MB = 1_000_000


def test_a_restored_broker_catches_up_what_was_written_while_it_was_down(
    sim: SimulatedCluster,
) -> None:
    make(sim, "a", {0: (0, 1)})
    sim.set_produce_rate("a", 1 * MB)
    sim.fail_broker(1)
    sim.advance(100)  # 100 MB written while broker 1 is down
    sim.restore_broker(1)
    assert part(sim, "a").isr == (0,)
    assert sim.replica_progress()[("a", 0)][1] == (0.0, 100 * MB)
    sim.advance(1.0)  # copies 100 MB/s while the log grows 1 MB/s: 100/99 s
    assert part(sim, "a").isr == (0,)
    sim.advance(0.02)
    assert part(sim, "a").isr == (0, 1)


def test_a_throttle_below_the_write_rate_never_finishes_a_move(sim: SimulatedCluster) -> None:
    sized(sim, "a", (0,), 10 * MB)
    sim.set_produce_rate("a", 2 * MB)
    sim.alter_broker_configs(
        {1: ConfigChange(set={"follower.replication.throttled.rate": "1000000"})}
    )
    sim.alter_topic_configs(
        {"a": ConfigChange(set={"follower.replication.throttled.replicas": "*"})}
    )
    sim.alter_reassignments({("a", 0): (0, 1)})
    sim.advance(3600)
    assert sim.list_reassignments() != {}
    assert part(sim, "a").size_bytes == 10 * MB + 3600 * 2 * MB
    sim.set_produce_rate("a", 0)
    sim.alter_broker_configs({1: ConfigChange(delete=("follower.replication.throttled.rate",))})
    sim.advance(73)  # 7.21 GB at 100 MB/s
    assert sim.list_reassignments() == {}


def test_an_offline_partition_takes_no_writes(sim: SimulatedCluster) -> None:
    make(sim, "a", {0: (1,)})
    sim.set_produce_rate("a", MB)
    sim.fail_broker(1)
    sim.advance(10)
    assert part(sim, "a").size_bytes == 0


def test_unclean_election_elects_an_out_of_sync_replica_and_loses_its_missing_bytes(
    sim: SimulatedCluster,
) -> None:
    make(sim, "a", {0: (0, 1)})
    sim.set_produce_rate("a", MB)
    sim.fail_broker(1)  # ISR [0]
    sim.advance(10)  # 10 MB that broker 1 does not have
    sim.fail_broker(0)  # offline: ISR [0], leader none
    assert part(sim, "a").leader is None
    sim.restore_broker(1)
    assert part(sim, "a").leader is None  # clean: broker 1 is not in the ISR
    sim.alter_topic_configs({"a": ConfigChange(set={"unclean.leader.election.enable": "true"})})
    p = part(sim, "a")
    assert (p.leader, p.isr, p.size_bytes) == (1, (1,), 0)  # the 10 MB are lost


def _create_many(path: str, prefix: str) -> None:
    cluster = SimulatedCluster.open(path, BROKERS)
    for i in range(15):
        cluster.create_topics([NewTopic(f"{prefix}{i}", {0: (i % 4,)})])


def test_separate_processes_changing_one_cluster_lose_nothing(sim: SimulatedCluster) -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_create_many, args=(sim.path, p)) for p in ("x", "y")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert len(sim.describe().topics) == 30
