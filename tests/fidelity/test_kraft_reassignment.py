"""KRaft's reassignment life cycle, rule by rule, on the simulated cluster and through apply."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.apply.run import apply_plan
from kgitops.cluster.port import NewPartitions
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import ClusterRequestError
from kgitops.model import ClusterState, Reassignment, ReassignmentSettings, TopicState
from kgitops.plan.actions import AddPartitions, Move, Reassign
from kgitops.plan.diff import compute_plan
from kgitops.plan.value import Plan
from tests.fidelity.conftest import BROKERS, make
from tests.planner.planner_builders import live, specs, state, topic


def moving(sim: SimulatedCluster, name: str, pid: int = 0) -> tuple[Any, ...]:
    return sim.list_reassignments()[name][pid]


def test_removing_replicas_are_kept_sorted_so_a_cancel_gives_them_back_sorted(
    sim: SimulatedCluster,
) -> None:
    """PartitionReassignmentReplicas.java: removing = TreeSet(current - target), AR = target +
    removing; PartitionReassignmentRevert.java: a cancel keeps AR minus the adding replicas,
    in AR's order. So [3, 1] -> [4, 5] cancelled is [1, 3], not [3, 1]."""
    make(sim, "t", {0: (3, 1)})
    sim.set_size("t", 10**9)
    assert sim.alter_reassignments({("t", 0): (4, 5)}) == {("t", 0): None}
    assert moving(sim, "t") == ((4, 5, 1, 3), (4, 5), (1, 3))
    assert sim.alter_reassignments({("t", 0): None}) == {("t", 0): None}
    after = sim.describe(["t"]).topics["t"].partitions[0]
    assert after.replicas == (1, 3)
    assert sim.list_reassignments() == {}


def test_retargeting_a_move_in_flight_diffs_against_the_full_replica_list_without_reverting(
    sim: SimulatedCluster,
) -> None:
    """ReplicationControlManager.java changePartitionReassignment: the new target is compared
    with the partition's current *full* replica list (target + removing of the move in
    flight), no revert first; adding/removing are replaced only when the new ones are
    non-empty (PartitionChangeBuilder.java keeps the old lists otherwise)."""
    make(sim, "t", {0: (1, 2, 3)})
    sim.set_size("t", 10**9)
    sim.alter_reassignments({("t", 0): (4, 5, 6 - 3)})  # [1, 2, 3] -> [4, 5, 3]
    assert moving(sim, "t") == ((4, 5, 3, 1, 2), (4, 5), (1, 2))
    sim.alter_reassignments({("t", 0): (1, 2, 4)})
    # current full list [4, 5, 3, 1, 2]: removing {3, 5}, adding {} -> the old adding stays
    assert moving(sim, "t") == ((1, 2, 4, 3, 5), (4, 5), (3, 5))
    sim.advance(3600)
    assert sim.list_reassignments() == {}
    assert sim.describe(["t"]).topics["t"].partitions[0].replicas == (1, 2, 4)


def test_a_cancel_that_needs_an_unclean_election_is_refused_unless_the_topic_allows_it(
    sim: SimulatedCluster,
) -> None:
    """ReplicationControlManager.java cancelPartitionReassignment + PartitionReassignmentRevert:
    when every in-sync replica is one the move was adding, reverting would elect an out-of-sync
    replica; Kafka refuses with INVALID_REPLICA_ASSIGNMENT unless unclean leader election is
    enabled for the topic."""
    lenient = {"unclean.leader.election.enable": "true"}
    sim.fail_broker(3)  # the move below can never finish: 3 never catches up
    for name, config in (("strict", {}), ("lenient", lenient)):
        make(sim, name, {0: (1,)})
        sim.set_size(name, 10**6)
        if config:
            sim.alter_topic_configs({name: _set(config)})
        assert sim.alter_reassignments({(name, 0): (2, 3)}) == {(name, 0): None}
    sim.advance(60)  # 2 has caught up and joined the ISR
    sim.fail_broker(1)  # the only original replica: the ISR is now adding replicas only
    for name in ("strict", "lenient"):
        p = sim.describe([name]).topics[name].partitions[0]
        assert p.isr == (2,), p
    refused = sim.alter_reassignments({("strict", 0): None})[("strict", 0)]
    assert isinstance(refused, ClusterRequestError)
    assert refused.code == "INVALID_REPLICA_ASSIGNMENT"
    assert "would require an unclean leader election" in str(refused)
    assert sim.list_reassignments()["strict"][0][0] == (2, 3, 1), "nothing changed"
    assert sim.alter_reassignments({("lenient", 0): None}) == {("lenient", 0): None}
    assert sim.describe(["lenient"]).topics["lenient"].partitions[0].replicas == (1,)


def test_partitions_added_while_a_move_is_in_flight_get_partition_0s_full_replica_count(
    sim: SimulatedCluster,
) -> None:
    """ReplicationControlManager.java createPartitions: the replication factor of new
    partitions is partition 0's replicas.length, which during a move is target + removing.
    The planner therefore defers the expansion (PARTITIONS_DEFERRED) while the topic moves."""
    make(sim, "t", {0: (1, 2), 1: (2, 3)})
    sim.set_size("t", 10**9)
    sim.alter_reassignments({("t", 0): (1, 3)})  # AR [1, 3, 2] while in flight
    refused = sim.create_partitions([NewPartitions("t", 3, {2: (4, 5)})])["t"]
    assert isinstance(refused, ClusterRequestError)
    assert "previous partitions, which have 3 replica(s)" in str(refused)

    snapshot = sim.describe(["t"])
    plan, _ = compute_plan(specs(topic("t", 4, 2)), snapshot, None)
    assert plan.of_kind(AddPartitions) == []
    deferred = [w for w in plan.warnings if w.code == "PARTITIONS_DEFERRED"]
    assert deferred and deferred[0].data["reassigning"] == [0]
    sim.advance(3600)
    plan, _ = compute_plan(specs(topic("t", 4, 2)), sim.describe(["t"]), None)
    [added] = plan.of_kind(AddPartitions)
    assert all(len(r) == 2 for r in added.assignment.values())  # type: ignore[attr-defined]


class LaggingMetadata:
    """The simulated cluster seen the way apply sees a real one: the controller
    (ListPartitionReassignments) knows a move has completed one poll before the broker that
    answers Metadata does; that broker still shows target + removing."""

    def __init__(self, sim: SimulatedCluster) -> None:
        self.sim = sim
        self.seen: dict[tuple[str, int], tuple[int, ...]] = {}
        self.lagging: dict[tuple[str, int], tuple[int, ...]] = {}
        self.stale_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sim, name)

    def list_reassignments(self) -> Any:
        now = self.sim.list_reassignments()
        flying = {(t, p): e[0] for t, ps in now.items() for p, e in ps.items()}
        self.lagging = {tp: r for tp, r in self.seen.items() if tp not in flying}
        self.seen = flying
        return now

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        now = self.sim.describe(topics)
        lag, self.lagging = self.lagging, {}
        self.stale_reads += len(lag)
        shown = {
            n: TopicState(
                n,
                {
                    p: replace(ps, replicas=lag[(n, p)]) if (n, p) in lag else ps
                    for p, ps in t.partitions.items()
                },
                t.config,
            )
            for n, t in now.topics.items()
        }
        return ClusterState(now.brokers, shown, now.reassignments, now.cluster_id)


def test_a_move_the_controller_finished_is_done_although_a_broker_still_shows_it_moving(
    sim: SimulatedCluster,
) -> None:
    """ReassignPartitionsCommand.java (verify) trusts the controller's
    ListPartitionReassignments, and KafkaApis.scala answers Metadata from the broker's own
    cache, which lags the controller. A partition the controller no longer lists while
    Metadata still shows target + removing has completed: not a failure, and its preferred
    leader is still elected."""
    make(sim, "t", {0: (1, 2)})
    sim.set_size("t", 10**9)  # 10 s at the simulated 100 MB/s: polls see it in flight
    plan = Plan("c", "x", (Reassign("t", {0: Move((1, 2), (3, 2), size_bytes=10**9)}),))
    lagging = LaggingMetadata(sim)
    report = apply_plan(
        plan,
        lagging,  # type: ignore[arg-type]
        ReassignmentSettings(max_concurrent_moves=1),
        allow_delete=False,
        poll_seconds=1,
        verify=False,
    )
    assert lagging.stale_reads == 1, "the broker did lag behind the controller"
    assert [o.done for o in report.outcomes] == [True], report.lines()
    p = sim.describe(["t"]).topics["t"].partitions[0]
    assert p.replicas == (3, 2)
    assert p.leader == 3, "the election after the move still happened"


def test_reassignment_state_roundtrip_keeps_kraft_order() -> None:
    """PartitionReassignmentReplicas.java: what ListPartitionReassignments reports is the
    state kgitops plans from; the planner leaves partitions in flight alone."""
    snap = state(
        BROKERS,
        live("t", {0: (4, 5, 1, 3)}),
        reassignments={"t": {0: Reassignment((4, 5), (1, 3), (4, 5))}},
    )
    plan, _ = compute_plan(specs(topic("t", 1, 2)), snap, None)
    assert plan.of_kind(Reassign) == []
    assert any(w.code == "REASSIGNMENT_IN_FLIGHT" for w in plan.warnings)


def _set(config: dict[str, str]) -> Any:
    from kgitops.cluster.port import ConfigChange

    return ConfigChange(set=config)


def test_the_adapter_asks_the_controller_and_cancels_with_a_null_replica_list() -> None:
    """KafkaApis.scala forwards AlterPartitionReassignments and ListPartitionReassignments to
    the controller (ReplicationControlManager.java): a partition whose ``replicas`` is null
    is a cancel, and the list names every reassigning partition when ``topics`` is null.
    The adapter sends both to the controller node, the cancel as a null list, and reads the
    controller's answer as the state of the move (replicas = target + removing)."""
    from types import SimpleNamespace

    from kgitops.model import TopicPartition
    from tests.fidelity.kraft_fakes import RecordingManager, adapter

    def answer(request: Any, node: int | None) -> Any:
        name = type(request).__name__
        if name.startswith("ListPartitionReassignments"):
            part = SimpleNamespace(
                partition_index=0,
                replicas=[4, 5, 1, 3],
                adding_replicas=[4, 5],
                removing_replicas=[1, 3],
            )
            topic = SimpleNamespace(name="t", partitions=[part])
            return SimpleNamespace(error_code=0, error_message=None, topics=[topic])
        partitions = [
            SimpleNamespace(partition_index=p.partition_index, error_code=0, error_message=None)
            for t in request.topics
            for p in t.partitions
        ]
        topics = [SimpleNamespace(name=request.topics[0].name, partitions=partitions)]
        return SimpleNamespace(error_code=0, error_message=None, responses=topics)

    manager = RecordingManager(answer)
    admin = adapter(manager)
    assert admin.list_reassignments() == {"t": {0: ((4, 5, 1, 3), (4, 5), (1, 3))}}
    assert admin.alter_reassignments({TopicPartition("t", 0): None}) == {
        TopicPartition("t", 0): None
    }
    (listed, to1), (cancel, to2) = manager.sent
    assert to1 == to2 == 1, "both go to the controller"
    assert listed.topics is None
    [topic] = cancel.topics
    assert topic.name == "t" and topic.partitions[0].replicas is None
    # on the wire (flexible version 0): partition 0, replicas as a null compact array (0),
    # then the partition's, topic's and request's empty tagged fields
    assert bytes(cancel.encode(version=0)).endswith(b"\x00\x00\x00\x00" + b"\x00" + b"\x00" * 3)


@settings(max_examples=60)
@given(
    current=st.lists(st.integers(1, 5), min_size=1, max_size=4, unique=True),
    target=st.lists(st.integers(1, 5), min_size=1, max_size=4, unique=True),
)
def test_a_cancel_goes_back_to_the_source_set_in_krafts_order(
    tmp_path_factory: Any, current: list[int], target: list[int]
) -> None:
    """PartitionReassignmentReplicas.java + PartitionReassignmentRevert.java, for any move:
    while in flight AR = target + sorted(removing); a cancel gives back the source's
    replicas in AR's order, which apply reports (``moves.reverted``) -- not necessarily
    the source's order, so the preferred leader can change."""
    from kgitops.apply.moves import reverted

    path = tmp_path_factory.mktemp("p") / "s.json"
    sim = SimulatedCluster.open(str(path), BROKERS)
    make(sim, "t", {0: tuple(current)})
    sim.set_size("t", 10**9)
    sim.alter_reassignments({("t", 0): tuple(target)})
    flying = sim.list_reassignments().get("t", {}).get(0)
    removing = sorted(set(current) - set(target))
    if flying is None:  # nothing to copy: done at once
        assert sim.describe(["t"]).topics["t"].partitions[0].replicas == tuple(target)
        return
    assert flying[0] == (*target, *removing) and list(flying[2]) == removing
    assert sim.alter_reassignments({("t", 0): None}) == {("t", 0): None}
    back = sim.describe(["t"]).topics["t"].partitions[0].replicas
    assert sorted(back) == sorted(current)
    assert back == reverted(tuple(current), tuple(target))
