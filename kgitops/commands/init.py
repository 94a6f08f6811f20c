"""``kgitops init DIR [--name NAME] [--github OWNER/REPO@SHA]``: a new cluster folder that
validates and plans at once (``--github``: and the plan and apply workflows for it,
``commands._initgithub``).

::

    $ kgitops init topics/dev
    created topics/dev: cluster.yaml, example.yaml, .gitignore, schemas/ (5 JSON schemas)
    next: kgitops validate topics/dev && kgitops plan topics/dev

The folder holds a ``cluster.yaml`` for a simulated cluster (three brokers in three racks,
its state in ``.state/``: plan and apply work with no broker), one example topic, a
``.gitignore`` for what kgitops writes locally (``.state/``, ``.kgitops/``) and a copy of the
spec schemas this kgitops ships, which the files' ``# yaml-language-server: $schema=...``
lines name, so an editor completes and checks them. Nothing is overwritten: when any file it
would write exists (or is a symlink), or the folder is a symlink or not a folder, it says so
in one line and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import re

from kgitops.errors import KgitopsError, printable

NAME = "init"
HELP = "create a cluster folder: cluster.yaml, an example topic, .gitignore, editor schemas"

#: The spec schemas copied into ``schemas/`` (what a spec file's modeline can name).
SCHEMAS = ("acl.json", "cluster.json", "quota.json", "topic.json", "user.json")
CLUSTER_NAME = re.compile(r"[A-Za-z0-9._-]+")  # cluster.json's pattern for ``name``

CLUSTER_YAML = """\
# yaml-language-server: $schema=schemas/cluster.json
# The cluster this folder manages. It starts as a simulated cluster (a file-backed model of
# Kafka, kept in .state/, no broker needed), so plan and apply work at once:
#   kgitops plan {dir} ; kgitops apply {dir} --yes
# For a real cluster, replace the simulated: block with bootstrapServers (and security:),
# see docs/real-clusters.md; every field is in docs/specs.md.
apiVersion: kgitops/v1
kind: Cluster
name: {name}
simulated:
  stateFile: .state/{name}.json
  brokers:
    - {{id: 0, rack: az1}}
    - {{id: 1, rack: az2}}
    - {{id: 2, rack: az3}}
# bootstrapServers: [kafka-1.example.com:9092, kafka-2.example.com:9092]
defaults:
  replicationFactor: 3
reassignment:
  throttleBytesPerSec: 50000000  # 50 MB/s per broker while replicas move
  maxConcurrentMoves: 4
unmanagedTopics: warn
"""

EXAMPLE_YAML = """\
# yaml-language-server: $schema=schemas/topic.json
# One topic; add more files here (or more documents after a --- line). Fields: docs/specs.md.
apiVersion: kgitops/v1
kind: Topic
name: example.events
description: An example topic; rename it or delete this file.
partitions: 6
placement: rack-aware  # one replica per rack; replicationFactor comes from cluster.yaml
config:
  min.insync.replicas: 2
  retention.ms: 7d
"""

GITIGNORE = """\
# written by kgitops on this machine, never committed
/.state/
/.kgitops/
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="the cluster folder to create")
    parser.add_argument(
        "--name",
        help="the cluster's name (default: the folder's name); letters, digits, '.', '_', '-'",
    )
    parser.add_argument(
        "--github",
        metavar="OWNER/REPO@SHA",
        help="also write .github/workflows/kgitops-plan.yml and kgitops-apply.yml (at the top "
        "of the git checkout DIR is in) for DIR, running kgitops pinned at this commit",
    )


def files_for(directory: str, name: str) -> dict[str, bytes]:
    """Each file ``init`` writes, by its path inside the folder."""
    from importlib import resources

    shown = directory.replace("\\", "/").rstrip("/") or "."
    if not shown.isprintable():  # it goes into a YAML comment: one line, nothing hidden
        shown = "DIR"
    files = {
        "cluster.yaml": CLUSTER_YAML.format(name=name, dir=shown).encode(),
        "example.yaml": EXAMPLE_YAML.encode(),
        ".gitignore": GITIGNORE.encode(),
    }
    package = resources.files("kgitops").joinpath("schemas")
    for schema in SCHEMAS:
        files[f"schemas/{schema}"] = package.joinpath(schema).read_bytes()
    return files


def _not_a_folder(path: str) -> str | None:
    """The first folder on the way to ``path`` (``path`` not included) that exists as
    something else than a folder, or None."""
    parts = os.path.normpath(path).split(os.sep)[:-1]
    for at in (os.sep.join(parts[: i + 1]) or os.sep for i in range(len(parts))):
        if at not in (".", "..") and os.path.lexists(at) and not os.path.isdir(at):
            return at
    return None


def _refusal(directory: str, relative: list[str]) -> str | None:
    """Why ``init`` must write nothing, or None."""
    blocked = _not_a_folder(directory)
    if blocked is not None:
        return f"{blocked} exists and is not a folder; init writes nothing"
    if os.path.islink(directory):
        return f"{directory} is a symlink; give the folder itself"
    if os.path.lexists(directory) and not os.path.isdir(directory):
        return f"{directory} exists and is not a folder"
    if not os.path.isdir(directory):
        return None
    taken = [os.path.join(directory, f) for f in ("cluster.yml", *relative)]
    taken.append(os.path.join(directory, "schemas"))
    for path in taken:
        if os.path.islink(path):
            return f"{path} is a symlink; init writes nothing through one"
    for path in taken:
        if os.path.lexists(path) and not (path.endswith("schemas") and os.path.isdir(path)):
            return f"{path} exists; init never overwrites a file (nothing was written)"
    return None


def _taken(top: str, paths: list[str]) -> str | None:
    """Why a workflow file (``paths`` from the checkout's ``top``) cannot be written: it
    exists, a folder on its way is a symlink or exists as something else, or None."""
    for path in paths:
        at = top
        for part in path.split("/"):
            at = os.path.join(at, part)
            shown = os.path.relpath(at)
            if os.path.islink(at):
                return f"{shown} is a symlink; init writes nothing through one"
            if at != os.path.join(top, path) and os.path.lexists(at) and not os.path.isdir(at):
                return f"{shown} exists and is not a folder; init writes nothing"
        if os.path.lexists(at):
            return f"{shown} exists; init never overwrites a file (nothing was written)"
    return None


def run(args: argparse.Namespace) -> int:
    from kgitops.files import write_atomic

    directory: str = args.directory
    name = args.name or os.path.basename(os.path.normpath(os.path.abspath(directory)))
    if not CLUSTER_NAME.fullmatch(name):
        raise KgitopsError(
            f"{name!r} is not a cluster name (letters, digits, '.', '_', '-'); give one with --name"
        )
    files = files_for(directory, name)
    top, workflows = ".", {}  # the checkout's top; each workflow file by its path from it
    if args.github is not None:
        from kgitops.commands import _initgithub

        _initgithub.check_pin(args.github)
        top, folder = _initgithub.in_checkout(directory)
        workflows = _initgithub.files_for(folder, name, args.github)
    problem = _refusal(directory, list(files)) or _taken(top, list(workflows))
    if problem is not None:
        raise KgitopsError(problem)
    try:
        os.makedirs(directory, exist_ok=True)
        for relative, data in files.items():
            write_atomic(
                os.path.join(directory, relative),
                data,
                root=directory,
                make_dirs=True,
                shown=os.path.join(directory, relative),
            )
        for path, data in workflows.items():
            at = os.path.join(top, path)
            write_atomic(at, data, root=top, make_dirs=True, shown=os.path.relpath(at))
    except OSError as exc:
        raise KgitopsError(f"{directory}: cannot write: {exc.strerror or exc}") from None
    print(
        printable(
            f"created {directory}: cluster.yaml, example.yaml, .gitignore, "
            f"schemas/ ({len(SCHEMAS)} JSON schemas for editors)"
        )
    )
    if workflows:
        written = ", ".join(os.path.relpath(os.path.join(top, p)) for p in workflows)
        print(
            printable(
                f"created {written} (kgitops {args.github}); next: the "
                "environments and secrets of docs/ci.md, Setting it up"
            )
        )
    print(printable(f"next: kgitops validate {directory} && kgitops plan {directory}"))
    return 0
