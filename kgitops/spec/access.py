"""ACL, User and Quota documents and topic ``access`` -> ``AccessSpecs``, with every problem.

Runs after the schema check (``schemacheck``), on documents that passed it, and adds Kafka's
own rules, each at its position::

    topics/prod/acl.yaml:9:9: error: operation 'write' does not apply to a group (Kafka allows
        all, delete, describe, read)
    topics/prod/users.yaml:3:7: error: a second SCRAM-SHA-512 credential for user 'a' (the
        first is at topics/prod/users.yaml:1:7)

The topic short form expands to exactly the bindings a client needs::

    access:
      produce: [User:a]      # topic Write + Describe; cluster IdempotentWrite
      consume:
        - {principal: User:b, group: b-}   # topic Read + Describe; group Read, prefixed 'b-'

IdempotentWrite on the cluster: an idempotent producer (the default since Kafka 3.0) needs it
on clusters before 3.0 (KIP-679 made Write on a topic imply it from 3.0 on), so the short form
always grants it: harmless on newer clusters, required on older ones. A group ending in '-',
'.' or '_' is a prefix (``groupPatternType`` overrides).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kgitops.access import (
    CLUSTER_RESOURCE,
    OPERATIONS_BY_RESOURCE,
    QUOTA_KEYS,
    AccessSpecs,
    Acl,
    AclSpec,
    QuotaEntity,
    QuotaSpec,
    UserSpec,
)
from kgitops.errors import Diagnostic, Mark
from kgitops.model import labels_of
from kgitops.spec.clusterrules import is_runner_variable, runner_variable_error
from kgitops.spec.yamlload import Document

ACCESS_KINDS = ("ACL", "User", "Quota")
PRODUCE_TOPIC_OPERATIONS = ("write", "describe")
CONSUME_TOPIC_OPERATIONS = ("read", "describe")
PREFIX_ENDINGS = ("-", ".", "_")


def build_access(
    access_docs: Sequence[tuple[str, Document]],
    topic_docs: Sequence[Document],
    diags: list[Diagnostic],
) -> AccessSpecs:
    """``access_docs``: (kind, document) of schema-valid ACL/User/Quota documents;
    ``topic_docs``: schema-valid Topic documents (those with ``access`` count)."""
    acls: list[AclSpec] = []
    users: list[UserSpec] = []
    quotas: list[QuotaSpec] = []
    used = bool(access_docs)
    for kind, doc in access_docs:
        if kind == "ACL":
            acls.extend(_acl_document(doc, diags))
        elif kind == "User":
            users.append(_user(doc))
            if is_runner_variable(str(doc.value["passwordEnv"])):
                message = runner_variable_error("passwordEnv", str(doc.value["passwordEnv"]))
                diags.append(Diagnostic(doc.mark("passwordEnv"), "error", message))
        else:
            quotas.append(_quota(doc))
    for doc in topic_docs:
        if isinstance(doc.value, dict) and doc.value.get("access"):
            used = True
            if doc.value.get("delete") is True:  # never grant access to a topic being deleted
                diags.append(Diagnostic(doc.key_mark("access"), "warning", _DELETED_ACCESS))
                continue
            acls.extend(expand_topic_access(doc))
    _check_users(users, diags)
    _check_quotas(quotas, diags)
    _check_conflicts(acls, diags)
    unique: dict[Acl, AclSpec] = {}
    for spec in sorted(acls, key=lambda s: (s.acl, s.mark)):
        unique.setdefault(spec.acl, spec)
    return AccessSpecs(
        acls=tuple(unique.values()),
        users=tuple(sorted(users, key=lambda u: (u.name, u.mechanism))),
        quotas=tuple(sorted(quotas, key=lambda q: q.entity)),
        used=used,
    )


_DELETED_ACCESS = (
    "the topic is marked delete: true, so its access grants nothing (a binding created now "
    "would outlive the topic and apply to any later topic of the same name); remove access:"
)


# ------------------------------------------------------------------ ACL documents


KGITOPS_OWN_VARIABLES = (
    "KGITOPS_KAFKA_USERNAME",
    "KGITOPS_KAFKA_PASSWORD",
    "KGITOPS_SSL_KEY_PASSWORD",
    "KGITOPS_KAFKA_TOKEN",
    "KGITOPS_SECRETS",
)
"""The variables the kgitops workflows hold kgitops' own login in, whatever cluster.yaml
names (the workflows export them to every cluster's job)."""

NOT_SECRETS = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TMPDIR",
        "TEMP",
        "TMP",
        "HOSTNAME",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "EDITOR",
        "DISPLAY",
        "MAIL",
        "SHLVL",
        "TZ",
        "CI",
    }
)
"""System variables that hold no secret: a password taken from them is known to everyone."""


def check_own_login(
    access_docs: Sequence[tuple[str, Document]],
    own_variables: Sequence[tuple[str, str]],
    own_principal: str | None,
    diags: list[Diagnostic],
) -> None:
    """A User document may not take over kgitops' own login: named as the principal kgitops
    logs in as (``own_principal``: the value of its usernameEnv, when set), or taking its
    password from a variable kgitops logs in with (``own_variables``: (field, name) of
    cluster.yaml's ``*Env``, plus the workflows' ``KGITOPS_KAFKA_*``), or from a system
    variable that holds no secret (PATH, HOME ...). Each is an error at its position::

        users.yaml:3:14: error: passwordEnv: KGITOPS_KAFKA_PASSWORD is the variable kgitops
            logs in with (security.sasl.passwordEnv) ...
    """
    own = {name: field for field, name in own_variables}
    for name in KGITOPS_OWN_VARIABLES:
        own.setdefault(name, "the kgitops workflows' own credential")
    for kind, doc in access_docs:
        if kind != "User":
            continue
        env = str(doc.value["passwordEnv"])
        if env in own:
            diags.append(
                Diagnostic(
                    doc.mark("passwordEnv"),
                    "error",
                    f"passwordEnv: {env} is a variable kgitops logs in with ({own[env]}); a "
                    "User takes its own secret, never kgitops' credential",
                )
            )
        elif env.upper() in NOT_SECRETS:
            diags.append(
                Diagnostic(
                    doc.mark("passwordEnv"),
                    "error",
                    f"passwordEnv: {env} is a system variable that holds no secret; name the "
                    "variable that holds this user's password",
                )
            )
        if own_principal and str(doc.value["name"]) == own_principal:
            diags.append(
                Diagnostic(
                    doc.mark("name"),
                    "error",
                    f"user {own_principal!r} is the principal kgitops logs in as; kgitops "
                    "does not rewrite its own credential (rotate it outside kgitops)",
                )
            )


def _acl_document(doc: Document, diags: list[Diagnostic]) -> list[AclSpec]:
    v: dict[str, Any] = doc.value
    principal, host = str(v["principal"]), str(v.get("host", "*"))
    out = []
    for i, rule in enumerate(v["rules"]):
        rtype = rule["resourceType"]
        base = f"rules.{i}"
        name = rule.get("name")
        pattern = rule.get("patternType", "literal")
        if rtype == "cluster":
            if name not in (None, CLUSTER_RESOURCE):
                diags.append(
                    Diagnostic(
                        doc.mark(f"{base}.name"),
                        "error",
                        f"the cluster resource is named {CLUSTER_RESOURCE!r}; leave name out",
                    )
                )
                continue
            if pattern != "literal":
                diags.append(
                    Diagnostic(
                        doc.mark(f"{base}.patternType"),
                        "error",
                        "the cluster resource takes patternType literal",
                    )
                )
                continue
            name = CLUSTER_RESOURCE
        elif name is None:
            diags.append(
                Diagnostic(doc.mark(base), "error", f"{base}: a {_word(rtype)} rule needs a name")
            )
            continue
        elif name == "*" and pattern == "prefixed":
            diags.append(
                Diagnostic(
                    doc.mark(f"{base}.name"),
                    "error",
                    "name '*' already matches every resource; use patternType literal",
                )
            )
            continue
        allowed = OPERATIONS_BY_RESOURCE[rtype]
        for j, op in enumerate(rule["operations"]):
            if op not in allowed:
                diags.append(
                    Diagnostic(
                        doc.mark(f"{base}.operations.{j}"),
                        "error",
                        f"operation {op!r} does not apply to a {_word(rtype)} "
                        f"(Kafka allows {', '.join(sorted(allowed))})",
                    )
                )
                continue
            acl = Acl(
                principal=principal,
                resource_type=rtype,
                name=str(name),
                pattern_type=pattern,
                operation=op,
                permission=rule.get("permission", "allow"),
                host=host,
            )
            mark = doc.mark(f"{base}.operations.{j}")
            where = f"{os.path.basename(mark.path)}:{mark.line}"
            out.append(AclSpec(acl, mark, f"ACL {principal} ({where})", _labels(doc)))
    return out


def _word(resource_type: str) -> str:
    return {"transactional_id": "transactional id"}.get(resource_type, resource_type)


# ------------------------------------------------------------------ topic short form


def consume_group_pattern(group: str, explicit: str | None = None) -> str:
    """``prefixed`` for a group ending in '-', '.' or '_' (``b-`` covers ``b-1``), else
    ``literal``; ``explicit`` (groupPatternType) wins."""
    if explicit is not None:
        return explicit
    return "prefixed" if group.endswith(PREFIX_ENDINGS) else "literal"


def expand_topic_access(doc: Document) -> list[AclSpec]:
    """The bindings a topic's ``access`` short form stands for (see the module docstring)."""
    v: dict[str, Any] = doc.value
    topic = str(v["name"])
    access = v.get("access") or {}
    out: list[AclSpec] = []

    def add(principal: str, rtype: str, name: str, pattern: str, op: str, path: str) -> None:
        acl = Acl(principal, rtype, name, pattern, op)
        out.append(AclSpec(acl, doc.mark(path), f"topic {topic} {path}", _labels(doc)))

    for i, principal in enumerate(access.get("produce") or []):
        path = f"access.produce.{i}"
        for op in PRODUCE_TOPIC_OPERATIONS:
            add(principal, "topic", topic, "literal", op, path)
        add(principal, "cluster", CLUSTER_RESOURCE, "literal", "idempotent_write", path)
    for i, item in enumerate(access.get("consume") or []):
        path = f"access.consume.{i}"
        entry = {"principal": item} if isinstance(item, str) else item
        principal = str(entry["principal"])
        for op in CONSUME_TOPIC_OPERATIONS:
            add(principal, "topic", topic, "literal", op, path)
        group = entry.get("group")
        if group is not None:
            pattern = consume_group_pattern(group, entry.get("groupPatternType"))
            add(principal, "group", group, pattern, "read", path)
    return out


# ------------------------------------------------------------------ users and quotas


def _user(doc: Document) -> UserSpec:
    v: dict[str, Any] = doc.value
    return UserSpec(
        name=str(v["name"]),
        mechanism=str(v["mechanism"]),
        password_env=str(v["passwordEnv"]),
        iterations=int(v.get("iterations", 8192)),
        password_version=int(v.get("passwordVersion", 1)),
        mark=doc.mark("name"),
        labels=_labels(doc),
    )


def _quota(doc: Document) -> QuotaSpec:
    v: dict[str, Any] = doc.value
    entity = QuotaEntity(v.get("user"), v.get("clientId"))
    values = {kafka: float(v[field]) for field, kafka in QUOTA_KEYS.items() if field in v}
    return QuotaSpec(entity, values, doc.mark("user" if "user" in v else "clientId"), _labels(doc))


def _labels(doc: Document) -> tuple[tuple[str, str], ...]:
    return tuple(labels_of(doc.value).items())


def _check_users(users: list[UserSpec], diags: list[Diagnostic]) -> None:
    seen: dict[tuple[str, str], Mark] = {}
    for u in sorted(users, key=lambda u: u.mark):
        first = seen.setdefault((u.name, u.mechanism), u.mark)
        if first is not u.mark:
            diags.append(
                Diagnostic(
                    u.mark,
                    "error",
                    f"a second {u.mechanism} credential for user {u.name!r} (the first is "
                    f"at {first})",
                )
            )


def _check_quotas(quotas: list[QuotaSpec], diags: list[Diagnostic]) -> None:
    seen: dict[QuotaEntity, Mark] = {}
    for q in sorted(quotas, key=lambda q: q.mark):
        first = seen.setdefault(q.entity, q.mark)
        if first is not q.mark:
            diags.append(
                Diagnostic(
                    q.mark,
                    "error",
                    f"a second Quota for {q.entity.key} (the first is at {first})",
                )
            )


def _check_conflicts(acls: list[AclSpec], diags: list[Diagnostic]) -> None:
    """The same binding both allowed and denied: Kafka would deny; say so where it is."""
    allowed = {s.acl: s for s in acls if s.acl.permission == "allow"}
    for s in acls:
        if s.acl.permission != "deny":
            continue
        twin = Acl(
            s.acl.principal,
            s.acl.resource_type,
            s.acl.name,
            s.acl.pattern_type,
            s.acl.operation,
            "allow",
            s.acl.host,
        )
        if twin in allowed:
            diags.append(
                Diagnostic(
                    s.mark,
                    "warning",
                    f"{s.acl.key} also allowed at {allowed[twin].mark}: deny wins, the allow "
                    "has no effect",
                )
            )
