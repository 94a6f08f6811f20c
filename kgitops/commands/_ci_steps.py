"""``kgitops github plan-step`` and ``apply-step``: the decisions of the GitHub workflows.

``action.yml``'s plan step, and the plan and apply jobs of ``.github/workflows/apply.yml``,
each run one of these in one line. A step runs ``validate``, ``plan``, ``check-plan`` or
``apply`` in this process (``commands._invoke``), decides its outcome from what they return
and the class of the error they raise, never from the text they print, writes the files the
workflow uploads (the logs, ``plan.json``, the comment), appends the comment to the job
summary and writes the step's outputs::

    no error, exit 0 / 2 (``--detailed-exitcode``)  -> no-changes / changes
    validate fails                                  -> invalid
    plan raises ConnectionChanged                   -> connection-changed
    plan fails otherwise                            -> error
    check-plan raises ConnectionChanged             -> connection-changed (pull request)
    check-plan fails otherwise                      -> unsafe
    apply: no error / PartialApply (exit 3) / else  -> applied / partial / failed

The steps read their inputs from the environment variables the workflow sets (named in
``--help``) and exit 0 once the outcome is written, whatever it is: the workflow's next
steps upload the files and post the comment, and its last step fails the job unless the
outcome is a clean one. Exit 1 means the step could not run (no ``DIR``, an output file
that cannot be written): nothing was decided.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from enum import Enum

from kgitops.commands._github_sub import subcommand
from kgitops.commands._invoke import Ran, invoke
from kgitops.errors import (
    ConnectionChanged,
    GitHubError,
    InterruptedBeforeAnyChange,
    NothingApplied,
    PartialApply,
    printable,
)


class PlanOutcome(Enum):
    """The ``result`` output of a plan step."""

    NO_CHANGES = "no-changes"
    CHANGES = "changes"
    INVALID = "invalid"  # kgitops validate failed (the pull request's plan only)
    ERROR = "error"  # the plan failed: a stale lock, an unreachable cluster, no snapshot
    UNSAFE = "unsafe"  # check-plan refused the saved plan (apply would refuse it)
    CONNECTION_CHANGED = "connection-changed"  # a connection change nobody allowed

    @property
    def clean(self) -> bool:
        return self in (PlanOutcome.NO_CHANGES, PlanOutcome.CHANGES)


class ApplyOutcome(Enum):
    """The ``result`` output of the apply step."""

    APPLIED = "applied"
    PARTIAL = "partial"  # PartialApply: some actions done, some not (apply's exit 3)
    FAILED = "failed"  # anything else: refused, nothing applied, interrupted


PLAN_FLAGS = ("--locked", "--detailed-exitcode", "--format", "markdown")
"""How both plan steps run ``kgitops plan``: the lock must hold, 2 means changes, the comment."""

PLAN_ENV = (
    "DIR (the cluster folder), STATE (a snapshot: plan offline), OFFLINE_REASON, BASE_REF "
    "(the pull request's base commit), ALLOW_CONNECTION (true: the label step's verdict), "
    "ALLOW_INPUT (the input allow-connection-change; ignored on a pull request's event), "
    "EVENT_NAME, ALLOW_LABEL, LABEL_VERDICT (the label step's log), MARKER, ALLOW_DELETE, "
    "PR_NUMBER, HEAD_SHA, RUN_URL"
)
MERGE_ENV = "DIR, ENVIRONMENT, BASE (the commit before the push), ALLOW_DELETE, SHA, RUN_URL"
APPLY_ENV = "DIR, PLAN (the reviewed plan.json), ALLOW_DELETE, SHA, RUN_URL"
RUNNER_ENV = "RUNNER_TEMP (default /tmp), GITHUB_OUTPUT, GITHUB_STEP_SUMMARY"


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(
        sub,
        "plan-step",
        _plan_step,
        help="the workflows' plan step: validate, plan, check-plan; the comment and outputs",
        description=(
            "The plan step of action.yml (with --merge: of apply.yml's plan job). Runs "
            "validate (not with --merge), plan --locked --detailed-exitcode and check-plan "
            "in this process into $RUNNER_TEMP/kgitops-plan-<name>/, writes the comment "
            "there (comment.md), appends it to $GITHUB_STEP_SUMMARY and writes the outputs "
            "result (no-changes, changes, invalid, error, unsafe, connection-changed), "
            "name, marker, dir, plan-json and comment-file (with --merge: result and dir). "
            "Exit 0 whatever the result; "
            f"1 when the step cannot run. Reads {PLAN_ENV}; with --merge {MERGE_ENV}; "
            f"and {RUNNER_ENV}."
        ),
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="apply.yml's plan job: the merge commit's plan that approving the environment applies",
    )
    subcommand(
        sub,
        "apply-step",
        _apply_step,
        help="the apply workflow's apply step: apply --plan, the report and outputs",
        description=(
            "The apply step of apply.yml: runs apply --plan $PLAN --yes in this process, "
            "shows its log (no line of it a workflow command), writes "
            "$RUNNER_TEMP/kgitops-apply-<name>/apply.log and apply.md, appends apply.md to "
            "$GITHUB_STEP_SUMMARY and writes the outputs result (applied, partial, failed) "
            f"and dir. Exit 0 whatever the result; 1 when the step cannot run. Reads "
            f"{APPLY_ENV} and {RUNNER_ENV}."
        ),
    )


# -- what every step shares ---------------------------------------------------------------


def _env(name: str) -> str:
    return os.environ.get(name, "")


def _required(name: str) -> str:
    value = _env(name)
    if not value:
        raise GitHubError(f"{name} is not set: the workflow step passes it in `env:`")
    return value


def _name(directory: str) -> str:
    """The folder's name, as ``basename`` prints it."""
    stripped = directory.rstrip("/")
    return os.path.basename(stripped) if stripped else "/"


def _fresh(path: str) -> str:
    """``rm -rf PATH && mkdir -p PATH``."""
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def _work_dir(prefix: str, name: str) -> str:
    """A fresh folder for the step's files in $RUNNER_TEMP (/tmp when it is not set)."""
    path = os.path.join(_env("RUNNER_TEMP") or "/tmp", f"{prefix}-{name}")
    try:
        return _fresh(path)
    except OSError as exc:
        raise GitHubError(_unwritable(path, exc)) from None


def _unwritable(path: str, exc: OSError) -> str:
    where = f"$RUNNER_TEMP ({_env('RUNNER_TEMP')})" if _env("RUNNER_TEMP") else "/tmp"
    return f"cannot write {path} in {where}: {exc.strerror or exc}"


def _write(path: str, text: str) -> None:
    """Write a file of the step's work folder."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise GitHubError(_unwritable(path, exc)) from None


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _filled(path: str) -> bool:
    """``[ -s PATH ]``: the file exists and is not empty."""
    return os.path.isfile(path) and os.path.getsize(path) > 0


def fenced(text: str, tail: int = 400, info: str = "") -> str:
    """``text``'s last ``tail`` lines in a code fence nothing inside can close, control
    characters shown as escapes (``kgitops github fence``), with the closing newline."""
    from kgitops.plan.mdescape import fence, visible

    lines = text.splitlines()
    left = len(lines) - tail
    shown = [visible(line) for line in lines[-tail:]]
    if left > 0:
        shown.insert(0, f"... {left} earlier line(s) left out")
    info = "".join(c for c in info if c.isalnum() or c in "-_")
    return fence("\n".join(shown), info) + "\n"


def _append(variable: str, text: str) -> None:
    path = _env(variable)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise GitHubError(f"cannot append to ${variable} ({path}): {exc.strerror}") from None


def _outputs(values: dict[str, str]) -> None:
    """Append ``name=value`` lines to $GITHUB_OUTPUT (a value holding a line break in the
    ``name<<delimiter`` form, so it cannot add an output)."""
    lines = []
    for key, value in values.items():
        if "\n" in value or "\r" in value:
            delimiter = f"kgitops_{secrets.token_hex(16)}"
            lines.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{key}={value}\n")
    _append("GITHUB_OUTPUT", "".join(lines))


def _publish(comment: str, path: str) -> None:
    _write(path, comment)
    _append("GITHUB_STEP_SUMMARY", comment)


def _planned(ran: Ran) -> PlanOutcome:
    """``plan --detailed-exitcode``'s outcome: 0 no changes, 2 changes, an error else."""
    if ran.error is None and ran.code == 0:
        return PlanOutcome.NO_CHANGES
    if ran.error is None and ran.code == 2:
        return PlanOutcome.CHANGES
    return PlanOutcome.ERROR


# -- the pull request's plan (action.yml) ---------------------------------------------------


def _plan_step(args: argparse.Namespace) -> int:
    if args.merge:
        return _merge_plan_step(args._parser)
    parser: argparse.ArgumentParser = args._parser
    directory = _required("DIR")
    state, base_ref = _env("STATE"), _env("BASE_REF")
    allow_connection = _env("ALLOW_CONNECTION") == "true"
    event, pr_number, head = _env("EVENT_NAME"), _env("PR_NUMBER"), _env("HEAD_SHA")
    allow_label = _env("ALLOW_LABEL")
    name = _name(directory)
    out = _work_dir("kgitops-plan", name)
    marker = _env("MARKER") or f"plan-{name}"
    # allow-connection-change is for workflows that decide it themselves, never on a pull
    # request's event (a workflow still passing `contains(...labels...)` would keep the
    # label-only rule): there only the verified label allows a connection change.
    input_ignored = False
    if (_env("ALLOW_INPUT") or "false") == "true":
        if pr_number or event.startswith("pull_request"):
            input_ignored = True
            print(
                "::warning title=kgitops allow-connection-change::the input "
                "allow-connection-change is ignored on a pull request's event "
                f"({printable(event or 'pull request')}): pass allow-connection-label: "
                "kgitops:allow-connection-change instead, which counts only when a writer "
                "who approved the commit added the label (see docs/ci.md, Upgrading)"
            )
        else:
            allow_connection = True
    state_args = ["--state", state] if state else []
    delete_args = ["--allow-delete"] if _env("ALLOW_DELETE") == "true" else []
    base_args = []
    if base_ref:
        base_args = ["--base", base_ref]
        if allow_connection:
            base_args.append("--allow-connection-change")
    verdict = _env("LABEL_VERDICT")
    if verdict and os.path.isfile(verdict):
        shutil.copyfile(verdict, os.path.join(out, "label.log"))

    plan_json = os.path.join(out, "plan.json")
    log = {f: os.path.join(out, f) for f in ("validate.log", "plan.md", "plan.err", "gates.log")}
    if state and not os.path.isfile(state):
        result = PlanOutcome.ERROR
        snapshot = f"no snapshot at {state}: commit one with `kgitops snapshot DIR --out FILE`\n"
        _write(log["plan.err"], snapshot)
    elif invoke(parser, ["validate", directory, *state_args], log["validate.log"]).code != 0:
        result = PlanOutcome.INVALID
    else:
        planned = invoke(
            parser,
            ["plan", directory, *PLAN_FLAGS, "--out", plan_json, *state_args, *base_args],
            log["plan.md"],
            log["plan.err"],
        )
        result = _planned(planned)
        if isinstance(planned.error, ConnectionChanged):  # kgitops refused to connect
            result = PlanOutcome.CONNECTION_CHANGED
        if result.clean:
            gates = invoke(
                parser,
                ["github", "check-plan", plan_json, *state_args, *delete_args, *base_args],
                log["gates.log"],
            )
            if gates.code != 0:
                changed = isinstance(gates.error, ConnectionChanged)
                result = PlanOutcome.CONNECTION_CHANGED if changed else PlanOutcome.UNSAFE

    lines: list[str] = []
    echo = lines.append
    if base_ref:
        echo("> [!NOTE]")
        echo(
            f"> Planned by the base branch's kgitops (`{base_ref[:7]}`): this pull request's "
            "files were read as data only."
        )
        echo("")
    if state:
        reason = _env("OFFLINE_REASON")
        echo("> [!NOTE]")
        echo(
            f"> Planned **offline** from the snapshot `{state}`{f' ({reason})' if reason else ''}:"
        )
        echo("> the live cluster was not read. The plan at merge runs against the live cluster.")
        echo("")
    body = "\n".join(lines) + "\n" if lines else ""
    if result is PlanOutcome.INVALID:
        body += f"### kgitops plan: `{name}`: invalid specs\n" + fenced(_text(log["validate.log"]))
    elif result is PlanOutcome.ERROR:
        body += f"### kgitops plan: `{name}`: the plan failed\n" + fenced(_text(log["plan.err"]))
    elif _filled(log["plan.md"]):
        body += _text(log["plan.md"])
    else:
        body += f"### kgitops plan: `{name}`: not planned (a connection change)\n"
        body += fenced(_text(log["plan.err"]))
    if result is PlanOutcome.UNSAFE:
        body += "\n> [!CAUTION]\n> **Unsafe plan**: apply would refuse it.\n\n"
        body += fenced(_text(log["gates.log"]))
    if result is PlanOutcome.CONNECTION_CHANGED:
        body += "\n> [!CAUTION]\n" + _not_allowed(allow_label, pr_number, head) + "\n"
        if input_ignored:
            body += (
                ">\n> The input `allow-connection-change` is ignored on a pull request: pass "
                "`allow-connection-label` (see the kgitops docs, ci.md, Upgrading).\n"
            )
        body += "\n"
        for kept in ("label.log", "gates.log"):
            if _filled(os.path.join(out, kept)):
                body += fenced(_text(os.path.join(out, kept)))
    body += (
        f"\n<sub>commit `{head[:7]}` · [workflow run]({_env('RUN_URL')}) · plan JSON in the "
        f"run's artifact `kgitops-plan-{name}`</sub>\n"
    )
    comment = os.path.join(out, "comment.md")
    _publish(body, comment)
    _outputs(
        {
            "result": result.value,
            "name": name,
            "marker": marker,
            "dir": out,
            "plan-json": plan_json,
            "comment-file": comment,
        }
    )
    print(f"kgitops plan {printable(directory)}: {result.value}")
    return 0


def _not_allowed(allow_label: str, pr_number: str, head: str) -> str:
    """What allows the connection change that was refused, in the comment's caution block."""
    if allow_label:
        return (
            "> **Connection change not allowed**: someone with write, maintain or admin "
            "permission who did not open this pull request approves this commit "
            f"(`{head[:7]}`) and adds the label `{allow_label.replace('`', '')}` (added before "
            "the approval: re-run the failed job)."
        )
    if pr_number:
        return (
            "> **Connection change not allowed**: on a pull request only a verified label "
            "allows it (the action's input `allow-connection-label`)."
        )
    return (
        "> **Connection change not allowed**: it must be reviewed and allowed (the action's "
        "input `allow-connection-change`)."
    )


# -- at merge (apply.yml) -------------------------------------------------------------------


def _commit_exists(directory: str, ref: str) -> bool:
    """Whether ``ref`` names a commit of the checkout holding ``directory`` (kgitops' own
    git call: ``kgitops.gitrepo``)."""
    import subprocess

    from kgitops.gitrepo import checkout_root, run_git

    root = checkout_root(directory if os.path.isdir(directory) else ".")
    if root is None or ref.startswith("-"):
        return False
    try:
        done = run_git(root, ["cat-file", "-e", f"{ref}^{{commit}}"], timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _merge_plan_step(parser: argparse.ArgumentParser) -> int:
    directory = _required("DIR")
    base, sha, run_url = _env("BASE"), _env("SHA"), _env("RUN_URL")
    name = _name(directory)
    out = _work_dir("kgitops-plan", name)
    delete_args = ["--allow-delete"] if _env("ALLOW_DELETE") == "true" else []
    base_args = []
    if base and _commit_exists(directory, base):
        # allowed on the pull request; shown here again for the approvers
        base_args = ["--base", base, "--allow-connection-change"]
    plan_json, plan_md, plan_err, gates_log = (
        os.path.join(out, f) for f in ("plan.json", "plan.md", "plan.err", "gates.log")
    )
    result = _planned(
        invoke(
            parser,
            ["plan", directory, *PLAN_FLAGS, "--out", plan_json, *base_args],
            plan_md,
            plan_err,
        )
    )
    if result.clean:
        gates = invoke(
            parser, ["github", "check-plan", plan_json, *delete_args, *base_args], gates_log
        )
        if gates.code != 0:
            result = PlanOutcome.UNSAFE
    if result is PlanOutcome.ERROR:
        body = f"### kgitops apply: `{name}`: the plan failed, nothing will be applied\n"
        body += fenced(_text(plan_err))
    elif result is PlanOutcome.UNSAFE:
        body = f"### kgitops apply: `{name}`: unsafe plan, nothing will be applied\n"
        body += fenced(_text(gates_log))
    else:
        body = (
            f"> [!IMPORTANT]\n> The plan to apply to `{name}`: approving the environment "
            f"`{_env('ENVIRONMENT')}` applies exactly this plan (artifact "
            f"`kgitops-plan-{name}`).\n\n" + _text(plan_md)
        )
    body += f"\n<sub>commit `{sha[:7]}` · [workflow run]({run_url})</sub>\n"
    _publish(body, os.path.join(out, "comment.md"))
    _outputs({"result": result.value, "dir": out})
    print(f"kgitops plan {printable(directory)}: {result.value}")
    return 0


def _applied(ran: Ran) -> ApplyOutcome:
    if ran.error is None and ran.code == 0:
        return ApplyOutcome.APPLIED
    if isinstance(ran.error, PartialApply) and not isinstance(
        ran.error, (NothingApplied, InterruptedBeforeAnyChange)
    ):
        return ApplyOutcome.PARTIAL
    return ApplyOutcome.FAILED


def _apply_step(args: argparse.Namespace) -> int:
    directory, plan = _required("DIR"), _required("PLAN")
    sha, run_url = _env("SHA"), _env("RUN_URL")
    name = _name(directory)
    out = _work_dir("kgitops-apply", name)
    delete_args = ["--allow-delete"] if _env("ALLOW_DELETE") == "true" else []
    apply_log = os.path.join(out, "apply.log")
    # a targeted plan (plan --target) is refused here: a workflow that means to apply one
    # runs `kgitops apply --plan ... --allow-targeted` itself
    ran = invoke(args._parser, ["apply", "--plan", plan, "--yes", *delete_args], apply_log)
    log = _text(apply_log)
    # the log holds names from the cluster and the specs: no line of it is a command
    stop = f"kgitops-{secrets.token_hex(16)}"
    sys.stdout.write(f"::stop-commands::{stop}\n{log}")
    sys.stdout.write(f"{'' if not log or log.endswith(chr(10)) else chr(10)}::{stop}::\n")
    result = _applied(ran)
    if result is ApplyOutcome.APPLIED:
        body = f"### kgitops apply: `{name}`: applied\n"
    elif result is ApplyOutcome.PARTIAL:
        body = (
            f"### kgitops apply: `{name}`: partly applied (exit {ran.code})\n\n"
            "Some actions were not done (see below). Fix the cause and re-run this workflow, "
            "or\npush a fix: the next plan picks up what is left. See docs/recovery.md.\n"
        )
    else:
        body = (
            f"### kgitops apply: `{name}`: failed (exit {ran.code})\n\n"
            f"Run `kgitops plan {directory}` to see what is left. See docs/recovery.md.\n"
        )
    body += "\n<details open><summary>apply log</summary>\n\n" + fenced(log)
    body += f"\n</details>\n\n<sub>commit `{sha[:7]}` · [workflow run]({run_url})</sub>\n"
    _publish(body, os.path.join(out, "apply.md"))
    _outputs({"result": result.value, "dir": out})
    print(f"kgitops apply {printable(directory)}: {result.value}")
    return 0
