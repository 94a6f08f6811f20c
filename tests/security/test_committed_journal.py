"""`.kgitops/moves.json` is this checkout's own memory of the moves apply started. A pull
request that commits one (naming another tool's move) must not make apply wait for that move
or cancel it: apply ignores a record git tracks and never rewrites it; validate and
`plan --base` refuse the committed file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from tests.helpers import cluster_folder, cluster_yaml

BROKERS = [Broker(1, "az1"), Broker(2, "az2"), Broker(3, "az3"), Broker(4, "az1")]
CLUSTER = cluster_yaml(brokers=BROKERS, extra="reassignment: {timeoutSeconds: 600}\n")
TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 4\nreplicationFactor: 2\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    d = cluster_folder(tmp_path / "demo", cluster=CLUSTER, files={"orders.yaml": TOPIC})
    (tmp_path / ".gitignore").write_text(".state/\n.kgitops/\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    assert main(["apply", str(d), "--yes"]) == 0
    return tmp_path


def test_a_committed_move_record_does_not_make_apply_wait_for_or_cancel_another_tools_move(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = repo / "demo"
    s = SimulatedCluster.open(str(d / ".state" / "demo.json"), BROKERS)
    s.set_size("orders", 10**12, partition=0)  # Cruise Control's move takes hours
    p0 = s.describe(["orders"]).topics["orders"].partitions[0].replicas
    target = [p0[0], next(b for b in (1, 2, 3, 4) if b not in p0)]
    assert s.alter_reassignments({("orders", 0): tuple(target)}) == {("orders", 0): None}
    record = json.dumps(
        {"format": "kgitops-moves/v1", "cluster": "demo", "moves": {"orders": {"0": target}}}
    )
    (d / ".kgitops").mkdir()
    (d / ".kgitops" / "moves.json").write_text(record)
    git(repo, "add", "-f", "demo/.kgitops/moves.json")
    git(repo, "commit", "-qm", "the pull request's record")

    capsys.readouterr()
    start = s.state.clock
    code = main(["apply", str(d), "--yes", "--poll-interval", "1"])
    out = "".join(capsys.readouterr())
    assert code == 0, out
    assert ".kgitops/moves.json ignored (it is committed to git" in out
    s = SimulatedCluster.open(str(d / ".state" / "demo.json"), BROKERS)
    assert s.state.clock - start < 60, "apply waited for a move it did not start"
    flying = s.list_reassignments()["orders"]
    assert list(flying) == [0] and list(flying[0][0][:2]) == target, "it was not cancelled"
    assert (d / ".kgitops" / "moves.json").read_text() == record, "never rewritten"

    code = main(["validate", str(d)])
    out = "".join(capsys.readouterr())
    assert code == 1 and "moves.json:1:1: error: .kgitops/ is kgitops' local record" in out
    code = main(["plan", str(d), "--base", "main"])
    err = capsys.readouterr().err
    assert code == 1 and "must not be committed" in err


def test_an_untracked_record_still_counts_and_a_folder_outside_git_is_fine(
    tmp_path: Path,
) -> None:
    from kgitops.apply.journal import MoveJournal, tracked_by_git, tracked_records

    (tmp_path / ".kgitops").mkdir()
    (tmp_path / ".kgitops" / "moves.json").write_text(
        json.dumps({"format": "kgitops-moves/v1", "cluster": "c", "moves": {"t": {"0": [1]}}})
    )
    assert tracked_by_git(str(tmp_path), ".kgitops/moves.json") is False  # not a repository
    assert tracked_records(str(tmp_path)) == []
    journal = MoveJournal.open(str(tmp_path), "c")
    assert journal.ours(("t", 0), [1]) and not journal.notes
    git(tmp_path, "init", "-q")
    assert tracked_by_git(str(tmp_path), ".kgitops/moves.json") is False  # untracked
    assert MoveJournal.open(str(tmp_path), "c").ours(("t", 0), [1])
