"""Every JSON document kgitops prints or writes names its fields in one case, camelCase (as
the plan, `get`, `explain`, the state file and the schemas do). Keys that are data -- topic
names, partition and broker ids, config names, action kinds -- are what they are."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgitops.cli import main

DEMO = Path(__file__).resolve().parents[2] / "topics" / "demo"
CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")


def keys(doc: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, key) for every field name; maps keyed by data are walked, not judged."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            data = (
                path.endswith((".summary", ".config", ".caughtUp", ".decommissionedReplicas"))
                or not re.search(r"[A-Za-z]", k)  # partition and broker ids
                or "." in k  # topic and config names
            )
            if not data:
                yield path, k
            yield from keys(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for item in doc:
            yield from keys(item, f"{path}[]")


@pytest.fixture
def demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    d = tmp_path / "demo"
    shutil.copytree(DEMO, d, ignore=shutil.ignore_patterns(".state", "kgitops.lock"))
    assert main(["apply", str(d), "--yes"]) == 0
    assert main(["simulate", str(d), "set-size", "shop.orders", "1GB"]) == 0
    assert main(["simulate", str(d), "consume", "billing", "shop.orders"]) == 0
    assert main(["simulate", str(d), "fail-broker", "3"]) == 0  # findings, counts
    capsys.readouterr()
    return d


def test_every_json_output_names_its_fields_in_camel_case(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(demo)
    commands = [
        ["status", d],
        ["plan", d],
        ["explain", d, "shop.orders"],
        ["get", d, "topics"],
        ["get", d, "partitions"],
        ["get", d, "brokers"],
        ["get", d, "balance"],
        ["get", d, "config", "shop.orders"],
        ["get", d, "groups"],
        ["get", d, "members", "billing"],
        ["get", d, "lags", "billing"],
    ]
    wrong = []
    for argv in commands:
        main([*argv, "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        wrong += [(argv[0], w, k) for w, k in keys(doc) if not CAMEL.fullmatch(k)]
    assert main(["snapshot", d, "--out", str(demo / "state.json")]) == 0
    state = json.loads((demo / "state.json").read_text())
    wrong += [("snapshot", w, k) for w, k in keys(state) if not CAMEL.fullmatch(k)]
    assert wrong == []


def test_status_counts_use_the_keys_of_every_other_field(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", str(demo), "--format", "json"]) == 2
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert set(counts) == {
        "offline",
        "underReplicated",
        "underMinIsr",
        "leaderOffPreferred",
        "reassigning",
        "stalled",
    }
    assert counts["underReplicated"] > 0
