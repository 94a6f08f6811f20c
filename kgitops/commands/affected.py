"""``kgitops affected``: the cluster folders a change touches, for the workflows to plan.

A pull request that changes only a shared folder (one that cluster.yaml ``include:``s)
changes every cluster that includes it; one that edits a token script changes the
connection of the cluster whose ``tokenCommand`` runs it. So the plan, apply and drift
workflows do not guess from the path (``topics/<x>/...``): they ask this command::

    $ git diff -z --name-only "$BASE...$HEAD" > changed
    $ kgitops affected topics --changed-paths-file changed
    topics/prod
    topics/staging

Every cluster folder (one with a ``cluster.yaml`` or ``cluster.yml``) at or below DIR is
listed when a changed path is inside it (not inside a cluster folder nested in it), inside
a folder its cluster file includes, or is a file inside the repository its tokenCommand
runs or names. Changed paths are relative to the current folder (the repository's root, as
``git diff --name-only`` prints them), one per line or NUL-separated (``-z``); ``--all``
lists every cluster folder (the drift workflow). Output: one folder per line, sorted, as
paths relative to the current folder; ``--format json``: ``[{"dir", "name"}]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from kgitops.commands._fleet import add_directory_argument

NAME = "affected"
HELP = "list the cluster folders that changed paths touch (specs, includes, connection files)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_directory_argument(parser, "the folder of cluster folders (default: topics)")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="changed paths")
    parser.add_argument(
        "--changed-paths-file",
        metavar="FILE",
        help="a file of changed paths, one per line or NUL-separated ('-' for stdin)",
    )
    parser.add_argument("--all", action="store_true", help="every cluster folder")
    parser.add_argument("--format", choices=("lines", "json"), default="lines")


def run(args: argparse.Namespace) -> int:
    from kgitops.errors import KgitopsError
    from kgitops.plan.mdescape import visible

    changed = list(args.paths)
    if args.changed_paths_file is not None:
        changed += _read_paths(args.changed_paths_file)
    if not args.all and args.changed_paths_file is None and not changed:
        raise KgitopsError("affected needs changed paths (PATH..., --changed-paths-file) or --all")
    if not os.path.isdir(args.directory):
        raise KgitopsError(f"{visible(args.directory)}: no such folder")
    found = affected_clusters(args.directory, None if args.all else changed)
    if args.format == "json":
        rows = [{"dir": d, "name": os.path.basename(d)} for d in found]
        print(json.dumps(rows))
    else:
        for d in found:
            print(visible(d))
    return 0


def _read_paths(path: str) -> list[str]:
    from kgitops.errors import KgitopsError
    from kgitops.files import read_bytes

    try:  # a regular file under the size cap (git diff -z output holds NUL bytes)
        data = sys.stdin.buffer.read() if path == "-" else read_bytes(path)
        text = data.decode("utf-8")
    except OSError as exc:
        raise KgitopsError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise KgitopsError(f"{path}: not UTF-8 (git diff --name-only prints UTF-8)") from None
    parts = text.split("\0") if "\0" in text else text.splitlines()
    return [p for p in parts if p.strip()]


def affected_clusters(directory: str, changed: list[str] | None) -> list[str]:
    """The cluster folders at or below ``directory`` that ``changed`` (paths relative to the
    current folder) touch; every one when ``changed`` is None."""
    from kgitops.spec.folders import cluster_dirs, is_cluster_dir

    clusters = [d for d in cluster_dirs(directory) if is_cluster_dir(d)]
    if changed is None:
        return sorted(_rel(d) for d in clusters)
    paths = [os.path.normpath(os.path.abspath(p)) for p in changed]
    out = []
    for folder in clusters:
        if any(_touches(folder, clusters, p) for p in paths):
            out.append(_rel(folder))
    return sorted(out)


def _rel(folder: str) -> str:
    return os.path.relpath(os.path.abspath(folder)).replace(os.sep, "/")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _touches(folder: str, clusters: list[str], path: str) -> bool:
    """Whether the changed ``path`` (absolute) is the cluster ``folder``'s: in it (not in a
    cluster folder nested in it), in a folder it includes, or a file its tokenCommand uses."""
    own = os.path.normpath(os.path.abspath(folder))
    if _under(path, own):
        nested = [
            n
            for n in (os.path.normpath(os.path.abspath(c)) for c in clusters)
            if n != own and _under(n, own)
        ]
        return not any(_under(path, n) for n in nested)
    return any(_under(path, f) for f in _dependencies(folder))


def _dependencies(folder: str) -> list[str]:
    """The include folders (as written and with symlinks followed) and the tokenCommand
    files inside the repository of the cluster ``folder``, as absolute paths."""
    from kgitops.commands._gitbase import token_command_files
    from kgitops.errors import KgitopsError
    from kgitops.files import read_bytes
    from kgitops.gitrepo import checkout_root
    from kgitops.jsontext import decode_utf8
    from kgitops.names import CLUSTER_FILES
    from kgitops.spec.load import cluster_from_text
    from kgitops.spec.yamlload import load_file

    out: list[str] = []
    for name in CLUSTER_FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        documents, _ = load_file(path, root=folder)
        for doc in documents:
            value = doc.value if isinstance(doc.value, dict) else {}
            if value.get("kind") != "Cluster":
                continue
            for entry in value.get("include") or []:
                if isinstance(entry, str) and entry.strip() and not os.path.isabs(entry):
                    joined = os.path.join(os.path.abspath(folder), entry)
                    out += [os.path.normpath(joined), os.path.realpath(joined)]
        root = checkout_root(folder)
        try:
            spec = cluster_from_text(decode_utf8(read_bytes(path, root=folder), path), path, folder)
        except (OSError, KgitopsError):
            spec = None
        if spec is not None and root is not None:
            out += [os.path.join(root, rel) for rel in token_command_files(spec, root)]
    return out
