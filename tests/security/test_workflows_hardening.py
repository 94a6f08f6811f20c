"""The workflows cannot be turned against the cluster: apply only from branch pushes to the
default branch, an environment only from the fixed map, least permissions, no persisted
credentials, actions pinned by commit, only named secrets, pull requests planned by the base
branch's code; and the daily drift check keeps one issue per drifting cluster."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "github"))
from fake_github import TOKEN, FakeGitHub

from kgitops.cli import main
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = str(Path(sys.executable).parent)


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def all_steps() -> list[tuple[str, dict[str, Any]]]:
    out = [(f"action.yml#{i}", s) for i, s in enumerate(load(ROOT / "action.yml")["runs"]["steps"])]
    for f in FILES:
        for name, job in load(f)["jobs"].items():
            out += [(f"{f.name}:{name}#{i}", s) for i, s in enumerate(job.get("steps", []))]
    return out


def run_script(
    script: str, cwd: Path, env: dict[str, str], tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    (tmp_path / "runner").mkdir(exist_ok=True)
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    path = tmp_path / "step.sh"
    path.write_text(script)
    full = {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_OUTPUT": str(outputs),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        **env,
    }
    proc = subprocess.run(
        ["bash", "-e", str(path)], cwd=cwd, env=full, capture_output=True, text=True, check=False
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return proc, values


def test_no_workflow_or_action_passes_every_secret() -> None:
    for f in [*FILES, ROOT / "action.yml"]:
        text = f.read_text()
        assert not re.search(r"\$\{\{[^}]*toJSON\(\s*secrets\s*\)", text), f.name
        for used in re.findall(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)", text):
            assert used.startswith("KGITOPS_"), f"{f.name} passes secrets.{used}"


def test_every_action_is_pinned_by_a_full_commit_sha() -> None:
    for where, s in all_steps():
        uses = s.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{where}: {uses}"


def test_no_checkout_persists_its_credentials() -> None:
    for where, s in all_steps():
        if str(s.get("uses", "")).startswith("actions/checkout@"):
            assert s.get("with", {}).get("persist-credentials") is False, where


EXPECTED_PERMISSIONS = {
    ("apply.yml", "changes"): {"contents": "read"},
    ("apply.yml", "plan"): {"contents": "read", "pull-requests": "write"},
    ("apply.yml", "apply"): {"contents": "read", "pull-requests": "write"},
    ("plan.yml", "changes"): {"contents": "read"},
    ("plan.yml", "plan"): {"contents": "read", "pull-requests": "read"},
    ("plan.yml", "plan-fork"): {"contents": "read", "pull-requests": "read"},
    ("plan.yml", "comment"): {"contents": "read", "pull-requests": "write"},
    ("plan.yml", "result"): {},
    ("drift.yml", "clusters"): {"contents": "read"},
    ("drift.yml", "drift"): {"contents": "read", "issues": "write"},
    ("ci.yml", "lint"): {"contents": "read"},
    ("ci.yml", "types"): {"contents": "read"},
    ("ci.yml", "tests"): {"contents": "read"},
}


def test_every_job_has_the_least_permissions_it_needs() -> None:
    seen = {}
    for f in FILES:
        doc = load(f)
        assert doc["permissions"] == {}, f"{f.name}: the workflow default must be no permission"
        for name, job in doc["jobs"].items():
            seen[(f.name, name)] = job.get("permissions")
    assert seen == EXPECTED_PERMISSIONS


def test_apply_runs_only_on_branch_pushes_to_the_default_branch() -> None:
    doc = load(WORKFLOWS / "apply.yml")
    on = doc[True]  # YAML reads the key `on` as True
    assert set(on) == {"push"}
    assert on["push"]["branches"] == ["main"] and "tags" not in on["push"]
    gate = doc["jobs"]["changes"]["if"]
    assert "startsWith(github.ref, 'refs/heads/')" in gate
    assert "format('refs/heads/{0}', github.event.repository.default_branch)" in gate
    for name in ("plan", "apply"):
        assert "changes" in (doc["jobs"][name]["needs"])


def changes_step(workflow: str) -> str:
    [found] = [
        s
        for s in load(WORKFLOWS / workflow)["jobs"]["changes"]["steps"]
        if s.get("id") == "changed"
    ]
    return str(found["run"])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    ).stdout.strip()


def test_a_tag_named_main_applies_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "topics" / "prod").mkdir(parents=True)
    (repo / "topics" / "prod" / "cluster.yaml").write_text("name: prod\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")
    head = git(repo, "rev-parse", "HEAD")
    env = {"BASE": "0" * 40, "HEAD": head, "REF": "refs/tags/main"}
    proc, out = run_script(changes_step("apply.yml"), repo, env, tmp_path)
    assert proc.returncode == 1 and "not a branch push" in proc.stdout
    assert "clusters" not in out


def _map_of(workflow: str) -> dict[str, str]:
    doc = load(WORKFLOWS / workflow)
    job, step_id = ("clusters", "list") if workflow == "drift.yml" else ("changes", "changed")
    [found] = [s for s in doc["jobs"][job]["steps"] if s.get("id") == step_id]
    pairs = found["env"]["ENVIRONMENTS"].split()
    return dict(pair.split("=", 1) for pair in pairs)


def test_the_folder_to_environment_map_is_one_fixed_map_covering_every_example() -> None:
    maps = [_map_of(w) for w in ("plan.yml", "apply.yml", "drift.yml")]
    shipped = sorted(
        os.path.relpath(p.parent, ROOT) for p in (ROOT / "topics").glob("*/cluster.y*ml")
    )
    assert maps[0] == maps[1] == maps[2] == {d: d.split("/")[1] for d in shipped}
    assert shipped == [
        "topics/demo",
        "topics/dev",
        "topics/kafka",
        "topics/local",
        "topics/prod",
        "topics/staging",
    ]
    job = load(WORKFLOWS / "apply.yml")["jobs"]["apply"]
    assert job["environment"] == "${{ matrix.environment }}"  # from the map, never the folder


def test_every_job_holding_a_token_refuses_bare_repositories_first() -> None:
    for workflow in ("plan.yml", "apply.yml", "drift.yml"):
        for name, job in load(WORKFLOWS / workflow)["jobs"].items():
            if job.get("permissions") == {}:
                continue  # no token: the result check
            first = job["steps"][0]
            assert first.get("run") == "git config --global safe.bareRepository explicit", (
                workflow,
                name,
            )


def test_no_job_that_reads_the_pull_requests_files_holds_the_write_token() -> None:
    doc = load(WORKFLOWS / "plan.yml")
    for name, job in doc["jobs"].items():
        reads_pr = any(s.get("with", {}).get("path") == "pr" for s in job.get("steps", []))
        if reads_pr:
            assert "write" not in (job.get("permissions") or {}).values(), name
            for s in job["steps"]:
                if s.get("uses") == "./base":
                    assert s["with"]["comment"] == "false", name
    comment = doc["jobs"]["comment"]
    assert all(s.get("with", {}).get("path") != "pr" for s in comment["steps"])


@pytest.mark.parametrize(("comment", "passes"), [("success", True), ("failure", False)])
def test_a_failed_comment_fails_the_plan_result(comment: str, passes: bool, tmp_path: Path) -> None:
    job = load(WORKFLOWS / "plan.yml")["jobs"]["result"]
    env = {"CHANGES": "success", "PLAN": "success", "FORK": "skipped", "COMMENT": comment}
    proc, _ = run_script(job["steps"][0]["run"], tmp_path, env, tmp_path)
    assert (proc.returncode == 0) == passes


def test_the_kafka_secrets_are_in_the_steps_that_need_them_only() -> None:
    for workflow in ("plan.yml", "apply.yml", "drift.yml"):
        for name, job in load(WORKFLOWS / workflow)["jobs"].items():
            assert "secrets." not in json.dumps(job.get("env", {})), (workflow, name)
            holders = [
                s.get("name") or s.get("uses")
                for s in job["steps"]
                if "secrets.KGITOPS" in json.dumps(s)
            ]
            assert len(holders) <= 1, (workflow, name, holders)
            for s in job["steps"]:
                if "secrets.KGITOPS" in json.dumps(s):
                    runs = ("kgitops plan", "kgitops apply", "kgitops github plan-step")
                    runs += ("kgitops github apply-step", "kgitops github drift-step")
                    assert any(r in json.dumps(s) for r in runs), (workflow, name, s)


def test_pull_requests_never_run_their_own_action_or_package() -> None:
    doc = load(WORKFLOWS / "plan.yml")
    assert set(doc[True]) == {"pull_request_target"}
    for name, job in doc["jobs"].items():
        for s in job.get("steps", []):
            uses = s.get("uses", "")
            assert uses != "./", f"{name}: uses: ./ runs the pull request's action"
            if uses.startswith("./"):
                assert uses == "./base"
                assert s["with"]["install"] == "./base"
            if uses.startswith("actions/checkout@") and s["with"].get("path") == "pr":
                # the commit the event names, which the label's approval must be of
                assert s["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
        if name == "plan-fork":
            assert "secrets." not in json.dumps(job), "a fork's job gets no secret"
            assert "environment" not in job


def test_the_apply_job_applies_the_reviewed_artifact_and_nothing_it_plans_itself() -> None:
    job = load(WORKFLOWS / "apply.yml")["jobs"]["apply"]
    runs = "\n".join(str(s.get("run", "")) for s in job["steps"])
    assert not re.search(r"^\s*kgitops plan", runs, re.M)
    assert "plan-step" not in runs
    [download] = [s for s in job["steps"] if "download-artifact" in str(s.get("uses"))]
    assert download["with"]["name"] == "kgitops-plan-${{ matrix.name }}"
    # the apply step (`apply --plan "$PLAN" --yes` in-process) is given the downloaded file
    [apply] = [s for s in job["steps"] if s.get("id") == "apply"]
    assert apply["run"].strip() == "kgitops github apply-step"
    assert apply["env"]["PLAN"] == download["with"]["path"] + "/plan.json"


# -- drift -----------------------------------------------------------------------------------

CLUSTER = cluster_yaml(brokers=THREE_RACKS)
ORDERS = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"


def test_drift_opens_one_issue_updates_it_and_closes_it_when_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github = FakeGitHub()
    github.start()
    try:
        repo = tmp_path / "repo"
        cluster_folder(repo / "topics" / "demo", cluster=CLUSTER, files={"orders.yaml": ORDERS})
        [found] = [
            s
            for s in load(WORKFLOWS / "drift.yml")["jobs"]["drift"]["steps"]
            if s.get("id") == "drift"
        ]
        env = {
            "DIR": "topics/demo",
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_API_URL": github.url,
            "GITHUB_REPOSITORY": "acme/topics",
            "RUN_URL": "https://github.test/run/1",
        }
        for _ in range(2):  # drifting (orders is missing), twice: one issue
            proc, out = run_script(found["run"], repo, env, tmp_path)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert out["result"] == "drift"
        [issue] = github.issues
        assert issue["state"] == "open" and issue["title"] == "kgitops drift: demo"
        assert issue["body"].startswith("<!-- kgitops:drift-demo -->")
        assert "create_topic" in issue["body"]
        assert [lb["name"] for lb in issue["labels"]] == ["kgitops-drift"]

        monkeypatch.chdir(repo)
        assert main(["apply", "topics/demo", "--yes"]) == 0
        proc, out = run_script(found["run"], repo, env, tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert out["result"] == "clean"
        assert github.issues[0]["state"] == "closed"
        assert "matches the specs again" in github.bodies(pr=issue["number"])[0]
    finally:
        github.stop()
