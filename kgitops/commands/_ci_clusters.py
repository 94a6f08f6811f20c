"""``kgitops github clusters-step`` and ``drift-step``: the rest of the workflows' decisions.

``clusters-step`` is the first job of plan.yml, apply.yml and drift.yml: the cluster folders
a push or a pull request touches (``kgitops affected``, from ``git diff -z --name-only
BASE...HEAD`` on the checkout in the current folder; every one with ``--all`` or without a
usable base commit), each looked up in the workflow's fixed map of cluster folders to
GitHub environments ($ENVIRONMENTS: ``DIR=ENVIRONMENT`` pairs separated by white space). A
folder missing from the map fails the step: a new folder never gets credentials, or escapes
the drift check, before someone names its environment in the workflow. The output
``clusters`` is the JSON list the jobs' matrix takes: ``[{"dir", "name", "environment"}]``.

``drift-step`` is drift.yml's job per cluster: ``plan --detailed-exitcode --format
markdown`` in this process; 0 is ``clean`` (the drift issue is closed), 2 ``drift`` (one
open issue per cluster, updated in place), an error ``error`` (the issue shows the error in
a fence, and the step fails after updating it). The outcome comes from the exit code and
the error raised, never from the text printed.
"""

from __future__ import annotations

import argparse
import json
import os
from enum import Enum

from kgitops.commands._ci_steps import (
    RUNNER_ENV,
    _append,
    _commit_exists,
    _env,
    _name,
    _outputs,
    _required,
    _text,
    _work_dir,
    _write,
    fenced,
)
from kgitops.commands._github_sub import subcommand
from kgitops.commands._invoke import invoke
from kgitops.errors import GitHubError, printable

ZERO = "0" * 40  # github.event.before of a branch's first push


class DriftOutcome(Enum):
    """The ``result`` output of the drift step."""

    CLEAN = "clean"
    DRIFT = "drift"
    ERROR = "error"


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = subcommand(
        sub,
        "clusters-step",
        _clusters_step,
        help="the workflows' first job: the cluster folders a change touches, with environments",
        description=(
            "The cluster folders below DIR that the change BASE...HEAD touches (kgitops "
            "affected on git diff -z --name-only of the checkout in the current folder; every "
            "one with --all, or when BASE is empty, all zeros or no commit here), each with "
            "its environment from $ENVIRONMENTS (DIR=ENVIRONMENT pairs separated by white "
            "space): writes the output clusters ([{dir, name, environment}], the jobs' "
            "matrix). A folder missing from the map, or with --branch-push a $REF that is no "
            f"branch, is an ::error:: line and exit 1. Reads BASE, HEAD, ENVIRONMENTS, REF and "
            f"{RUNNER_ENV}."
        ),
    )
    c.add_argument("directory", metavar="DIR", help="the folder of cluster folders")
    c.add_argument("--all", action="store_true", help="every cluster folder (drift.yml)")
    c.add_argument(
        "--branch-push",
        action="store_true",
        help="apply.yml: refuse unless $REF is a branch (refs/heads/...)",
    )
    subcommand(
        sub,
        "drift-step",
        _drift_step,
        help="the drift workflow's job: plan, then open, update or close the drift issue",
        description=(
            "drift.yml's job per cluster: runs plan $DIR --detailed-exitcode --format "
            "markdown in this process into $RUNNER_TEMP/kgitops-drift-<name>/, writes "
            "issue.md, appends it to $GITHUB_STEP_SUMMARY, closes the cluster's drift issue "
            "(clean) or opens or updates it (drift, error) with kgitops github issue, and "
            "writes the output result (clean, drift, error). Exit 1 when the plan failed or "
            f"the issue could not be written. Reads DIR, RUN_URL, GITHUB_TOKEN, "
            f"GITHUB_REPOSITORY and {RUNNER_ENV}."
        ),
    )


# -- the cluster folders of a change --------------------------------------------------------


def environments(text: str) -> dict[str, str]:
    """$ENVIRONMENTS as {folder: environment}; GitHubError naming a malformed pair."""
    out: dict[str, str] = {}
    for pair in text.split():
        folder, sep, environment = pair.partition("=")
        folder = folder.strip("/")
        if not sep or not folder or not environment or "=" in environment:
            raise GitHubError(
                f"ENVIRONMENTS: {printable(pair)!r} is not DIR=ENVIRONMENT (e.g. topics/prod=prod)"
            )
        out[folder] = environment
    if not out:
        raise GitHubError(
            "ENVIRONMENTS is empty: the workflow maps each cluster folder to its environment"
        )
    return out


def _changed_paths(base: str, head: str) -> list[str] | None:
    """The paths ``git diff -z --name-only BASE...HEAD`` names in the checkout of the current
    folder, as absolute paths; None (every cluster folder) without a usable base commit."""
    import subprocess

    from kgitops.gitrepo import checkout_root, run_git

    root = checkout_root(".")
    if not base or base == ZERO or root is None or not _commit_exists(".", base):
        print("no usable base commit: every cluster folder")
        return None
    if head.startswith("-") or not head:
        raise GitHubError(f"HEAD {printable(head)!r} is not a commit")
    try:
        # --no-renames: a file moved from one cluster folder to another changes both
        diff = ["diff", "-z", "--no-renames", "--name-only", f"{base}...{head}"]
        done = run_git(root, diff, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitHubError(f"git diff {base[:12]}...{head[:12]} did not run: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitHubError(f"git diff {base[:12]}...{head[:12]} failed: {said[-1] if said else ''}")
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [os.path.join(root, n) for n in names if n]


def _clusters_step(args: argparse.Namespace) -> int:
    from kgitops.commands.affected import affected_clusters

    if args.branch_push:
        ref = _env("REF")
        if not ref.startswith("refs/heads/"):
            print(f"::error::not a branch push ({printable(ref)}): nothing is applied")
            return 1
    mapped = environments(_required("ENVIRONMENTS"))
    if not os.path.isdir(args.directory):
        raise GitHubError(f"{printable(args.directory)}: no such folder")
    for folder in mapped:  # a mapped folder the listing would not see escapes every check
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            print(
                f"::error::{printable(folder)} is in the workflow's map but is a symlink or a "
                "file, not a cluster folder: kgitops would not plan it"
            )
            return 1
    changed = None if args.all else _changed_paths(_env("BASE"), _env("HEAD"))
    rows: list[dict[str, str]] = []
    for folder in affected_clusters(args.directory, changed):
        environment = mapped.get(folder.strip("/"))
        if environment is None:
            print(
                f"::error::{printable(folder)} is not in the workflow's map of cluster folders "
                "to environments; add it there first"
            )
            return 1
        name = _name(folder)
        twin = next((r["dir"] for r in rows if r["name"] == name), None)
        if twin is not None:  # artifacts, drift issues and concurrency groups go by the name
            print(
                f"::error::{printable(twin)} and {printable(folder)} have the same name "
                f"{printable(name)!r}, which the jobs' artifacts, issues and concurrency groups "
                "are named by; rename one of the folders"
            )
            return 1
        rows.append({"dir": folder, "name": name, "environment": environment})
    clusters = json.dumps(rows)
    _outputs({"clusters": clusters})
    print(f"{'cluster folders' if changed is None else 'changed cluster folders'}: {clusters}")
    return 0


# -- drift ------------------------------------------------------------------------------------


def _drift_step(args: argparse.Namespace) -> int:
    directory = _required("DIR")
    name = _name(directory)
    out = _work_dir("kgitops-drift", name)
    plan_md, plan_err = os.path.join(out, "plan.md"), os.path.join(out, "plan.err")
    ran = invoke(
        args._parser,
        ["plan", directory, "--detailed-exitcode", "--format", "markdown"],
        plan_md,
        plan_err,
    )
    if ran.error is None and ran.code == 0:
        result = DriftOutcome.CLEAN
        body = f"The cluster `{name}` matches the specs again: closing.\n"
    elif ran.error is None and ran.code == 2:
        result = DriftOutcome.DRIFT
        body = (
            f"The cluster `{name}` differs from the specs in git. Apply the specs, or change "
            "them to what the cluster should keep.\n\n" + _text(plan_md)
        )
    else:
        result = DriftOutcome.ERROR
        body = f"The drift check of `{name}` failed:\n\n" + fenced(_text(plan_err))
    body += f"\n<sub>[workflow run]({_env('RUN_URL')})</sub>\n"
    issue_md = os.path.join(out, "issue.md")
    _write(issue_md, body)
    _append("GITHUB_STEP_SUMMARY", body)
    marker = ["--marker", f"drift-{name}", "--file", issue_md]
    if result is DriftOutcome.CLEAN:
        issue = [*marker, "--close"]
    else:
        issue = [*marker, "--title", f"kgitops drift: {name}"]
    issue_log = os.path.join(out, "issue.log")
    written = invoke(args._parser, ["github", "issue", *issue], issue_log)
    print(_text(issue_log), end="")
    _outputs({"result": result.value})
    print(f"kgitops drift {printable(directory)}: {result.value}")
    if written.code != 0:
        print("::error::the drift issue could not be written (see above)")
        return 1
    return 1 if result is DriftOutcome.ERROR else 0
