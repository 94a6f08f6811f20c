"""``kgitops validate [DIR] [--state FILE]``: schema and semantic checks, every problem at once.

Every cluster folder (one with a cluster.yaml) at or below DIR is validated in turn. Prints
``path:line:col: error|warning: message`` lines, sorted, then a one-line summary per folder
on stderr; exit 1 if any error. ``--format github`` prints
workflow commands instead, so CI shows each problem on its line of the pull request;
``--format json`` a list of ``{path, line, col, severity, message}``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from kgitops.commands._fleet import add_directory_argument
from kgitops.commands._options import add_format, add_state
from kgitops.errors import Diagnostic, KgitopsError, LockError, Mark, printable
from kgitops.model import Broker

NAME = "validate"
HELP = "check the topic and cluster files: schemas, Kafka's rules, every problem at once"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_directory_argument(
        parser, "a cluster folder, or a folder of cluster folders at any depth (default: topics)"
    )
    add_state(
        parser,
        "its brokers are used for the replication-factor, assignment and decommission checks",
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print errors only, no warnings or summary"
    )
    add_format(
        parser,
        ("text", "json", "github"),
        help="text (path:line:col: severity: message), json (a list of objects), or github "
        "(workflow commands: annotations on the pull request's files)",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.spec.folders import cluster_dirs
    from kgitops.spec.load import load_specs

    brokers: list[Broker] | None = None
    if args.state:
        brokers = _state_brokers(args.state)
    errors = 0
    found: list[Diagnostic] = []
    repos: dict[str, list[Diagnostic]] = {}
    for folder in cluster_dirs(args.directory):
        specs = load_specs(folder, brokers=brokers)
        diagnostics = sorted(
            [
                *specs.diagnostics,
                *_lock_problems(folder),
                *_committed_records(folder),
                *_shared_ownership(folder, specs.cluster is not None, repos),
            ]
        )
        folder_errors = sum(1 for d in diagnostics if d.is_error)
        errors += folder_errors
        shown = [d for d in diagnostics if d.is_error or not args.quiet]
        found.extend(shown)
        if args.format == "text":
            for d in shown:
                print(d)
        elif args.format == "github":
            for d in shown:
                print(_github(d))
        if not args.quiet:
            topics = len(specs.topics)
            print(
                f"{folder}: {topics} topic{'s' if topics != 1 else ''}, "
                f"{folder_errors} error(s), {len(diagnostics) - folder_errors} warning(s)",
                file=sys.stderr,
            )
    if args.format == "json":
        print(json.dumps([_json(d) for d in found], indent=2))
    return 1 if errors else 0


_POSITIONED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<message>.*)$", re.S)


def _shared_ownership(
    folder: str, has_cluster: bool, repos: dict[str, list[Diagnostic]]
) -> list[Diagnostic]:
    """Two cluster folders of the repository that point at one cluster and can own one name
    (cluster.yaml ``owns:``, kgitops/spec/owns.py): this folder's side of each such pair, at
    its path as given. ``repos`` caches each repository's findings."""
    from kgitops.spec.include import repository_root
    from kgitops.spec.load import repository_clusters
    from kgitops.spec.owns import overlaps

    if not has_cluster:
        return []
    root = repository_root(folder)
    if root not in repos:
        repos[root] = overlaps(repository_clusters(folder))
    real = os.path.realpath(folder)
    out = []
    for d in repos[root]:
        if os.path.realpath(os.path.dirname(d.mark.path)) == real:
            mark = Mark(
                os.path.join(folder, os.path.basename(d.mark.path)), d.mark.line, d.mark.col
            )
            out.append(Diagnostic(mark, d.severity, d.message))
    return out


def _lock_problems(folder: str) -> list[Diagnostic]:
    """A kgitops.lock that cannot be read (a merge conflict left in it, a bad edit) is an
    error now rather than at plan time."""
    from kgitops.spec.lock import lock_path, read_lock

    if not os.path.isdir(folder):
        return []
    try:  # a merge conflict is read_lock's positioned error, with the way out
        read_lock(folder)
    except LockError as exc:
        text = str(exc)
        found = _POSITIONED.match(text)
        if found:
            mark = Mark(found["path"], int(found["line"]), int(found["col"]))
            return [Diagnostic(mark, "error", found["message"])]
        path = lock_path(folder)
        message = text.removeprefix(f"{path}: ")
        return [Diagnostic(Mark(path), "error", message)]
    return []


def _committed_records(folder: str) -> list[Diagnostic]:
    """A file under ``.kgitops/`` that git tracks: that folder is this checkout's own record
    (the moves apply started), and a committed one would let a pull request say which moves
    apply waits for and cancels."""
    from kgitops.apply.journal import tracked_records

    if not os.path.isdir(folder):
        return []
    return [
        Diagnostic(
            Mark(path),
            "error",
            ".kgitops/ is kgitops' local record of this checkout and must not be committed "
            "(apply ignores it): git rm --cached it",
        )
        for path in tracked_records(folder)
    ]


def _json(d: Diagnostic) -> dict[str, object]:
    return {
        "path": d.mark.path,
        "line": d.mark.line,
        "col": d.mark.col,
        "severity": d.severity,
        "message": d.message,
    }


def _github(d: Diagnostic) -> str:
    """A GitHub Actions workflow command: the message shows on the file in the pull request."""

    def escape(text: str, *, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    level = "error" if d.is_error else "warning"
    return (
        f"::{level} file={escape(printable(d.mark.path), prop=True)},line={d.mark.line},"
        f"col={d.mark.col},title=kgitops validate::{escape(printable(d.message))}"
    )


def _state_brokers(path: str) -> list[Broker]:
    """The brokers of a saved state; read_state raises a KgitopsError naming the file."""
    from kgitops.cluster.snapshot import read_state

    try:
        state = read_state(path)
    except OSError as exc:  # read_state translates these itself; this is the last guard
        raise KgitopsError(f"{path}: cannot read the state file: {exc.strerror}") from None
    return list(state.brokers)
