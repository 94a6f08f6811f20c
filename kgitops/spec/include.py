"""cluster.yaml ``include:``: folders of topic specs shared by several clusters.

``include: [../shared/payments]`` reads every Topic document of that folder (recursively,
as a cluster folder is read) into this cluster, as if its files were here; their positions
stay theirs (``topics/shared/payments/orders.yaml:4:13``). A path is relative to the cluster
folder and must stay inside the repository (the nearest folder above with a ``.git``; without
one, the cluster folder's parent) once every symlink is followed; an included folder holds
Topic documents only, and no cluster.yaml. A topic defined in two places (two includes, or an
include and the cluster folder) is the usual "defined twice" error, naming both.
"""

from __future__ import annotations

import os

from kgitops.errors import Diagnostic
from kgitops.files import inside
from kgitops.gitrepo import checkout_root
from kgitops.names import CLUSTER_FILES
from kgitops.spec.folders import spec_files  # the one way a folder's files are listed
from kgitops.spec.yamlload import Document, load_file


def repository_root(directory: str) -> str:
    """The nearest folder at or above ``directory`` with a ``.git``; else its parent."""
    root = checkout_root(directory)
    return os.path.dirname(os.path.realpath(directory)) if root is None else root


def include_problem(directory: str, path: object) -> str | None:
    """Why ``path`` (an ``include:`` entry of the cluster folder ``directory``) may not be
    included; None when it may."""
    if not isinstance(path, str) or not path.strip():
        return "an include is a folder path"
    if os.path.isabs(path) or "\x00" in path or "://" in path:
        return f"{path!r}: give a folder relative to the cluster folder"
    if path.startswith("~"):
        return f"{path!r}: give a folder relative to the cluster folder ('~' is not expanded)"
    target = os.path.realpath(os.path.join(directory, path))
    if not inside(repository_root(directory), target):
        return f"{path!r} leads outside the repository"
    if not os.path.isdir(target):
        return f"{path!r} is not a folder"
    if inside(os.path.realpath(directory), target):
        return f"{path!r} is inside the cluster folder, which is read anyway"
    if any(os.path.isfile(os.path.join(target, f)) for f in CLUSTER_FILES):
        return f"{path!r} is a cluster folder; include a folder of topic specs"
    return None


def included_topics(directory: str, cluster: Document, diags: list[Diagnostic]) -> list[Document]:
    """The Topic documents of every ``include:`` folder; other kinds are errors."""
    raw = cluster.value.get("include")
    out: list[Document] = []
    seen: dict[str, int] = {}  # real path -> its entry
    for i, path in enumerate(raw if isinstance(raw, list) else []):
        problem = include_problem(directory, path)
        folder = os.path.normpath(os.path.join(directory, str(path)))
        root = os.path.realpath(folder)
        if problem is None:
            problem = _overlap(root, str(path), seen, raw, cluster)
        if problem is not None:
            diags.append(Diagnostic(cluster.mark(f"include.{i}"), "error", problem))
            continue
        seen[root] = i
        for filename in spec_files(folder, diags):
            documents, problems = load_file(filename, root=root)
            diags.extend(problems)
            for doc in documents:
                kind = doc.value.get("kind") if isinstance(doc.value, dict) else None
                if kind == "Topic":
                    out.append(doc)
                else:
                    diags.append(
                        Diagnostic(
                            doc.mark("kind" if kind is not None else ""),
                            "error",
                            f"an included folder ({path}) holds Topic documents only, not "
                            f"{kind if isinstance(kind, str) else 'this'}",
                        )
                    )
    return out


def _overlap(
    root: str, path: str, seen: dict[str, int], raw: list[object], cluster: Document
) -> str | None:
    """Why the folder ``root`` (entry ``path``) repeats an earlier include, whose files it
    would read a second time (every topic of them "defined twice"); None when it does not."""
    for other, j in seen.items():
        where = f"{raw[j]!r} at {cluster.mark(f'include.{j}')}"
        if other == root:
            return f"{path!r} is already included ({where}); list each folder once"
        if inside(other, root) or inside(root, other):
            return f"{path!r} overlaps {where}: the files of one are read by the other"
    return None
