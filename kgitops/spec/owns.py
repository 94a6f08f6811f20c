"""cluster.yaml ``owns:``: a spec outside what its folder owns, and two folders owning one name.

Several folders (teams, repositories) may share one cluster when each says what it owns
(``model.Owns``). A spec outside it is an error where it is written::

    topics/payments/orders.yaml:3:7: error: topic shipping.orders is not this folder's: owns.topics
      is payments.* (cluster.yaml:8:5)

``validate`` over a repository also compares the cluster folders that point at one cluster
(the same ``clusterId``, a shared bootstrap server, or the same simulated state file): two
that can own one name are an error at the second one's ``owns`` (``overlaps``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from kgitops.access import AccessSpecs
from kgitops.errors import Diagnostic
from kgitops.model import OWNED_KINDS, ClusterSpec, Owns, TopicSpec, globs_overlap


def _where(cluster: ClusterSpec, kind: str) -> str:
    owns = cluster.owns
    shown = ", ".join(owns.patterns(kind)) or "nothing (not listed)"
    return f"owns.{kind} is {shown} ({cluster.mark_of('owns')})"


def check_owned(
    cluster: ClusterSpec,
    topics: Iterable[TopicSpec],
    access: AccessSpecs,
    out: list[Diagnostic],
) -> None:
    """An error for every topic, ACL binding, user and user quota outside ``owns:``."""
    owns = cluster.owns
    if not owns.declared:
        return
    for topic in topics:
        if not owns.topic(topic.name):
            out.append(
                Diagnostic(
                    topic.mark_of("name"),
                    "error",
                    f"topic {topic.name} is not this folder's: {_where(cluster, 'topics')}",
                )
            )
    for spec in access.acls:
        acl = spec.acl
        what = acl.key if spec.source.startswith("ACL") else f"{acl.key} ({spec.source})"
        if not owns.principal(acl.principal):
            out.append(
                Diagnostic(
                    spec.mark,
                    "error",
                    f"ACL {what}: principal {acl.principal} is not this "
                    f"folder's: {_where(cluster, 'principals')}",
                )
            )
        elif not owns.resource(acl.resource_type, acl.name, acl.pattern_type):
            kind = {"group": "groups", "transactional_id": "transactionalIds"}.get(
                acl.resource_type, "topics"
            )
            star = "*" if acl.pattern_type == "prefixed" else ""
            out.append(
                Diagnostic(
                    spec.mark,
                    "error",
                    f"ACL {what}: resource {acl.resource_type}:{acl.name}"
                    f"{star} is not this folder's: {_where(cluster, kind)}",
                )
            )
    for user in access.users:
        if not owns.principal(f"User:{user.name}"):
            out.append(
                Diagnostic(
                    user.mark,
                    "error",
                    f"user {user.name}: principal User:{user.name} is not this folder's: "
                    f"{_where(cluster, 'principals')}",
                )
            )
    for quota in access.quotas:
        entity = quota.entity
        if entity.user is not None and entity.user != "<default>":
            owned = owns.principal(f"User:{entity.user}")
        else:  # a client-id or default quota binds every principal
            owned = "*" in owns.principals
        if not owned:
            who = f"principal User:{entity.user}" if entity.user else "a quota of no one user"
            out.append(
                Diagnostic(
                    quota.mark,
                    "error",
                    f"quota {entity.key}: {who} is not this folder's "
                    f"(a client-id or default quota needs owns.principals: ['*']): "
                    f"{_where(cluster, 'principals')}",
                )
            )


def _identity(cluster: ClusterSpec) -> set[str]:
    """What names the cluster a folder points at: its id, each bootstrap server, or its
    simulated state file (resolved)."""
    out = {f"server {s.lower()}" for s in cluster.bootstrap_servers}
    if cluster.cluster_id:
        out.add(f"id {cluster.cluster_id}")
    if cluster.simulated is not None:
        out.add(f"state {os.path.realpath(cluster.simulated.state_file)}")
    return out


def overlap(a: Owns, b: Owns) -> tuple[str, str, str] | None:
    """(kind, a's glob, b's glob) of the first name both can own; None when none."""
    for kind, _ in OWNED_KINDS:
        for pa in a.patterns(kind):
            for pb in b.patterns(kind):
                if globs_overlap(pa, pb):
                    return kind, pa, pb
    return None


def overlaps(clusters: Sequence[ClusterSpec]) -> list[Diagnostic]:
    """An error on each side of every pair of cluster folders that point at one cluster and
    can own one name (a folder without ``owns:`` owns everything), at that side's ``owns``."""
    out: list[Diagnostic] = []
    for i, one in enumerate(clusters):
        for other in clusters[:i]:
            if not _identity(one) & _identity(other):
                continue
            found = overlap(one.owns, other.owns)
            if found is None:
                continue
            kind, p1, p2 = found
            out.append(_overlap_error(one, other, kind, p1, p2))
            out.append(_overlap_error(other, one, kind, p2, p1))
    return out


def _overlap_error(
    me: ClusterSpec, them: ClusterSpec, kind: str, mine: str, theirs: str
) -> Diagnostic:
    both = mine if mine == theirs else f"{mine} and {theirs}"
    other = _shown(them.directory)
    theirs_at = them.mark_of("owns")
    where = (
        f"its owns at {_shown(theirs_at.path)}:{theirs_at.line}:{theirs_at.col}"
        if them.owns.declared
        else "it has no owns:, so it owns everything"
    )
    if me.owns.declared:
        head = f"owns overlaps {other} ({where})"
        mark = me.mark_of("owns")
    else:
        head = f"no owns: here, so this folder owns everything; {other} ({where})"
        mark = me.mark
    return Diagnostic(
        mark,
        "error",
        f"{head}: both point at the same cluster and can own {kind} {both}; give each name "
        "one owner",
    )


def _shown(path: str) -> str:
    """A path relative to the working folder when it is below it, else as it is."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
