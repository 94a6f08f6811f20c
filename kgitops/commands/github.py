"""``kgitops github comment``: keep one pull-request comment per marker up to date.

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

from kgitops.errors import GitHubError, KgitopsError

NAME = "github"
HELP = "GitHub integration: post or update the plan comment on a pull request"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="github_command", metavar="SUBCOMMAND", required=True)
    c = sub.add_parser(
        "comment",
        help="create or update the one pull-request comment carrying a marker",
        description=(
            "Create or update the one pull-request comment that carries the hidden marker "
            "<!-- kgitops:NAME -->. The token is read from GITHUB_TOKEN."
        ),
    )
    c.add_argument(
        "--repo",
        default=os.environ.get("GITHUB_REPOSITORY"),
        help="OWNER/NAME (default: $GITHUB_REPOSITORY)",
    )
    target = c.add_mutually_exclusive_group(required=True)
    target.add_argument("--pr", type=int, help="pull request number")
    target.add_argument("--commit", help="comment on the pull request that merged this commit")
    c.add_argument("--file", required=True, help="the markdown to post ('-' for stdin)")
    c.add_argument("--marker", default="plan", help="marker name (default: plan)")
    c.add_argument(
        "--api-url",
        default=os.environ.get("GITHUB_API_URL") or "https://api.github.com",
        help="GitHub API base URL (default: $GITHUB_API_URL or https://api.github.com)",
    )
    c.add_argument("--artifact-url", help="where the full plan is, linked if the body is cut")
    c.add_argument(
        "--max-wait",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="longest wait for a rate limit to reset before giving up (default: 300)",
    )
    c.set_defaults(_github=_comment)


def run(args: argparse.Namespace) -> int:
    handler = args._github
    code: int = handler(args)
    return code


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise KgitopsError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _comment(args: argparse.Namespace) -> int:
    from kgitops.github import GitHubClient, check_repo, marker_tag, upsert_comment

    if not args.repo:
        raise GitHubError("no repository: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY)")
    repo = check_repo(args.repo)
    marker_tag(args.marker)
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise GitHubError(
            "GITHUB_TOKEN is not set: export a token that may write pull-request comments "
            "(in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}` with "
            "`permissions: {pull-requests: write}`)"
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
    result = upsert_comment(
        client, repo, pr, text, marker=args.marker, artifact_url=args.artifact_url
    )
    print(f"{result.action} comment {result.comment.id} on {repo}#{pr}: {result.comment.url}")
    if result.truncated:
        print(
            f"warning: the comment was cut to GitHub's limit; {result.lines_left_out} lines "
            "left out" + ("" if args.artifact_url else " (pass --artifact-url to link the rest)"),
            file=sys.stderr,
        )
    if result.duplicates:
        ids = ", ".join(str(i) for i in result.duplicates)
        print(
            f"warning: other comments also carry the marker {args.marker!r} ({ids}); "
            "only the oldest is kept up to date",
            file=sys.stderr,
        )
    return 0
