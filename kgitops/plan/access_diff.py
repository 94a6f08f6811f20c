"""(desired access, live access) -> access actions and warnings. Pure.

::

    ACL bindings   in git, not live           + create_acl
                   live, not in git           - delete_acl   (unmanagedAcls: delete)
                                              UNMANAGED_ACLS warning (warn, the default)
    SCRAM user     no credential for the mechanism       + upsert_user  "new credential"
                   iterations differ                     + upsert_user  "iterations a -> b"
                   live passwordVersion below the spec's + upsert_user  "passwordVersion 1 -> 2"
                   otherwise                             nothing: a password is never
                                                         compared, so a re-plan is empty

A credential whose version the cluster has no record of (written outside kgitops, imported,
or rewritten outside kgitops with other iterations: ``password_version`` None) counts as
version 1, the version a User document starts at: an imported user plans nothing, and a
bump to 2 rotates it once ("passwordVersion 1 (no record) -> 2"). When the cluster holds
no record at all (``version_unrecorded``: the first plan since kgitops records versions on a
real cluster, where a bump used to plan nothing), the users so rewritten are named in one
PASSWORD_VERSION_UNRECORDED warning.
    Quota          values differ                         ~ alter_quota  (set / remove keys)

Users and quota entities that git does not name are left alone. ``with_access`` adds the
actions to a topic plan and records the access digest (``accessFingerprint``) so apply
refuses a plan made against other ACLs, users or quotas.
"""

from __future__ import annotations

from dataclasses import replace

from kgitops.access import AccessSpecs, AccessState, Acl, ScramCredential
from kgitops.model import PASSWORD_VERSION_TOPIC, ClusterSpec, ClusterState, Owns
from kgitops.plan.access_actions import alter_quota, create_acl, delete_acl, upsert_user
from kgitops.plan.actions import Action
from kgitops.plan.value import Plan, PlanWarning

_SHOWN = 10


def access_actions(
    desired: AccessSpecs,
    live: AccessState,
    unmanaged: str = "warn",
    version_topic: str = PASSWORD_VERSION_TOPIC,
) -> tuple[list[Action], list[PlanWarning]]:
    """The access actions and warnings from ``live`` to ``desired`` (see the module doc)."""
    actions: list[Action] = []
    warnings: list[PlanWarning] = []
    unrecorded: list[tuple[str, str, int]] = []
    wanted = {s.acl: s for s in desired.acls}
    for acl, spec in sorted(wanted.items()):
        if acl not in live.acls:
            actions.append(create_acl(acl, spec.source))
    extra = sorted(live.acls - wanted.keys())
    if extra and unmanaged == "delete":
        actions.extend(delete_acl(a) for a in extra)
    elif extra and unmanaged == "warn":
        warnings.append(_unmanaged_warning(extra))
    for user in desired.users:
        cred = live.users.get((user.name, user.mechanism))
        reason = ""
        if cred is None:
            reason = "new credential"
        elif cred.iterations != user.iterations:
            reason = f"iterations {cred.iterations} -> {user.iterations}"
        elif live_version(cred) < user.password_version:
            was = f"{live_version(cred)}"
            if cred.password_version is None:
                was += f" ({cred.version_note or 'no record'})"
            reason = f"passwordVersion {was} -> {user.password_version}"
            if cred.password_version is None and cred.version_unrecorded:
                unrecorded.append((user.name, user.mechanism, user.password_version))
        elif cred.password_version is not None and cred.password_version > user.password_version:
            warnings.append(
                PlanWarning(
                    "",
                    "PASSWORD_VERSION_BEHIND",
                    f"user {user.name} ({user.mechanism}): the cluster's credential was written "
                    f"from passwordVersion {cred.password_version}, the spec says "
                    f"{user.password_version}; nothing is rotated (bump it above "
                    f"{cred.password_version} to rotate)",
                )
            )
        if reason:
            actions.append(
                upsert_user(
                    user.name,
                    user.mechanism,
                    user.iterations,
                    user.password_env,
                    user.password_version,
                    reason,
                )
            )
    if unrecorded:
        warnings.append(_unrecorded_warning(unrecorded, version_topic))
    for quota in desired.quotas:
        have = live.quotas.get(quota.entity, {})
        set_ = {k: v for k, v in quota.values.items() if have.get(k) != v}
        gone = tuple(k for k in have if k not in quota.values)
        if set_ or gone:
            previous = {k: have[k] for k in [*set_, *gone] if k in have}
            actions.append(alter_quota(quota.entity, set_, gone, previous))
    return actions, warnings


def live_version(cred: ScramCredential) -> int:
    """The passwordVersion a live credential counts as: its record's, else 1 (the module doc)."""
    return 1 if cred.password_version is None else cred.password_version


def _unrecorded_warning(users: list[tuple[str, str, int]], topic: str) -> PlanWarning:
    """The cluster has no passwordVersion record at all, yet some credentials are to be
    rewritten for a version above 1: the first plan since kgitops records versions on real
    clusters (before, a bump there planned nothing), or a deleted topic."""
    shown = "; ".join(f"{n} ({m}, passwordVersion {v})" for n, m, v in users[:_SHOWN])
    more = f" and {len(users) - _SHOWN} more" if len(users) > _SHOWN else ""
    return PlanWarning(
        "",
        "PASSWORD_VERSION_UNRECORDED",
        f"{len(users)} SCRAM credential(s) will be rewritten from their passwordEnv although "
        f"their password may not have changed: the cluster holds no passwordVersion record at "
        f"all (topic {topic} is missing or empty: the first apply since kgitops records them, "
        f"or the topic was deleted), so each counts as version 1: {shown}{more}; make sure "
        "each passwordEnv holds the password its clients use now (docs/access.md, upgrading)",
        {"users": [n for n, _, _ in users]},
    )


def _unmanaged_warning(extra: list[Acl]) -> PlanWarning:
    shown = "; ".join(a.key for a in extra[:_SHOWN])
    more = f" and {len(extra) - _SHOWN} more" if len(extra) > _SHOWN else ""
    return PlanWarning(
        "",
        "UNMANAGED_ACLS",
        f"{len(extra)} ACL binding(s) on the cluster are not in git: {shown}{more}; "
        "`kgitops import` adopts them, `unmanagedAcls: delete` in cluster.yaml deletes them",
        {"count": len(extra)},
    )


def with_access(
    plan: Plan, desired: AccessSpecs, state: ClusterState, cluster: ClusterSpec
) -> Plan:
    """``plan`` plus the access actions, warnings and access fingerprint; ``state.access``
    must have been read."""
    assert state.access is not None
    live = owned_access(state.access, cluster.owns)
    actions, warnings = access_actions(
        desired, live, cluster.unmanaged_acls, cluster.password_version_topic
    )
    parts = needed_parts(desired, cluster)
    return replace(
        plan,
        actions=plan.actions + tuple(actions),
        warnings=plan.warnings + tuple(warnings),
        access_fingerprint=live.digest(parts),
        access_parts=parts,
    )


def owned_access(live: AccessState, owns: Owns) -> AccessState:
    """What of the cluster's access is the folder's (cluster.yaml ``owns:``): the ACL
    bindings whose principal and resource it owns, the credentials and user quotas of its
    principals (client-id and default quotas when it owns every principal). The rest is
    invisible to it: never unmanaged, never deleted, and a change there never makes its
    plan stale."""
    if not owns.declared:
        return live
    every = "*" in owns.principals
    return replace(
        live,
        acls=frozenset(a for a in live.acls if owns.acl(a)),
        users={k: c for k, c in live.users.items() if owns.principal(f"User:{k[0]}")},
        quotas={
            e: v
            for e, v in live.quotas.items()
            if (owns.principal(f"User:{e.user}") if e.user not in (None, "<default>") else every)
        },
    )


def needed_parts(desired: AccessSpecs, cluster: ClusterSpec) -> tuple[str, ...]:
    """What plan reads of the cluster's access: ACLs when git names any or unmanaged ones are
    to be deleted, users when git has User documents, quotas when it has Quota documents.
    A cluster that cannot answer one of them is not asked what the folder does not need."""
    out = []
    if desired.acls or cluster.unmanaged_acls == "delete":
        out.append("acls")
    if desired.users:
        out.append("users")
    if desired.quotas:
        out.append("quotas")
    return tuple(out)


def wants_access(desired: AccessSpecs, cluster: ClusterSpec) -> bool:
    """Whether plan reads access from the cluster: the folder has access documents or topic
    access, or cluster.yaml asks for unmanaged ACLs to be deleted."""
    return desired.used or cluster.unmanaged_acls == "delete"
