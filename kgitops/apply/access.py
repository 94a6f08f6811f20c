"""Apply's access step: SCRAM users, quotas, then ACLs, one batched request each (SCRAM:
one per credential of the user that has the most, as Kafka takes a user once per request).

::

    upsert_user  AlterUserScramCredentials  the password is read here, from the environment
                                            variable the plan names, salted (32 random bytes)
                                            and hashed (RFC 5802 Hi()); only the salt and the
                                            salted password leave this module
    alter_quota  AlterClientQuotas
    create_acl   CreateAcls
    delete_acl   DeleteAcls                 only with allow_delete (checked before anything)

Before anything is changed, ``require_access_support`` probes each of these APIs the plan
needs (``ClusterAdmin.probe_access``: a request that changes nothing, a few seconds): a
cluster that does not serve one is refused in one line, exit 1, nothing changed. With an
upsert_user it also makes sure the passwordVersion can be recorded
(``ClusterAdmin.ready_scram_versions``): on a real cluster a topic that cannot be created,
is not kgitops', or may not be written is refused the same way, before the plan's topics
are created.
Verification reads the ACLs, users (iterations and the passwordVersion recorded) and quotas
back: a broker that answers success but keeps nothing (the local Tansu broker's
AlterUserScramCredentials) leaves every such action "NOT done", and a new plan shows the
change again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import TypeVar

from kgitops.access import AccessState, Acl, QuotaEntity, scram_salted_password
from kgitops.apply.seam import RunSeam
from kgitops.cluster.port import ClusterAdmin, QuotaChange, ScramUpsert
from kgitops.errors import (
    AccessUnsupported,
    AccessUnsupportedNothingChanged,
    ClusterError,
    ClusterRequestError,
    KgitopsError,
    remember_secrets,
)
from kgitops.plan.access_actions import AlterQuota, CreateAcl, DeleteAcl, UpsertUser, write_apis
from kgitops.plan.actions import Action
from kgitops.plan.value import Plan

SALT_BYTES = 32
T = TypeVar("T")


def run_access(run: RunSeam, environ: Mapping[str, str] | None = None) -> None:
    """The access step of ``apply_plan`` (see the module docstring)."""
    env = os.environ if environ is None else environ
    users = run.indexed(UpsertUser)
    ready: list[tuple[int, UpsertUser]] = []
    upserts: list[ScramUpsert] = []
    for i, a in users:
        password = env.get(a.password_env)
        if not password:
            run.fail(i, f"environment variable {a.password_env} is not set (the password)")
            continue
        remember_secrets([password])  # scrubbed from anything this process prints
        salt = os.urandom(SALT_BYTES)
        salted = scram_salted_password(a.mechanism, password, salt, a.iterations)
        upserts.append(
            ScramUpsert(a.name, a.mechanism, a.iterations, salt, salted, a.password_version)
        )
        ready.append((i, a))
    for round_ in scram_rounds(list(zip(ready, upserts, strict=True))):
        batch = [u for _, u in round_]
        run.batch(
            "write SCRAM credentials",
            [r for r, _ in round_],
            partial(run.admin.upsert_scram_users, batch),
        )
    run.send(AlterQuota, "alter client quotas", run.admin.alter_client_quotas, _quota_changes)
    run.send(CreateAcl, "create ACLs", run.admin.create_acls, _acls)
    run.send(DeleteAcl, "delete ACLs", run.admin.delete_acls, _acls)


def _quota_changes(actions: list[AlterQuota]) -> dict[QuotaEntity, QuotaChange]:
    return {a.entity: QuotaChange(dict(a.set), tuple(a.delete)) for a in actions}


def _acls(actions: list[CreateAcl] | list[DeleteAcl]) -> list[Acl]:
    return [a.acl for a in actions]


def scram_rounds(items: list[tuple[T, ScramUpsert]]) -> list[list[tuple[T, ScramUpsert]]]:
    """The upserts in as few AlterUserScramCredentials requests as Kafka takes: a user at
    most once per request, whatever the mechanism (Kafka's ``ScramControlManager`` refuses a
    second credential of a user in one request with DUPLICATE_RESOURCE). Round k holds each
    user's k-th credential, in plan order::

        [a/256, a/512, b/512]  ->  [[a/256, b/512], [a/512]]
    """
    rounds: list[list[tuple[T, ScramUpsert]]] = []
    count: dict[str, int] = {}
    for item in items:
        k = count.get(item[1].name, 0)
        count[item[1].name] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(item)
    return rounds


def require_passwords(plan: Plan, environ: Mapping[str, str] | None = None) -> None:
    """Before anything is sent: every password the plan's upsert_user actions need is set."""
    env = os.environ if environ is None else environ
    missing = sorted(
        {
            f"{a.password_env} (the password of user {a.name})"
            for a in plan.of_kind(UpsertUser)
            if not env.get(a.password_env)
        }
    )
    if missing:
        raise KgitopsError(
            "environment variable(s) not set: " + "; ".join(missing) + "; nothing was changed"
        )


NOTHING_CHANGED = "; nothing was changed"


@contextmanager
def before_any_change() -> Iterator[None]:
    """Around apply's steps before its first change: an AccessUnsupported from them (a read
    or write probe refused) says that nothing was changed, once however deep it is nested."""
    try:
        yield
    except AccessUnsupportedNothingChanged:
        raise
    except AccessUnsupported as exc:
        raise AccessUnsupportedNothingChanged(exc.operation, f"{exc}{NOTHING_CHANGED}") from None


def require_access_support(plan: Plan, admin: ClusterAdmin) -> None:
    """Before anything is sent: the cluster serves every access API the plan's actions are
    sent in (``probe_access``), and, when the plan writes SCRAM credentials, their
    passwordVersion can be recorded (``ready_scram_versions``: on a real cluster the topic
    exists, is kgitops', and may be written); else one line ending "nothing was changed"
    ("nothing else was changed" when only the empty topic was created), exit 1, before the
    plan's topics are created."""
    apis = write_apis(plan.actions)
    if apis:
        with before_any_change():
            admin.probe_access(apis)
    if plan.of_kind(UpsertUser):
        try:
            admin.ready_scram_versions()
        except ClusterError as exc:
            created = isinstance(exc, ClusterRequestError) and exc.changed  # the empty topic
            tail = "; nothing else was changed" if created else NOTHING_CHANGED
            raise ClusterError(f"{exc}{tail}") from None


def access_differences(action: Action, live: AccessState) -> list[str]:
    """What about an access action the cluster does not show; empty when it is all there."""
    if isinstance(action, CreateAcl):
        return [] if action.acl in live.acls else ["the ACL binding is not on the cluster"]
    if isinstance(action, DeleteAcl):
        return ["the ACL binding is still on the cluster"] if action.acl in live.acls else []
    if isinstance(action, UpsertUser):
        cred = live.users.get((action.name, action.mechanism))
        if cred is None:
            return [f"user {action.name} has no {action.mechanism} credential"]
        if cred.iterations != action.iterations:
            return [
                f"the credential has {cred.iterations} iterations, the plan said "
                f"{action.iterations}"
            ]
        if cred.password_version != action.password_version:
            note = cred.version_note or "no record"
            was = (
                f"the cluster records passwordVersion {cred.password_version}"
                if cred.password_version is not None
                else f"the cluster has no passwordVersion for it ({note})"
            )
            return [f"{was}, the plan wrote {action.password_version}"]
        return []
    if isinstance(action, AlterQuota):
        have = live.quotas.get(action.entity, {})
        out = [
            f"{k}={have.get(k)!r}, the plan said {v!r}"
            for k, v in sorted(action.set.items())
            if have.get(k) != v
        ]
        out += [f"{k} is still set" for k in sorted(action.delete) if k in have]
        return out
    return []
