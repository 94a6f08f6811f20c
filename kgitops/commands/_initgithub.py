"""``kgitops init DIR --github OWNER/REPO@SHA``: the plan and apply workflows for one folder.

The workflows are kgitops' own ``.github/workflows/plan.yml`` and ``apply.yml`` (shipped as
``kgitops/templates/github/``, kept identical by a test), made to run the pinned kgitops
instead of the base branch's checkout and to know one cluster folder::

    uses: ./base                             -> uses: acme/kgitops@<sha>
    install: ./base                          -> (no line: the action installs its own code,
                                                 the very commit ``uses:`` pins)
    pip install --quiet ./base (or .)        -> pip install --quiet 'kgitops @ git+...@<sha>'
    kgitops github clusters-step topics      -> kgitops github clusters-step <DIR's parent>
    topics/demo=demo ... (the map)           -> <DIR>=<name>

Every other line (the trust rules: the pull request as data, pinned actions, least
permissions, named secrets) is kept as shipped. A substitution that finds nothing is an
error, so a change to the shipped workflows cannot silently drop one.
"""

from __future__ import annotations

import os
import re

from kgitops.errors import KgitopsError

WORKFLOWS = {"plan.yml": "kgitops-plan.yml", "apply.yml": "kgitops-apply.yml"}
"""Shipped workflow -> the file written in .github/workflows/."""

_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})@([0-9a-f]{40})")
_FOLDER = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+")
_MAP = re.compile(r"^( *)topics/[\w.-]+=[\w.-]+\n(?:\1topics/[\w.-]+=[\w.-]+\n)*")


def check_pin(pin: str) -> tuple[str, str]:
    """(the action, the pip requirement) for ``OWNER/REPO@SHA``; KgitopsError otherwise."""
    match = _PIN.fullmatch(pin)
    if match is None or match.group(2) in (".", ".."):
        raise KgitopsError(
            f"--github {pin!r}: give the kgitops the workflows run as OWNER/REPO@SHA, a full "
            "40-digit commit (e.g. acme/kgitops@0123...): the job holds cluster credentials"
        )
    owner, repo, sha = match.groups()
    return f"{owner}/{repo}@{sha}", f"kgitops @ git+https://github.com/{owner}/{repo}@{sha}"


def in_checkout(directory: str) -> tuple[str, str]:
    """(the top of the git checkout the current folder is in, ``directory`` as a path from
    it): the workflows live at that top and name the folder from there. ``directory`` is
    resolved (relative to the current folder, symlinks followed, as git sees the files);
    KgitopsError when there is no checkout or ``directory`` is outside it (or inside a
    checkout within it), or cannot be named in a workflow (``check_folder``)."""
    from kgitops.gitrepo import checkout_root

    top = checkout_root(".")
    if top is None:
        raise KgitopsError(
            "--github: the current folder is not in a git checkout: run init --github inside "
            "the repository the workflows are for"
        )
    if checkout_root(directory) != top:
        raise KgitopsError(
            f"--github: {directory!r} is outside the git checkout {top}: the workflows can "
            "only name a folder of their own repository"
        )
    return top, check_folder(os.path.relpath(os.path.realpath(directory), top))


def check_folder(directory: str) -> str:
    """``directory`` (a path from the checkout's top) as the workflows name it: at least two
    parts, of letters, digits, ``.``, ``_`` and ``-`` (it lands in the workflows' map,
    ``ENVIRONMENTS``, as ``DIR=name``)."""
    shown = directory.replace("\\", "/").strip("/")
    parts = shown.split("/")
    if not _FOLDER.fullmatch(shown) or any(p in (".", "..") for p in parts):
        raise KgitopsError(
            f"--github: {shown!r} cannot be named in a workflow: the cluster folder, as a path "
            "from the repository's top, needs a parent folder (e.g. topics/dev) and only "
            "letters, digits, '.', '_', '-'"
        )
    return shown


def _swap(text: str, pattern: str, new: str, where: str) -> str:
    """``re.sub(pattern, new, text, flags=re.M)`` that must replace at least once (``new``
    holds no backslash but ``\\g<1>``: pins and folders are checked)."""
    done, count = re.subn(pattern, new, text, flags=re.M)
    if count == 0:
        raise KgitopsError(f"internal error: the shipped {where} has no match for {pattern!r}")
    return done


def workflow(shipped: str, text: str, folder: str, name: str, pin: str) -> str:
    """The shipped workflow ``text`` for ``folder`` (environment ``name``) and ``pin``."""
    action, requirement = check_pin(pin)
    parent = folder.rsplit("/", 1)[0]
    # \g<1>: a folder starting with a digit must not read as a group number (\12...)
    text = _swap(text, _MAP.pattern, rf"\g<1>{folder}={name}\n", shipped)  # this folder only
    text = _swap(text, r"clusters-step topics\b", f"clusters-step {parent}", shipped)
    text = _swap(text, r"^( *- name: Install kgitops) \(.*\)$", r"\1 (pinned)", shipped)
    text = _swap(
        text,
        r"python -m pip install --quiet (\./base|\.)$",
        f"python -m pip install --quiet '{requirement}'",
        shipped,
    )
    if shipped == "plan.yml":
        text = _swap(text, r"uses: \./base$", f"uses: {action}", shipped)
        # an empty `install` is the action's own code: the commit `uses:` pins, one argument
        # to pip (action.yml); the requirement would be the same code, written twice
        text = _swap(text, r"^ *install: \./base\n", "", shipped)
    return text


def files_for(folder: str, name: str, pin: str) -> dict[str, bytes]:
    """The workflow files ``init --github`` writes, by their path from the repository's top."""
    from importlib import resources

    package = resources.files("kgitops").joinpath("templates", "github")
    out = {}
    for shipped, written in WORKFLOWS.items():
        text = package.joinpath(shipped).read_text(encoding="utf-8")
        out[f".github/workflows/{written}"] = workflow(shipped, text, folder, name, pin).encode()
    return out
