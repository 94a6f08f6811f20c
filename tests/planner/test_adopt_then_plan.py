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
    assert "No changes." in out
