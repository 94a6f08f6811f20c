"""``kgitops plan DIR``: compare the specs with the live cluster and show what would change."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from kgitops.commands._fleet import (
    add_balance,
    add_fleet_argument,
    add_retention_drop,
    add_take_over_owner,
)
from kgitops.commands._options import add_connection_review, add_format, add_state
from kgitops.errors import PlanError

NAME = "plan"
HELP = "compare the specs with the live cluster (or a saved state) and show the plan"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fleet_argument(parser, "plan", nargs="+")
    add_state(parser, "plan offline against it")
    add_format(parser, ("text", "markdown", "json"), help="output format")
    parser.add_argument("--out", metavar="PLAN", help="also save the plan (JSON) for apply")
    parser.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when there are no changes, 2 when there are, 1 on error",
    )
    lock = parser.add_mutually_exclusive_group()
    lock.add_argument(
        "--update-lock", action="store_true", help="write kgitops.lock with the choices made"
    )
    lock.add_argument(
        "--locked", action="store_true", help="fail if kgitops.lock is missing or stale"
    )
    add_balance(parser)
    add_connection_review(
        parser,
        "(a pull request's base): each change is a CONNECTION_CHANGED finding, and the live "
        "cluster is not contacted with changed settings unless --allow-connection-change",
        "with --base, plan with the new settings",
    )
    add_retention_drop(parser)
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="SELECTOR",
        help="plan only this (repeatable): a topic name or glob, label:KEY=VALUE, "
        "acl:PRINCIPAL, user:NAME or quota:ENTITY; the plan says it is partial",
    )
    add_take_over_owner(parser)
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (auto: on a terminal, unless NO_COLOR is set)",
    )


def use_colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._fleet import cluster_folders, run_fleet

    folders = cluster_folders(args.directory)
    if len(folders) == 1:
        return run_one(argparse.Namespace(**{**vars(args), "directory": folders[0]}))
    if args.out:
        raise PlanError(
            f"--out saves the plan of one cluster; {len(folders)} cluster folders were given "
            f"({', '.join(folders)}): plan each with its own --out"
        )
    if args.format == "json":
        import io
        import json
        from contextlib import redirect_stdout

        plans: list[object] = []

        def one_json(one: argparse.Namespace) -> int:
            buffer = io.StringIO()
            with redirect_stdout(buffer):
                code = run_one(one)
            plans.append(json.loads(buffer.getvalue()))
            return code

        code = run_fleet(args, folders, one_json)
        sys.stdout.write(json.dumps(plans, indent=2) + "\n")
        return code

    def failed(folder: str) -> None:
        if args.format == "markdown":  # every cluster has its section
            sys.stdout.write(
                f"### kgitops plan: `{os.path.basename(os.path.normpath(folder))}`: the plan "
                "failed (see the log)\n\n"
            )
        else:
            sys.stdout.write("\n")

    def each(one: argparse.Namespace) -> int:
        code = run_one(one)
        sys.stdout.write("\n")
        return code

    return run_fleet(args, folders, each, on_error=failed)


def run_one(args: argparse.Namespace) -> int:
    """Plan one cluster folder (``args.directory``)."""
    from kgitops.commands._planning import plan_directory, plan_options

    base = None
    if args.base:
        from kgitops.commands._gitbase import cluster_at
        from kgitops.commands._planning import Base

        base = Base(args.base, cluster_at(args.base, args.directory), args.allow_connection_change)
    elif args.allow_connection_change:
        raise PlanError("--allow-connection-change needs --base REF")
    if args.out:
        from kgitops.files import PLAN_OUT, check_output

        check_output(args.out, PLAN_OUT)  # before any work; the spec-named files at the end
    from kgitops.perf import leave_to_exit, paused_gc

    # One pause from the state read to the written plan, and the result dropped inside it: a
    # state of a million partitions and the plan's JSON are millions of acyclic objects, and
    # a collector re-enabled while they live walks every one of them (0.2 s) at once.
    with paused_gc():
        result = plan_directory(
            args.directory,
            plan_options(args),
            base=base,
            state_file=args.state,
            locked=args.locked,
            update_lock=args.update_lock,
            take_over_owner=args.take_over_owner,
        )
        try:
            return _write(args, result)
        finally:
            leave_to_exit(result)
            del result


def _write(args: argparse.Namespace, result: Any) -> int:
    """Save (``--out``) and print the plan; the exit code."""
    from kgitops.perf import leave_to_exit, stage
    from kgitops.render.markdown import render_markdown
    from kgitops.render.text import render_json, render_text

    with stage("plan to JSON"):
        data = result.plan.to_json()
    leave_to_exit(data)  # a million replica lists for a big new cluster
    shared: dict[str, tuple[object, str]] = {}  # fields written to --out, reused on stdout
    if args.out:
        from dataclasses import replace

        from kgitops.cluster.snapshot import state_json_line
        from kgitops.commands._planning import plan_options
        from kgitops.commands._review import state_to_record
        from kgitops.plan.fields import RECORDED_STATE, saved_fields

        # the selectors as the plan holds them: apply checks they say the same
        options = replace(plan_options(args), targets=result.plan.targets or ())
        with stage("save --out"):
            recorded = state_to_record(result.plan, result.state, options)
            # the recorded state goes in as its text (state_json_line: a million partitions
            # are not built as dicts first): render_json writes the line ``shared`` holds
            # for the object in its place
            slot: dict[str, Any] = {}
            saved = {
                **data,
                "clusterDir": saved_cluster_dir(args.out, data["clusterDir"]),
                **saved_fields(options, slot),
            }
            text = state_json_line(recorded)
            shared[RECORDED_STATE] = (slot, f' "{RECORDED_STATE}": {text}')
        from kgitops.commands._out import named_files
        from kgitops.files import PLAN_OUT, write_output

        named = named_files(args.directory, args.out, result.specs)
        try:
            with stage("save --out"):
                write_output(args.out, render_json(saved, shared), PLAN_OUT, named=named)
        except OSError as exc:
            raise PlanError(f"{args.out}: cannot write the plan: {exc.strerror or exc}") from None
    with stage("render"):
        if args.format == "json":
            sys.stdout.write(render_json(data, shared))
        elif args.format == "markdown":
            sys.stdout.write(render_markdown(data))
        else:
            sys.stdout.write(render_text(data, colour=use_colour(args.color)))
    if result.lock_written:
        print(f"wrote {os.path.join(args.directory, 'kgitops.lock')}", file=sys.stderr)
    elif not args.locked and result.next_lock is not None:
        _lock_hint(args.directory, result.lock, result.next_lock)
    if result.lock_conflict is not None:
        again = ", ".join(result.lock_conflict) or "none"
        print(
            "the merge conflict in kgitops.lock is resolved: entries both sides agree on kept, "
            f"computed again for the topics the sides disagreed on ({again})",
            file=sys.stderr,
        )
    return 2 if args.detailed_exitcode and result.plan.needs_review else 0


def _lock_hint(directory: str, lock: Any, wanted: Any) -> None:
    """One line on stderr when kgitops.lock is missing or does not say what this plan
    chose: ``plan --locked`` (CI) would fail."""
    from kgitops.errors import printable
    from kgitops.spec.lock import lock_differences, lock_path

    changes = lock_differences(lock, wanted)
    if not changes:
        return
    what = (
        "is missing"
        if lock is None
        else f"does not hold {len(changes)} placement choice(s) of this plan"
    )
    print(
        f"hint: {printable(lock_path(directory))} {what}; `kgitops plan "
        f"{printable(directory)} --update-lock` writes it (and so does `kgitops apply`); "
        "commit the lock, or `plan --locked` fails",
        file=sys.stderr,
    )


def saved_cluster_dir(plan_path: str, cluster_dir: str) -> str:
    """A saved plan's ``clusterDir``: relative to the plan file's folder (``apply --plan``
    resolves it from there, wherever it runs), unless the folder was given absolute.

    >>> saved_cluster_dir("out/plan.json", "topics/prod")
    '../topics/prod'
    """
    import os

    if os.path.isabs(cluster_dir):
        return cluster_dir
    where = os.path.dirname(os.path.abspath(plan_path))
    return os.path.relpath(os.path.abspath(cluster_dir), where)
