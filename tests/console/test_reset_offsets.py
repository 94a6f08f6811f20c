"""`kgitops reset-offsets` and `kgitops delete-group` on the simulated cluster: a plan first,
nothing changed without --yes, refused while the group has members, clamped to the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from tests.helpers import cluster_folder, run_cli


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), [Broker(0), Broker(1)])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """orders: 2 partitions, 50 records each by t=10s and 100 by t=20s; group billing
    committed 40 and 45 and has no members."""
    cluster_folder(tmp_path, brokers=[Broker(0), Broker(1)])
    s = sim(tmp_path)
    s.create_topics([NewTopic("orders", {0: (0, 1), 1: (1, 0)})])
    s.set_produce_rate("orders", 10 * 1024)
    s.advance(10)
    s.advance(10)
    s.commit("billing", {("orders", 0): 40, ("orders", 1): 45})
    return tmp_path


def committed(folder: Path, group: str = "billing") -> dict[tuple[str, int], int]:
    return dict(sim(folder).describe_groups([group]).groups[group].offsets)


def reset(folder: Path, *argv: str) -> tuple[int, str, str]:
    return run_cli("reset-offsets", str(folder), "--group", "billing", "--topic", "orders", *argv)


def test_the_plan_changes_nothing_without_yes(folder: Path) -> None:
    code, out, _ = reset(folder, "--to-earliest")
    assert code == 0
    assert out.splitlines() == [
        "reset offsets of group billing on orders:",
        "  PARTITION  FROM  TO  LOG-START  LOG-END  CHANGE",
        "          0    40   0          0      100  replays 40",
        "          1    45   0          0      100  replays 45",
        "in all: 0 message(s) skipped, 85 replayed",
        "nothing changed: run again with --yes to commit these offsets",
    ]
    assert committed(folder) == {("orders", 0): 40, ("orders", 1): 45}


def test_yes_commits_the_new_offsets(folder: Path) -> None:
    code, out, _ = reset(folder, "--to-latest", "--partitions", "1", "--yes")
    assert code == 0
    assert "          1    45  100          0      100  skips 55" in out
    assert out.endswith("committed 1 offset(s) for group billing\n")
    assert committed(folder) == {("orders", 0): 40, ("orders", 1): 100}


def test_a_target_outside_the_log_is_clamped_with_a_note(folder: Path) -> None:
    code, out, _ = reset(folder, "--to-offset", "999", "--yes")
    assert code == 0
    assert "note: partition 0: 999 is past the end 100: clamped to 100" in out
    assert committed(folder) == {("orders", 0): 100, ("orders", 1): 100}
    code, out, _ = reset(folder, "--shift-by", "-150", "--yes", "--format", "json")
    data = json.loads(out)
    assert [(p["from"], p["to"], p["replayed"]) for p in data["partitions"]] == [
        (100, 0, 100),
        (100, 0, 100),
    ]
    assert data["notes"][0] == "partition 0: -50 is before the log start 0: clamped to 0"
    assert committed(folder) == {("orders", 0): 0, ("orders", 1): 0}


def test_to_time_finds_the_first_offset_written_at_or_after_it(folder: Path) -> None:
    # the simulated clock starts at the epoch; records 50-99 were written between 10 s and 20 s
    code, out, _ = reset(folder, "--to-time", "1970-01-01T00:00:15Z", "--yes")
    assert code == 0, out
    assert committed(folder) == {("orders", 0): 50, ("orders", 1): 50}


def test_shift_by_leaves_a_partition_without_a_committed_offset(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.commit("fresh", {("orders", 0): 10})
    code = main(
        [
            "reset-offsets",
            str(folder),
            "--group",
            "fresh",
            "--topic",
            "orders",
            "--shift-by",
            "5",
            "--yes",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "note: partition 1: no committed offset to shift: left as it is" in out
    assert committed(folder, "fresh") == {("orders", 0): 15}


def test_an_active_group_is_refused_naming_its_members(folder: Path) -> None:
    sim(folder).join_group("billing", "c1-a", ["orders"])
    code, out, err = reset(folder, "--to-earliest", "--yes")
    assert (code, out) == (1, "")
    assert err == (
        "error: cannot reset offsets: group 'billing' has 1 active member(s): c1-a (client c1, "
        "host /127.0.0.1); stop its consumers first (state Stable)\n"
    )
    assert committed(folder) == {("orders", 0): 40, ("orders", 1): 45}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--group", "nope", "--topic", "orders", "--to-earliest"],
            "error: consumer group 'nope' does not exist",
        ),
        (
            ["--group", "billing", "--topic", "nope", "--to-earliest"],
            "error: topic 'nope' does not exist on the cluster",
        ),
        (
            ["--group", "billing", "--topic", "orders", "--to-earliest", "--partitions", "0,7"],
            "error: topic 'orders' has no partition 7 (it has 2: 0-1)",
        ),
    ],
)
def test_bad_input_is_one_line(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["reset-offsets", str(folder), *argv, "--yes"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (1, "", message + "\n")
    assert committed(folder) == {("orders", 0): 40, ("orders", 1): 45}


def test_a_bad_time_or_offset_is_refused_by_the_parser(folder: Path) -> None:
    assert reset(folder, "--to-time", "yesterday")[0] == 1
    assert reset(folder, "--to-offset", "-3")[0] == 1
    assert committed(folder) == {("orders", 0): 40, ("orders", 1): 45}


def test_delete_group_asks_refuses_while_active_then_deletes(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["delete-group", str(folder), "--group", "billing"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "delete group billing (Empty): 2 committed offset(s) on 1 topic(s): orders",
        "nothing changed: run again with --yes to delete it",
    ]
    s = sim(folder)
    s.join_group("billing", "c1-a", ["orders"])
    assert main(["delete-group", str(folder), "--group", "billing", "--yes"]) == 1
    assert "has 1 active member(s): c1-a" in capsys.readouterr().err
    s.leave_group("billing", "c1-a")
    assert main(["delete-group", str(folder), "--group", "billing", "--yes"]) == 0
    assert capsys.readouterr().out.endswith("deleted group billing\n")
    assert "billing" not in sim(folder).describe().groups.groups  # type: ignore[union-attr]
    assert main(["delete-group", str(folder), "--group", "billing", "--yes"]) == 1
    assert capsys.readouterr().err == "error: consumer group 'billing' does not exist\n"


def test_an_empty_group_without_offsets_that_get_groups_lists_can_be_deleted(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group whose last member left before committing is Empty with nothing in it: ListGroups
    lists it (so does ``get groups``), and ``get lags`` and ``delete-group`` find it; once
    deleted, or for an id the cluster never had, it does not exist for all three."""
    s = sim(folder)
    s.join_group("idle", "c1-a", ["orders"])
    s.leave_group("idle", "c1-a")
    assert main(["get", str(folder), "groups", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["groups"]
    assert {r["group"]: (r["state"], r["members"]) for r in rows}["idle"] == ("Empty", 0)
    assert main(["get", str(folder), "lags", "idle"]) == 0
    capsys.readouterr()
    assert main(["delete-group", str(folder), "--group", "idle", "--yes"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "delete group idle (Empty): 0 committed offset(s) on 0 topic(s)",
        "deleted group idle",
    ]
    assert "idle" not in sim(folder).describe_groups().groups
    assert main(["get", str(folder), "groups", "--format", "json"]) == 0
    assert "idle" not in {r["group"] for r in json.loads(capsys.readouterr().out)["groups"]}
    for argv in (
        ["delete-group", str(folder), "--group", "idle"],
        ["get", str(folder), "lags", "idle"],
    ):
        assert main(argv) == 1
        assert capsys.readouterr().err == "error: consumer group 'idle' does not exist\n"
