"""``kgitops apply DIR | --plan PLAN [--dry-run] [--yes] [--allow-delete] [--no-wait] [--format]``

Plan and apply in one go (``DIR``), or apply a reviewed, saved plan (``--plan``), refused when
the cluster changed since it was made. The plan is shown and confirmed on a terminal; without
one, ``--yes`` is required. ``--dry-run`` prints the exact admin requests and sends none.
``--format json`` prints the report as one JSON document on stdout (apply/report.py), the
plan and the question on stderr; the exit code is the same as in text.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections import Counter
from typing import Any

from kgitops.commands._fleet import (
    SAVED_PLAN_NOTE,
    add_balance,
    add_fleet_argument,
    add_retention_drop,
    add_take_over_owner,
)
from kgitops.commands._options import add_allow_delete, add_dry_run, add_format
from kgitops.commands._units import duration_above_zero, seconds
from kgitops.errors import (
    InterruptedBeforeAnyChange,
    KgitopsError,
    PartialApply,
    PlanError,
    printable,
    scrub_secrets,
)
from kgitops.names import CLUSTER_FILES

NAME = "apply"
HELP = "apply a plan to the cluster: batched, throttled, verified (exit 3 when partly done)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fleet_argument(parser, "plan and apply", nargs="*")
    parser.add_argument("--plan", metavar="PLAN", help="a plan saved by `kgitops plan --out`")
    add_dry_run(parser, "the requests", "sending them")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_allow_delete(parser)
    add_retention_drop(parser, SAVED_PLAN_NOTE)
    add_balance(parser, SAVED_PLAN_NOTE)
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="submit the reassignments and return; a later apply waits for them",
    )
    parser.add_argument(
        "--timeout",
        metavar="DURATION",
        type=_duration,
        help="how long to wait for the reassignments (90m, 48h; default "
        "reassignment.timeoutSeconds of cluster.yaml, 6h); a plan whose ETA is longer is refused",
    )
    add_format(
        parser,
        ("text", "json"),
        help="json: the report as one JSON document on stdout (schemas/apply.json); the plan "
        "and the question go to stderr",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="SELECTOR",
        help="with DIR: apply only this (repeatable; as plan --target)",
    )
    add_take_over_owner(parser)
    parser.add_argument(
        "--allow-targeted",
        action="store_true",
        help="with --plan: the plan may be a targeted one (plan --target); without it apply "
        "refuses a partial plan",
    )
    parser.add_argument(
        "--poll-interval",
        type=_poll_interval,
        default=5.0,
        metavar="SECONDS",
        help=(
            "how often to poll reassignment progress "
            f"(default 5, {MIN_POLL_SECONDS:g} to {MAX_POLL_SECONDS:g})"
        ),
    )


#: Every poll is a ListPartitionReassignments and a Metadata request to the cluster; below one
#: a second a long drain becomes a flood (0.01 s: 1.8 million polls for a 5 h drain).
MIN_POLL_SECONDS = 1.0
#: Above an hour between polls, a move's end (and the throttles it leaves) would wait that
#: long to be seen.
MAX_POLL_SECONDS = 3600.0


def _poll_interval(text: str) -> float:
    value = seconds(text)
    if value < MIN_POLL_SECONDS:
        raise argparse.ArgumentTypeError(
            f"--poll-interval {text}: at least {MIN_POLL_SECONDS:g} second (each poll is two "
            "requests to the cluster)"
        )
    if value > MAX_POLL_SECONDS:
        raise argparse.ArgumentTypeError(
            f"--poll-interval {text}: at most {MAX_POLL_SECONDS:g} seconds (a move's end, and "
            "the throttles it leaves, would wait that long to be seen)"
        )
    return value


_duration = duration_above_zero("the timeout")


def read_plan(path: str) -> Any:
    """The Plan saved at ``path``, checked against schemas/plan.json first; PlanError naming
    the file for anything unreadable, UnreviewedPlan listing what breaks the schema."""
    from kgitops.commands._review import check_schema
    from kgitops.files import read_json
    from kgitops.plan.value import Plan

    try:
        data = read_json(path)  # FileRefused: not a regular file, too big, binary, too deep
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the plan: {exc.strerror or exc}") from None
    check_schema(path, data)
    try:
        return Plan.from_json(data)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None


def cluster_dir_of(plan_path: str, cluster_dir: str | None) -> str:
    """Where the plan's cluster.yaml lives: ``clusterDir`` as recorded, a relative one from
    the plan file's folder (``plan --out`` records it so), never from the working folder,
    where another cluster's folder of the same name may be."""
    if not cluster_dir:
        raise PlanError(
            f"{plan_path}: the plan does not say which cluster folder it is for (clusterDir);"
            " save it with `kgitops plan DIR --out PLAN`"
        )
    folder = os.path.join(os.path.dirname(plan_path), cluster_dir)
    if os.path.isabs(cluster_dir):
        folder = cluster_dir
    if any(os.path.isfile(os.path.join(folder, f)) for f in CLUSTER_FILES):
        return os.path.normpath(folder)
    raise PlanError(
        f"{plan_path}: the plan's cluster folder {cluster_dir!r} (from the plan file's folder: "
        f"{os.path.normpath(folder)}) has no cluster.yaml"
    )


def load_cluster(directory: str) -> Any:
    """The ClusterSpec of ``directory``'s cluster.yaml (topic files are not needed)."""
    from kgitops.commands._clusterdir import load_cluster as load

    return load(directory)


def show(plan: Any) -> str:
    try:
        from kgitops.render.text import render_text

        return render_text(plan.to_json(), colour=sys.stdout.isatty())
    except ImportError:  # pragma: no cover - the renderer is part of the package
        from kgitops.apply.report import label

        return "\n".join(label(a) for a in plan.actions)


def confirm(plan: Any, args: argparse.Namespace) -> bool:
    """Ask on a terminal; True when a person was asked (time passed: check freshness again)."""
    if args.yes:
        return False
    if not sys.stdin.isatty():
        raise KgitopsError(
            "refusing to apply without confirmation: no terminal to ask on; "
            "review the plan and pass --yes (CI: `kgitops apply --plan PLAN --yes`)"
        )
    n = len(plan.actions)
    question = f"Apply these {n} change(s) to cluster {plan.cluster!r}? [y/N] "
    if _json(args):  # stdout holds the JSON report alone
        print(question, end="", file=sys.stderr, flush=True)
        question = ""
    answer = input(question)
    if answer.strip().lower() not in ("y", "yes"):
        raise KgitopsError("apply cancelled; nothing was changed")
    return True


def load_plan(args: argparse.Namespace) -> tuple[Any, Any, Any, LockUpdate | None]:
    """(plan, cluster spec, the state it was made on, the lock to record): the saved plan
    and its cluster, or a fresh plan of DIR."""
    if bool(args.directory) == bool(args.plan):
        raise KgitopsError("give either a cluster folder (apply DIR) or --plan PLAN")
    if args.plan:
        from kgitops.commands._review import replan_saved

        plan = read_plan(args.plan)
        directory = cluster_dir_of(args.plan, plan.cluster_dir)
        cluster = load_cluster(directory)
        if cluster.name != plan.cluster:
            raise PlanError(
                f"{args.plan}: the plan is for cluster {plan.cluster!r}, "
                f"but its folder holds cluster {cluster.name!r}"
            )
        if args.target:
            raise KgitopsError(
                "--target selects what a plan of a folder holds (apply DIR --target ...); a "
                "saved plan holds its own targets: give --allow-targeted to apply a targeted plan"
            )
        allowed = {
            "rebalance": args.rebalance,
            "leaders": args.leaders,
            "allowRetentionDrop": args.allow_retention_drop,
            "targets": args.allow_targeted,
        }
        replanned = replan_saved(args.plan, plan, directory, allowed, live_topics(cluster))
        if replanned is None:  # never with a fill: every topic is read
            raise AssertionError("a saved plan was not planned again")
        return plan, cluster, replanned.state, lock_update(directory, replanned)
    from kgitops.commands._planning import plan_directory, plan_options

    result = plan_directory(
        args.directory, plan_options(args), take_over_owner=args.take_over_owner
    )
    return result.plan, result.cluster, result.state, lock_update(args.directory, result)


def live_topics(cluster: Any) -> Any:
    """The state of named topics on ``cluster``'s live cluster: what a saved plan does not
    record (``kgitops.commands._review``), read with one describe when it is needed."""

    def fill(names: Any) -> Any:
        from kgitops.cluster.connect import open_cluster

        admin = open_cluster(cluster)
        try:
            return admin.describe(names)
        finally:
            admin.close()

    return fill


@dataclasses.dataclass(frozen=True)
class LockUpdate:
    """The kgitops.lock an apply records: what ``plan --update-lock`` would write for the
    plan it runs (the start index of each topic it creates ...), so ``plan --locked`` holds
    after it (docs/lock.md)."""

    directory: str
    lock: Any  # kgitops.spec.lock.Lock
    changes: int  # entries added, changed or dropped

    def write(self) -> None:
        from kgitops.spec.lock import lock_path, write_lock

        write_lock(self.directory, self.lock)
        print(
            f"recorded {self.changes} lock entr{'y' if self.changes == 1 else 'ies'} in "
            f"{printable(lock_path(self.directory))}: commit it",
            file=sys.stderr,
        )


def lock_update(directory: str, result: Any) -> LockUpdate | None:
    """The lock to record after planning ``directory`` (``result``: its PlanResult); None
    when kgitops.lock already says it."""
    from kgitops.spec.lock import lock_differences

    if result.next_lock is None:
        return None
    changes = lock_differences(result.lock, result.next_lock)
    if not changes:
        return None
    count = len(changes) if result.lock is not None else len(result.next_lock.entries)
    return LockUpdate(directory, result.next_lock, count)


def fresh_state(plan: Any, admin: Any, recorded: Any, cluster: Any) -> Any:
    """The live state of the plan's topics; StalePlan if it is not what the plan was made on
    (``recorded``: that state, so StalePlan can say exactly what changed). Of access, only
    what the folder owns counts (``owned_access``), as when the plan was made."""
    from dataclasses import replace

    from kgitops.cluster.port import describe_access
    from kgitops.plan.access_diff import owned_access
    from kgitops.plan.fields import access_parts_of

    state = admin.describe(plan.topics)
    if plan.access_fingerprint is not None:
        parts = access_parts_of(plan.access_parts)
        state = replace(state, access=owned_access(describe_access(admin, parts), cluster.owns))
    plan.raise_if_stale(state, recorded)
    return state


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._fleet import cluster_folders, run_fleet

    if args.plan or not args.directory:  # load_plan: a folder or --plan, never both
        first = args.directory[0] if args.directory else None
        return run_one(argparse.Namespace(**{**vars(args), "directory": first}))
    folders = cluster_folders(args.directory)
    if len(folders) == 1:
        return run_one(argparse.Namespace(**{**vars(args), "directory": folders[0]}))
    return run_fleet(args, folders, run_one)


def run_one(args: argparse.Namespace) -> int:
    """Apply one cluster folder (``args.directory``) or a saved plan (``args.plan``)."""
    from kgitops.apply.access import before_any_change
    from kgitops.apply.exclusive import exclusive_apply
    from kgitops.apply.signals import signals_interrupt, why
    from kgitops.cluster.connect import open_cluster
    from kgitops.cluster.port import sent_requests

    args.sent_before = sent_requests()  # the summary counts what this run sends, planning too
    with signals_interrupt():  # SIGTERM and SIGHUP stop apply as Ctrl-C does
        try:
            with before_any_change():
                plan, cluster, recorded, locking = load_plan(args)
            with contextlib.ExitStack() as stack:
                if not args.dry_run:
                    stack.enter_context(exclusive_apply(cluster))  # one apply per cluster
                admin = open_cluster(cluster)
                try:
                    return apply_with(args, plan, cluster, admin, recorded, locking)
                finally:
                    admin.close()
        except KeyboardInterrupt as exc:  # not inside apply_plan (which reports its own)
            if getattr(args, "applied", False):  # printing the report of a finished apply
                raise PartialApply(
                    f"apply was {why(exc)} after it finished; `kgitops plan` shows the cluster"
                ) from None
            raise InterruptedBeforeAnyChange(
                f"apply was {why(exc)} before it changed anything"
            ) from None


def _json(args: argparse.Namespace) -> bool:
    return getattr(args, "format", "text") == "json"


def _scrubbed(value: Any) -> Any:
    """``value`` with every string scrubbed of the credentials this run read."""
    if isinstance(value, str):
        return scrub_secrets(value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    return value


def print_json_report(
    plan: Any, report: Any, result: str, exit_code: int, message: str | None = None
) -> None:
    from kgitops.apply.report import report_json

    data = report_json(
        report, cluster=plan.cluster, result=result, exit_code=exit_code, message=message
    )
    print(json.dumps(_scrubbed(data), indent=2))


def apply_with(
    args: argparse.Namespace,
    plan: Any,
    cluster: Any,
    admin: Any,
    recorded: Any = None,
    locking: LockUpdate | None = None,
) -> int:
    """Apply ``plan``; ``locking``: the kgitops.lock to record once the apply goes ahead
    (never on --dry-run)."""
    from kgitops.apply.access import before_any_change, require_access_support
    from kgitops.apply.journal import MoveJournal
    from kgitops.apply.progress import for_stream
    from kgitops.apply.record import ThrottleRecord
    from kgitops.apply.run import adopts, apply_plan
    from kgitops.cluster.port import sent_requests
    from kgitops.commands._owners import claim
    from kgitops.plan.identity import check_cluster_id

    take_over, actions = args.take_over_owner, plan.actions  # the owner records
    # another owner's overlapping claim: nothing changed
    claim(cluster, admin, write=False, take_over=take_over, actions=actions)
    settings = cluster.reassignment
    if args.timeout is not None:
        settings = dataclasses.replace(settings, timeout_seconds=args.timeout)
    journal = MoveJournal.open(cluster.directory, cluster.name)
    if not plan.has_changes:
        listed = admin.list_reassignments()
        ours = [
            (t, p)
            for t, parts in listed.items()
            if adopts(plan, t)
            for p, (replicas, _, removing) in parts.items()
            if journal.ours((t, p), tuple(r for r in replicas if r not in removing))
        ]
        # moves of ours that ended since the plan (it kept their throttles): clean up too
        ended = [(t, p) for t, p in journal.moves if adopts(plan, t) and p not in listed.get(t, {})]
        if args.dry_run or args.no_wait or not (ours or ended):
            for note in journal.notes:
                print(printable(note), file=sys.stderr)
            if not args.dry_run:
                claim(cluster, admin, write=True, take_over=take_over, actions=actions)
            if locking is not None and not args.dry_run:
                locking.write()
            if _json(args):
                from kgitops.apply.report import ApplyReport

                nothing = ApplyReport(notes=list(journal.notes), dry_run=args.dry_run)
                print_json_report(plan, nothing, "noChanges", 0)
                return 0
            print(f"No changes. Cluster {plan.cluster!r} matches the plan.")
            return 0
        # nothing to change, but moves a --no-wait apply left running: finish them (or
        # take out the throttles of those that ended)
    with before_any_change():
        state = fresh_state(plan, admin, recorded, cluster)
    check_cluster_id(cluster, state, doing="apply")
    plan.raise_if_unsafe(allow_delete=args.allow_delete, state=state)
    if not args.dry_run and not args.no_wait:
        plan.raise_if_too_slow(settings.timeout_seconds)
    if args.dry_run:
        report = apply_plan(
            plan,
            admin,
            settings,
            allow_delete=args.allow_delete,
            dry_run=True,
            journal=journal,
        )
        if _json(args):
            print_json_report(plan, report, "dryRun", 0)
            return 0
        print("\n".join(printable(line) for line in report.lines()))
        return 0
    if plan.has_changes:
        require_access_support(plan, admin)  # before the plan is shown and confirmed
        print(show(plan), file=sys.stderr if _json(args) else sys.stdout)
        if confirm(plan, args):
            fresh_state(plan, admin, state, cluster)
    # before any change: what it owns, the cluster says
    claim(cluster, admin, write=True, take_over=take_over, actions=actions)
    if locking is not None:  # before any change: what the cluster gets, the lock says
        locking.write()
    try:
        report = apply_plan(
            plan,
            admin,
            settings,
            allow_delete=args.allow_delete,
            wait=not args.no_wait,
            progress=for_stream(sys.stderr),
            poll_seconds=args.poll_interval,
            journal=journal,
            record=ThrottleRecord(cluster),
        )
    except PartialApply as exc:  # the JSON report on stdout, the lines on stderr, its code
        if _json(args) and exc.report is not None:
            from kgitops.apply.report import result_of

            print_json_report(plan, exc.report, result_of(exc), exc.exit_code, str(exc))
        raise
    args.applied = True
    before: Counter[str] = getattr(args, "sent_before", None) or Counter()
    report.sent = sent_requests() - before
    if _json(args):
        print_json_report(plan, report, "applied", 0)
        return 0
    print("\n".join(printable(line) for line in report.lines()))
    return 0
