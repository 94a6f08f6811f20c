"""The simulated cluster's ACLs, client quotas and SCRAM credentials, with Kafka's checks.

Kept in the state file under ``"access"`` (see ``kgitops.access``). Each request item is
checked as the KRaft controller checks it, with Kafka's error codes:

    CreateAcls (``AclControlManager.validateNewAcl``): the resource type and pattern type must
        be concrete (not ANY/MATCH/UNKNOWN), the principal ``Type:name``, the host non-empty,
        the operation not ANY; the cluster resource is named ``kafka-cluster``. Creating a
        binding that exists succeeds and changes nothing.       -> INVALID_REQUEST
    DeleteAcls: an exact filter deletes the one binding it matches; matching none succeeds.
    AlterClientQuotas (``ClientQuotaControlManager``): known keys only, byte rates whole
        numbers, every value > 0; a key removed that is not set is no error.
                                                                 -> INVALID_REQUEST
    AlterUserScramCredentials (``ScramControlManager``): iterations between 4096 and 16384
        (UNACCEPTABLE_CREDENTIAL), a name (UNACCEPTABLE_CREDENTIAL), the same user twice in
        one request, whatever the mechanisms (DUPLICATE_RESOURCE: "A user credential cannot
        be altered twice in the same request"; Kafka keys the request by user name).

A credential is stored as Kafka stores it (salt, iterations, stored key), plus the
``passwordVersion`` kgitops wrote it from -- the one thing a real cluster cannot tell back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kgitops.access import (
    CLUSTER_RESOURCE,
    OPERATIONS,
    PATTERN_TYPES,
    PERMISSIONS,
    QUOTA_KEYS,
    RESOURCE_TYPES,
    SCRAM_MAX_ITERATIONS,
    SCRAM_MECHANISMS,
    SCRAM_MIN_ITERATIONS,
    AccessState,
    Acl,
    QuotaEntity,
    ScramCredential,
    b64,
    stored_key,
)
from kgitops.cluster.controller import error
from kgitops.cluster.port import QuotaChange, Results, ScramUpsert
from kgitops.errors import ClusterError

_RATE_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate"})


class AccessStore:
    """Mutable access state of the simulated cluster."""

    def __init__(self, state: AccessState | None = None) -> None:
        state = state or AccessState()
        self.acls: set[Acl] = set(state.acls)
        self.users: dict[tuple[str, str], ScramCredential] = dict(state.users)
        self.quotas: dict[QuotaEntity, dict[str, float]] = {
            e: dict(v) for e, v in state.quotas.items() if v
        }

    def state(self, *, reported: bool = False) -> AccessState:
        """The access state; ``reported`` (what describe answers): without each credential's
        salt and stored key, which Kafka's DescribeUserScramCredentials never returns (so no
        snapshot or plan JSON holds them)."""
        users = {
            k: replace(c, salt="", stored_key="") if reported else c
            for k, c in sorted(self.users.items())
        }
        return AccessState(
            frozenset(self.acls),
            users,
            {e: dict(v) for e, v in sorted(self.quotas.items()) if v},
        )

    # ------------------------------------------------------------------ ACLs

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        out: dict[str, ClusterError | None] = {}
        for acl in acls:
            problem = acl_problem(acl)
            if problem is not None:
                out[acl.key] = error("INVALID_REQUEST", problem, acl.key)
                continue
            self.acls.add(acl)
            out[acl.key] = None
        return out

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        out: dict[str, ClusterError | None] = {}
        for acl in acls:
            self.acls.discard(acl)
            out[acl.key] = None
        return out

    # ------------------------------------------------------------------ quotas

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        out: dict[str, ClusterError | None] = {}
        for entity, change in changes.items():
            problem = quota_problem(entity, change)
            if problem is not None:
                out[entity.key] = error("INVALID_REQUEST", problem, entity.key)
                continue
            values = self.quotas.setdefault(entity, {})
            values.update(change.set)
            for k in change.delete:
                values.pop(k, None)
            if not values:
                del self.quotas[entity]
            out[entity.key] = None
        return out

    # ------------------------------------------------------------------ SCRAM

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        out: dict[str, ClusterError | None] = {}
        seen = [u.name for u in upserts]
        for u in upserts:
            if seen.count(u.name) > 1:
                out[u.key] = error(
                    "DUPLICATE_RESOURCE",
                    "A user credential cannot be altered twice in the same request",
                    u.key,
                )
                continue
            problem = scram_problem(u)
            if problem is not None:
                out[u.key] = error("UNACCEPTABLE_CREDENTIAL", problem, u.key)
                continue
            self.users[(u.name, u.mechanism)] = ScramCredential(
                name=u.name,
                mechanism=u.mechanism,
                iterations=u.iterations,
                salt=b64(u.salt),
                stored_key=b64(stored_key(u.mechanism, u.salted_password)),
                password_version=u.password_version,
            )
            out[u.key] = None
        return out


def acl_problem(acl: Acl) -> str | None:
    """Why the controller would refuse creating ``acl``, or None."""
    if acl.resource_type not in RESOURCE_TYPES:
        return f"Invalid resourceType {acl.resource_type}"
    if acl.pattern_type not in PATTERN_TYPES:
        return f"Invalid patternType {acl.pattern_type}"
    if acl.operation not in OPERATIONS:
        return f"Invalid operation {acl.operation}"
    if acl.permission not in PERMISSIONS:
        return f"Invalid permissionType {acl.permission}"
    kind, _, name = acl.principal.partition(":")
    if not kind or not name:
        return f"Could not parse principal from `{acl.principal}` (no colon is present)."
    if not acl.host:
        return "Invalid empty host"
    if not acl.name:
        return "Resource name should not be empty"
    if acl.resource_type == "cluster" and acl.name != CLUSTER_RESOURCE:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_RESOURCE}"
    return None


def quota_problem(entity: QuotaEntity, change: QuotaChange) -> str | None:
    """Why the controller would refuse the quota change, or None."""
    if entity.user is None and entity.client_id is None:
        return "Invalid empty client quota entity"
    known = frozenset(QUOTA_KEYS.values())
    for key, value in sorted(change.set.items()):
        if key not in known:
            return f"Unknown quota key {key}"
        if key in _RATE_KEYS and not float(value).is_integer():
            return f"Quota {key} must be a whole number, not {value}"
        if value <= 0:
            return f"Quota {key} must be greater than 0"
    for key in change.delete:
        if key not in known:
            return f"Unknown quota key {key}"
    return None


def scram_problem(u: ScramUpsert) -> str | None:
    if not u.name:
        return "Username must not be empty"
    if u.mechanism not in SCRAM_MECHANISMS:
        return f"Unknown SCRAM mechanism {u.mechanism}"
    if u.iterations < SCRAM_MIN_ITERATIONS:
        return f"Too few iterations: {u.iterations} < {SCRAM_MIN_ITERATIONS}"
    if u.iterations > SCRAM_MAX_ITERATIONS:
        return f"Too many iterations: {u.iterations} > {SCRAM_MAX_ITERATIONS}"
    if not u.salt or not u.salted_password:
        return "Salt and salted password must not be empty"
    return None
