"""What changed between two cluster states, positioned by broker, topic, partition and config:
``kgitops snapshot diff A B`` and the explanation of a stale plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.snapshot import write_state
from kgitops.errors import StalePlan
from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.plan.actions import AlterConfig
from kgitops.plan.fingerprint import state_fingerprint
from kgitops.plan.statediff import describe_changes
from kgitops.plan.value import Plan

BROKERS = (Broker(1, "a"), Broker(2, "b"), Broker(3, "c"))


def _state(**orders: object) -> ClusterState:
    t = TopicState(
        "orders",
        {0: PartitionState((1, 2), (1, 2), 1, 10), 1: PartitionState((2, 3), (2, 3), 2, 5)},
        {"retention.ms": "1000", "max.message.bytes": "100"},
    )
    t = dataclasses.replace(t, **orders)  # type: ignore[arg-type]
    return ClusterState(
        brokers=BROKERS,
        topics={"orders": t, "old": TopicState("old", {0: PartitionState((1,), (1,), 1, 0)})},
    )


AFTER = dataclasses.replace(
    _state(
        partitions={
            0: PartitionState((1, 3), (1,), 1, 12),
            1: PartitionState((2, 3), (2, 3), 2, 5),
            2: PartitionState((3, 1), (3, 1), 3, 0),
        },
        config={"retention.ms": "2000", "cleanup.policy": "compact"},
    ),
    brokers=(Broker(1, "a"), Broker(2, "b"), Broker(3, "c", online=False), Broker(4, "d")),
)


def test_every_change_is_one_line_positioned_by_broker_topic_partition_and_config() -> None:
    after = dataclasses.replace(
        AFTER, topics={"orders": AFTER.topics["orders"], "new": AFTER.topics["old"]}
    )
    assert describe_changes(_state(), after) == [
        "broker 3: online true -> false",
        "broker 4: added (rack d)",
        "topic new: created (1 partition(s))",
        "topic old: deleted",
        "topic orders partition 0: replicas [1, 2] -> [1, 3]",
        "topic orders partition 0: isr [1, 2] -> [1]",
        "topic orders partition 0: sizeBytes 10 -> 12",
        "topic orders partition 2: added (replicas [3, 1])",
        'topic orders config cleanup.policy: set to "compact"',
        'topic orders config max.message.bytes: removed (was "100")',
        'topic orders config retention.ms: "1000" -> "2000"',
    ]


def test_what_a_plan_depends_on_leaves_out_isr_leaders_sizes_and_throttles() -> None:
    moved_on = _state(
        partitions={
            0: PartitionState((1, 2), (1,), 2, 999),
            1: PartitionState((2, 3), (2, 3), 2, 5),
        },
        config={
            "retention.ms": "1000",
            "max.message.bytes": "100",
            "leader.replication.throttled.replicas": "0:1",
        },
    )
    assert describe_changes(_state(), moved_on, plan_only=True) == []
    assert describe_changes(_state(), moved_on) != []


def test_identical_states_have_no_changes_and_hostile_values_are_quoted() -> None:
    assert describe_changes(_state(), _state()) == []
    odd = _state(config={"retention.ms": '1"\n2', "max.message.bytes": "100"})
    assert describe_changes(_state(), odd) == [
        'topic orders config retention.ms: "1000" -> "1\\"\\n2"'
    ]


def test_a_stale_plan_says_exactly_what_changed_when_it_knows_the_state_it_was_made_on() -> None:
    before = _state()
    fp, digests = state_fingerprint(before, ["orders", "new"])
    plan = Plan("c", fp, (AlterConfig("orders", {"retention.ms": "5"}),), state_digests=digests)
    with pytest.raises(StalePlan) as err:
        plan.raise_if_stale(AFTER, before)
    assert err.value.changes == [
        "broker 3: online true -> false",
        "broker 4: added (rack d)",
        "topic orders partition 0: replicas [1, 2] -> [1, 3]",
        "topic orders partition 2: added (replicas [3, 1])",
        'topic orders config cleanup.policy: set to "compact"',
        'topic orders config max.message.bytes: removed (was "100")',
        'topic orders config retention.ms: "1000" -> "2000"',
    ]
    with pytest.raises(StalePlan) as err:
        plan.raise_if_stale(AFTER)  # without the recorded state: only which topics changed
    assert err.value.changes == [
        "topic orders: its replicas or configs changed since the plan was made"
    ]
    plan.raise_if_stale(before, before)


def test_snapshot_diff_prints_the_changes_and_exits_2_or_0_when_there_are_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_state(str(a), _state())
    write_state(str(b), AFTER)
    assert main(["snapshot", "diff", str(a), str(b)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "broker 3: online true -> false"
    assert "topic orders partition 0: replicas [1, 2] -> [1, 3]" in out
    assert main(["snapshot", "diff", str(a), str(a)]) == 0
    assert capsys.readouterr().out == f"no changes between {a} and {a}\n"


def test_snapshot_diff_refuses_a_broken_state_file_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_state(str(a), _state())
    b.write_text('{"format": "kgitops-state/v1", "brokers": [', encoding="utf-8")
    assert main(["snapshot", "diff", str(a), str(b)]) == 1
    err = capsys.readouterr().err
    assert str(b) in err and "Traceback" not in err


def test_planning_never_imports_deepdiff_which_costs_most_of_a_second() -> None:
    import subprocess
    import sys

    code = (
        "import sys, kgitops.cli, kgitops.plan.value, kgitops.plan.diff; "
        "print('deepdiff' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
