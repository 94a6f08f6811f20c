"""``plan --base REF``: the cluster.yaml a git ref holds, read with ``git cat-file``
(``kgitops.gitrepo``: on the checkout kgitops found, never on a pull request's config).

The old file is only parsed (``cluster_from_text``): nothing it names is contacted; its TLS
files are read from the ref as blobs only to compare their sha256 (``tls_contents``). A ref
that is not a commit is an error; a cluster.yaml the ref does not have (a new cluster
folder) is ``None``, which makes every connection setting a change.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess

from kgitops.errors import KgitopsError, PlanError
from kgitops.gitrepo import checkout_root, run_git
from kgitops.model import ClusterSpec

MAX_BYTES = 1_000_000
"""A cluster.yaml larger than this at the base ref is not parsed: every setting counts as new."""

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,254}$")


def _git(args: list[str], root: str) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` on the checkout at ``root`` (``kgitops.gitrepo.run_git``)."""
    try:
        return run_git(root, args, timeout=60)
    except FileNotFoundError:
        raise PlanError("--base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise PlanError(f"--base: git {args[0]} did not finish in 60 s") from None
    except OSError as exc:
        raise PlanError(f"--base: git could not run ({exc.strerror})") from None


def _root(directory: str) -> str:
    """The checkout holding ``directory``, found by its ``.git`` (never git started in the
    folder, which a pull request may have shaped as a git directory)."""
    root = checkout_root(directory)
    if root is None:
        raise PlanError(f"--base: {directory} is not inside a git repository")
    return root


def cluster_at(ref: str, directory: str) -> ClusterSpec | None:
    """The ClusterSpec of ``directory``/cluster.yaml (or cluster.yml) as commit ``ref`` has
    it (built as if it lived in ``directory``), or None when ``ref`` has no such file or it
    does not validate."""
    from kgitops.names import CLUSTER_FILES
    from kgitops.spec.load import cluster_from_text

    if not _REF.fullmatch(ref) or ".." in ref:
        raise PlanError(f"--base {ref!r}: not a git ref (a branch, tag or commit)")
    folder = os.path.realpath(directory)
    root = _root(directory)
    commit = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root
    )
    if commit.returncode != 0:
        raise PlanError(f"--base {ref}: no such commit in {root} (fetch it first)")
    sha = commit.stdout.decode().strip()
    if os.path.relpath(folder, root).startswith(".."):
        raise PlanError(f"--base: {directory} is outside the git repository {root}")
    for name in CLUSTER_FILES:  # cluster.yml is a cluster file too
        rel = os.path.relpath(os.path.join(folder, name), root)
        shown = _git(["cat-file", "blob", f"{sha}:{rel.replace(os.sep, '/')}"], root)
        if shown.returncode == 0:
            break
    else:
        return None
    if len(shown.stdout) > MAX_BYTES:
        return None
    try:
        text = shown.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return cluster_from_text(text, f"{ref}:{rel}", directory)


MISSING = "(no such file)"


def token_command_files(spec: ClusterSpec, root: str) -> list[str]:
    """The files inside the checkout at ``root`` that ``security.sasl.tokenCommand`` runs or
    names: its program (found on PATH as the command will find it, or its absolute path)
    and every absolute-path argument, as paths relative to ``root``. A script a pull request
    can edit is the command's content, not only its name."""
    import shutil

    sasl = spec.security.sasl
    if sasl is None or not sasl.token_command:
        return []
    program, *rest = sasl.token_command
    found = shutil.which(program) if os.sep not in program else program
    candidates = [found] if found else []
    candidates += [a for a in rest if os.path.isabs(a)]
    out = []
    for path in candidates:
        rel = os.path.relpath(os.path.realpath(path), root)
        if not rel.startswith("..") and rel not in out:
            out.append(rel)
    return out


def connection_contents(spec: ClusterSpec | None, ref: str | None = None) -> dict[str, str]:
    """What each file that decides the connection holds, as ``sha256 <hex>`` (or ``(no such
    file)``): each TLS file of ``spec`` (caFile, certFile, keyFile), and (key
    ``tokenCommand``) each file inside the repository that tokenCommand runs or names
    (``path sha256 <hex>``, joined with ``; ``); at commit ``ref`` when given (``git
    cat-file``), else in the working tree. A pull request that keeps the path but swaps the
    bytes (another CA, another token script) changes this; a path outside the repository
    (which a pull request cannot change) is left out."""
    from kgitops.files import read_bytes
    from kgitops.plan.connection import TLS_FIELDS

    if spec is None:
        return {}
    ssl = spec.security.ssl
    paths: dict[str, str | None] = (
        {"caFile": ssl.ca_file, "certFile": ssl.cert_file, "keyFile": ssl.key_file}
        if ssl is not None
        else {}
    )
    sasl = spec.security.sasl
    if ssl is None and (sasl is None or not sasl.token_command):
        return {}
    folder = os.path.realpath(spec.directory)
    root = _root(spec.directory)
    sha = None
    if ref is not None:
        commit = _git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root
        )
        if commit.returncode != 0:
            raise PlanError(f"--base {ref}: no such commit in {root} (fetch it first)")
        sha = commit.stdout.decode().strip()

    def digest(rel: str, inside: str) -> str:
        data: bytes | None
        if sha is not None:
            shown = _git(["cat-file", "blob", f"{sha}:{rel.replace(os.sep, '/')}"], root)
            data = shown.stdout if shown.returncode == 0 else None
        else:
            try:
                data = read_bytes(os.path.join(root, rel), root=inside)
            except (OSError, KgitopsError):
                data = None
        return MISSING if data is None else "sha256 " + hashlib.sha256(data).hexdigest()

    out: dict[str, str] = {}
    for field in TLS_FIELDS:
        path = paths.get(field)
        if path is None:
            continue
        full = os.path.normpath(os.path.join(folder, path))
        rel = os.path.relpath(full, root)
        if rel.startswith(".."):
            continue
        out[field] = digest(rel, folder)
    token_files = token_command_files(spec, root)
    if token_files:
        out["tokenCommand"] = "; ".join(f"{rel} {digest(rel, root)}" for rel in token_files)
    return out
