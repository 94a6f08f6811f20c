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
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from kgitops.cluster.port import ClusterAdmin, refused
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    Diagnostic,
    KgitopsError,
    SpecError,
    printable,
)
from kgitops.gitrepo import checkout_root, run_git
from kgitops.model import OWNER_TOPIC, ClusterSpec
from kgitops.plan.action_base import Action
from kgitops.plan.owners import (
    OwnerRecord,
    conflicts,
    lost_to,
    plan_names,
    same_claim,
    shown,
    unowned_conflicts,
)

_SCP = re.compile(r"^(?:[^@/:]*@)?([^/:]+):(?!//)(.+)$")  # git@github.com:acme/b.git


def normalized_remote(url: str) -> str:
    """``host/path`` of a remote URL: lower-case host, without scheme, user, password, port,
    query, fragment and a trailing ``.git``, and lower-case on github.com (whose paths are
    not case-sensitive); never a credential (``https://x:TOKEN@host/a`` is ``host/a``). A
    local path stays a path. KgitopsError, naming no part of it, for one that still holds
    ``@``, ``?`` or ``#``: it may hide a credential kgitops cannot tell apart."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme.lower() == "file":
            got = _trimmed(parts.path)
        else:
            hostport = parts.netloc.rpartition("@")[2]  # without user and password
            bracket = hostport.startswith("[")  # [::1]:22
            host = hostport.partition("]")[0] + "]" if bracket else hostport.partition(":")[0]
            host = host.lower()
            path = _trimmed(parts.path.lstrip("/"))
            if host == "github.com":
                path = path.lower()
            got = f"{host}/{path}".rstrip("/")
    else:
        m = _SCP.match(url)
        if m and not url.startswith(("/", ".")):
            host = m.group(1).lower()
            path = _trimmed(re.split(r"[?#]", m.group(2), maxsplit=1)[0])
            if host == "github.com":
                path = path.lower()
            got = f"{host}/{path}".rstrip("/")
        else:
            got = _trimmed(url)
    if any(c in got for c in "@?#"):
        raise KgitopsError(
            "the origin remote of this folder's checkout still holds '@', '?' or '#' once "
            "scheme, user, password, query and fragment are taken out, so kgitops cannot say "
            "where the folder's owner record comes from without risking a credential in it: "
            "set the remote to a plain URL (git remote set-url origin URL)"
        )
    return got


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
    """Only a folder with ``owns:`` keeps an owner record (one without it is the one-folder
    setting: it owns everything; it still reads the records, ``check_unowned``)."""
    return cluster.owns.declared


def read_records(cluster: ClusterSpec, admin: ClusterAdmin) -> Mapping[str, OwnerRecord]:
    """Every owner record on the cluster. A folder without ``owns:`` that cannot read them
    (no right to, an adapter without them, a foreign topic of that name) goes on as before
    records existed, with a note on stderr: only a folder with ``owns:`` depends on them."""
    try:
        return admin.read_owners()
    except ClusterError as exc:
        if cluster.owns.declared:
            raise
        print(
            printable(
                f"note: {exc}; this folder has no owns:, so it goes on unchecked against "
                "what other folders own"
            ),
            file=sys.stderr,
        )
        return {}


def check_records(
    cluster: ClusterSpec, records: Mapping[str, OwnerRecord], *, take_over: bool = False
) -> None:
    """SpecError, one line per other owner whose record overlaps this folder's ``owns``, and
    when this folder's owner is recorded from another folder (unless ``take_over``)."""
    me, source = owner_of(cluster)
    found = conflicts(cluster, me, records, source=source, take_over=take_over)
    if found:
        raise SpecError(found)


def check_unowned(
    cluster: ClusterSpec,
    records: Mapping[str, OwnerRecord],
    topics: Iterable[str],
    principals: Iterable[str],
) -> None:
    """A folder without ``owns:``: SpecError when another owner's record owns a topic or
    principal it declares or its plan touches (``kgitops.plan.owners.unowned_conflicts``)."""
    if not records:
        return
    me, source = owner_of(cluster)
    found = unowned_conflicts(cluster, me, records, topics, principals, source=source)
    if found:
        raise SpecError(found)


def claim(
    cluster: ClusterSpec,
    admin: ClusterAdmin,
    *,
    write: bool,
    take_over: bool = False,
    actions: Iterable[Action] = (),
) -> None:
    """Apply's part: refuse (SpecError, nothing changed) when another owner's record
    overlaps the folder's ``owns`` (a folder without ``owns:``: a name of its plan's
    ``actions``); with ``write``, record the claim when the cluster's record of this owner
    does not already say it, and say so on stderr; then read the records again: when an
    overlapping record of another owner came first (two applies at once), take this one
    back (or put the previous one back) and refuse."""
    records = read_records(cluster, admin)
    if not keeps_record(cluster):
        check_unowned(cluster, records, *plan_names(actions))
        return
    check_records(cluster, records, take_over=take_over)
    if not write:
        return
    me, source = owner_of(cluster)
    mine = OwnerRecord(cluster.owns, source)
    before = records.get(me)
    if same_claim(before, mine):
        return
    _record(admin, {me: mine}, me)
    print(
        printable(f"recorded what {json.dumps(me)} owns in topic {OWNER_TOPIC}"),
        file=sys.stderr,
    )
    again = admin.read_owners()
    first = lost_to(cluster, me, again)
    if not first:
        return
    _record(admin, {me: None if before is None or before.problem else before}, me)
    raise SpecError(
        [
            Diagnostic(
                cluster.mark_of("owns"),
                "error",
                f"while this apply recorded what {json.dumps(me)} owns, "
                f"{shown(owner, again[owner])} recorded an overlapping claim first (topic "
                f"{OWNER_TOPIC}); this apply took its record back and changed nothing: plan "
                "again",
            )
            for owner in first
        ]
    )


def _record(admin: ClusterAdmin, records: Mapping[str, OwnerRecord | None], me: str) -> None:
    try:
        admin.record_owners(records)
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
