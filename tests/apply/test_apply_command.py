"""`kgitops apply --plan`: saved plans, stale plans, confirmation; and the small pure parts
(throttle values, progress output)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from test_apply_simulated import Folder, topic

from kgitops.apply.progress import BarProgress, PlainProgress, Snapshot
from kgitops.apply.throttles import removal
from kgitops.plan.throttles import parse_entries


@pytest.fixture
def demo(tmp_path: Path) -> Folder:
    d = Folder(tmp_path)
    d.topics(topic("orders", 3, 2, config={"retention.ms": "1000"}))
    d.apply()
    return d


def save_plan(demo: Folder, path: Path) -> None:
    code, _, err = demo.cli("plan", "--out", str(path))
    assert code == 0, err


def test_a_saved_plan_is_applied_as_saved(demo: Folder, tmp_path: Path) -> None:
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))
    plan = tmp_path / "plan.json"
    save_plan(demo, plan)
    code, out, err = demo.cli_plain("apply", "--plan", str(plan), "--yes")
    assert code == 0, out + err
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "2000"}


def test_a_saved_plans_cluster_folder_is_found_from_the_plan_file_never_the_working_folder(
    demo: Folder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``plan demo --out saved/plan.json`` run in one folder, ``apply --plan`` in another that
    has a ``demo/`` of its own (same cluster name, another state): the plan's folder is the
    one it was made from, wherever apply runs; the other is never read nor written."""
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))
    (tmp_path / "saved").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = demo.cli_plain("plan", "demo", "--out", "saved/plan.json")
    assert code == 0, err
    assert json.loads((tmp_path / "saved" / "plan.json").read_text())["clusterDir"] == "../demo"
    decoy = tmp_path / "elsewhere" / "demo"
    decoy.mkdir(parents=True)
    (decoy / "cluster.yaml").write_text((demo.dir / "cluster.yaml").read_text())
    (decoy / "topics.yaml").write_text((demo.dir / "topics.yaml").read_text())
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, out, err = demo.cli_plain("apply", "--plan", "../saved/plan.json", "--yes")
    assert code == 0, out + err
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "2000"}
    assert not (decoy / ".state").exists()
    (tmp_path / "lone" / "deep").mkdir(parents=True)
    (tmp_path / "saved" / "plan.json").rename(tmp_path / "lone" / "deep" / "plan.json")
    code, out, err = demo.cli_plain("apply", "--plan", "../lone/deep/plan.json", "--yes")
    assert code == 1
    assert err == (
        "error: ../lone/deep/plan.json: the plan's cluster folder '../demo' (from the plan "
        "file's folder: ../lone/demo) has no cluster.yaml\n"
    )


def test_a_saved_plan_its_specs_no_longer_produce_is_refused(demo: Folder, tmp_path: Path) -> None:
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))
    plan = tmp_path / "plan.json"
    save_plan(demo, plan)
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "9999"}))  # not reviewed
    code, _, err = demo.cli_plain("apply", "--plan", str(plan), "--yes")
    assert code == 1
    assert "~ alter_config orders: not what the specs produce (set: retention.ms)" in err
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "1000"}


def test_a_stale_plan_is_refused_and_names_what_changed(demo: Folder, tmp_path: Path) -> None:
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))
    plan = tmp_path / "plan.json"
    save_plan(demo, plan)
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "5"}))
    demo.apply("--allow-retention-drop")  # someone else changed the cluster after the review
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))  # the reviewed specs
    code, _, err = demo.cli_plain("apply", "--plan", str(plan), "--yes")
    assert code == 1
    assert "is stale" in err
    assert 'topic orders config retention.ms: "1000" -> "5"' in err  # what, not only where
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "5"}


def test_a_broken_plan_file_is_an_error_naming_the_file(demo: Folder, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kgitops-plan/v1",\n  "cluster": }')
    code, _, err = demo.cli_plain("apply", "--plan", str(bad), "--yes")
    assert code == 1 and err == f"{bad}:2:14: error: invalid JSON: Expecting value\n"
    code, _, err = demo.cli_plain("apply", "--plan", str(tmp_path / "nope.json"))
    assert code == 1 and "cannot read the plan" in err
    plan = tmp_path / "plan.json"
    save_plan(demo, plan)
    data = json.loads(plan.read_text())
    data["cluster"] = "prod"
    plan.write_text(json.dumps(data))
    code, _, err = demo.cli_plain("apply", "--plan", str(plan), "--yes")
    assert code == 1 and "the plan is for cluster 'prod'" in err


def test_on_a_terminal_apply_asks_and_no_means_nothing_changes(
    demo: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    code, out, err = demo.cli("apply")
    assert code == 1 and "apply cancelled; nothing was changed" in err
    assert "~ alter_config orders" in out
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "1000"}
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    code, out, err = demo.cli("apply")
    assert code == 0, err
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "2000"}


def test_throttle_entries_parse_and_a_removal_keeps_what_a_move_in_flight_needs() -> None:
    assert parse_entries("0:1, 1:2") == frozenset({(0, 1), (1, 2)})
    assert parse_entries("*") is None and parse_entries(None) == frozenset()
    assert removal({"k": "0:1,5:9"}, frozenset({(5, 9)}), "k") == ("0:1", False)
    assert removal({"k": "0:1"}, frozenset({(0, 1)}), "k") == (None, False)
    assert removal({"k": "*"}, None, "k") == (None, True)
    assert removal({"k": ""}, None, "k") == (None, True)


def snap(done: int, bytes_done: int) -> Snapshot:
    return Snapshot(done, 4, bytes_done, 4096, 2, 10.0, 30.0)


def test_plain_progress_prints_a_line_when_a_partition_finishes_or_time_passes() -> None:
    out, now = io.StringIO(), [0.0]
    p = PlainProgress(out, every=30, clock=lambda: now[0])
    p.update(snap(0, 0))
    p.update(snap(0, 0))
    p.update(snap(1, 1024))
    now[0] = 31
    p.update(snap(1, 1024))
    assert out.getvalue().splitlines() == [
        "reassign: 0/4 partitions done (2 in flight), 0 B of 4.0 KiB copied, ETA 30s",
        "reassign: 1/4 partitions done (2 in flight), 1.0 KiB of 4.0 KiB copied, ETA 30s",
        "reassign: 1/4 partitions done (2 in flight), 1.0 KiB of 4.0 KiB copied, ETA 30s",
    ]


def test_the_terminal_bar_redraws_one_line_in_place() -> None:
    out = io.StringIO()
    bar = BarProgress(out)
    bar.update(snap(2, 2048))
    bar.message("done")
    text = out.getvalue()
    assert text.startswith("\r\x1b[2K[############------------]  50%  2/4 partitions")
    assert "1/4" not in text and text.endswith("ETA 30s\ndone\n")


def test_a_cluster_that_changes_while_the_person_reads_the_plan_is_not_touched(
    demo: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "2000"}))

    def someone_else_changes_it(prompt: str) -> str:
        data = demo.state()
        data["topics"]["orders"]["config"] = {"retention.ms": "7"}
        demo.state_file.write_text(json.dumps(data))
        return "y"

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", someone_else_changes_it)
    code, _, err = demo.cli("apply")
    assert code == 1 and "is stale" in err
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "7"}


def skew(demo: Folder) -> None:
    """Every replica of orders on brokers 1 and 2 (racks az1, az2), each led by broker 1."""
    data = demo.state()
    for part in data["topics"]["orders"]["partitions"].values():
        part.update(replicas=[1, 2], isr=[1, 2], leader=1)
    demo.state_file.write_text(json.dumps(data))


@pytest.mark.parametrize("flag", ["--rebalance", "--leaders"])
def test_apply_dir_with_a_balance_flag_applies_what_plan_with_it_shows(
    tmp_path: Path, flag: str
) -> None:
    """``apply DIR --rebalance`` (``--leaders``) plans with the flag and applies it in one go,
    as ``plan --rebalance --out`` then ``apply --plan --rebalance`` does: the cluster ends
    where the plan said, and the same flag plans nothing more."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    skew(demo)
    code, out, err = demo.cli("plan", flag, "--format", "json")
    assert code == 0, err
    moves = {
        (a["topic"], int(p)): tuple(m["to"])
        for a in json.loads(out)["actions"]
        if a["type"] == "reassign"
        for p, m in a["moves"].items()
    }
    assert moves, "the skewed topic has moves to make"
    code, out, err = demo.cli("apply", flag, "--yes")
    assert code == 0, out + err
    after = demo.replicas("orders")
    assert {k: after[k[1]] for k in moves} == moves
    assert demo.cli("plan", flag, "--detailed-exitcode")[0] == 0
    if flag == "--leaders":  # reordered only: every replica where it was
        assert all(sorted(r) == [1, 2] for r in after.values())
    else:
        assert {b for r in after.values() for b in r} > {1, 2}


def test_apply_dir_takes_one_balance_flag_at_a_time(demo: Folder) -> None:
    before = demo.state()
    code, _, err = demo.cli("apply", "--rebalance", "--leaders", "--yes")
    assert code == 1 and "not allowed with argument" in err
    assert demo.state() == before
