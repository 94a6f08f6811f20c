"""What the planner does with internal topics (docs/planning.md, "Internal topics"): a drain
moves them; nothing else does, but their replicas count where they are."""

from __future__ import annotations

import pytest
from planner_builders import brokers, live, specs, state, topic

from kgitops.plan.actions import Reassign
from kgitops.plan.diff import compute_plan

OFFSETS = "__consumer_offsets"


def test_rebalance_never_moves_internal_topics_but_balances_around_their_load() -> None:
    """``t`` must put one of its two replicas elsewhere; broker 1 already holds 20 replicas
    of ``__consumer_offsets``, so it goes to broker 2 (without them: to broker 1, the lowest
    id), and ``__consumer_offsets`` itself stays where it is."""
    t = live("t", {0: [0], 1: [0]})
    offsets = live(OFFSETS, {p: [1] for p in range(20)})
    targets = {}
    for held in ((t,), (t, offsets)):
        plan, _ = compute_plan(
            specs(topic("t", 2, 1)), state(brokers(3), *held), None, rebalance=True
        )
        assert [a.topic for a in plan.actions] == ["t"]
        (move,) = plan.actions
        assert isinstance(move, Reassign)
        targets[len(held)] = {m.target for m in move.moves.values()}
    assert targets == {1: {(1,)}, 2: {(2,)}}


@pytest.mark.parametrize("mode", ["rebalance", "leaders"])
def test_rebalance_and_leaders_leave_internal_topics_alone(mode: str) -> None:
    """Every preferred leader of ``__consumer_offsets`` on broker 0: a managed topic so
    placed would be spread; moving an offsets partition moves its groups' coordinator."""
    layout = {p: [0, 1, 2] for p in range(12)}
    managed, _ = compute_plan(
        specs(topic("t", 12, 3)), state(brokers(3), live("t", layout)), None, **{mode: True}
    )
    assert managed.actions, "the same layout in git is spread"
    offsets = live(OFFSETS, layout, {"cleanup.policy": "compact"})
    plan, _ = compute_plan(specs(), state(brokers(3), offsets), None, **{mode: True})
    assert plan.actions == ()
    assert plan.warnings == ()


def test_internal_topics_are_neither_unmanaged_nor_drift_under_unmanaged_error() -> None:
    offsets = live(OFFSETS, {0: [0, 1]}, {"cleanup.policy": "compact", "segment.bytes": "1"})
    txn = live("__transaction_state", {0: [1, 0]})
    plan, _ = compute_plan(specs(unmanaged_topics="error"), state(brokers(2), offsets, txn), None)
    assert plan.actions == () and plan.warnings == ()


def test_kgitops_own_topic_is_drained_under_unmanaged_ignore_too() -> None:
    """The passwordVersion records are kgitops' own state, never unmanaged: a drain moves
    them like Kafka's internal topics, where a plain topic not in git is left and named."""
    from kgitops.model import PASSWORD_VERSION_TOPIC

    own = live(PASSWORD_VERSION_TOPIC, {0: [0, 1]})
    stray = live("stray", {0: [0, 2]})
    plan, _ = compute_plan(
        specs(decommission=(0,), unmanaged_topics="ignore"), state(brokers(3), own, stray), None
    )
    assert [a.topic for a in plan.actions] == [PASSWORD_VERSION_TOPIC]
    (move,) = plan.actions
    assert isinstance(move, Reassign) and move.moves[0].target in ((2, 1), (1, 2))
    (left,) = [w for w in plan.warnings if w.code == "DRAIN_INCOMPLETE"]
    assert left.data["topics"] == ["stray"]


def test_drain_hotspot_weighs_the_internal_replicas_the_drain_moves() -> None:
    """Broker 3 (rack a) is drained and broker 0 is the only other broker of rack a: every
    ``__consumer_offsets`` replica on 3 must go there to keep its partition on three racks.
    The warning counts them, as the drain sends them, not only the topics in git."""
    offsets = live(OFFSETS, {p: [3, 1, 2] for p in range(4)}, size=None)
    plan, _ = compute_plan(
        specs(decommission=(3,)), state(brokers(4, ["a", "b", "c"]), offsets), None
    )
    (move,) = plan.actions
    assert isinstance(move, Reassign)
    assert {m.target for m in move.moves.values()} == {(0, 1, 2)}
    (hot,) = [w for w in plan.warnings if w.code == "DRAIN_HOTSPOT"]
    assert (hot.data["broker"], hot.data["bytes"], hot.data["total"]) == (0, 4, 4)
    assert "sends 4 replica(s) of 4 replica(s) (100%) to broker 0" in hot.message


def test_a_leftover_throttle_on_an_internal_topic_is_removed_and_nothing_else_of_it_changes() -> (
    None
):
    """A `--no-wait` or killed drain leaves its throttle on ``__consumer_offsets`` (and on
    kgitops' own topic) as on any topic it moved: the plan removes exactly those entries,
    as docs/planning.md's "Internal topics" table says, and no other config of theirs."""
    from kgitops.model import PASSWORD_VERSION_TOPIC
    from kgitops.plan.actions import RemoveThrottles

    offsets = live(
        OFFSETS,
        {0: [0, 1], 1: [1, 0]},
        {
            "cleanup.policy": "compact",
            "segment.bytes": "1",
            "leader.replication.throttled.replicas": "*",
        },
    )
    own = live(
        PASSWORD_VERSION_TOPIC,
        {0: [0, 1]},
        {"cleanup.policy": "compact", "follower.replication.throttled.replicas": "0:1"},
    )
    plan, _ = compute_plan(specs(), state(brokers(2), offsets, own), None)
    assert all(isinstance(a, RemoveThrottles) for a in plan.actions)
    removed = {a.topic: dict(a.remove) for a in plan.actions if isinstance(a, RemoveThrottles)}
    assert removed == {
        OFFSETS: {"leader.replication.throttled.replicas": "*"},
        PASSWORD_VERSION_TOPIC: {"follower.replication.throttled.replicas": "0:1"},
    }
    assert plan.warnings == ()

    # what the docs promise for the internal topics' configs is what the planner does
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "planning.md").read_text()
    table = doc[doc.index("### Internal topics") : doc.index("## Warnings")]
    [row] = [line for line in table.splitlines() if line.startswith("| configs, policies |")]
    assert "a leftover replication throttle" in row and "`~ remove_throttles`" in row
    assert "no other config of theirs is ever changed" in row
