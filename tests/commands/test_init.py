"""`kgitops init DIR`: a cluster folder that validates, plans and applies as created, and that
never overwrites anything or writes through a symlink."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from tests.helpers import run_cli as cli


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: a file's bytes, a symlink's target."""
    found: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        if p.is_symlink():
            found[key] = "-> " + str(p.readlink())
        elif p.is_file():
            found[key] = p.read_bytes()
        else:
            found[key] = "dir"
    return found


WRITTEN = {
    ".gitignore",
    "cluster.yaml",
    "example.yaml",
    "schemas",
    "schemas/acl.json",
    "schemas/cluster.json",
    "schemas/quota.json",
    "schemas/topic.json",
    "schemas/user.json",
}


def test_a_new_folder_validates_plans_and_applies_on_the_simulated_cluster(tmp_path: Path) -> None:
    folder = tmp_path / "topics" / "dev"
    code, out, err = cli("init", str(folder))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == f"next: kgitops validate {folder} && kgitops plan {folder}"
    assert set(tree(folder)) == WRITTEN
    assert cli("validate", str(folder))[0] == 0
    code, out, err = cli("plan", str(folder), "--detailed-exitcode", "--format", "json")
    assert code == 2, err
    plan = json.loads(out)
    assert plan["cluster"] == "dev"
    assert [(a["type"], a["topic"]) for a in plan["actions"]] == [
        ("create_topic", "example.events")
    ]
    code, out, err = cli("apply", str(folder), "--yes")
    assert code == 0, out + err
    state = json.loads((folder / ".state" / "dev.json").read_text())
    parts = state["topics"]["example.events"]["partitions"]
    assert len(parts) == 6 and all(sorted(p["replicas"]) == [0, 1, 2] for p in parts.values())
    assert cli("plan", str(folder), "--detailed-exitcode")[0] == 0


def test_each_spec_names_a_schema_that_is_there_and_validates_it(tmp_path: Path) -> None:
    """The modeline is the first line, its path resolves from the file's folder to the schema
    this kgitops ships (byte for byte), and the file is valid under it."""
    folder = tmp_path / "prod"
    assert cli("init", str(folder))[0] == 0
    shipped = resources.files("kgitops").joinpath("schemas")
    for name, kind in (("cluster.yaml", "cluster.json"), ("example.yaml", "topic.json")):
        text = (folder / name).read_text()
        first = text.splitlines()[0]
        match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert match, first
        schema_file = folder / match.group(1)
        assert schema_file.read_bytes() == shipped.joinpath(kind).read_bytes()
        Draft202012Validator(json.loads(schema_file.read_text())).validate(yaml.safe_load(text))
    for schema in ("acl.json", "quota.json", "user.json"):
        assert (folder / "schemas" / schema).read_bytes() == shipped.joinpath(schema).read_bytes()
    assert "name: prod\n" in (folder / "cluster.yaml").read_text()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_ignores_what_kgitops_writes_locally_and_nothing_init_wrote(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    folder = tmp_path / "topics" / "dev"
    assert cli("init", str(folder))[0] == 0
    assert cli("apply", str(folder), "--yes")[0] == 0
    local = [folder / ".state" / "dev.json", folder / ".kgitops" / "moves.json"]
    written = [folder / f for f in WRITTEN if f != "schemas"]
    result = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--no-index", *map(str, local + written)],
        capture_output=True,
        text=True,
    )
    assert sorted(result.stdout.split()) == sorted(map(str, local))


def test_an_existing_empty_folder_or_one_with_other_files_is_filled(tmp_path: Path) -> None:
    folder = tmp_path / "dev"
    folder.mkdir()
    (folder / "README.md").write_text("ours")
    assert cli("init", str(folder), "--name", "dev-eu")[0] == 0
    assert (folder / "README.md").read_text() == "ours"
    assert "name: dev-eu\n" in (folder / "cluster.yaml").read_text()
    assert cli("validate", str(folder))[0] == 0


@pytest.mark.parametrize(
    "existing",
    ["cluster.yaml", "cluster.yml", "example.yaml", ".gitignore", "schemas/topic.json", "schemas"],
)
def test_an_existing_file_is_never_overwritten_and_nothing_is_written(
    tmp_path: Path, existing: str
) -> None:
    folder = tmp_path / "dev"
    (folder / existing).parent.mkdir(parents=True, exist_ok=True)
    (folder / existing).write_text("mine\n")
    before = tree(tmp_path)
    code, out, err = cli("init", str(folder))
    assert (code, out) == (1, "")
    why = "init never overwrites a file (nothing was written)"
    assert err == f"error: {folder / existing} exists; {why}\n"
    assert tree(tmp_path) == before


def test_a_symlinked_folder_or_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    code, _, err = cli("init", str(link))
    assert code == 1 and err == f"error: {link} is a symlink; give the folder itself\n"
    assert list(real.iterdir()) == []

    folder = tmp_path / "dev"
    folder.mkdir()
    outside = tmp_path / "outside.yaml"
    (folder / "example.yaml").symlink_to(outside)  # dangling: init must not create it
    before = tree(tmp_path)
    code, _, err = cli("init", str(folder))
    assert code == 1
    assert (
        err == f"error: {folder / 'example.yaml'} is a symlink; init writes nothing through one\n"
    )
    assert tree(tmp_path) == before and not outside.exists()

    other = tmp_path / "other"
    other.mkdir()
    (other / "schemas").symlink_to(real)
    assert cli("init", str(other))[0] == 1
    assert list(real.iterdir()) == [] and list(other.iterdir()) == [other / "schemas"]


def test_a_file_or_a_name_that_is_no_cluster_name_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = cli("init", str(tmp_path / "file"))
    assert code == 1 and err == f"error: {tmp_path / 'file'} exists and is not a folder\n"
    code, _, err = cli("init", str(tmp_path / "two words"))
    assert code == 1
    assert err == (
        "error: 'two words' is not a cluster name (letters, digits, '.', '_', '-'); "
        "give one with --name\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_folder_name_with_a_line_break_never_reaches_the_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "x\nname: evil"
    assert cli("init", str(folder), "--name", "dev")[0] == 0
    data = yaml.safe_load((folder / "cluster.yaml").read_text())
    assert data["name"] == "dev" and "evil" not in (folder / "cluster.yaml").read_text()
    assert cli("validate", str(folder))[0] == 0


# -- init --github: the plan and apply workflows -----------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PIN = "acme/kgitops@0123456789abcdef0123456789abcdef01234567"
REQUIREMENT = (
    "kgitops @ git+https://github.com/acme/kgitops@0123456789abcdef0123456789abcdef01234567"
)


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"]}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def pip_args(script: str, tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The arguments a workflow's install ``script`` gives ``pip install`` (a fake python on
    PATH writes each of its arguments on its own line, so a split shows)."""
    fake = tmp_path / "fakebin"
    fake.mkdir(exist_ok=True)
    log = tmp_path / "python.log"
    log.unlink(missing_ok=True)
    (fake / "python").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >>{log}\n', encoding="utf-8")
    (fake / "kgitops").write_text("#!/bin/sh\n", encoding="utf-8")
    for name in ("python", "kgitops"):
        (fake / name).chmod(0o755)
    path = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", "-c", script], env=env | path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    args = log.read_text(encoding="utf-8").splitlines()
    assert args[:3] == ["-m", "pip", "install"], args
    return [a for a in args[3:] if not a.startswith("-")]


def test_the_shipped_workflow_templates_are_the_repositorys_own_workflows() -> None:
    package = resources.files("kgitops").joinpath("templates", "github")
    for name in ("plan.yml", "apply.yml"):
        shipped = (ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8")
        assert package.joinpath(name).read_text(encoding="utf-8") == shipped, name


def test_init_github_writes_pinned_workflows_that_list_the_folder_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    code, out, err = cli("init", "clusters/dev", "--github", PIN)
    assert code == 0, err
    written = ".github/workflows/kgitops-plan.yml, .github/workflows/kgitops-apply.yml"
    assert f"created {written} (kgitops {PIN})" in out
    workflows = repo / ".github" / "workflows"
    assert sorted(p.name for p in workflows.iterdir()) == ["kgitops-apply.yml", "kgitops-plan.yml"]
    lint = subprocess.run(
        [shutil.which("actionlint") or "actionlint", "-no-color"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    plan = yaml.safe_load((workflows / "kgitops-plan.yml").read_text(encoding="utf-8"))
    assert set(plan[True]) == {"pull_request_target"}
    for job in ("plan", "plan-fork"):
        [step] = [s for s in plan["jobs"][job]["steps"] if "kgitops@" in str(s.get("uses"))]
        assert step["uses"] == PIN and step["with"]["directory"].startswith("pr/")
        # the action installs what `install` says: empty is its own code, the pinned commit
        action = load_yaml(ROOT / "action.yml")
        [install] = [s for s in action["runs"]["steps"] if s.get("name") == "Install kgitops"]
        env = {"INSTALL": step["with"].get("install", ""), "ACTION_PATH": "/pinned/action"}
        assert pip_args(install["run"], tmp_path, env) == ["/pinned/action"]
    for name in ("kgitops-plan.yml", "kgitops-apply.yml"):
        text = (workflows / name).read_text(encoding="utf-8")
        assert "./base\n" not in text and "uses: ./" not in text
        assert "pip install --quiet .\n" not in text
        installs = re.findall(r"pip install --quiet (.+)$", text, re.M)
        assert installs == [f"'{REQUIREMENT}'"] * {"kgitops-plan.yml": 2}.get(name, 3)
        doc = load_yaml(workflows / name)
        runs = [
            s["run"]
            for j in doc["jobs"].values()
            for s in j["steps"]
            if "pip install --quiet" in s.get("run", "")
        ]
        assert len(runs) == len(installs)
        for run in runs:  # pip gets the requirement as one argument
            assert pip_args(run, tmp_path, {}) == [REQUIREMENT]
        assert environment_maps(text) == ["clusters/dev=dev"]

    # the apply workflow's first job lists the folder when a push changes it
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "clusters" / "dev" / "more.yaml").write_text("x: 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD")
    apply = yaml.safe_load((workflows / "kgitops-apply.yml").read_text(encoding="utf-8"))
    [changed] = [s for s in apply["jobs"]["changes"]["steps"] if s.get("id") == "changed"]
    outputs = tmp_path / "out"
    outputs.write_text("")
    script = tmp_path / "changed.sh"
    script.write_text(changed["run"])
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "REF": "refs/heads/main",
        "ENVIRONMENTS": changed["env"]["ENVIRONMENTS"],
        "BASE": base,
        "HEAD": head,
        "GITHUB_OUTPUT": str(outputs),
        "RUNNER_TEMP": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        ["bash", "-e", str(script)], cwd=repo, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(outputs.read_text().split("=", 1)[1]) == [
        {"dir": "clusters/dev", "name": "dev", "environment": "dev"}
    ]


@pytest.mark.parametrize(
    ("folder", "pin", "why"),
    [
        ("topics/dev", "acme/kgitops@main", "give the kgitops the workflows run as OWNER/REPO@SHA"),
        ("topics/dev", "acme/kgitops", "give the kgitops the workflows run as OWNER/REPO@SHA"),
        ("topics/dev", "acme/kgitops@0123456", "a full 40-digit commit"),
        ("dev", PIN, "needs a parent folder"),
        ("topics/d$(x)", PIN, "cannot be named in a workflow"),
        ("topics/../dev", PIN, "cannot be named in a workflow"),
    ],
)
def test_init_github_refuses_an_unpinned_kgitops_or_an_unnameable_folder_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, pin: str, why: str
) -> None:
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    code, out, err = cli("init", folder, "--github", pin, "--name", "dev")
    assert (code, out) == (1, "")
    assert err.startswith("error: --github") and why in err and err.count("\n") == 1
    assert tree(tmp_path) == before


def test_init_github_never_overwrites_a_workflow_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "kgitops-apply.yml").write_text("mine\n")
    before = tree(tmp_path)
    code, out, err = cli("init", "topics/dev", "--github", PIN)
    assert (code, out) == (1, "")
    assert err == (
        "error: .github/workflows/kgitops-apply.yml exists; init never overwrites a file "
        "(nothing was written)\n"
    )
    assert tree(tmp_path) == before


def environment_maps(text: str) -> list[str]:
    """Every step's map of cluster folders to environments (``env: ENVIRONMENTS``)."""
    doc = yaml.safe_load(text)
    return [
        s["env"]["ENVIRONMENTS"]
        for job in doc["jobs"].values()
        for s in job["steps"]
        if "ENVIRONMENTS" in s.get("env", {})
    ]


@pytest.mark.parametrize("folder", ["2024/prod", "1x/prod", "topics/9"])
def test_init_github_for_a_folder_starting_with_a_digit_writes_valid_workflows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    # the map's replacement once read "\\1" + "2024" as group 12 (or an octal escape)
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("init", folder, "--github", PIN)
    assert code == 0, err
    name = folder.rsplit("/", 1)[1]
    for written in ("kgitops-plan.yml", "kgitops-apply.yml"):
        text = (tmp_path / ".github" / "workflows" / written).read_text(encoding="utf-8")
        assert environment_maps(text) == [f"{folder}={name}"]
        assert f"kgitops github clusters-step {folder.rsplit('/', 1)[0]}" in text


@pytest.mark.parametrize("given", ["../clusters/dev", "{top}/clusters/dev"])
def test_init_github_from_a_subfolder_writes_the_workflows_at_the_checkouts_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    monkeypatch.chdir(repo / "sub")
    code, out, err = cli("init", given.format(top=repo), "--github", PIN)
    assert code == 0, err
    assert "created ../.github/workflows/kgitops-plan.yml, ../.github/workflows/" in out
    assert sorted(p.name for p in (repo / "clusters" / "dev").iterdir()) == sorted(
        w for w in WRITTEN if "/" not in w
    )
    assert sorted(p.name for p in (repo / "sub").iterdir()) == []
    for name in ("kgitops-plan.yml", "kgitops-apply.yml"):
        text = (repo / ".github" / "workflows" / name).read_text(encoding="utf-8")
        assert environment_maps(text) == ["clusters/dev=dev"]
        assert "kgitops github clusters-step clusters" in text


def test_init_github_refuses_a_folder_outside_the_checkout_or_no_checkout_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    (repo / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    git(repo, "init", "-q")
    before = tree(tmp_path)
    monkeypatch.chdir(repo / "sub")
    code, out, err = cli("init", str(elsewhere / "clusters" / "dev"), "--github", PIN)
    assert (code, out) == (1, "")
    assert err == (
        f"error: --github: {str(elsewhere / 'clusters' / 'dev')!r} is outside the git checkout "
        f"{repo}: the workflows can only name a folder of their own repository\n"
    )
    # a checkout inside the checkout (a submodule, a nested clone) is another repository
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")
    before = tree(tmp_path)
    code, out, err = cli("init", "../nested/topics/dev", "--github", PIN)
    assert (code, err.count("\n")) == (1, 1) and "is outside the git checkout" in err
    assert tree(tmp_path) == before
    monkeypatch.chdir(elsewhere)
    code, out, err = cli("init", "topics/dev", "--github", PIN)
    assert (code, out) == (1, "")
    assert err == (
        "error: --github: the current folder is not in a git checkout: run init --github "
        "inside the repository the workflows are for\n"
    )
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("made", "why"),
    [
        (".github", ".github exists and is not a folder"),
        (".github/workflows", ".github/workflows exists and is not a folder"),
        ("topics", "topics exists and is not a folder"),
    ],
)
def test_init_github_refuses_a_file_where_a_folder_is_needed_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str, why: str
) -> None:
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    (tmp_path / made).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / made).write_text("a file\n")
    before = tree(tmp_path)
    code, out, err = cli("init", "topics/dev", "--github", PIN)
    assert (code, out) == (1, "")
    assert err == f"error: {why}; init writes nothing\n"
    assert tree(tmp_path) == before


@pytest.mark.parametrize("link", [".github", ".github/workflows"])
def test_init_github_never_writes_a_workflow_through_a_symlinked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, link: str
) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    outside.mkdir()
    git(repo, "init", "-q")
    (repo / link).symlink_to(outside)
    monkeypatch.chdir(repo)
    before = tree(tmp_path)
    code, out, err = cli("init", "topics/dev", "--github", PIN)
    assert (code, out) == (1, "")
    assert err == f"error: {link} is a symlink; init writes nothing through one\n"
    assert tree(tmp_path) == before
