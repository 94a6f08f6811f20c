"""``plan --base REF``: the cluster.yaml a git ref holds, read with ``git show REF:path``.

The old file is only parsed (``cluster_from_text``): no path it names is read and nothing it
names is contacted. A ref that is not a commit is an error; a cluster.yaml the ref does not
have (a new cluster folder) is ``None``, which makes every connection setting a change.
"""

from __future__ import annotations

import os
import re
import subprocess

from kgitops.errors import PlanError
from kgitops.model import ClusterSpec

MAX_BYTES = 1_000_000
"""A cluster.yaml larger than this at the base ref is not parsed: every setting counts as new."""

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,254}$")


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=60, env=env, check=False
        )
    except FileNotFoundError:
        raise PlanError("--base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise PlanError(f"--base: git {args[0]} did not finish in 60 s") from None


def cluster_at(ref: str, directory: str) -> ClusterSpec | None:
    """The ClusterSpec of ``directory``/cluster.yaml as commit ``ref`` has it (built as if it
    lived in ``directory``), or None when ``ref`` has no such file or it does not validate."""
    from kgitops.spec.load import cluster_from_text

    if not _REF.match(ref) or ".." in ref:
        raise PlanError(f"--base {ref!r}: not a git ref (a branch, tag or commit)")
    folder = os.path.realpath(directory)
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise PlanError(f"--base: {directory} is not inside a git repository")
    root = top.stdout.decode("utf-8", "replace").strip()
    commit = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root
    )
    if commit.returncode != 0:
        raise PlanError(f"--base {ref}: no such commit in {root} (fetch it first)")
    sha = commit.stdout.decode().strip()
    rel = os.path.relpath(os.path.join(folder, "cluster.yaml"), os.path.realpath(root))
    if rel.startswith(".."):
        raise PlanError(f"--base: {directory} is outside the git repository {root}")
    shown = _git(["cat-file", "blob", f"{sha}:{rel.replace(os.sep, '/')}"], root)
    if shown.returncode != 0 or len(shown.stdout) > MAX_BYTES:
        return None
    try:
        text = shown.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return cluster_from_text(text, f"{ref}:{rel}", directory)
