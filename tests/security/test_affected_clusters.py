"""Every affected cluster is planned: a change to a shared folder plans every cluster that
includes it, ``cluster.yml`` is a cluster file like ``cluster.yaml``, and a token script
outside topics/ plans the cluster that runs it; the plan, apply and drift workflows all ask
``kgitops affected`` (through ``kgitops github clusters-step``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgitops.cli import main
from tests.helpers import THREE_BROKERS, cluster_folder

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = str(Path(sys.executable).parent)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def changes_step(workflow: str) -> dict[str, Any]:
    doc = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))
    [found] = [s for s in doc["jobs"]["changes"]["steps"] if s.get("id") == "changed"]
    assert isinstance(found, dict)
    return found


def run_step(
    found: dict[str, Any], cwd: Path, env: dict[str, str], tmp_path: Path
) -> dict[str, str]:
    """The step's one line run by bash, with the workflow's map of folders to environments."""
    out = tmp_path / "github_output"
    out.write_text("")
    (tmp_path / "runner").mkdir(exist_ok=True)
    full = {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_OUTPUT": str(out),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        "ENVIRONMENTS": found["env"]["ENVIRONMENTS"],
        **env,
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", found["run"]],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split("=", 1) for line in out.read_text().splitlines() if line)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    for name in ("dev", "staging", "prod"):
        extra = "include: [../shared/payments]\n" if name != "prod" else ""
        cluster_folder(r / "topics" / name, name, brokers=THREE_BROKERS, extra=extra)
    (r / "topics" / "shared" / "payments").mkdir(parents=True)
    (r / "topics" / "shared" / "payments" / "payments.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: payments\npartitions: 3\nreplicationFactor: 3\n"
    )
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "base")
    return r


@pytest.mark.parametrize("workflow", ["plan.yml", "apply.yml"])
def test_a_change_to_a_shared_folder_only_plans_every_including_cluster(
    workflow: str, repo: Path, tmp_path: Path
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    shared = repo / "topics" / "shared" / "payments" / "payments.yaml"
    shared.write_text(shared.read_text().replace("partitions: 3", "partitions: 1"))
    git(repo, "commit", "-qam", "only the shared folder")
    head = git(repo, "rev-parse", "HEAD")
    env = {"BASE": base, "HEAD": head, "REF": "refs/heads/main"}
    out = run_step(changes_step(workflow), repo, env, tmp_path)
    assert json.loads(out["clusters"]) == [
        {"dir": "topics/dev", "name": "dev", "environment": "dev"},
        {"dir": "topics/staging", "name": "staging", "environment": "staging"},
    ]


def test_cluster_yml_is_a_cluster_file_for_the_workflows_and_plan_base(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "topics" / "prod" / "cluster.yaml").rename(repo / "topics" / "prod" / "cluster.yml")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "cluster.yml")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "topics" / "prod" / "orders.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a topic")
    head = git(repo, "rev-parse", "HEAD")
    env = {"BASE": base, "HEAD": head, "REF": "refs/heads/main"}
    out = run_step(changes_step("plan.yml"), repo, env, tmp_path)
    assert [c["dir"] for c in json.loads(out["clusters"])] == ["topics/prod"]
    # the base cluster.yml is read too: no connection change where none is
    code = main(["plan", str(repo / "topics" / "prod"), "--base", base, "--detailed-exitcode"])
    assert code == 2  # the new topic, and no CONNECTION_CHANGED refusal


def test_affected_lists_includers_token_scripts_and_nested_folders_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = repo / "bin" / "token.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho t\n")
    security = (
        "security:\n  protocol: SASL_SSL\n"
        f"  sasl: {{mechanism: OAUTHBEARER, tokenCommand: [{script}]}}\n"
    )
    cluster_folder(repo / "topics" / "prod", "prod", bootstrap="k:9093", extra=security)
    monkeypatch.chdir(repo)
    assert main(["affected", "topics", "bin/token.sh", "topics/shared/payments/x.yaml"]) == 0
    assert capsys.readouterr().out.splitlines() == ["topics/dev", "topics/prod", "topics/staging"]
    assert main(["affected", "topics", "topics/shared/other.yaml", "README.md"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["affected", "topics", "--all", "--format", "json"]) == 0
    assert [c["name"] for c in json.loads(capsys.readouterr().out)] == ["dev", "prod", "staging"]
