"""Safe retention cuts: a big ``retention.ms`` decrease goes down by at most one
``retentionDropStep`` per apply, each plan saying which step and what data falls out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.plan.retention import DropStep, bytes_out, count_steps, retention_cut, steps
from tests.helpers import cluster_folder

DAY = 86_400_000
HOUR = 3_600_000
BROKERS = [Broker(0)]
TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: t
partitions: 2
replicationFactor: 1
config:
  retention.ms: {retention}
"""


def test_thirty_days_to_one_hour_halves_each_apply() -> None:
    path = steps(30 * DAY, HOUR, DropStep())
    assert [v / HOUR for v in path] == [360, 180, 90, 45, 22.5, 11.25, 5.625, 2.8125, 1.40625, 1]


def test_a_cut_within_the_step_is_one_step_and_a_duration_step_cuts_that_much() -> None:
    assert steps(30 * DAY, 20 * DAY, DropStep()) == [20 * DAY]
    assert steps(30 * DAY, 27 * DAY, DropStep.parse("1d")) == [29 * DAY, 28 * DAY, 27 * DAY]
    assert steps(30 * DAY, 40 * DAY, DropStep()) == []


def test_a_tiny_duration_step_is_counted_not_walked() -> None:
    assert count_steps(30 * DAY, HOUR, DropStep.parse("1s")) == (30 * DAY - HOUR) // 1000
    cut = retention_cut("t", str(30 * DAY), str(HOUR), DropStep.parse("1s"), None)
    assert cut is not None and cut[0] == str(30 * DAY - 1000)


@pytest.mark.parametrize("bad", [0, -0.5, 1.5, 0.001, "0s", "fast", True])
def test_a_drop_step_is_a_share_or_a_duration(bad: object) -> None:
    with pytest.raises(ValueError, match="retentionDropStep"):
        DropStep.parse(bad)


@given(
    st.integers(min_value=2, max_value=10**13),
    st.integers(min_value=0, max_value=10**13),
    st.one_of(
        st.floats(min_value=0.01, max_value=1.0).map(lambda x: DropStep(share=x)),
        st.integers(min_value=10**10, max_value=10**12).map(lambda m: DropStep(None, m)),
    ),
)
def test_every_step_is_within_the_limit_and_the_last_is_the_target(
    current: int, target: int, step: DropStep
) -> None:
    path = steps(current, target, step)
    assert len(path) == count_steps(current, target, step)
    if target >= current:
        assert path == []
        return
    assert path[-1] == target
    before = current
    for value in path:
        assert target <= value < before
        limit = int(before * step.share) if step.share is not None else step.millis or 0
        assert before - value <= max(limit, 1)
        before = value


def test_the_data_that_falls_out_is_the_share_of_the_window_cut() -> None:
    assert bytes_out(1000, 30 * DAY, 15 * DAY) == 500
    assert bytes_out(None, 30 * DAY, 15 * DAY) is None
    assert bytes_out(1000, 30 * DAY, 40 * DAY) == 0


def test_a_cut_from_infinite_is_held_back_unless_allowed() -> None:
    held = retention_cut("t", "-1", str(HOUR), DropStep(), 10**9)
    assert held is not None and held[0] is None and held[1].code == "RETENTION_STEP"
    allowed = retention_cut("t", "-1", str(HOUR), DropStep(), 10**9, allow=True)
    assert allowed is not None and allowed[0] == str(HOUR)
    assert retention_cut("t", str(HOUR), "-1", DropStep(), None) is None  # a raise


def _folder(tmp_path: Path, retention: str, extra: str = "") -> Path:
    topic = TOPIC.format(retention=retention)
    return cluster_folder(tmp_path, brokers=BROKERS, extra=extra, files={"t.yaml": topic})


def _live(tmp_path: Path) -> int:
    state = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS).describe()
    return int(state.topics["t"].config["retention.ms"])


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, object]:
    capsys.readouterr()
    main(["plan", str(tmp_path), "--format", "json", *flags])
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_each_apply_takes_one_step_until_the_spec_is_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS)
    sim.create_topics([NewTopic("t", {0: (0,), 1: (0,)}, {"retention.ms": str(30 * DAY)})])
    sim.set_size("t", 3 * 10**9)
    d = _folder(tmp_path, "1h")
    data = _plan(d, capsys)
    [warning] = [w for w in data["warnings"] if w["code"] == "RETENTION_STEP"]  # type: ignore[attr-defined]
    assert warning["data"] == {
        "from": 30 * DAY,
        "target": HOUR,
        "to": 15 * DAY,
        "step": 1,
        "steps": 10,
        "sizeBytes": 6 * 10**9,
        "bytesOut": 3 * 10**9,
    }
    assert (
        "step 1 of 10, to 15d; 2.8 GiB of 5.6 GiB falls out of retention now" in warning["message"]
    )
    seen = []
    for _ in range(10):
        assert main(["apply", str(d), "--yes"]) == 0
        seen.append(_live(d))
    assert seen == steps(30 * DAY, HOUR, DropStep())
    assert main(["plan", str(d), "--detailed-exitcode"]) == 0


def test_allow_retention_drop_cuts_in_one_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS)
    sim.create_topics([NewTopic("t", {0: (0,), 1: (0,)}, {"retention.ms": str(30 * DAY)})])
    d = _folder(tmp_path, "1h")
    data = _plan(d, capsys, "--allow-retention-drop")
    [warning] = [w for w in data["warnings"] if w["code"] == "RETENTION_CUT"]  # type: ignore[attr-defined]
    assert warning["message"] == (
        "retention.ms 30d -> 1h: 0 B of 0 B falls out of retention and is deleted at the next "
        "log cleanup"
    )
    assert main(["apply", str(d), "--yes", "--allow-retention-drop"]) == 0
    assert _live(d) == HOUR


def test_a_saved_plan_made_with_the_drop_needs_the_flag_to_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS)
    sim.create_topics([NewTopic("t", {0: (0,), 1: (0,)}, {"retention.ms": str(30 * DAY)})])
    d = _folder(tmp_path, "1h")
    out = str(tmp_path / "plan.json")
    assert main(["plan", str(d), "--allow-retention-drop", "--out", out]) == 0
    capsys.readouterr()
    assert main(["apply", "--plan", out, "--yes"]) == 1  # the file's choice decides nothing
    assert "made with --allow-retention-drop" in capsys.readouterr().err
    assert _live(d) == 30 * DAY
    assert main(["apply", "--plan", out, "--yes", "--allow-retention-drop"]) == 0
    assert _live(d) == HOUR


def test_a_bad_drop_step_is_an_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _folder(tmp_path, "1h", extra="retentionDropStep: 2.5\n")
    assert main(["validate", str(d)]) == 1
    assert f"{d}/cluster.yaml:7:20: error: retentionDropStep must be a share" in (
        capsys.readouterr().out
    )


def test_a_saved_plans_options_cannot_swap_in_the_full_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: a reviewed plan cuts retention.ms one step (6h -> 3h); someone sets
    ``allowRetentionDrop: true`` in the file and swaps in the full cut's action (6h -> 60s).
    Planning again with the file's own options produced exactly that plan, so it was applied
    without --allow-retention-drop. A plan's options decide nothing: refused, nothing sent."""
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS)
    sim.create_topics([NewTopic("t", {0: (0,), 1: (0,)}, {"retention.ms": str(6 * HOUR)})])
    d = _folder(tmp_path, "60000")
    out = tmp_path / "plan.json"
    assert main(["plan", str(d), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    (action,) = data["actions"]
    assert action["set"] == {"retention.ms": str(3 * HOUR)}  # the step a reviewer approved
    data["options"] = {**data.get("options", {}), "allowRetentionDrop": True}
    action["set"] = {"retention.ms": "60000"}
    out.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["apply", "--plan", str(out), "--yes"]) == 1
    assert "made with --allow-retention-drop" in capsys.readouterr().err
    assert _live(d) == 6 * HOUR, "nothing was cut"
