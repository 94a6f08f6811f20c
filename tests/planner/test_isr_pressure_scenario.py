"""The plan's ISR_PRESSURE and the simulated cluster agree (issue 28): what the warning says
happens to the ISR is what `simulate produce` at that rate does, read from the state file;
and where the plan says nothing, the ISR stays whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgitops.cli import main
from tests.helpers import THREE_AZS, cluster_folder


def _folder(tmp_path: Path, rate: int) -> Path:
    orders = (
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\n"
        f"replicationFactor: 3\nexpectedWriteBytesPerSec: {rate}\n"
        "config:\n  min.insync.replicas: 2\n"
    )
    return cluster_folder(
        tmp_path, "d", brokers=THREE_AZS, state_file="s.json", files={"orders.yaml": orders}
    )


def _pressure(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["plan", str(folder), "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    return [w for w in plan["warnings"] if w["code"] == "ISR_PRESSURE"]


def _isrs(folder: Path) -> dict[str, list[int]]:
    data = json.loads((folder / "s.json").read_text())
    return {p: v["isr"] for p, v in data["topics"]["orders"]["partitions"].items()}


def _sizes(folder: Path) -> dict[str, int]:
    data = json.loads((folder / "s.json").read_text())
    return {p: v["sizeBytes"] for p, v in data["topics"]["orders"]["partitions"].items()}


def _run(folder: Path, *argv: str) -> None:
    assert main(["simulate", str(folder), *argv]) == 0


def test_the_isr_shrinks_as_the_warning_says_at_the_rate_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """180 MB/s over 3 partitions at RF 3: every broker follows two (120 MB/s) on the
    simulated cluster's 100 MB/s network."""
    folder = _folder(tmp_path, 180_000_000)
    (w,) = _pressure(folder, capsys)
    assert w["data"]["placement"] == "after"
    assert main(["apply", str(folder), "--yes"]) == 0
    _run(folder, "produce", "orders", "180MB/s")
    _run(folder, "advance", "29s")
    assert _isrs(folder) == {"0": [0, 1, 2], "1": [1, 2, 0], "2": [2, 0, 1]}
    _run(folder, "advance", "1s")
    assert _isrs(folder) == w["data"]["isr"] == {"0": [0], "1": [1], "2": [2]}
    # below min.insync.replicas 2, as the warning said: acks=all writes are refused until
    # the followers catch up (6 s at 50 MB/s each, nothing written meanwhile), and at this
    # rate they fall behind again
    sizes = _sizes(folder)
    capsys.readouterr()
    _run(folder, "advance", "1s")
    assert "orders: the producer had 171.7 MiB refused (nothing written)" in capsys.readouterr().out
    assert _sizes(folder) == sizes
    _run(folder, "advance", "5s")
    assert _isrs(folder) == {"0": [0, 1, 2], "1": [1, 2, 0], "2": [2, 0, 1]}
    _run(folder, "advance", "30s")
    assert _isrs(folder) == w["data"]["isr"]
    # the next plan says it of the live placement too
    (again,) = _pressure(folder, capsys)
    assert again["data"]["placement"] == "both"


def test_at_a_rate_the_plan_does_not_warn_of_the_isr_stays_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """150 MB/s: every broker follows 100 MB/s, just what its network carries."""
    folder = _folder(tmp_path, 150_000_000)
    assert _pressure(folder, capsys) == []
    assert main(["apply", str(folder), "--yes"]) == 0
    _run(folder, "produce", "orders", "150MB/s")
    _run(folder, "advance", "5m")
    assert _isrs(folder) == {"0": [0, 1, 2], "1": [1, 2, 0], "2": [2, 0, 1]}


def test_without_the_spec_field_the_plan_takes_the_rate_the_simulated_cluster_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, 1)
    assert _pressure(folder, capsys) == []
    assert main(["apply", str(folder), "--yes"]) == 0
    text = (folder / "orders.yaml").read_text().replace("expectedWriteBytesPerSec: 1\n", "")
    (folder / "orders.yaml").write_text(text)
    _run(folder, "produce", "orders", "240MB/s", "--acks", "1")
    (w,) = _pressure(folder, capsys)
    assert (w["data"]["rateSource"], w["data"]["placement"]) == ("measured", "both")
    assert w["data"]["belowMinIsr"] == 3
    _run(folder, "advance", "30s")
    assert _isrs(folder) == w["data"]["isr"]


def test_an_rf_increase_the_plan_warns_of_shrinks_the_isr_once_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At RF 2 each broker follows one partition (60 MB/s); the plan to RF 3 says each would
    follow two (120 MB/s). Applied (the moves copy on the simulated cluster), it does."""
    folder = _folder(tmp_path, 180_000_000)
    spec = folder / "orders.yaml"
    spec.write_text(spec.read_text().replace("replicationFactor: 3", "replicationFactor: 2"))
    assert _pressure(folder, capsys) == []
    assert main(["apply", str(folder), "--yes"]) == 0
    _run(folder, "produce", "orders", "180MB/s")
    _run(folder, "advance", "1m")
    assert all(len(isr) == 2 for isr in _isrs(folder).values())
    spec.write_text(spec.read_text().replace("replicationFactor: 2", "replicationFactor: 3"))
    (w,) = _pressure(folder, capsys)
    assert w["data"]["placement"] == "after"
    assert main(["apply", str(folder), "--yes"]) == 0
    data = json.loads((folder / "s.json").read_text())
    parts = data["topics"]["orders"]["partitions"]
    assert all(len(v["replicas"]) == 3 and len(v["isr"]) == 3 for v in parts.values())
    # every broker has been behind since the moves completed; 30 s later it leaves the ISRs
    sim = data["simulation"]
    (since,) = set(sim["behindSince"].values())
    assert sorted(sim["behindSince"]) == ["0", "1", "2"]
    left = since + 30 - sim["clock"]
    assert 0 < left <= 30
    _run(folder, "advance", f"{round((left - 0.5) * 1000)}ms")
    assert all(len(isr) == 3 for isr in _isrs(folder).values())
    _run(folder, "advance", "1s")  # past the deadline by about 0.5 s, less than a catch-up
    assert _isrs(folder) == w["data"]["isr"]
