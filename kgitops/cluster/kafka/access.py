"""ACLs, client quotas and SCRAM credentials through kafka-python: the access half of
``KafkaAdmin``.

One request per call, whatever the number of items::

    describe_acls           DescribeAcls with one filter matching every binding (ANY)
    create_acls             CreateAcls, one creation per binding
    delete_acls             DeleteAcls, one exact filter per binding
    describe_client_quotas  DescribeClientQuotas with no component (every entity)
    alter_client_quotas     AlterClientQuotas, one entry per entity (set / remove ops)
    describe_scram_users    DescribeUserScramCredentials for every user, then the
                            passwordVersion records (Metadata + Fetch, versions.py)
    upsert_scram_users      AlterUserScramCredentials upsertions (salt + salted password),
                            then one Produce of the versions written (versions.py)

The request builders and response readers are pure functions of kafka-python's protocol
classes (``build_*`` / ``read_*``), so each is tested to encode and decode at every version
kafka-python has, without a broker. Codes are Kafka's (``ResourceType``, ``PatternType``,
``AclOperation``, ``AclPermissionType``, ``ScramMechanism``).

A broker that answers without doing the work (the local Tansu broker stores no ACL, quota or
credential) is caught by apply's read-back: the change is reported NOT done and the next plan
shows it again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterUserScramCredentialsRequest,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeClientQuotasRequest,
    DescribeUserScramCredentialsRequest,
)

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.cluster.kafka.errors import item_error
from kgitops.cluster.kafka.versions import PasswordVersions, join
from kgitops.cluster.port import QuotaChange, Results, ScramUpsert
from kgitops.errors import ClusterError, ClusterRequestError

RESOURCE_TYPES = {"topic": 2, "group": 3, "cluster": 4, "transactional_id": 5}
PATTERN_TYPES = {"literal": 3, "prefixed": 4}
OPERATIONS = {
    "all": 2,
    "read": 3,
    "write": 4,
    "create": 5,
    "delete": 6,
    "alter": 7,
    "describe": 8,
    "cluster_action": 9,
    "describe_configs": 10,
    "alter_configs": 11,
    "idempotent_write": 12,
    "create_tokens": 13,
    "describe_tokens": 14,
}
PERMISSIONS = {"deny": 2, "allow": 3}
MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
ANY = 1
QUOTA_ENTITY_TYPES = {"user": "user", "client_id": "client-id"}
_NO_RESOURCE_ERROR = 0

_BY_CODE: dict[str, dict[int, str]] = {
    "resource": {v: k for k, v in RESOURCE_TYPES.items()},
    "pattern": {v: k for k, v in PATTERN_TYPES.items()},
    "operation": {v: k for k, v in OPERATIONS.items()},
    "permission": {v: k for k, v in PERMISSIONS.items()},
    "mechanism": {v: k for k, v in MECHANISMS.items()},
}


# ------------------------------------------------------------------ builders


def build_describe_acls() -> Any:
    return DescribeAclsRequest(
        resource_type_filter=ANY,
        resource_name_filter=None,
        pattern_type_filter=ANY,
        principal_filter=None,
        host_filter=None,
        operation=ANY,
        permission_type=ANY,
    )


def build_create_acls(acls: Sequence[Acl]) -> Any:
    C = CreateAclsRequest.AclCreation
    return CreateAclsRequest(
        creations=[
            C(
                resource_type=RESOURCE_TYPES[a.resource_type],
                resource_name=a.name,
                resource_pattern_type=PATTERN_TYPES[a.pattern_type],
                principal=a.principal,
                host=a.host,
                operation=OPERATIONS[a.operation],
                permission_type=PERMISSIONS[a.permission],
            )
            for a in acls
        ]
    )


def build_delete_acls(acls: Sequence[Acl]) -> Any:
    F = DeleteAclsRequest.DeleteAclsFilter
    return DeleteAclsRequest(
        filters=[
            F(
                resource_type_filter=RESOURCE_TYPES[a.resource_type],
                resource_name_filter=a.name,
                pattern_type_filter=PATTERN_TYPES[a.pattern_type],
                principal_filter=a.principal,
                host_filter=a.host,
                operation=OPERATIONS[a.operation],
                permission_type=PERMISSIONS[a.permission],
            )
            for a in acls
        ]
    )


def build_describe_client_quotas() -> Any:
    return DescribeClientQuotasRequest(components=[], strict=False)


def _entity_parts(entity: QuotaEntity) -> list[tuple[str, str | None]]:
    """Kafka's entity components; ``<default>`` is a null name."""
    out: list[tuple[str, str | None]] = []
    for attr, kind in QUOTA_ENTITY_TYPES.items():
        value = getattr(entity, attr)
        if value is not None:
            out.append((kind, None if value == "<default>" else value))
    return out


def build_alter_client_quotas(changes: Mapping[QuotaEntity, QuotaChange]) -> Any:
    E = AlterClientQuotasRequest.EntryData
    return AlterClientQuotasRequest(
        entries=[
            E(
                entity=[
                    E.EntityData(entity_type=kind, entity_name=name)
                    for kind, name in _entity_parts(entity)
                ],
                ops=[
                    E.OpData(key=k, value=float(v), remove=False)
                    for k, v in sorted(change.set.items())
                ]
                + [E.OpData(key=k, value=0.0, remove=True) for k in sorted(change.delete)],
            )
            for entity, change in changes.items()
        ],
        validate_only=False,
    )


def build_describe_scram_users() -> Any:
    return DescribeUserScramCredentialsRequest(users=None)


def build_upsert_scram_users(upserts: Sequence[ScramUpsert]) -> Any:
    U = AlterUserScramCredentialsRequest.ScramCredentialUpsertion
    return AlterUserScramCredentialsRequest(
        deletions=[],
        upsertions=[
            U(
                name=u.name,
                mechanism=MECHANISMS[u.mechanism],
                iterations=u.iterations,
                salt=u.salt,
                salted_password=u.salted_password,
            )
            for u in upserts
        ],
    )


# ------------------------------------------------------------------ readers


def _named(table: str, code: int, what: str) -> str:
    try:
        return _BY_CODE[table][code]
    except KeyError:
        raise ClusterError(f"{what}: the broker answered an unknown {table} code {code}") from None


def _check(resp: Any, op: str) -> None:
    code = int(getattr(resp, "error_code", 0) or 0)
    if code:
        err = item_error(op, op, code, getattr(resp, "error_message", None))
        if err is not None:
            raise err


def read_describe_acls(resp: Any) -> frozenset[Acl]:
    _check(resp, "DescribeAcls")
    out = set()
    for r in resp.resources:
        for a in r.acls:
            out.add(
                Acl(
                    principal=a.principal,
                    resource_type=_named("resource", r.resource_type, "DescribeAcls"),
                    name=r.resource_name,
                    pattern_type=_named("pattern", getattr(r, "pattern_type", 3), "DescribeAcls"),
                    operation=_named("operation", a.operation, "DescribeAcls"),
                    permission=_named("permission", a.permission_type, "DescribeAcls"),
                    host=a.host,
                )
            )
    return frozenset(out)


def _per_item(
    op: str, keys: Sequence[str], results: Sequence[Any], code: Callable[[Any], int]
) -> Results:
    """Results are in request order (CreateAcls, DeleteAcls); a short answer is an error for
    the items it does not cover."""
    out: dict[str, ClusterError | None] = {}
    for i, key in enumerate(keys):
        if i >= len(results):
            out[key] = ClusterRequestError(f"{key}: the broker gave no result for it", item=key)
            continue
        r = results[i]
        out[key] = item_error(op, key, code(r), getattr(r, "error_message", None))
    return out


def read_create_acls(resp: Any, acls: Sequence[Acl]) -> Results:
    return _per_item("CreateAcls", [a.key for a in acls], resp.results, lambda r: r.error_code)


def read_delete_acls(resp: Any, acls: Sequence[Acl]) -> Results:
    return _per_item(
        "DeleteAcls", [a.key for a in acls], resp.filter_results, lambda r: r.error_code
    )


def read_describe_client_quotas(resp: Any) -> dict[QuotaEntity, dict[str, float]]:
    _check(resp, "DescribeClientQuotas")
    out: dict[QuotaEntity, dict[str, float]] = {}
    for entry in resp.entries or []:
        parts = {
            e.entity_type: ("<default>" if e.entity_name is None else e.entity_name)
            for e in entry.entity
        }
        if set(parts) - {"user", "client-id"} or not parts:
            continue  # ip quotas are not managed by kgitops
        entity = QuotaEntity(parts.get("user"), parts.get("client-id"))
        values = {v.key: float(v.value) for v in entry.values}
        if values:
            out[entity] = values
    return out


def read_alter_client_quotas(resp: Any, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
    by_entity: dict[QuotaEntity, Any] = {}
    for entry in resp.entries:
        parts = {
            e.entity_type: ("<default>" if e.entity_name is None else e.entity_name)
            for e in entry.entity
        }
        by_entity[QuotaEntity(parts.get("user"), parts.get("client-id"))] = entry
    out: dict[str, ClusterError | None] = {}
    for entity in changes:
        got = by_entity.get(entity)
        if got is None:
            out[entity.key] = ClusterRequestError(
                f"{entity.key}: the broker gave no result for it", item=entity.key
            )
        else:
            out[entity.key] = item_error(
                "AlterClientQuotas", entity.key, got.error_code, got.error_message
            )
    return out


def read_describe_scram_users(resp: Any) -> dict[tuple[str, str], ScramCredential]:
    _check(resp, "DescribeUserScramCredentials")
    out: dict[tuple[str, str], ScramCredential] = {}
    for r in resp.results:
        if r.error_code == 91:  # RESOURCE_NOT_FOUND: a user without credentials
            continue
        if r.error_code:
            err = item_error("DescribeUserScramCredentials", r.user, r.error_code, r.error_message)
            if err is not None:
                raise err
        for info in r.credential_infos:
            mech = _named("mechanism", info.mechanism, "DescribeUserScramCredentials")
            out[(r.user, mech)] = ScramCredential(r.user, mech, int(info.iterations))
    return out


def read_upsert_scram_users(resp: Any, upserts: Sequence[ScramUpsert]) -> Results:
    by_user: dict[str, Any] = {r.user: r for r in resp.results}
    out: dict[str, ClusterError | None] = {}
    for u in upserts:
        r = by_user.get(u.name)
        if r is None:
            out[u.key] = ClusterRequestError(f"{u.key}: the broker gave no result", item=u.key)
        else:
            out[u.key] = item_error(
                "AlterUserScramCredentials", u.key, r.error_code, r.error_message
            )
    return out


# ------------------------------------------------------------------ the adapter half


class AccessRequests(PasswordVersions):
    """The access operations of the ClusterAdmin port for ``KafkaAdmin`` (which provides
    ``_require`` and ``_send``); the passwordVersion records are ``PasswordVersions``'."""

    def _require(self, request_class: Any) -> None:  # pragma: no cover - KafkaAdmin's
        raise NotImplementedError

    def _send(self, request: Any, node_id: int | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _call(self, request: Any) -> Any:
        self._require(type(request))
        return self._send(request)

    def describe_acls(self) -> frozenset[Acl]:
        return read_describe_acls(self._call(build_describe_acls()))

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        if not acls:
            return {}
        return read_create_acls(self._call(build_create_acls(acls)), acls)

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        if not acls:
            return {}
        return read_delete_acls(self._call(build_delete_acls(acls)), acls)

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return read_describe_client_quotas(self._call(build_describe_client_quotas()))

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        if not changes:
            return {}
        return read_alter_client_quotas(self._call(build_alter_client_quotas(changes)), changes)

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        """The credentials, each with the passwordVersion recorded for it (versions.py)."""
        creds = read_describe_scram_users(self._call(build_describe_scram_users()))
        if not creds:
            return creds
        return join(creds, self.read_versions(), self._version_topic)

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        """AlterUserScramCredentials, then the passwordVersion records of the credentials
        written. A credential written whose record failed is that item's error: it is not
        done, and the next plan writes it (and its record) again."""
        if not upserts:
            return {}
        results = dict(
            read_upsert_scram_users(self._call(build_upsert_scram_users(upserts)), upserts)
        )
        written = [u for u in upserts if results.get(u.key) is None]
        failed = self.write_versions(written)
        if failed is not None:
            for u in written:
                results[u.key] = ClusterRequestError(
                    f"{u.key}: the credential was written, but its passwordVersion was not "
                    f"recorded in topic {self._version_topic} ({failed}); a new plan writes "
                    "it again",
                    code="VERSION_NOT_RECORDED",
                    item=u.key,
                    changed=True,
                )
        return results
