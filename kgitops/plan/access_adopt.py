"""``kgitops import``'s access half: live ACLs, SCRAM users and quotas that git does not name
-> ACL, User and Quota documents, so the next plan has no access change. Pure.

Bindings are grouped into one ACL document per (principal, host), one rule per resource
pattern and permission, operations sorted::

    apiVersion: kgitops/v1
    kind: ACL
    principal: User:orders-app
    rules:
      - resourceType: topic
        name: orders.
        patternType: prefixed
        operations: [describe, read]

A User document names the environment variable its password will come from
(``KGITOPS_<NAME>_PASSWORD``); the password itself is unknown and not needed until someone
bumps ``passwordVersion``. Quota values are Kafka's, under the document's field names.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from kgitops.access import (
    CLUSTER_RESOURCE,
    QUOTA_KEYS,
    AccessSpecs,
    AccessState,
    Acl,
    QuotaEntity,
    ScramCredential,
    json_number,
)

_FIELD_OF = {kafka: field for field, kafka in QUOTA_KEYS.items()}


def _q(value: str) -> str:
    """A YAML scalar that reads back as the same string (JSON strings are YAML)."""
    plain = re.fullmatch(r"[A-Za-z][A-Za-z0-9._:/-]*", value) is not None
    reserved = value.lower() in ("yes", "no", "on", "off", "true", "false", "null", "y", "n")
    return value if plain and not reserved and not value.endswith(":") else json.dumps(value)


def password_env_for(user: str) -> str:
    """``KGITOPS_ORDERS_APP_PASSWORD`` for ``orders-app``."""
    return "KGITOPS_" + re.sub(r"[^A-Z0-9]+", "_", user.upper()).strip("_") + "_PASSWORD"


def unmanaged(desired: AccessSpecs, live: AccessState) -> AccessState:
    """What the cluster has that git does not name: bindings, credentials, quota entities."""
    wanted_acls = {s.acl for s in desired.acls}
    wanted_users = {(u.name, u.mechanism) for u in desired.users}
    wanted_quotas = {q.entity for q in desired.quotas}
    return AccessState(
        acls=frozenset(a for a in live.acls if a not in wanted_acls),
        users={k: c for k, c in live.users.items() if k not in wanted_users},
        quotas={e: v for e, v in live.quotas.items() if e not in wanted_quotas and v},
    )


def access_yaml(adopted: AccessState, cluster: str) -> str:
    """The documents for ``adopted`` (empty string when there is nothing)."""
    docs = [*_acl_documents(adopted.acls), *map(_user_document, _sorted_users(adopted))]
    docs += [_quota_document(e, v) for e, v in sorted(adopted.quotas.items())]
    if not docs:
        return ""
    head = f"# Imported from cluster {cluster} by `kgitops import`.\n"
    return head + "---\n".join(docs)


def _sorted_users(adopted: AccessState) -> list[ScramCredential]:
    return [adopted.users[k] for k in sorted(adopted.users)]


def _acl_documents(acls: frozenset[Acl]) -> list[str]:
    by_principal: dict[tuple[str, str], dict[tuple[str, str, str, str], list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for a in acls:
        rule = (a.resource_type, a.name, a.pattern_type, a.permission)
        by_principal[(a.principal, a.host)][rule].append(a.operation)
    out = []
    for (principal, host), rules in sorted(by_principal.items()):
        lines = ["apiVersion: kgitops/v1", "kind: ACL", f"principal: {_q(principal)}"]
        if host != "*":
            lines.append(f"host: {_q(host)}")
        lines.append("rules:")
        for (rtype, name, pattern, permission), ops in sorted(rules.items()):
            lines.append(f"  - resourceType: {rtype}")
            if rtype != "cluster" or name != CLUSTER_RESOURCE:
                lines.append(f"    name: {_q(name)}")
            if pattern != "literal":
                lines.append(f"    patternType: {pattern}")
            lines.append(f"    operations: [{', '.join(sorted(ops))}]")
            if permission != "allow":
                lines.append(f"    permission: {permission}")
        out.append("\n".join(lines) + "\n")
    return out


def _user_document(c: ScramCredential) -> str:
    lines = [
        "apiVersion: kgitops/v1",
        "kind: User",
        f"name: {_q(c.name)}",
        f"mechanism: {c.mechanism}",
        f"passwordEnv: {password_env_for(c.name)}",
        f"iterations: {c.iterations}",
    ]
    if c.password_version is not None:
        lines.append(f"passwordVersion: {c.password_version}")
    return "\n".join(lines) + "\n"


def _quota_document(entity: QuotaEntity, values: dict[str, float] | object) -> str:
    assert isinstance(values, dict)
    lines = ["apiVersion: kgitops/v1", "kind: Quota"]
    if entity.user is not None:
        lines.append(f"user: {_q(entity.user)}")
    if entity.client_id is not None:
        lines.append(f"clientId: {_q(entity.client_id)}")
    for key, value in sorted(values.items()):
        lines.append(f"{_FIELD_OF[key]}: {json_number(value)}")
    return "\n".join(lines) + "\n"
