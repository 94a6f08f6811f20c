"""The apply lock must be a regular file: a FIFO (or a folder) in its place is one clear
line, exit 1, and nothing applied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_RACKS, cluster_folder

TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_an_apply_lock_that_is_not_a_regular_file_is_one_line_and_nothing_is_applied(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(
        tmp_path, brokers=THREE_RACKS, state_file="state.json", files={"orders.yaml": TOPIC}
    )
    lock = tmp_path / "state.json.apply.lock"
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    assert main(["apply", str(tmp_path), "--yes"]) == 1
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1 and "apply lock" in lines[-1], lines
    assert "internal error" not in lines[-1]
    state = tmp_path / "state.json"
    assert not state.exists() or '"orders"' not in state.read_text()
