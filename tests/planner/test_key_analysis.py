"""KEY_REMAP warnings carry the key analysis when the spec has a key sample."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import kgitops.analytics.api as api
from kgitops.commands._planning import plan_directory
from kgitops.errors import AnalyticsError
from tests.helpers import cluster_folder

TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 4
replicationFactor: 1
keys: {sample: samples/keys.parquet, column: user}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = cluster_folder(tmp_path / "demo", bootstrap="k:9092", files={"orders.yaml": TOPIC})
    (d / "samples").mkdir()
    (d / "samples" / "keys.parquet").write_bytes(b"not read: key_report is replaced")
    state = {
        "format": "kgitops-state/v1",
        "brokers": [{"id": 0}, {"id": 1}],
        "topics": {"orders": {"partitions": {"0": {"replicas": [0]}, "1": {"replicas": [1]}}}},
    }
    (tmp_path / "state.json").write_text(json.dumps(state))
    return d


def _key_remap(folder: Path) -> Any:
    result = plan_directory(str(folder), state_file=str(folder.parent / "state.json"))
    (w,) = [w for w in result.plan.warnings if w.code == "KEY_REMAP"]
    return w


def test_the_share_of_keys_that_move_is_in_the_warning(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def fake(sample: str, column: str, counts: list[int], **kw: Any) -> dict[str, Any]:
        calls.append((sample, column, list(counts)))
        return {
            "moves": [{"from": 2, "to": 4, "keyShare": 0.5012, "messageShare": 0.4987}],
            "partitionCounts": {
                "2": {"messages": [60, 40], "maxOverMean": 1.2},
                "4": {"messages": [30, 20, 30, 20], "maxOverMean": 1.2},
            },
        }

    monkeypatch.setattr(api, "key_report", fake)
    w = _key_remap(folder)
    assert calls == [(str(folder / "samples/keys.parquet"), "user", [2, 4])]
    assert w.data["keyShare"] == 0.5012 and w.data["messageShare"] == 0.4987
    assert "50.1% of keys and 49.9% of messages move" in w.message
    # the per-partition load before and after, for the markdown plan's bar chart
    assert w.data["loadBefore"] == [60, 40] and w.data["loadAfter"] == [30, 20, 30, 20]


def test_a_failed_analysis_is_said_in_the_warning_not_raised(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*a: Any, **kw: Any) -> dict[str, Any]:
        raise AnalyticsError("no JVM")

    monkeypatch.setattr(api, "key_report", broken)
    w = _key_remap(folder)
    assert "key analysis failed: no JVM" in w.message
    assert w.data["analysis"] == "failed: no JVM"


def test_missing_analytics_is_said_in_the_warning(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kgitops.analytics.api", None)
    w = _key_remap(folder)
    assert "key analysis unavailable" in w.message
