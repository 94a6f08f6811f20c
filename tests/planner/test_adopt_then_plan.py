"""Adopting a cluster: `kgitops import` then `kgitops plan --locked` shows no changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kgitops.cli import main

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "adopted-cluster"


def test_import_then_plan_shows_no_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "topics").mkdir()
    shutil.copy(GOLDEN / "topics" / "cluster.yaml", tmp_path / "topics")
    shutil.copy(GOLDEN / "state.json", tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "topics", "--state", "state.json"]) == 0
    capsys.readouterr()
    code = main(["plan", "topics", "--state", "state.json", "--locked", "--detailed-exitcode"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "! RF_ONE clicks: " in out  # the imported spec's own warning, and no action
    assert out.rstrip().endswith(
        "No changes to apply, but see the warning above: applying does not resolve it."
    )


def test_settle_writes_a_topic_more_literally_until_the_plan_moves_none_of_it() -> None:
    """Pure: a live topic on one rack of a racked cluster breaks the default rack-aware
    placement's rule, so the plan would move it; settle escalates it until it would not."""
    from kgitops.model import Broker, ClusterSpec, ClusterState, PartitionState, TopicState
    from kgitops.plan.adopt import MOVES, adopt_topics, settle

    brokers = (Broker(1, "a"), Broker(2, "a"), Broker(3, "b"), Broker(4, "b"))
    live = TopicState("t", {p: PartitionState((1, 2), (1, 2), 1, 0) for p in range(3)})
    state = ClusterState(brokers=brokers, topics={"t": live})
    first = adopt_topics(state, ["t"])
    assert first["t"].stage in ("recovered", "adopted")
    settled, plan = settle(first, (), ClusterSpec(name="c", directory="."), state, None)
    assert settled["t"].stage in ("rack-unaware", "static")
    assert not [a for a in plan.actions if isinstance(a, MOVES)]


def test_a_topic_being_reassigned_is_adopted_as_it_is_now_with_a_note() -> None:
    from kgitops.model import Broker, ClusterState, PartitionState, Reassignment, TopicState
    from kgitops.plan.adopt import adopt_topics

    live = TopicState("t", {0: PartitionState((1, 2), (1, 2), 1, 0)})
    state = ClusterState(
        brokers=(Broker(1), Broker(2), Broker(3)),
        topics={"t": live},
        reassignments={"t": {0: Reassignment(adding=(3,), target=(1, 2, 3))}},
    )
    (note,) = adopt_topics(state, ["t"])["t"].notes[-1:]
    assert note.startswith("1 partition(s) are being reassigned")
