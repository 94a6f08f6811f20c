"""`kgitops plan` and `kgitops export-reassignment` end to end on a saved state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder

TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: {name}
partitions: {partitions}
replicationFactor: 2
"""


def _state(topics: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "format": "kgitops-state/v1",
        "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}, {"id": 3, "rack": "c"}],
        "topics": topics or {},
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    orders = TOPIC.format(name="orders", partitions=3)
    d = cluster_folder(tmp_path / "demo", bootstrap="localhost:9092", files={"orders.yaml": orders})
    (tmp_path / "state.json").write_text(json.dumps(_state()))
    return d


def _run(*argv: str) -> int:
    return main(list(argv))


def test_detailed_exitcode_is_2_with_changes_and_0_without(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(folder.parent / "state.json")
    assert _run("plan", str(folder), "--state", state, "--detailed-exitcode") == 2
    assert "+ create_topic orders" in capsys.readouterr().out
    live = {"0": {"replicas": [1, 2]}, "1": {"replicas": [2, 3]}, "2": {"replicas": [3, 1]}}
    (folder.parent / "state.json").write_text(json.dumps(_state({"orders": {"partitions": live}})))
    assert _run("plan", str(folder), "--state", state, "--detailed-exitcode") == 0
    assert "No changes." in capsys.readouterr().out


def test_an_error_exits_1_with_a_message_and_no_traceback(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder.parent / "bad.json").write_text("{not json")
    code = _run("plan", str(folder), "--state", str(folder.parent / "bad.json"))
    err = capsys.readouterr().err
    assert code == 1
    assert "bad.json" in err and "Traceback" not in err


def test_partition_decrease_points_at_the_field(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = {str(p): {"replicas": [1 + p % 3, 1 + (p + 1) % 3]} for p in range(5)}
    (folder.parent / "state.json").write_text(json.dumps(_state({"orders": {"partitions": live}})))
    code = _run("plan", str(folder), "--state", str(folder.parent / "state.json"))
    err = capsys.readouterr().err
    assert code == 1
    assert "orders.yaml:4:13: error: partitions: 3 is fewer than the 5" in err


def test_update_lock_then_locked_agrees_and_a_changed_spec_makes_it_stale(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(folder.parent / "state.json")
    assert _run("plan", str(folder), "--state", state, "--locked") == 1
    assert "kgitops.lock is missing or stale" in capsys.readouterr().err
    assert _run("plan", str(folder), "--state", state, "--update-lock") == 0
    assert (folder / "kgitops.lock").exists()
    assert _run("plan", str(folder), "--state", state, "--locked") == 0
    (folder / "orders.yaml").write_text(TOPIC.format(name="orders", partitions=6))
    assert _run("plan", str(folder), "--state", state, "--locked") == 1
    assert "orders: partitions 3 -> 6" in capsys.readouterr().err


def test_json_output_round_trips_and_out_saves_the_same_plan(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(folder.parent / "state.json")
    out = folder.parent / "plan.json"
    assert _run("plan", str(folder), "--state", state, "--format", "json", "--out", str(out)) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    # the saved plan also records how and on what state it was made (apply --plan checks it)
    assert saved.pop("options") == {
        "rebalance": False,
        "leaders": False,
        "allowRetentionDrop": False,
    }
    assert saved.pop("recordedState")["format"] == "kgitops-state/v1"
    assert printed == saved
    assert printed["summary"]["create_topic"] == 1
    assert (
        printed["actions"][0]["assignment"]["0"] == [1, 2]
        or printed["actions"][0]["assignment"]["0"]
    )


def test_export_reassignment_prints_kafka_json_from_a_saved_plan(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = {"0": {"replicas": [1]}, "1": {"replicas": [2]}, "2": {"replicas": [3]}}
    (folder.parent / "state.json").write_text(json.dumps(_state({"orders": {"partitions": live}})))
    out = folder.parent / "plan.json"
    assert (
        _run("plan", str(folder), "--state", str(folder.parent / "state.json"), "--out", str(out))
        == 0
    )
    capsys.readouterr()
    assert _run("export-reassignment", str(out)) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == 1
    assert sorted(p["partition"] for p in data["partitions"]) == [0, 1, 2]
    assert all(len(p["replicas"]) == 2 for p in data["partitions"])


def test_export_reassignment_refuses_a_file_that_is_not_a_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.json").write_text('{"format": "other"}')
    assert _run("export-reassignment", str(tmp_path / "x.json")) == 1
    assert "not a kgitops plan" in capsys.readouterr().err


def test_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kgitops.commands.plan import use_colour

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert use_colour("auto") is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_colour("auto") is False
    assert use_colour("always") is True
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert use_colour("auto") is False


def test_markdown_format_prints_a_pull_request_comment(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(folder.parent / "state.json")
    assert _run("plan", str(folder), "--state", state, "--format", "markdown") == 0
    out = capsys.readouterr().out
    assert out.startswith("### kgitops plan: `demo`")
    assert "| `+` | create_topic | 1 topic |" in out


def test_a_plan_run_in_process_frees_what_it_made(folder: Path) -> None:
    """``main([...])`` (a test, a library user) frees the plan as usual: only a process that
    exits with the command (``kgitops`` as a program) leaves its big values to the exit."""
    import gc
    import weakref

    from kgitops.commands import _planning

    made: list[weakref.ref[object]] = []
    original = _planning.plan_directory

    def spying(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        made.append(weakref.ref(result.specs))
        return result

    frozen = gc.get_freeze_count()
    _planning.plan_directory = spying  # type: ignore[assignment]
    try:
        state = str(folder.parent / "state.json")
        assert (
            _run("plan", str(folder), "--state", state, "--out", str(folder.parent / "p.json")) == 0
        )
    finally:
        _planning.plan_directory = original
    assert gc.get_freeze_count() == frozen
    assert made and made[0]() is None


def test_a_plan_run_as_a_program_writes_flushes_and_runs_atexit(folder: Path) -> None:
    """As a program, the plan's values are left to the process exit (never freed one by one):
    the saved plan, the printed plan and the ``atexit`` work (the stage profile) all still
    happen."""
    import os
    import subprocess
    import sys

    state = str(folder.parent / "state.json")
    out, stages = folder.parent / "p.json", folder.parent / "stages.json"
    env = {**os.environ, "KGITOPS_PROFILE_STAGES": str(stages)}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")])
    )
    argv = [sys.executable, "-m", "kgitops", "plan", str(folder), "--state", state]
    done = subprocess.run(
        [*argv, "--format", "json", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["summary"]["create_topic"] == 1
    assert json.loads(out.read_text())["actions"] == printed["actions"]
    assert "specs" in json.loads(stages.read_text())
    assert set(json.loads(stages.read_text())) >= {"start-up", "specs", "diff"}
