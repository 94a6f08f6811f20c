"""A pull request's folder is data, never a git repository: git runs only on the checkout
kgitops found itself (``kgitops.gitrepo``), with no replace objects, no hooks, no fsmonitor
and no config but the checkout's own; a folder shaped like a git directory is an error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import cluster_yaml, committed_repo, git
from tests.helpers import run_cli as cli

REAL = cluster_yaml("prod", bootstrap="kafka-1.internal:9093")
ORDERS = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"
STATE = {
    "format": "kgitops-state/v1",
    "clusterId": "c",
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
    "topics": {
        "orders": {
            "partitions": {
                str(p): {"replicas": [p % 3, (p + 1) % 3, (p + 2) % 3]} for p in range(3)
            },
            "config": {},
        }
    },
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {
        "topics/prod/cluster.yaml": REAL,
        "topics/prod/orders.yaml": ORDERS,
        "state.json": json.dumps(STATE),
    }
    return committed_repo(tmp_path / "repo", files)


def fake_git_dir(folder: Path, marker: Path) -> None:
    """What a pull request can commit: HEAD, objects/, refs/ and a config whose fsmonitor
    command writes ``marker`` (git runs it as soon as it reads the index)."""
    (folder / "objects").mkdir(exist_ok=True)
    (folder / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (folder / "objects" / "keep").write_text("")
    (folder / "refs" / "heads" / "keep").write_text("")
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "touch {marker}; false"\n'
    )


def test_git_started_in_a_fake_git_dir_runs_its_fsmonitor(repo: Path, tmp_path: Path) -> None:
    """The attack itself: plain git, started in the folder, runs the pull request's command."""
    d = repo / "topics" / "prod"
    marker = tmp_path / "PWNED-plain"
    fake_git_dir(d, marker)
    subprocess.run(["git", "ls-files"], cwd=d, capture_output=True, check=False)
    assert marker.exists()


def test_a_cluster_folder_shaped_as_a_git_dir_is_refused_and_its_fsmonitor_never_runs(
    repo: Path, tmp_path: Path
) -> None:
    d = repo / "topics" / "prod"
    marker = tmp_path / "PWNED"
    fake_git_dir(d, marker)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the pull request")
    code, out, err = cli("validate", str(d))
    assert code == 1
    assert f"{d}:1:1: error: HEAD, objects/ and refs/ make this folder a git directory" in out + err
    code, _, _ = cli("plan", str(d), "--base", "HEAD~1", "--state", str(repo / "state.json"))
    assert code == 1
    assert not marker.exists(), "git ran the pull request's fsmonitor"


def test_the_move_record_check_and_the_base_read_use_the_checkouts_git_only(
    repo: Path, tmp_path: Path
) -> None:
    from kgitops.apply.journal import tracked_by_git, tracked_records
    from kgitops.commands._gitbase import cluster_at

    d = repo / "topics" / "prod"
    (d / ".kgitops").mkdir()
    (d / ".kgitops" / "moves.json").write_text("{}")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a committed record")
    marker = tmp_path / "PWNED"
    fake_git_dir(d, marker)  # untracked: its own (empty) index would hide the record
    assert tracked_by_git(str(d), ".kgitops/moves.json") is True
    assert tracked_records(str(d)) == [str(d / ".kgitops" / "moves.json")]
    base = cluster_at("main", str(d))
    assert base is not None and base.bootstrap_servers == ("kafka-1.internal:9093",)
    assert not marker.exists()


def test_an_include_folder_shaped_as_a_git_dir_or_holding_a_dot_git_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    shared = repo / "topics" / "shared"
    shared.mkdir()
    (shared / "payments.yaml").write_text(ORDERS.replace("orders", "payments"))
    d = repo / "topics" / "prod"
    (d / "cluster.yaml").write_text(REAL + "include: [../shared]\n")
    marker = tmp_path / "PWNED"
    fake_git_dir(shared, marker)
    code, out, err = cli("validate", str(d))
    assert code == 1 and f"{shared}:1:1: error: HEAD, objects/ and refs/" in out + err
    for name in ("HEAD", "config"):
        (shared / name).unlink()
    nested = d / "nested"
    nested.mkdir()
    (nested / ".git").write_text("gitdir: /elsewhere\n")
    code, out, err = cli("validate", str(d))
    assert code == 1 and f"{nested}:1:1: error: a .git entry" in out + err
    assert not marker.exists()


def test_a_replace_ref_does_not_hide_a_connection_change(repo: Path) -> None:
    d = repo / "topics" / "prod"
    old_blob = git(repo, "rev-parse", "HEAD:topics/prod/cluster.yaml").strip()
    (d / "cluster.yaml").write_text(REAL.replace("kafka-1.internal", "collector.example.net"))
    new_blob = git(repo, "hash-object", "-w", "topics/prod/cluster.yaml").strip()
    git(repo, "replace", old_blob, new_blob)  # the base file now reads as the new one
    assert "collector" in git(repo, "show", "main:topics/prod/cluster.yaml")
    code, out, _ = cli(
        "plan", str(d), "--base", "main", "--state", str(repo / "state.json"), "--detailed-exitcode"
    )
    assert code == 2
    assert "!! CONNECTION_CHANGED bootstrapServers: kafka-1.internal:9093 ->" in out


def test_inherited_git_variables_do_not_redirect_kgitops_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgitops.commands._gitbase import cluster_at

    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /nonexistent/x'")
    base = cluster_at("main", str(repo / "topics" / "prod"))
    assert base is not None and base.bootstrap_servers == ("kafka-1.internal:9093",)
    assert os.path.isdir(other / ".git")


def test_the_label_check_reads_the_checkouts_head_never_a_fake_git_dirs(
    repo: Path, tmp_path: Path
) -> None:
    """The action asked `git -C "$DIR" rev-parse HEAD`: a fake git dir in DIR could name any
    commit (the approved one) there. `check-label --dir` reads the checkout's own HEAD."""
    from kgitops.commands.github import _checked_out

    d = repo / "topics" / "prod"
    real = git(repo, "rev-parse", "HEAD").strip()
    marker = tmp_path / "PWNED"
    fake_git_dir(d, marker)
    (d / "refs" / "heads" / "main").write_text("ab" * 20 + "\n")
    assert _checked_out(str(d)) == real
    assert not marker.exists()


def test_a_cluster_folder_shaped_as_a_linked_worktrees_git_dir_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    """HEAD plus a ``commondir`` naming a folder that holds objects/ and refs/ is a git
    directory to git too (``git rev-parse --git-dir`` run inside answers ``.``)."""
    d = repo / "topics" / "prod"
    shared = repo / "topics" / "x"
    (shared / "objects").mkdir(parents=True)
    (shared / "refs" / "heads").mkdir(parents=True)
    (d / "HEAD").write_text("ref: refs/heads/main\n")
    (d / "commondir").write_text("../x\n")
    probe = subprocess.run(
        ["git", "rev-parse", "--git-dir"], cwd=d, capture_output=True, text=True, check=False
    )
    assert probe.stdout.strip() == "."  # git takes it for one
    code, out, err = cli("validate", str(d))
    assert code == 1
    assert f"{d}:1:1: error: HEAD and commondir make this folder a git directory" in out + err
