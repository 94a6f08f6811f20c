"""``kgitops github``: the commands the GitOps workflows run on GitHub Actions.

- ``comment``: keep one pull-request comment per marker up to date;
- ``check-plan PLAN``: the safety gates apply will run, on a saved plan, so a pull request
  fails before merge rather than the apply after it;
- ``check-label``: whether the label that allows a connection change counts (added last by
  someone with write, maintain or admin permission who did not open the pull request and
  approved the commit the workflow plans);
- ``export-secrets DIR``: copy the secrets the cluster file names (``usernameEnv`` ...) from
  the workflow's secrets into the job's environment, printing names only;
- ``fence FILE``: a log in a code fence nothing inside can close; ``issue``: the drift issue;
- ``plan-step`` / ``apply-step``: the workflows' plan and apply steps, deciding in Python
  (``commands._ci_steps``).

::

    GITHUB_TOKEN=... kgitops github comment --repo acme/topics --pr 42 --file plan.md \\
        --marker plan-prod --artifact-url "$RUN_URL"

The token comes from ``GITHUB_TOKEN`` only (never a flag, so it never lands in a shell
history or a process list) and is never printed. ``--commit SHA`` instead of ``--pr`` comments
on the pull request that merged that commit (the apply workflow's case); a direct push with no
pull request is not an error: there is nothing to comment on.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._github_sub import subcommand
from kgitops.commands._options import add_allow_delete, add_connection_review, add_state
from kgitops.commands._units import integer, seconds
from kgitops.errors import GitHubError, KgitopsError, SpecError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kgitops.commands._review import Fill
    from kgitops.integrations.github.upsert import CommentResult
    from kgitops.model import ClusterState

NAME = "github"
CONNECTION_LABEL = "kgitops:allow-connection-change"
#: How a workflow step passes its job's token (a workflow expression, not a Python format).
WORKFLOW_TOKEN = "${{ github.token }}"
HELP = (
    "GitHub integration for the workflows: the plan comment, plan and label checks, "
    "secrets, log fences, the drift issue, the plan and apply steps"
)


def _api_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-url",
        default=os.environ.get("GITHUB_API_URL") or "https://api.github.com",
        help="GitHub API base URL (default: $GITHUB_API_URL or https://api.github.com)",
    )


def _repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        default=os.environ.get("GITHUB_REPOSITORY"),
        help="OWNER/NAME (default: $GITHUB_REPOSITORY)",
    )


def _max_wait(parser: argparse.ArgumentParser, default: float) -> None:
    parser.add_argument(
        "--max-wait",
        type=seconds,
        default=default,
        metavar="SECONDS",
        help=f"longest wait for a rate limit to reset before giving up (default: {default:g})",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="github_command", metavar="SUBCOMMAND", required=True)
    c = subcommand(
        sub,
        "comment",
        _comment,
        help="create or update the one pull-request comment carrying a marker",
        description=(
            "Create or update the one pull-request comment that carries the hidden marker "
            "<!-- kgitops:NAME -->. The token is read from GITHUB_TOKEN."
        ),
    )
    _repo(c)
    target = c.add_mutually_exclusive_group(required=True)
    target.add_argument("--pr", type=integer, help="pull request number")
    target.add_argument("--commit", help="comment on the pull request that merged this commit")
    c.add_argument("--file", required=True, help="the markdown to post ('-' for stdin)")
    c.add_argument("--marker", default="plan", help="marker name (default: plan)")
    _api_url(c)
    c.add_argument(
        "--head-sha",
        metavar="SHA",
        help="comment only if the pull request's head is this commit (for workflow_run)",
    )
    c.add_argument("--artifact-url", help="where the full plan is, linked if the body is cut")
    _max_wait(c, 300.0)

    g = subcommand(
        sub,
        "check-plan",
        _check_plan,
        help="run apply's safety gates on a saved plan (deletions, replication, offline brokers)",
        description=(
            "Check a plan saved with `kgitops plan --out` as apply will, without a cluster: "
            "it matches schemas/plan.json, planning again from its specs and its recorded "
            "state gives every action it holds, and it passes the safety gates (deletion "
            "without --allow-delete, replication below min.insync.replicas, replicas on "
            "offline brokers). Exit 1 with every reason otherwise."
        ),
    )
    g.add_argument("plan", metavar="PLAN", help="a plan saved by `kgitops plan --out`")
    add_state(g, "run the safety gates on it instead of the state the plan recorded")
    add_allow_delete(g)
    add_connection_review(
        g,
        "(not only the plan's own CONNECTION_CHANGED findings)",
        "the workflows pass it when `check-label` accepts the label, or from an input",
    )

    k = subcommand(
        sub,
        "check-label",
        _check_label,
        help="whether the label allowing a connection change counts (who added it, their "
        "permission, and their approval of the commit planned)",
        description=(
            "Exit 0 when pull request --pr carries --label, its head is --head-sha (the commit "
            "the workflow plans), and the person who added the label most recently (the pull "
            "request's issue events) has write, maintain or admin permission on the "
            "repository, did not open the pull request, and approved that commit (their "
            "latest review that is not a comment is APPROVED with commit_id --head-sha); "
            "exit 1 with the reason otherwise, also when GitHub cannot be asked (a label is "
            "not a review: triage permission may add one, and it stays on through later "
            "pushes). The token is read from GITHUB_TOKEN (`pull-requests: read`)."
        ),
    )
    _repo(k)
    k.add_argument("--pr", type=integer, required=True, help="pull request number")
    k.add_argument(
        "--head-sha",
        required=True,
        metavar="SHA",
        help="the full commit SHA the workflow plans (github.event.pull_request.head.sha): "
        "the approval must be of it, and the pull request's head must still be it",
    )
    k.add_argument(
        "--dir",
        metavar="DIR",
        help="the cluster folder planned: the checkout holding it must be at --head-sha "
        "(read with kgitops' own git call, never git started in DIR)",
    )
    k.add_argument(
        "--label",
        default=CONNECTION_LABEL,
        help=f"the label (default: {CONNECTION_LABEL})",
    )
    _api_url(k)
    _max_wait(k, 60.0)

    e = subcommand(
        sub,
        "export-secrets",
        _export_secrets,
        help="put the credentials cluster.yaml names into $GITHUB_ENV, from $KGITOPS_SECRETS",
        description=(
            "Read the environment variable names cluster.yaml uses for credentials "
            "(security.sasl.usernameEnv, passwordEnv, security.ssl.keyPasswordEnv), take "
            "their values from the JSON object in $KGITOPS_SECRETS (an explicit map of the "
            "named secrets, never `${{ toJSON(secrets) }}`) and append them to the file "
            "$GITHUB_ENV names. Prints the names only, never a value."
        ),
    )
    add_cluster_dir_argument(e)

    f = subcommand(
        sub,
        "fence",
        _fence,
        help="print a file (a log) in a markdown code fence nothing inside can close",
        description=(
            "Print FILE's last lines inside a fenced code block longer than any run of "
            "backticks in it, with control characters shown as escapes: a log holding "
            "broker or user text is shown in a pull-request comment as text, never as markup."
        ),
    )
    f.add_argument("file", metavar="FILE")
    f.add_argument("--tail", type=integer, default=400, metavar="N", help="last N lines (400)")
    f.add_argument("--info", default="", help="the fence's info string, e.g. diff")

    i = subcommand(
        sub,
        "issue",
        _issue,
        help="open or update the one issue carrying a marker (drift), or close it",
        description=(
            "Keep one open issue per marker (e.g. drift-prod), labelled --label: open it with "
            "--file as its body, update it in place, or (--close) close it with --file as "
            "the closing comment. The token is read from GITHUB_TOKEN."
        ),
    )
    _repo(i)
    i.add_argument("--marker", required=True, help="marker name, e.g. drift-prod")
    i.add_argument("--title", default="", help="the issue's title when it is opened")
    i.add_argument("--label", default="kgitops-drift", help="label (default: kgitops-drift)")
    i.add_argument("--file", required=True, help="the markdown body or closing comment")
    i.add_argument("--close", action="store_true", help="close the open issue if there is one")
    _api_url(i)

    from kgitops.commands import _ci_clusters, _ci_steps

    _ci_steps.add_parsers(sub)
    _ci_clusters.add_parsers(sub)


def run(args: argparse.Namespace) -> int:
    handler = args._github
    code: int = handler(args)
    return code


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    from kgitops.files import read_bytes
    from kgitops.jsontext import decode_utf8

    try:  # a regular file under the size cap; FileRefused (one positioned line) otherwise
        return decode_utf8(read_bytes(path), path)
    except OSError as exc:
        raise KgitopsError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _repository(args: argparse.Namespace) -> str:
    """``--repo`` (or $GITHUB_REPOSITORY), checked to be OWNER/NAME."""
    from kgitops.integrations.github.body import check_repo

    if not args.repo:
        raise GitHubError("no repository: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY)")
    return check_repo(args.repo)


def _token(missing: str, permissions: str) -> str:
    """The token in GITHUB_TOKEN; GitHubError saying what is ``missing`` without it, and how
    a workflow passes one with the ``permissions`` it needs."""
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise GitHubError(
            f"{missing} (in a workflow: `env: GITHUB_TOKEN: {WORKFLOW_TOKEN}` with {permissions})"
        )
    return token


def _fence(args: argparse.Namespace) -> int:
    from kgitops.commands._ci_steps import fenced

    if args.tail < 1:
        raise KgitopsError("--tail must be at least 1")
    sys.stdout.write(fenced(_read(args.file), args.tail, args.info))
    return 0


def _issue(args: argparse.Namespace) -> int:
    from kgitops.integrations.github.body import marker_tag
    from kgitops.integrations.github.client import GitHubClient
    from kgitops.integrations.github.upsert import close_issues, upsert_issue

    repo = _repository(args)
    marker_tag(args.marker)
    if not args.close and not args.title.strip():
        raise GitHubError("--title is needed to open an issue")
    text = _read(args.file)
    token = _token(
        "GITHUB_TOKEN is not set: export a token that may write", "the job's `permissions:`"
    )
    client = GitHubClient(token, args.api_url)
    if args.close:
        result = close_issues(client, repo, text, marker=args.marker, label=args.label)
    else:
        result = upsert_issue(
            client, repo, text, marker=args.marker, title=args.title, label=args.label
        )
    numbers = ", ".join(f"#{n}" for n in result.numbers) or "no issue"
    print(f"{result.action}: {numbers} in {repo} ({args.marker})")
    return 0


def _comment(args: argparse.Namespace) -> int:
    from kgitops.integrations.github.body import marker_tag
    from kgitops.integrations.github.client import GitHubClient
    from kgitops.integrations.github.upsert import upsert_comment

    repo = _repository(args)
    marker_tag(args.marker)
    token = _token(
        "GITHUB_TOKEN is not set: export a token that may write pull-request comments",
        "`permissions: {pull-requests: write}`",
    )
    if args.pr is not None and args.pr < 1:
        raise GitHubError(f"invalid pull request number {args.pr}")
    if args.max_wait < 0:
        raise GitHubError("--max-wait must be 0 or more seconds")
    text = _read(args.file)
    client = GitHubClient(token, args.api_url, max_wait=args.max_wait)
    pr = args.pr
    if pr is None:
        pr = client.pull_for_commit(repo, args.commit)
        if pr is None:
            print(f"no pull request merged commit {args.commit}: nothing to comment on")
            return 0
    if args.head_sha:
        head = client.pull_head_sha(repo, pr)
        if head.lower() != args.head_sha.lower():
            raise GitHubError(
                f"pull request #{pr} in {repo} is at commit {head[:12]}, not {args.head_sha[:12]}:"
                " not commenting (the plan is for another commit or another pull request)"
            )
    result = upsert_comment(
        client, repo, pr, text, marker=args.marker, artifact_url=args.artifact_url
    )
    print(f"{result.action} comment {result.comment.id} on {repo}#{pr}: {result.comment.url}")
    for warning in _comment_warnings(result, args):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _comment_warnings(result: CommentResult, args: argparse.Namespace) -> Iterator[str]:
    """What `github comment` warns of once the comment is written."""
    if result.truncated:
        rest = "" if args.artifact_url else " (pass --artifact-url to link the rest)"
        yield f"the comment was cut to GitHub's limit; {result.lines_left_out} lines left out{rest}"
    if result.foreign:
        yield (
            f"comments {_ids(result.foreign)} carry the marker {args.marker!r} but another "
            "account wrote them: left alone (kgitops edits only its own comments)"
        )
    if result.duplicates:
        yield (
            f"other comments also carry the marker {args.marker!r} ({_ids(result.duplicates)}); "
            "only the oldest is kept up to date"
        )


def _ids(ids: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in ids)


def _check_label(args: argparse.Namespace) -> int:
    """Fail closed: every way of not knowing who added the label is exit 1 with the reason."""
    from kgitops.integrations.approval import label_approval
    from kgitops.integrations.github.client import SHA_RE, GitHubClient
    from kgitops.integrations.github.transport import one_line

    label = args.label.strip()
    if not label or len(label) > 50 or not label.isprintable():
        raise GitHubError(f"invalid label {one_line(repr(args.label), 60)}")
    repo = _repository(args)
    if args.pr < 1:
        raise GitHubError(f"invalid pull request number {args.pr}")
    if args.max_wait < 0:
        raise GitHubError("--max-wait must be 0 or more seconds")
    if not SHA_RE.fullmatch(args.head_sha):
        raise GitHubError(
            f"invalid --head-sha {one_line(repr(args.head_sha), 60)}: expected the full commit "
            "SHA the workflow plans (40 hexadecimal digits: github.event.pull_request.head.sha)"
        )
    where = f"the label {label!r} on {repo}#{args.pr}"
    if args.dir is not None:
        planned = _checked_out(args.dir)
        if planned is None or planned.lower() != args.head_sha.lower():
            raise GitHubError(
                f"{where} does not count: {one_line(args.dir, 200)} is a checkout of "
                f"{planned or 'no commit'}, not of the pull request's head {args.head_sha}; "
                "check out github.event.pull_request.head.sha"
            )
    token = _token(
        f"{where} does not count: GITHUB_TOKEN is not set, so who added it cannot be verified",
        "`permissions: {pull-requests: read}`",
    )
    client = GitHubClient(token, args.api_url, max_wait=args.max_wait)
    approval = label_approval(client, repo, args.pr, label, head_sha=args.head_sha)
    if not approval.counts:
        raise GitHubError(f"{where} does not count: {approval.reason}")
    print(f"{where} counts: {approval.reason}")
    return 0


def _checked_out(directory: str) -> str | None:
    """The commit checked out in the checkout holding ``directory`` (``kgitops.gitrepo``)."""
    import subprocess

    from kgitops.gitrepo import checkout_root, run_git

    root = checkout_root(directory)
    if root is None:
        return None
    try:
        done = run_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = done.stdout.decode("ascii", "replace").strip()
    return sha if done.returncode == 0 and sha else None


def _given(state: ClusterState | None) -> Fill | None:
    """``check-plan --state``'s state as the source of the topics a plan does not record."""
    return None if state is None else (lambda names: state)


def _check_plan(args: argparse.Namespace) -> int:
    from kgitops.commands._review import replan_saved
    from kgitops.commands.apply import cluster_dir_of, read_plan

    plan = read_plan(args.plan)
    directory = cluster_dir_of(args.plan, plan.cluster_dir)
    given = None
    if args.state:
        from kgitops.cluster.snapshot import read_state

        given = read_state(args.state)
    replanned = replan_saved(args.plan, plan, directory, fill=_given(given))
    state = None if replanned is None else replanned.state
    findings = [f.message for f in plan.findings if f.code == "CONNECTION_CHANGED"]
    if args.base:
        from kgitops.commands._gitbase import cluster_at, connection_contents
        from kgitops.commands.apply import load_cluster
        from kgitops.plan.connection import connection_changes

        old = cluster_at(args.base, directory)
        new = load_cluster(directory)
        findings = [
            f.message
            for f in connection_changes(
                old,
                new,
                base=args.base,
                old_contents=connection_contents(old, args.base),
                new_contents=connection_contents(new),
            )
        ]
    if findings and not args.allow_connection_change:
        from kgitops.errors import ConnectionChanged

        raise ConnectionChanged(
            f"{args.plan}: cluster.yaml changes how kgitops connects to the cluster; the check "
            "fails until that is explicitly allowed (--allow-connection-change; on a pull "
            f"request: the label {CONNECTION_LABEL}, added by someone else with write, "
            "maintain or admin permission who approved the commit planned)",
            findings,
        )
    if given is not None:
        state = given
    elif state is None:  # the plan records only the topics its actions touch
        from kgitops.commands._review import recorded_state

        state = recorded_state(args.plan, plan)
        print(
            f"{args.plan}: the plan does not record the topics its actions leave alone; "
            "apply plans again from the specs on the live cluster (here: give --state FILE)"
        )
    plan.raise_if_unsafe(allow_delete=args.allow_delete, state=state)
    print(f"{args.plan}: the plan passes apply's safety gates ({len(plan.actions)} action(s))")
    return 0


def credential_envs(directory: str) -> list[tuple[str, str]]:
    """(environment variable, where cluster.yaml names it) for every credential it needs;
    SpecError when the folder does not validate (a runner variable named as a credential)."""
    from kgitops.spec.load import load_specs

    specs = load_specs(directory)
    if specs.errors or specs.cluster is None:
        raise SpecError(specs.diagnostics)
    security = specs.cluster.security
    out: list[tuple[str, str]] = []
    if security.sasl is not None:
        for name, where in (
            (security.sasl.username_env, "security.sasl.usernameEnv"),
            (security.sasl.password_env, "security.sasl.passwordEnv"),
            (security.sasl.token_env, "security.sasl.tokenEnv"),
        ):
            if name:
                out.append((name, where))
    if security.ssl is not None and security.ssl.key_password_env:
        out.append((security.ssl.key_password_env, "security.ssl.keyPasswordEnv"))
    for user in specs.access.users:  # apply writes SCRAM credentials from these
        if all(user.password_env != name for name, _ in out):
            out.append((user.password_env, f"passwordEnv of User {user.name}"))
    return out


def _export_secrets(args: argparse.Namespace) -> int:
    import json
    import uuid

    needed = credential_envs(args.dir)
    if not needed:
        print(f"{args.dir}: cluster.yaml names no credentials; nothing to export")
        return 0
    raw = os.environ.get("KGITOPS_SECRETS", "")
    try:
        secrets = json.loads(raw) if raw.strip() else {}
    except ValueError:
        secrets = None
    if not isinstance(secrets, dict):
        raise GitHubError(
            "KGITOPS_SECRETS is not a JSON object of the named secrets the cluster needs "
            '(e.g. {"KGITOPS_KAFKA_PASSWORD": "..."})'
        )
    if any(str(k).lower() == "github_token" for k in secrets):
        raise GitHubError(
            "KGITOPS_SECRETS holds github_token: it looks like `${{ toJSON(secrets) }}`, every "
            "secret of the repository; pass only the named secrets the cluster needs "
            "(see docs/security.md)"
        )
    target = os.environ.get("GITHUB_ENV")
    if not target:
        raise GitHubError("GITHUB_ENV is not set: export-secrets runs inside a GitHub workflow")
    lines: list[str] = []
    report: list[str] = []
    missing: list[str] = []
    for name, where in needed:
        value = secrets.get(name)
        if isinstance(value, str) and value:
            delimiter = f"kgitops_{uuid.uuid4().hex}"
            lines += [f"{name}<<{delimiter}", value, delimiter]
            report.append(f"exported {name} ({where}) from the secret of that name")
        elif os.environ.get(name):
            report.append(f"kept {name} ({where}): already set in the environment")
        else:
            missing.append(f"{name} ({where})")
    if missing:
        raise GitHubError(
            f"{args.dir}/cluster.yaml needs credentials that no secret provides: "
            + ", ".join(missing)
            + "; add secrets with these names to the repository or to the cluster's environment"
        )
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    except OSError as exc:
        raise GitHubError(f"cannot append to $GITHUB_ENV ({target}): {exc.strerror}") from None
    print("\n".join(report))
    return 0
