"""The files of a cluster folder: which folders are cluster folders, and which YAML files
belong to one (``load`` reads them; ``include`` lists an included folder the same way).

Every ``*.yaml`` / ``*.yml`` below a cluster folder, recursively; hidden files and folders,
and sub-folders that have their own ``cluster.yaml`` (another cluster), are skipped.
"""

from __future__ import annotations

import os

from kgitops.errors import Diagnostic, Mark
from kgitops.gitrepo import checkout_root, git_dir_problem
from kgitops.names import CLUSTER_FILES

YAML_SUFFIXES = (".yaml", ".yml")


def is_cluster_dir(directory: str) -> bool:
    """A cluster folder has a cluster.yaml (or cluster.yml)."""
    return any(os.path.isfile(os.path.join(directory, f)) for f in CLUSTER_FILES)


def cluster_dirs(directory: str) -> list[str]:
    """The cluster folders ``validate DIR`` checks: every folder at or below DIR that has a
    cluster.yaml (``topics/`` -> ``topics/dev``, ``topics/eu/prod`` ...), or DIR itself when
    there is none (which then lacks its cluster.yaml, and says so)."""
    if not os.path.isdir(directory):
        return [directory]
    found = []
    for root, dirs, _ in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if is_cluster_dir(root):
            found.append(os.path.normpath(root) if root != directory else directory)
    return found or [directory]


def _is_top(directory: str) -> bool:
    """Whether ``directory`` is the top of a checkout (its ``.git`` is the checkout's own, the
    one ``kgitops.gitrepo`` runs git on): no folder above it holds a ``.git``."""
    return checkout_root(os.path.dirname(os.path.realpath(directory))) is None


def spec_files(directory: str, problems: list[Diagnostic] | None = None) -> list[str]:
    """Every YAML file of a cluster folder, sorted, as paths joined to ``directory``.
    A sub-folder that cannot be read is added to ``problems`` (when given), and so is a
    folder shaped like a git directory, or holding a ``.git`` (``kgitops.gitrepo``): its files
    are not read. A ``.git`` counts only at the top of a checkout that is itself the folder."""

    def unreadable(exc: OSError) -> None:
        if problems is not None:
            where = os.path.normpath(exc.filename or directory)
            problems.append(
                Diagnostic(Mark(where), "error", f"cannot read the folder: {exc.strerror}")
            )

    out: list[str] = []
    for root, dirs, files in os.walk(directory, onerror=unreadable):
        problem = git_dir_problem(root, own_checkout=root == directory and _is_top(directory))
        if problem is not None:
            if problems is not None:
                problems.append(Diagnostic(Mark(os.path.normpath(root)), "error", problem))
            dirs[:] = []
            continue
        keep = []
        for d in sorted(dirs):
            if d.startswith("."):
                continue
            if is_cluster_dir(os.path.join(root, d)):
                continue  # another cluster's folder, nested
            keep.append(d)
        dirs[:] = keep
        for f in files:
            if f.startswith(".") or not f.endswith(YAML_SUFFIXES):
                continue
            out.append(os.path.normpath(os.path.join(root, f)))
    return sorted(out)
