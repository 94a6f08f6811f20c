"""A folder's owner identity, and the owner records plan and apply read and write
(kgitops/plan/owners.py; docs/ownership.md "The owner record on the cluster").

The owner of a folder with ``owns:`` is ``owns.owner`` when cluster.yaml names one, else
where the folder lives: its repository's ``origin`` remote without scheme, user, password,
port or ``.git`` (``git@github.com:acme/b.git`` and ``https://github.com/acme/b`` are both
``github.com/acme/b``, so a laptop and CI are one owner) and the folder's path in the
checkout: ``github.com/acme/b topics/b``. A checkout without an ``origin`` remote stands
for itself by its absolute path; a folder outside any checkout by its own absolute path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping

from kgitops.cluster.port import ClusterAdmin, refused
from kgitops.errors import ClusterAuthError, ClusterError, SpecError, printable
from kgitops.gitrepo import checkout_root, run_git
from kgitops.model import OWNER_TOPIC, ClusterSpec
from kgitops.plan.owners import OwnerRecord, conflicts, same_claim

_SCP = re.compile(r"^(?:[^@/:]+@)?([^/:]+):(?!//)(.+)$")  # git@github.com:acme/b.git


def normalized_remote(url: str) -> str:
    """``host/path`` of a remote URL, lower-case host, without scheme, user, password, port
    and a trailing ``.git`` (never a credential: ``https://x:TOKEN@host/a`` is ``host/a``);
    a local path stays a path."""
    url = url.strip()
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme.lower() == "file":
            return _trimmed(rest)
        hostport, _, path = rest.partition("/")
        host = hostport.rpartition("@")[2]
        bracket = host.startswith("[")  # [::1]:22
        host = host.partition("]")[0] + "]" if bracket else host.partition(":")[0]
        return f"{host.lower()}/{_trimmed(path)}".rstrip("/")
    m = _SCP.match(url)
    if m and not url.startswith(("/", ".")):
        return f"{m.group(1).lower()}/{_trimmed(m.group(2))}".rstrip("/")
    return _trimmed(url)


def _trimmed(path: str) -> str:
    path = path.rstrip("/")
    return path[:-4] if path.endswith(".git") else path


def source_of(directory: str) -> str:
    """Where the folder lives, as the owner record says: ``REPOSITORY FOLDER`` (see the
    module doc)."""
    folder = os.path.realpath(directory)
    root = checkout_root(folder)
    if root is None:
        return folder
    try:
        got = run_git(root, ["config", "--get", "remote.origin.url"], timeout=30)
        url = got.stdout.decode("utf-8", "replace").strip() if got.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        url = ""
    repository = normalized_remote(url) if url else root
    inner = os.path.relpath(folder, root).replace(os.sep, "/")
    return f"{repository} {inner}"


def owner_of(cluster: ClusterSpec) -> tuple[str, str]:
    """(the owner the folder's record is kept under, where it is written from)."""
    source = source_of(cluster.directory)
    return (cluster.owns.owner or source), source


def keeps_record(cluster: ClusterSpec) -> bool:
    """Only a folder with ``owns:`` reads and keeps an owner record (one without it is the
    one-folder setting: it owns everything and asks no other owner)."""
    return cluster.owns.declared


def check_records(cluster: ClusterSpec, records: Mapping[str, OwnerRecord]) -> None:
    """SpecError, one line per other owner whose record overlaps this folder's ``owns``."""
    me, _ = owner_of(cluster)
    found = conflicts(cluster, me, records)
    if found:
        raise SpecError(found)


def claim(cluster: ClusterSpec, admin: ClusterAdmin, *, write: bool) -> None:
    """Apply's part: refuse (SpecError, nothing changed) when another owner's record
    overlaps the folder's ``owns``; with ``write``, record the claim when the cluster's
    record of this owner does not already say it, and say so on stderr."""
    if not keeps_record(cluster):
        return
    records = admin.read_owners()
    check_records(cluster, records)
    if not write:
        return
    me, source = owner_of(cluster)
    mine = OwnerRecord(cluster.owns, source)
    if same_claim(records.get(me), mine):
        return
    try:
        admin.record_owners({me: mine})
    except ClusterError as exc:
        advice = (
            f"; grant the principal Write on topic {OWNER_TOPIC} (and Create, to make it)"
            if refused(exc)
            else ""
        )
        raise (ClusterAuthError if advice else ClusterError)(
            f"cannot record the owner {json.dumps(me)} in topic {OWNER_TOPIC} ({exc}){advice}; "
            "nothing was changed: kgitops records what a folder owns before it changes the "
            "cluster"
        ) from None
    print(
        printable(f"recorded what {json.dumps(me)} owns in topic {OWNER_TOPIC}"),
        file=sys.stderr,
    )
