"""``plan`` and ``apply`` over a fleet: several cluster folders, or a folder of them.

``kgitops plan topics/eu topics/us`` (or ``kgitops plan topics``, every cluster folder below
it) plans each cluster in turn, exactly as ``plan DIR`` would, and exits once::

    0  every cluster planned (or applied), nothing to change
    2  with --detailed-exitcode: some cluster has changes, none failed
    1  some cluster failed (its error is printed, the others still run); 3 when an apply
       was partial (PartialApply), which outranks a failure of another cluster

An interrupt stops the fleet. Each cluster's error is printed as the single exit path prints
one (``cli.main``). The arguments both commands declare alike are here too.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from kgitops.errors import KgitopsError, printable, scrub_secrets

#: An interrupted run (Ctrl-C, SIGTERM): the fleet stops there.
INTERRUPTED = 130


def add_directory_argument(parser: argparse.ArgumentParser, help: str, nargs: str = "?") -> None:
    """The ``DIR`` positional, ``args.directory``, of the commands that take cluster folders
    or folders of them; an optional one (``nargs="?"``) stands for ``topics``."""
    if nargs == "?":
        parser.add_argument("directory", nargs=nargs, default="topics", metavar="DIR", help=help)
    else:
        parser.add_argument("directory", nargs=nargs, metavar="DIR", help=help)


def add_fleet_argument(parser: argparse.ArgumentParser, verb: str, nargs: str) -> None:
    """The ``DIR`` positional of plan and apply: cluster folders, or folders of them, each
    cluster run in turn (``run_fleet``); ``verb`` is what is done to each."""
    add_directory_argument(
        parser,
        f"the cluster folder (topics/<cluster>) to {verb}; several, or a folder of cluster "
        f"folders (topics/), {verb} each cluster in turn with one exit code",
        nargs=nargs,
    )


#: What apply's help adds to a plan choice: a saved plan is applied only with the choices it
#: was made with (``commands._review``).
SAVED_PLAN_NOTE = "; with --plan: needed to apply a plan made with it"


def add_retention_drop(parser: argparse.ArgumentParser, note: str = "") -> None:
    """``--allow-retention-drop``, ``args.allow_retention_drop`` (``plan_options``)."""
    parser.add_argument(
        "--allow-retention-drop",
        action="store_true",
        help="cut retention.ms in one apply instead of retentionDropStep steps across applies"
        + note,
    )


def add_balance(parser: argparse.ArgumentParser, note: str = "") -> None:
    """``--rebalance`` or ``--leaders``, ``args.rebalance`` / ``args.leaders``
    (``plan_options``): the balance goals plan moves towards."""
    balance = parser.add_mutually_exclusive_group()
    balance.add_argument(
        "--rebalance",
        action="store_true",
        help="also move replicas and leaders towards the balance goals: each topic spread "
        "evenly, bytes per broker within 10%% of the mean, leaders even (moves data)" + note,
    )
    balance.add_argument(
        "--leaders",
        action="store_true",
        help="only even out preferred leaders: reorder replicas and elect, moving no bytes" + note,
    )


def add_take_over_owner(parser: argparse.ArgumentParser) -> None:
    """``--take-over-owner``, ``args.take_over_owner`` (``plan_directory``, ``claim``)."""
    parser.add_argument(
        "--take-over-owner",
        action="store_true",
        help="this folder's owns.owner may be recorded on the cluster from another folder "
        "(it was moved); its apply replaces that record (docs/ownership.md)",
    )


def cluster_folders(paths: Sequence[str]) -> list[str]:
    """Each path as the cluster folders it stands for: itself when it has a cluster.yaml (or
    is no folder: its own error says so), else every cluster folder below it; each once."""
    from kgitops.spec.folders import cluster_dirs, is_cluster_dir

    out: list[str] = []
    seen: set[str] = set()
    for path in paths:
        found = [path] if is_cluster_dir(path) or not os.path.isdir(path) else cluster_dirs(path)
        for folder in found:
            real = os.path.realpath(folder)
            if real not in seen:
                seen.add(real)
                out.append(folder)
    return out


def run_fleet(
    args: argparse.Namespace,
    folders: Sequence[str],
    run_one: Callable[[argparse.Namespace], int],
    *,
    on_error: Callable[[str], None] | None = None,
) -> int:
    """``run_one`` on a copy of ``args`` per folder (``args.directory``), each error printed
    and the next folder run; the fleet's exit code (module doc). ``on_error(folder)`` lets
    the caller mark a failed cluster in its output (a markdown section)."""
    codes: list[int] = []
    for folder in folders:
        one = argparse.Namespace(**{**vars(args), "directory": folder})
        try:
            code = run_one(one)
        except KgitopsError as exc:
            for line in exc.lines():
                print(printable(scrub_secrets(line)), file=sys.stderr)
            code = exc.exit_code
            if on_error is not None:
                on_error(folder)
        codes.append(code)
        if code == INTERRUPTED:
            break
    return fleet_code(codes)


def fleet_code(codes: Sequence[int]) -> int:
    """One exit code for the clusters' codes: a failure's, else 2 for changes, else 0."""
    failed = [c for c in codes if c not in (0, 2)]
    if failed:
        return max(failed)  # 130 interrupted > 3 partial > 1 failed
    return 2 if 2 in codes else 0
