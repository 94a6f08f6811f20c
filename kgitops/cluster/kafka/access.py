"""ACLs, client quotas and SCRAM credentials through kafka-python: the access half of
``KafkaAdmin``.

One request per call, whatever the number of items::

    describe_acls           DescribeAcls with one filter matching every binding (ANY)
    create_acls             CreateAcls, one creation per binding
    delete_acls             DeleteAcls, one exact filter per binding
    describe_client_quotas  DescribeClientQuotas with no component (every entity)
    alter_client_quotas     AlterClientQuotas, one entry per entity (set / remove ops)
    describe_scram_users    DescribeUserScramCredentials for every user, then the
                            passwordVersion records (Metadata, then KafkaConsumer:
                            versions.py, topiclog.py)
    upsert_scram_users      AlterUserScramCredentials upsertions (salt + salted password),
                            then the versions written (KafkaProducer, acks=all)

The request builders and response readers are pure functions of kafka-python's protocol
classes (``build_*`` / ``read_*``), so each is tested to encode and decode at every version
kafka-python has, without a broker. Codes are Kafka's (``ResourceType``, ``PatternType``,
``AclOperation``, ``AclPermissionType``, ``ScramMechanism``).

Before the first request of each access API, ``probe_access`` sends the smallest request of
it that changes nothing (``build_probe``) with its own short deadline (``PROBE_MS``), so
a broker that advertises an API but does not serve it is refused in one line in seconds,
before anything is read or changed, instead of after requestTimeoutMs. A broker that answers
a change with success without doing it (the local Tansu broker's AlterUserScramCredentials
keeps nothing) passes the probe and is caught by apply's read-back: the change is reported
NOT done and the next plan shows it again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
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
from kgitops.cluster.kafka.errors import api_name, item_error
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.kafka.version_records import join
from kgitops.cluster.kafka.versions import PasswordVersions
from kgitops.cluster.port import QuotaChange, Results, ScramUpsert
from kgitops.errors import (
    AccessUnsupported,
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterTlsError,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.model import ClusterSpec

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


# The fields of a CreateAcls creation and of a DeleteAcls filter, in _binding's order.
_CREATION_FIELDS = (
    "resource_type",
    "resource_name",
    "resource_pattern_type",
    "principal",
    "host",
    "operation",
    "permission_type",
)
_FILTER_FIELDS = (
    "resource_type_filter",
    "resource_name_filter",
    "pattern_type_filter",
    "principal_filter",
    "host_filter",
    "operation",
    "permission_type",
)


def _binding(a: Acl, fields: Sequence[str]) -> dict[str, Any]:
    """One ACL in Kafka's codes, under the names ``fields`` give its seven parts."""
    values = (
        RESOURCE_TYPES[a.resource_type],
        a.name,
        PATTERN_TYPES[a.pattern_type],
        a.principal,
        a.host,
        OPERATIONS[a.operation],
        PERMISSIONS[a.permission],
    )
    return dict(zip(fields, values, strict=True))


def build_create_acls(acls: Sequence[Acl]) -> Any:
    C = CreateAclsRequest.AclCreation
    return CreateAclsRequest(creations=[C(**_binding(a, _CREATION_FIELDS)) for a in acls])


def build_delete_acls(acls: Sequence[Acl]) -> Any:
    F = DeleteAclsRequest.DeleteAclsFilter
    return DeleteAclsRequest(filters=[F(**_binding(a, _FILTER_FIELDS)) for a in acls])


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


# ------------------------------------------------------------------ probes

#: A probe's deadline by default (milliseconds; cluster.yaml's accessProbeTimeoutMs, and
#: requestTimeoutMs when that is shorter). Kafka answers these requests from memory, or with
#: one controller event that writes no record; a broker that does not serve the API must not
#: cost requestTimeoutMs (30 s by default) to find out. A slow controller (an election, a
#: busy queue) may miss it too: the refusal says so.
PROBE_MS = 3_000
#: The one user (and quota entity) the read probes ask for: Kafka answers an unknown name
#: with RESOURCE_NOT_FOUND / no entry, and an empty or null list would mean every user.
PROBE_NAME = "kgitops-probe"
#: What a cluster that does not serve the API lacks, as the refusal says it.
FAMILY = {
    "DescribeAcls": "ACLs",
    "CreateAcls": "ACLs",
    "DeleteAcls": "deleting ACLs",
    "DescribeUserScramCredentials": "SCRAM credentials",
    "AlterUserScramCredentials": "SCRAM credentials",
    "DescribeClientQuotas": "client quotas",
    "AlterClientQuotas": "client quotas",
}
#: The probes, as the refusal names them.
PROBE_WHAT = {
    "DescribeAcls": "a probe for the cluster resource's ACLs",
    "CreateAcls": "an empty probe",
    "DeleteAcls": "an empty probe",
    "DescribeUserScramCredentials": "a probe for one user",
    "AlterUserScramCredentials": "an empty probe",
    "DescribeClientQuotas": "a probe for one user's quotas",
    "AlterClientQuotas": "an empty, validate-only probe",
}


def build_probe(api: str) -> Any:
    """The smallest request of ``api`` that reads next to nothing and changes nothing.

    Kafka (``AclApis``, ``KafkaApis``, ``ControllerApis``; KRaft and ZooKeeper): the empty
    writes are valid (the arrays are not nullable, an empty one is allowed) and are answered
    with an empty result list, whatever the principal may do (an unauthorised one gets one
    error per item: none); on KRaft they are forwarded to the controller, whose event writes
    no record. The reads name one thing: DescribeUserScramCredentials with ``users`` empty
    or null describes every user (``ScramImage.describe``, ``ZkAdminManager``).
    """
    if api == "DescribeAcls":
        return DescribeAclsRequest(
            resource_type_filter=RESOURCE_TYPES["cluster"],
            resource_name_filter="kafka-cluster",
            pattern_type_filter=PATTERN_TYPES["literal"],
            principal_filter=None,
            host_filter=None,
            operation=ANY,
            permission_type=ANY,
        )
    if api == "CreateAcls":
        return CreateAclsRequest(creations=[])
    if api == "DeleteAcls":
        return DeleteAclsRequest(filters=[])
    if api == "DescribeUserScramCredentials":
        user = DescribeUserScramCredentialsRequest.UserName
        return DescribeUserScramCredentialsRequest(users=[user(name=PROBE_NAME)])
    if api == "AlterUserScramCredentials":
        return AlterUserScramCredentialsRequest(deletions=[], upsertions=[])
    if api == "DescribeClientQuotas":
        component = DescribeClientQuotasRequest.ComponentData
        return DescribeClientQuotasRequest(
            components=[component(entity_type="user", match_type=0, match=PROBE_NAME)],
            strict=True,
        )
    if api == "AlterClientQuotas":
        return AlterClientQuotasRequest(entries=[], validate_only=True)
    raise ValueError(f"not an access API: {api}")


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


class AccessRequests:
    """The access operations of the ClusterAdmin port, over the adapter's ``Transport``
    (``KafkaAdmin`` holds one and hands each call on); the passwordVersion records are
    ``versions``' (versions.PasswordVersions, which reads and writes them in its topic)."""

    _access_served: set[str]
    _access_refused: dict[str, AccessUnsupported]
    _access_where: str  # the cluster, as a refusal names it (its bootstrap servers)
    _access_timeout_ms: int  # requestTimeoutMs
    _access_probe_ms: int = PROBE_MS  # accessProbeTimeoutMs

    def __init__(
        self, transport: Transport, spec: ClusterSpec, *, versions: PasswordVersions
    ) -> None:
        self._transport = transport
        self._spec = spec
        self.versions = versions
        self._access_timeout_ms = transport.timeout_ms
        self._access_probe_ms = int(spec.access_probe_timeout_ms)
        self._access_served = set()
        self._access_refused = {}
        self._access_where = ",".join(spec.bootstrap_servers)

    def _send(
        self, request: Any, node_id: int | None = None, *, timeout_ms: int | None = None
    ) -> Any:
        return self._transport.send(request, node_id, timeout_ms=timeout_ms)

    def supports(self, request_class: Any) -> bool:
        return self._transport.supports(request_class)

    def _call(self, request: Any) -> Any:
        """Send an access request, its API probed first (once per adapter)."""
        self.probe_access([api_name(type(request).__name__)])
        return self._send(request)

    def probe_access(self, apis: Collection[str]) -> None:
        """``ClusterAdmin.probe_access``: each API not probed yet on this adapter, the ones
        not advertised first (no request), then one probe each, in order, the first that
        fails refused. Only a well-formed answer within the deadline passes (any error code
        in it is the real request's business); a time-out or an answer kafka-python cannot
        decode is the refusal. Unreachable, authentication and TLS failures are what they
        are, not a verdict on the API."""
        todo = [api for api in sorted(set(apis)) if api not in self._access_served]
        for api in todo:
            if api in self._access_refused:
                raise self._access_refused[api]
        requests = {api: build_probe(api) for api in todo}
        where = self._access_where
        for api in todo:
            if not self.supports(type(requests[api])):
                raise self._refuse(
                    api,
                    f"the cluster at {where} does not list {api} among its APIs: "
                    f"it does not support {FAMILY[api]}",
                )
        ms = max(1, min(self._access_probe_ms, self._access_timeout_ms))
        setting = "accessProbeTimeoutMs" if ms == self._access_probe_ms else "requestTimeoutMs"
        for api in todo:
            what = PROBE_WHAT[api]
            why = ""
            try:
                self._send(requests[api], timeout_ms=ms)
            except ClusterTimeout:
                # no answer is no proof: a slow controller misses the deadline as well
                raise self._refuse(
                    api,
                    f"the cluster at {where} did not answer {api} within {ms / 1000:g} s "
                    f"({what}): it does not support {FAMILY[api]}, or it is too slow right "
                    f"now (run again, or raise {setting} in cluster.yaml)",
                ) from None
            except (ClusterUnreachable, ClusterAuthError, ClusterTlsError, ClusterRequestError):
                raise  # not a verdict on the API (a refused request is an answer)
            except UnsupportedOperation:
                why = f"refused {api} ({what}) as unsupported"
            except ClusterError:
                why = f"answered {api} ({what}) with a reply that does not decode"
            if not why:
                self._access_served.add(api)
                continue
            raise self._refuse(
                api, f"the cluster at {where} {why}: it does not support {FAMILY[api]}"
            )

    def _refuse(self, api: str, message: str) -> AccessUnsupported:
        """The refusal, kept: a refused API is not probed again on this adapter."""
        self._access_refused[api] = AccessUnsupported(api, message)
        return self._access_refused[api]

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
        return join(creds, self.versions.read_versions(), self.versions.name)

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        """AlterUserScramCredentials, then the passwordVersion records of the credentials
        written. The version topic is made ready first (created, a leader): when it cannot
        be, no credential is written. A credential written whose record failed is that
        item's error: it is not done, and the next plan writes it (and its record) again."""
        if not upserts:
            return {}
        sec = self._spec.security
        if not sec.tls and not sec.allow_cleartext_credentials:
            # the plan refuses this first (plan.connection.credentials_in_clear); this is
            # the last line: a salted password never leaves without TLS unless said
            return {
                u.key: ClusterRequestError(
                    f"{u.key}: not written: SCRAM credentials over protocol {sec.protocol} "
                    "(no TLS) need security.allowCleartextCredentials: true",
                    code="CLEARTEXT_CREDENTIALS",
                    item=u.key,
                )
                for u in upserts
            }
        unready = self.versions.prepare_versions()
        if unready is not None:
            return {
                u.key: ClusterRequestError(
                    f"{u.key}: not written: the passwordVersion topic {self.versions.name} "
                    f"is not available ({unready})",
                    code="VERSION_TOPIC_UNAVAILABLE",
                    item=u.key,
                )
                for u in upserts
            }
        results = dict(
            read_upsert_scram_users(self._call(build_upsert_scram_users(upserts)), upserts)
        )
        written = [u for u in upserts if results.get(u.key) is None]
        for key, failed in self.versions.record_versions(written).items():
            results[key] = ClusterRequestError(
                f"{key}: the credential was written, but its passwordVersion was not "
                f"recorded in topic {self.versions.name} ({failed}); a new plan writes "
                "it again",
                code="VERSION_NOT_RECORDED",
                item=key,
                changed=True,
            )
        return results
