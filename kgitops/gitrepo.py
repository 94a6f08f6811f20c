"""Every git command kgitops runs goes through here: on the checkout kgitops found itself.

A cluster folder is a pull request's data. Git, started in a folder, first asks whether the
folder *is* a git directory (``HEAD``, ``objects/``, ``refs/``): a pull request that commits
those names plus a ``config`` under ``topics/prod/`` would have git read its config (a
``core.fsmonitor`` command runs at once), its ``refs/replace`` (the base ``cluster.yaml``
made to equal the new one) and its index. So git never starts from such a folder:

* the checkout's root is found once, by walking up from the cluster folder to the nearest
  folder holding a ``.git`` (a name git never lets a commit carry), see ``checkout_root``;
* git runs with that root's ``.git`` as ``--git-dir`` and the root as ``--work-tree``, with
  ``GIT_CEILING_DIRECTORIES`` above it, ``GIT_NO_REPLACE_OBJECTS``, no system or global
  config (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no inherited ``GIT_*``
  variable, and ``-c safe.bareRepository=explicit -c core.fsmonitor=false
  -c core.hooksPath=/dev/null``; never prompting, taking no optional lock, in English::

      root = checkout_root("pr/topics/prod")          # "/home/runner/work/x/x/pr"
      run_git(root, ["cat-file", "blob", f"{sha}:topics/prod/cluster.yaml"])

Validation refuses git-directory-shaped content in cluster and include folders
(``git_dir_problem``), so such a folder is an error at its path, not a repository.
"""

from __future__ import annotations

import os
import subprocess

GIT_DIR_NAMES = ("HEAD", "objects", "refs")
"""What makes git take a folder for a git directory (all three)."""

_OPTIONS = (
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "--no-replace-objects",
)


def checkout_root(directory: str) -> str | None:
    """The nearest folder at or above ``directory`` (symlinks followed) that holds a ``.git``
    (the folder of a clone, or the gitfile of a worktree); None when there is none. A folder
    shaped like a git directory (a pull request's ``HEAD``/``objects``/``refs``) does not
    count: only ``.git`` does, and git refuses to commit a path named ``.git``."""
    here = os.path.realpath(directory)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def git_env() -> dict[str, str]:
    """The environment git runs with: this process's, without any ``GIT_*`` variable, plus
    the settings that keep git to the repository kgitops named."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",
        LANGUAGE="C",
    )
    return env


def git_command(root: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argument list and environment of ``git ARGS`` on the checkout at ``root``."""
    root = os.path.realpath(root)
    env = git_env()
    env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(root)
    argv = [
        "git",
        f"--git-dir={os.path.join(root, '.git')}",
        f"--work-tree={root}",
        *_OPTIONS,
        *args,
    ]
    return argv, env


def run_git(
    root: str, args: list[str], *, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` on the checkout at ``root`` (see the module doc), from ``root``, output
    captured as bytes. OSError (FileNotFoundError: no git) and TimeoutExpired as subprocess
    raises them."""
    argv, env = git_command(root, args)
    return subprocess.run(
        argv,
        cwd=os.path.realpath(root),
        capture_output=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def git_dir_problem(folder: str, *, own_checkout: bool = False) -> str | None:
    """Why ``folder`` (in a cluster or include folder) is not plain data: it holds a ``.git``
    entry (unless ``own_checkout``: the folder is the top of the checkout kgitops runs git
    on), or ``HEAD``, ``objects/`` and ``refs/`` (a folder git would take for a repository),
    or ``HEAD`` with a ``commondir`` or ``gitdir`` file (a linked worktree's git directory,
    whose objects and refs live where it points); None when it is neither."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return None
    if ".git" in names and not own_checkout:
        return "a .git entry: a cluster folder is data, never a git repository"
    if all(n in names for n in GIT_DIR_NAMES):
        return (
            "HEAD, objects/ and refs/ make this folder a git directory: a cluster folder is "
            "data, never a git repository"
        )
    linked = sorted(n for n in ("commondir", "gitdir") if n in names)
    if "HEAD" in names and linked:
        # a worktree's git directory: HEAD here, objects/ and refs/ where commondir points
        return (
            f"HEAD and {linked[0]} make this folder a git directory (its objects and refs "
            "elsewhere): a cluster folder is data, never a git repository"
        )
    return None
