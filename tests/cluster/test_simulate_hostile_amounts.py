"""Amounts that overflow or are absurd: one line, exit 1, nothing written; a state file
with NaN or Infinity is refused where it says so; 1 PB partitions still plan at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import FileRefused
from kgitops.jsontext import loads_json
from kgitops.plan import schedule as sched
from tests.helpers import THREE_AZS, cluster_folder

BROKERS = THREE_AZS
HUGE = "9" * 400


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    cluster_folder(tmp_path, brokers=BROKERS)
    SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS).create_topics(
        [NewTopic("a", {0: (0, 1), 1: (1, 2)})]
    )
    return tmp_path


def _state(folder: Path) -> bytes:
    return (folder / ".state" / "demo.json").read_bytes()


@pytest.mark.parametrize(
    "action",
    [
        ["advance", "999999999999d"],
        ["advance", f"{HUGE}d"],
        ["advance", HUGE],
        ["set-size", "a", f"{HUGE}GB"],
        ["set-size", "a", "9223372036854775808"],
        ["produce", "a", f"{HUGE}MB/s"],
        ["produce", "a", "999999999999TB/s"],
    ],
)
def test_an_overflowing_amount_is_one_line_and_nothing_is_written(
    folder: Path, action: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _state(folder)
    assert main(["simulate", str(folder), *action]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "too " in err and "internal error" not in err
    assert _state(folder) == before
    assert main(["simulate", str(folder), "advance", "10m"]) == 0


def test_the_longest_duration_keeps_the_clock_a_number(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(folder), "advance", "9223372036854775807ms"]) == 0
    assert b"Infinity" not in _state(folder)
    assert main(["simulate", str(folder), "show"]) == 0


@pytest.mark.parametrize("constant", ["Infinity", "-Infinity", "NaN"])
def test_a_state_file_with_a_non_json_number_is_refused_where_it_says_so(
    folder: Path, constant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = folder / ".state" / "demo.json"
    text = path.read_text()
    head, tail = text.split('"clock": ', 1)
    path.write_text(head + '"clock": ' + constant + tail[tail.index(",") :])
    line = head.count("\n") + 1
    col = len(head.rsplit("\n", 1)[-1]) + len('"clock": ') + 1
    assert main(["simulate", str(folder), "show"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [
        f"{path}:{line}:{col}: error: invalid JSON: NaN and Infinity are not JSON numbers"
    ] or err.startswith(f"{path}:{line}:{col}:"), err
    assert "internal error" not in err


def test_nan_inside_a_string_is_just_text() -> None:
    assert loads_json('{"a": "NaN Infinity", "b": 1}', "x.json") == {
        "a": "NaN Infinity",
        "b": 1,
    }
    with pytest.raises(FileRefused, match=r"x.json:2:7"):
        loads_json('{"a": "NaN",\n "b": -Infinity}', "x.json")


def test_a_huge_max_file_size_is_one_line_not_a_traceback(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--max-file-size", f"{HUGE}GB", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    assert "too big" in err
    assert HUGE not in err  # a 403-character value is named by its length, not echoed


def test_petabyte_partitions_schedule_in_a_few_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = sched._run_until

    def counted(*args: object, **kwargs: object) -> float:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sched, "_run_until", counted)
    jobs = [sched.MoveJob(("t", p), p % 3, (3 + p % 2,), 10**15) for p in range(6)]
    result = sched.schedule(jobs, max_concurrent_moves=2, throttle_bytes_per_sec=10_000_000)
    # 6 PB at 10 MB/s per broker take years: 20 million 5-second polls, run in a handful
    assert result.total_seconds > 10**8
    assert len(calls) < 50


def test_skipping_idle_polls_does_not_change_the_schedule() -> None:
    jobs = [
        sched.MoveJob(("t", 0), 0, (6,), 100_000_000),
        sched.MoveJob(("t", 1), 1, (6,), 100_000_000),
        sched.MoveJob(("t", 2), 2, (7,), 100_000_000),
    ]
    got = sched.schedule(jobs, max_concurrent_moves=2, throttle_bytes_per_sec=10_000_000)
    assert got.total_seconds == 20.0
    assert [(w.moves, w.start_seconds, w.end_seconds) for w in got.windows] == [
        (2, 0.0, 10.0),
        (1, 10.0, 20.0),
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "{d}", "fail-broker", "٣"],
        ["simulate", "{d}", "fail-broker", "1_0"],
        ["simulate", "{d}", "show", "--limit", "１２"],
        ["apply", "{d}", "--poll-interval", "nan", "--yes"],
        ["apply", "{d}", "--poll-interval", "inf", "--yes"],
        ["apply", "{d}", "--poll-interval", "1e400", "--yes"],
        ["apply", "{d}", "--timeout", "١h", "--yes"],
    ],
)
def test_every_flag_reads_ascii_numbers_only(
    folder: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _state(folder)
    assert main([a.format(d=folder) for a in argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    assert err.strip().splitlines()[-1].startswith("kgitops ")  # argparse's usage error line
    assert _state(folder) == before


def test_a_drain_of_petabyte_partitions_plans_in_a_bounded_number_of_polls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's what-if drain on the demo, with 1 PB in every shop.orders partition."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    d = tmp_path / "demo"
    shutil.copytree(root / "topics" / "demo", d, ignore=shutil.ignore_patterns(".state"))
    assert main(["apply", str(d), "--yes"]) == 0
    assert main(["simulate", str(d), "set-size", "shop.orders", "1000TB"]) == 0
    assert main(["simulate", str(d), "fail-broker", "3"]) == 0
    cluster = d / "cluster.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8") + "decommission: [3]\n")
    payments = d / "payments.yaml"
    text = payments.read_text(encoding="utf-8")
    for old, new in (("4, 5, 3", "4, 5, 0"), ("2, 3, 1", "2, 0, 1")):
        text = text.replace(f"  - [{old}]\n", f"  - [{new}]\n")
    payments.write_text(text, encoding="utf-8")
    calls = []
    real = sched._run_until

    def counted(*args: object, **kwargs: object) -> float:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sched, "_run_until", counted)
    capsys.readouterr()
    assert main(["plan", str(d), "--format", "json"]) == 0
    import json

    plan = json.loads(capsys.readouterr().out)
    moved = [a for a in plan["actions"] if a.get("topic") == "shop.orders"]
    assert moved, "the drain moves shop.orders replicas off broker 3"
    # 1 PB at the demo's 50 MB/s throttle: about 2e7 s, 4 million 5-second polls, in a few
    assert 0 < len(calls) < 200


@pytest.mark.parametrize("number", ["1e400", "-1E+400", "1" * 5000])
@pytest.mark.parametrize("action", [["advance", "10m"], ["show"]])
def test_a_state_number_too_large_to_read_is_one_positioned_line_and_nothing_changes(
    folder: Path, number: str, action: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(folder), "produce", "a", "5MB/s"]) == 0
    path = folder / ".state" / "demo.json"
    text = path.read_text()
    head, tail = text.split('"a": 5000000.0', 1)
    path.write_text(head + f'"a": {number}' + tail)  # a rate: read as a float, not the clock
    before = _state(folder)
    line = head.count("\n") + 1
    col = len(head.rsplit("\n", 1)[-1]) + len('"a": ') + 1
    capsys.readouterr()
    assert main(["simulate", str(folder), *action]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"{path}:{line}:{col}: error: invalid JSON: "), err
    assert ("reads as infinity" if "e" in number.lower() else "5,000 digits") in err
    assert number not in err or len(number) < 10
    assert _state(folder) == before


def test_a_number_that_reads_as_infinity_is_refused_where_it_is_not_inside_a_string() -> None:
    assert loads_json('{"a": "1e400", "b": 1e308}', "x.json") == {"a": "1e400", "b": 1e308}
    with pytest.raises(FileRefused, match=r"x.json:3:9: error: invalid JSON: '-1e999' is too"):
        loads_json('{"a": "x\\" 1e400",\n "b": [1.5,\n  2, 3, -1e999]}', "x.json")


def test_a_saved_plan_with_a_number_too_large_is_refused_and_nothing_is_applied(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "b.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: b\npartitions: 1\nreplicationFactor: 1\n"
    )
    out = tmp_path / "plan.json"
    assert main(["plan", str(folder), "--out", str(out)]) == 0
    text = out.read_text()
    assert '"actions": [' in text
    out.write_text(text.replace('"actions": [', '"extra": 1e400, "actions": [', 1))
    before = _state(folder)
    capsys.readouterr()
    assert main(["apply", "--plan", str(out), "--yes"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{out}:") and "'1e400' is too large a number" in err, err
    assert len(err.splitlines()) == 1
    assert _state(folder) == before


def _offline_imbalanced(folder: Path, produce: str = "1MB/s") -> None:
    """Broker 1 down (its partitions led elsewhere, off preferred) and a topic written to."""
    assert main(["simulate", str(folder), "fail-broker", "1"]) == 0
    assert main(["simulate", str(folder), "produce", "a", produce]) == 0


def test_advancing_years_with_a_broker_offline_steps_by_event_not_by_check(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kgitops.cluster.replication as repl

    _offline_imbalanced(folder)
    calls = []
    real = repl.advance

    def counted(*args: object, **kwargs: object) -> float:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(repl, "advance", counted)
    assert main(["simulate", str(folder), "advance", "1000d"]) == 0
    assert len(calls) < 20  # was 288,000: one per 300 s leader-balance check
    assert main(["simulate", str(folder), "advance", "9000000000000000000ms"]) == 0
    assert len(calls) < 40
    sim = loads_json(_state(folder), "state")["simulation"]
    assert sim["clock"] == pytest.approx(1000 * 86400 + 9e15, rel=1e-12)
    assert sim["clock"] <= sim["leaderBalanceAt"] <= sim["clock"] + 300


def test_a_broker_back_still_gets_its_leaders_at_the_next_check(folder: Path) -> None:
    _offline_imbalanced(folder, "0")
    assert main(["simulate", str(folder), "advance", "1000d"]) == 0
    sim = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    assert [p.leader for p in sim.state.topics["a"].parts] == [0, 2]
    assert main(["simulate", str(folder), "restore-broker", "1"]) == 0
    assert main(["simulate", str(folder), "advance", "1d"]) == 0
    sim = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    parts = sim.state.topics["a"].parts
    assert [p.leader for p in parts] == [p.replicas[0] for p in parts]


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("clock", "1e300", "is not a time"),
        ("produceBytesPerSec", '{"a": ' + "9" * 400 + "}", "malformed"),
        ("produceBytesPerSec", '{"a": 1e300}', "is not a rate"),
        ("networkBytesPerSec", "-5", "is not a rate"),
    ],
)
def test_a_state_clock_or_rate_out_of_range_is_one_line_and_nothing_spins(
    folder: Path, field: str, value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = folder / ".state" / "demo.json"
    data = json.loads(path.read_text())
    data.setdefault("simulation", {})[field] = "PLACEHOLDER"
    path.write_text(json.dumps(data).replace('"PLACEHOLDER"', value))
    before = _state(folder)
    capsys.readouterr()
    for action in (["advance", "1h"], ["show"]):
        assert main(["simulate", str(folder), *action]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and says in err and "internal error" not in err, err
    assert main(["apply", str(folder), "--yes"]) == 1
    assert _state(folder) == before


def test_advancing_past_the_longest_time_is_one_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(folder), "advance", "9223372036854775807ms"]) == 0
    before = _state(folder)
    capsys.readouterr()
    assert main(["simulate", str(folder), "advance", "1d"]) == 1
    err = capsys.readouterr().err.strip()
    assert "it would pass" in err and len(err.splitlines()) == 1
    assert _state(folder) == before
