"""``kgitops apply DIR | --plan PLAN [--dry-run] [--yes] [--allow-delete] [--no-wait]``

Plan and apply in one go (``DIR``), or apply a reviewed, saved plan (``--plan``), refused when
the cluster changed since it was made. The plan is shown and confirmed on a terminal; without
one, ``--yes`` is required. ``--dry-run`` prints the exact admin requests and sends none.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from typing import Any

from kgitops.commands._units import seconds
from kgitops.errors import (
    InterruptedBeforeAnyChange,
    KgitopsError,
    PartialApply,
    PlanError,
    printable,
)
from kgitops.names import CLUSTER_FILES

NAME = "apply"
HELP = "apply a plan to the cluster: batched, throttled, verified (exit 3 when partly done)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", metavar="DIR", help="cluster folder to plan+apply")
    parser.add_argument("--plan", metavar="PLAN", help="a plan saved by `kgitops plan --out`")
    parser.add_argument("--dry-run", action="store_true", help="print the requests, send none")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--allow-delete", action="store_true", help="let the plan delete topics")
    parser.add_argument(
        "--allow-retention-drop",
        action="store_true",
        help="cut retention.ms in one apply instead of retentionDropStep steps (with --plan: "
        "needed to apply a plan made with it)",
    )
    balance = parser.add_mutually_exclusive_group()
    balance.add_argument(
        "--rebalance",
        action="store_true",
        help="as plan --rebalance: also move replicas and leaders towards the balance goals "
        "(with --plan: needed to apply a plan made with it)",
    )
    balance.add_argument(
        "--leaders",
        action="store_true",
        help="as plan --leaders: only even out preferred leaders (with --plan: needed to apply "
        "a plan made with it)",
    )
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


def _duration(text: str) -> float:
    from kgitops.units import parse_duration

    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the timeout must be above zero")
    return seconds


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
        from kgitops.plan.render import render_text

        return render_text(plan.to_json(), colour=sys.stdout.isatty())
    except ImportError:  # pragma: no cover - the renderer is part of the package
        from kgitops.apply.run import label

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
    answer = input(f"Apply these {n} change(s) to cluster {plan.cluster!r}? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise KgitopsError("apply cancelled; nothing was changed")
    return True


def load_plan(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """(plan, cluster spec, the state it was made on): the saved plan and its cluster, or a
    fresh plan of DIR."""
    if bool(args.directory) == bool(args.plan):
        raise KgitopsError("give either a cluster folder (apply DIR) or --plan PLAN")
    if args.plan:
        from kgitops.commands._review import verify_saved_plan

        plan = read_plan(args.plan)
        directory = cluster_dir_of(args.plan, plan.cluster_dir)
        cluster = load_cluster(directory)
        if cluster.name != plan.cluster:
            raise PlanError(
                f"{args.plan}: the plan is for cluster {plan.cluster!r}, "
                f"but its folder holds cluster {cluster.name!r}"
            )
        allowed = {
            "rebalance": args.rebalance,
            "leaders": args.leaders,
            "allowRetentionDrop": args.allow_retention_drop,
        }
        recorded = verify_saved_plan(args.plan, plan, directory, allowed, live_topics(cluster))
        return plan, cluster, recorded
    from kgitops.commands._planning import plan_directory

    result = plan_directory(
        args.directory,
        allow_retention_drop=args.allow_retention_drop,
        rebalance=args.rebalance,
        leaders=args.leaders,
    )
    return result.plan, result.cluster, result.state


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


def fresh_state(plan: Any, admin: Any, recorded: Any) -> Any:
    """The live state of the plan's topics; StalePlan if it is not what the plan was made on
    (``recorded``: that state, so StalePlan can say exactly what changed)."""
    from dataclasses import replace

    from kgitops.cluster.port import describe_access
    from kgitops.plan.value import ACCESS_FINGERPRINT, ACCESS_PARTS_FIELD, access_parts_of

    state = admin.describe(plan.topics)
    if ACCESS_FINGERPRINT in plan.extra:
        parts = access_parts_of(plan.extra.get(ACCESS_PARTS_FIELD))
        state = replace(state, access=describe_access(admin, parts))
    plan.raise_if_stale(state, recorded)
    return state


def run(args: argparse.Namespace) -> int:
    from kgitops.apply.access import before_any_change
    from kgitops.apply.exclusive import exclusive_apply
    from kgitops.apply.signals import signals_interrupt, why
    from kgitops.cluster.connect import open_cluster

    with signals_interrupt():  # SIGTERM and SIGHUP stop apply as Ctrl-C does
        try:
            with before_any_change():
                plan, cluster, recorded = load_plan(args)
            with contextlib.ExitStack() as stack:
                if not args.dry_run:
                    stack.enter_context(exclusive_apply(cluster))  # one apply per cluster
                admin = open_cluster(cluster)
                try:
                    return apply_with(args, plan, cluster, admin, recorded)
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


def apply_with(
    args: argparse.Namespace, plan: Any, cluster: Any, admin: Any, recorded: Any = None
) -> int:
    from kgitops.apply.access import before_any_change, require_access_support
    from kgitops.apply.journal import MoveJournal
    from kgitops.apply.progress import for_stream
    from kgitops.apply.record import ThrottleRecord
    from kgitops.apply.run import apply_plan
    from kgitops.plan.identity import check_cluster_id

    settings = cluster.reassignment
    if args.timeout is not None:
        settings = dataclasses.replace(settings, timeout_seconds=args.timeout)
    journal = MoveJournal.open(cluster.directory, cluster.name)
    if not plan.has_changes:
        listed = admin.list_reassignments()
        ours = [
            (t, p)
            for t, parts in listed.items()
            if t in plan.state_digests
            for p, (replicas, _, removing) in parts.items()
            if journal.ours((t, p), tuple(r for r in replicas if r not in removing))
        ]
        # moves of ours that ended since the plan (it kept their throttles): clean up too
        ended = [
            (t, p)
            for t, p in journal.moves
            if t in plan.state_digests and p not in listed.get(t, {})
        ]
        if args.dry_run or args.no_wait or not (ours or ended):
            for note in journal.notes:
                print(printable(note), file=sys.stderr)
            print(f"No changes. Cluster {plan.cluster!r} matches the plan.")
            return 0
        # nothing to change, but moves a --no-wait apply left running: finish them (or
        # take out the throttles of those that ended)
    with before_any_change():
        state = fresh_state(plan, admin, recorded)
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
        print("\n".join(printable(line) for line in report.lines()))
        return 0
    if plan.has_changes:
        require_access_support(plan, admin)  # before the plan is shown and confirmed
        print(show(plan))
        if confirm(plan, args):
            fresh_state(plan, admin, state)
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
    args.applied = True
    print("\n".join(printable(line) for line in report.lines()))
    return 0
