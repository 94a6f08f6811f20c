"""The rack rule has one home (kgitops/placement/racks.py) and validate, plan and rebalance
agree on it.

The first version had three copies that disagreed on which racks a partition *could* be on:
the diff and validate counted every rack in the cluster, rebalance only the racks of brokers a
replica may go to. With rack c's only broker decommissioned, validate warned about partitions
on racks {a, b} that no plan would (or could) move.
"""

from __future__ import annotations

from pathlib import Path

from planner_builders import live, specs, topic

from kgitops.model import Broker, ClusterState
from kgitops.placement.racks import RackRule
from kgitops.placement.rebalance import rebalance
from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan
from kgitops.spec.load import load_specs
from tests.helpers import cluster_folder

BROKERS = (
    Broker(1, "a"),
    Broker(2, "a"),
    Broker(6, "a"),
    Broker(3, "b"),
    Broker(5, "b"),
    Broker(4, "c"),
)
DRAINED = (4,)
# p0 and p2 cover racks a and b: all they can, with c's only broker leaving. p1 is on rack a only.
ASSIGNMENT = {0: (1, 2, 3), 1: (1, 2, 6), 2: (3, 5, 1)}


def test_the_racks_a_partition_could_be_on_are_those_of_brokers_it_may_be_placed_on() -> None:
    rule = RackRule.of(BROKERS, DRAINED)
    assert rule.available == {"a", "b"}
    assert [p for p, r in ASSIGNMENT.items() if rule.broken(r)] == [1]
    assert rule.needed((1, 2, 4)) == 3  # a replica already on rack c keeps c countable
    offline = tuple(Broker(b.id, b.rack, online=b.id != 4) for b in BROKERS)
    assert RackRule.of(offline) == rule


def test_the_rule_is_off_unless_every_broker_has_a_rack() -> None:
    rule = RackRule.of((Broker(1, "a"), Broker(2, "a"), Broker(3, None)))
    assert not rule.applies and not rule.broken((1, 2))


def test_rebalance_moves_exactly_the_partitions_the_rule_finds_broken() -> None:
    moved = rebalance(ASSIGNMENT, BROKERS, drain=DRAINED, spread_racks=True)
    assert sorted(moved) == [1]
    assert not RackRule.of(BROKERS, DRAINED).broken(moved[1].replicas)


def test_the_plan_reassigns_exactly_the_partitions_the_rule_finds_broken() -> None:
    state = ClusterState(brokers=BROKERS, topics={"t": live("t", ASSIGNMENT)})
    plan, _ = compute_plan(
        specs(topic("t", 3, 3, placement="rack-aware"), decommission=DRAINED), state, None
    )
    (reassign,) = plan.of_kind(Reassign)
    assert sorted(reassign.moves) == [1]


def test_validate_warns_about_exactly_the_partitions_the_plan_would_move(tmp_path: Path) -> None:
    rows = ", ".join(f"[{', '.join(map(str, r))}]" for _, r in sorted(ASSIGNMENT.items()))
    t = (
        "apiVersion: kgitops/v1\nkind: Topic\nname: t\npartitions: 3\nreplicationFactor: 3\n"
        f"placement: static\nassignment: [{rows}]\n"
    )
    cluster_folder(
        tmp_path,
        "test",
        bootstrap="localhost:9092",
        extra="decommission: [4]\n",
        files={"t.yaml": t},
    )
    found = load_specs(str(tmp_path), brokers=BROKERS)
    warnings = [d.message for d in found.diagnostics if d.severity == "warning"]
    assert [w.split(" has ")[0] for w in warnings if "racks" in w] == ["partition 1"]
    assert not found.errors, [d.message for d in found.errors]
