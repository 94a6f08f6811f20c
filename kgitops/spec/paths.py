"""Paths written in cluster.yaml: relative to the cluster folder, and inside it.

A cluster folder comes from a pull request, so a path in it is hostile until checked. The rule
(issue 12's containment rule): a path is relative, and once every symlink on the way is
followed it still lies in the cluster folder. So, for the folder ``topics/tls``::

    certs/ca.pem                       -> topics/tls/certs/ca.pem, whatever the working folder
    ../../etc/ssl/ca.pem               refused: leads outside the cluster folder
    /etc/ssl/ca.pem                    refused: an absolute path
    certs/ca.pem, certs -> /etc/ssl    refused: leads outside through a symlink

The file need not exist for the rule to hold (validation runs before certificates are
written in CI); whoever opens it reports a missing one.
"""

from __future__ import annotations

import os
import re

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _inside(root: str, target: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def path_problem(directory: str, path: str) -> str | None:
    """Why ``path``, written in cluster.yaml of the folder ``directory``, may not be used;
    None when it may.

    >>> path_problem("topics/tls", "../x")
    "'../x' leads outside the cluster folder"
    """
    if not path or "\x00" in path:
        return "an empty path or one with a NUL character"
    if os.path.isabs(path):
        return f"{path!r} is an absolute path; give a path relative to the cluster folder"
    if _URI.match(path):
        return f"{path!r} is a URI; give a path relative to the cluster folder"
    joined = os.path.join(directory, path)
    if not _inside(os.path.abspath(directory), os.path.abspath(joined)):
        return f"{path!r} leads outside the cluster folder"
    if not _inside(os.path.realpath(directory), os.path.realpath(joined)):
        return f"{path!r} leads outside the cluster folder through a symlink"
    return None


def in_folder(directory: str, path: str) -> str:
    """``path`` joined to the cluster folder, as a user reads it (``topics/tls/certs/ca.pem``
    when the folder was given as ``topics/tls``). Check ``path_problem`` first."""
    return os.path.normpath(os.path.join(directory, path))
