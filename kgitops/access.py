"""Access values: ACL bindings, SCRAM credentials and client quotas, desired and live.

One ``Acl`` is exactly one Kafka ``AclBinding``: a resource pattern (type, name, literal or
prefixed), a principal, a host, one operation and allow/deny. An ACL document with
``operations: [read, describe]`` is two of them; the plan creates and deletes bindings, as
Kafka's CreateAcls / DeleteAcls do.

A SCRAM credential is kept as Kafka keeps it: mechanism, iterations, salt and the stored key
(``H(HMAC(SaltedPassword, "Client Key"))``, RFC 5802) -- never the password nor the salted
password. ``password_version`` is the ``passwordVersion`` of the User document the
credential was last written from, when the adapter knows it: the simulated cluster keeps it
next to the credential; on a real Kafka, whose DescribeUserScramCredentials returns only
mechanism and iterations, the adapter records it in a topic of the cluster
(kgitops/cluster/kafka/versions.py). ``None`` is "no record", and ``version_note`` says why
(the plan counts such a credential as version 1: kgitops/plan/access_diff.py).

Quotas are Kafka's client-quota entities (``user`` and/or ``client-id``; ``None`` is absent,
``"<default>"`` the default entity) with Kafka's keys (``producer_byte_rate`` ...).

JSON (in the state file and snapshots, ``"access"``)::

    {"acls": [{"principal": "User:a", "host": "*", "resourceType": "topic", "name": "orders",
               "patternType": "literal", "operation": "write", "permission": "allow"}],
     "users": [{"name": "a", "mechanism": "SCRAM-SHA-512", "iterations": 8192,
                "salt": "<base64>", "storedKey": "<base64>", "passwordVersion": 1}],
     "quotas": [{"entity": {"user": "a"}, "values": {"producer_byte_rate": 1048576}}]}
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.errors import Mark
from kgitops.jsonfields import empty, is_none, json_of, optional, pruned

RESOURCE_TYPES = ("topic", "group", "cluster", "transactional_id")
PATTERN_TYPES = ("literal", "prefixed")
PERMISSIONS = ("allow", "deny")
#: Kafka's AclOperation names, lower snake case (AclOperation.java), without ANY/UNKNOWN.
OPERATIONS = (
    "all",
    "read",
    "write",
    "create",
    "delete",
    "alter",
    "describe",
    "cluster_action",
    "describe_configs",
    "alter_configs",
    "idempotent_write",
    "create_tokens",
    "describe_tokens",
)
#: The operations Kafka accepts per resource type (AclEntry.supportedOperations).
OPERATIONS_BY_RESOURCE: Mapping[str, frozenset[str]] = {
    "topic": frozenset(
        {"all", "read", "write", "create", "delete", "alter", "describe"}
        | {"describe_configs", "alter_configs"}
    ),
    "group": frozenset({"all", "read", "describe", "delete"}),
    "cluster": frozenset(
        {"all", "create", "cluster_action", "describe_configs", "alter_configs"}
        | {"idempotent_write", "alter", "describe", "create_tokens", "describe_tokens"}
    ),
    "transactional_id": frozenset({"all", "describe", "write"}),
}
CLUSTER_RESOURCE = "kafka-cluster"  # the one cluster resource's name (Resource.CLUSTER_NAME)
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_MIN_ITERATIONS = 4096  # ScramMechanism.minIterations
SCRAM_MAX_ITERATIONS = 16384  # ScramMechanism.maxIterations (broker-side limit)
#: The quota document's fields and the keys Kafka stores them under (QuotaConfigs.java).
QUOTA_KEYS: Mapping[str, str] = {
    "producerByteRate": "producer_byte_rate",
    "consumerByteRate": "consumer_byte_rate",
    "requestPercentage": "request_percentage",
    "controllerMutationRate": "controller_mutation_rate",
}
DEFAULT_ENTITY = "<default>"
#: What can be read of a cluster's access, each with its own request.
ACCESS_PARTS = ("acls", "users", "quotas")
#: The Kafka API that reads each part (probed before the part is read: docs/access.md).
READ_APIS = {
    "acls": "DescribeAcls",
    "users": "DescribeUserScramCredentials",
    "quotas": "DescribeClientQuotas",
}
#: Every access API: the reads, and the writes apply sends access changes in.
ACCESS_APIS = frozenset(
    {
        *READ_APIS.values(),
        "CreateAcls",
        "DeleteAcls",
        "AlterUserScramCredentials",
        "AlterClientQuotas",
    }
)
NOWHERE = Mark("<memory>")
#: the fields of an Acl's JSON, in order
ACL_JSON = ("principal", "host", "resource_type", "name", "pattern_type", "operation", "permission")
#: a ScramCredential's JSON: these fields in this order, each left out when its rule says unset
_CREDENTIAL_JSON = ("name", "mechanism", "iterations", "salt", "stored_key", "password_version")
_CREDENTIAL_UNSET = {"salt": empty, "storedKey": empty, "passwordVersion": is_none}
#: a QuotaEntity's JSON: the parts it has
_ENTITY_UNSET = {"user": is_none, "clientId": is_none}


@dataclass(frozen=True, order=True, slots=True)
class Acl:
    """One Kafka AclBinding. Fields are ordered so that sorting groups by principal."""

    principal: str
    resource_type: str
    name: str
    pattern_type: str
    operation: str
    permission: str = "allow"
    host: str = "*"

    @property
    def key(self) -> str:
        """``User:a allow write topic:orders`` (``orders*`` when prefixed, ``@host`` when
        not ``*``): how plans, reports and results name a binding. Unique per binding."""
        star = "*" if self.pattern_type == "prefixed" else ""
        at = "" if self.host == "*" else f" @{self.host}"
        return (
            f"{self.principal} {self.permission} {self.operation} "
            f"{self.resource_type}:{self.name}{star}{at}"
        )

    def to_json(self) -> dict[str, str]:
        return json_of(self, *ACL_JSON)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Acl:
        acl = cls(
            principal=_s(d["principal"]),
            resource_type=_choice(d["resourceType"], RESOURCE_TYPES),
            name=_s(d["name"]),
            pattern_type=_choice(d.get("patternType", "literal"), PATTERN_TYPES),
            operation=_choice(d["operation"], OPERATIONS),
            permission=_choice(d.get("permission", "allow"), PERMISSIONS),
            host=_s(d.get("host", "*")),
        )
        return acl


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """One live SCRAM credential (user, mechanism). ``salt``/``stored_key`` are base64 and
    empty when the adapter cannot read them (Kafka never returns them). ``version_note``:
    why ``password_version`` is None ("no record", "the record is for 4096 iterations"...),
    for the plan's reason; not part of the JSON or of equality (nor is
    ``version_unrecorded``)."""

    name: str
    mechanism: str
    iterations: int
    salt: str = ""
    stored_key: str = ""
    password_version: int | None = None
    version_note: str = field(default="", compare=False)
    #: The cluster holds no passwordVersion record at all (its version topic is missing or
    #: empty): kgitops never recorded one there, e.g. the first plan since it records them.
    version_unrecorded: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return pruned(json_of(self, *_CREDENTIAL_JSON), _CREDENTIAL_UNSET)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ScramCredential:
        return cls(
            name=_s(d["name"]),
            mechanism=_choice(d["mechanism"], SCRAM_MECHANISMS),
            iterations=_i(d["iterations"]),
            salt=_s(d.get("salt", "")),
            stored_key=_s(d.get("storedKey", "")),
            password_version=optional(_i, d.get("passwordVersion")),
        )


@dataclass(frozen=True, slots=True)
class QuotaEntity:
    """A client-quota entity: user, client id, or both (None = not part of the entity)."""

    user: str | None = None
    client_id: str | None = None

    def __lt__(self, other: QuotaEntity) -> bool:
        """Sorted by user then client id, an absent part first (None never meets a str)."""
        return self._order() < other._order()

    def _order(self) -> tuple[bool, str, bool, str]:
        return (
            self.user is not None,
            self.user or "",
            self.client_id is not None,
            self.client_id or "",
        )

    @property
    def key(self) -> str:
        """``user=orders-app``, ``client-id=x``, ``user=<default>,client-id=x``."""
        parts = []
        if self.user is not None:
            parts.append(f"user={self.user}")
        if self.client_id is not None:
            parts.append(f"client-id={self.client_id}")
        return ",".join(parts)

    def to_json(self) -> dict[str, str]:
        return pruned(json_of(self, "user", "client_id"), _ENTITY_UNSET)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> QuotaEntity:
        user, client = d.get("user"), d.get("clientId")
        if user is None and client is None:
            raise ValueError("a quota entity needs user or clientId")
        return cls(optional(_s, user), optional(_s, client))


@dataclass(frozen=True)
class AccessState:
    """The live ACLs, SCRAM credentials and quotas of a cluster."""

    acls: frozenset[Acl] = frozenset()
    users: Mapping[tuple[str, str], ScramCredential] = field(default_factory=dict)
    quotas: Mapping[QuotaEntity, Mapping[str, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "acls": [a.to_json() for a in sorted(self.acls)],
            "users": [self.users[k].to_json() for k in sorted(self.users)],
            "quotas": [
                {
                    "entity": e.to_json(),
                    "values": {k: json_number(v) for k, v in sorted(vals.items())},
                }
                for e, vals in sorted(self.quotas.items())
                if vals
            ],
        }

    @classmethod
    def from_json(cls, data: object) -> AccessState:
        """ValueError (naming the bad entry) for malformed JSON."""
        if not isinstance(data, Mapping):
            raise ValueError("access: expected an object with acls, users and quotas")
        acls: set[Acl] = set()
        users: dict[tuple[str, str], ScramCredential] = {}
        quotas: dict[QuotaEntity, dict[str, float]] = {}
        for what, items in (
            ("acls", data.get("acls", [])),
            ("users", data.get("users", [])),
            ("quotas", data.get("quotas", [])),
        ):
            if not isinstance(items, list):
                raise ValueError(f"access.{what}: expected a list")
            for i, item in enumerate(items):
                try:
                    if not isinstance(item, Mapping):
                        raise TypeError("expected an object")
                    if what == "acls":
                        acls.add(Acl.from_json(item))
                    elif what == "users":
                        cred = ScramCredential.from_json(item)
                        users[(cred.name, cred.mechanism)] = cred
                    else:
                        entity = QuotaEntity.from_json(item["entity"])
                        values = item.get("values", {})
                        if not isinstance(values, Mapping):
                            raise TypeError("values: expected an object")
                        quotas[entity] = {
                            _choice(k, tuple(QUOTA_KEYS.values())): _f(v) for k, v in values.items()
                        }
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"access.{what}[{i}]: malformed ({exc})") from None
        return cls(frozenset(acls), users, quotas)

    def digest(self, parts: Collection[str] = ACCESS_PARTS) -> str:
        """What a plan depends on, of the ``parts`` it read: the bindings, each credential's
        mechanism, iterations and version (not salt or key), the quota values. Apply refuses
        a plan made against another access state."""
        users = sorted(
            (c.name, c.mechanism, c.iterations, c.password_version) for c in self.users.values()
        )
        quotas = sorted((e.key, sorted(v.items())) for e, v in self.quotas.items() if v)
        acls = sorted(a.key for a in self.acls)
        text = repr(
            (
                sorted(parts),
                acls if "acls" in parts else None,
                users if "users" in parts else None,
                quotas if "quotas" in parts else None,
            )
        )
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# ------------------------------------------------------------------ desired side


@dataclass(frozen=True)
class AclSpec:
    """A binding git asks for, where (``mark``) and from what (``source``: ``ACL document``
    or ``topic orders access.produce``)."""

    acl: Acl
    mark: Mark
    source: str = "ACL document"
    labels: tuple[tuple[str, str], ...] = ()  # its document's labels: (a topic's, for access:)


@dataclass(frozen=True)
class UserSpec:
    """One ``kind: User`` document: a SCRAM credential. The password is read from the
    environment variable ``password_env`` only by apply, never by plan."""

    name: str
    mechanism: str
    password_env: str
    iterations: int = 8192
    password_version: int = 1
    mark: Mark = NOWHERE
    labels: tuple[tuple[str, str], ...] = ()  # its document's labels:


@dataclass(frozen=True)
class QuotaSpec:
    """One ``kind: Quota`` document, values by Kafka's keys."""

    entity: QuotaEntity
    values: Mapping[str, float]
    mark: Mark = NOWHERE
    labels: tuple[tuple[str, str], ...] = ()  # its document's labels:


@dataclass(frozen=True)
class AccessSpecs:
    """Everything a cluster folder says about access. ``used`` is False when the folder has
    no access document and no topic ``access``: then plan reads no access from the cluster."""

    acls: tuple[AclSpec, ...] = ()
    users: tuple[UserSpec, ...] = ()
    quotas: tuple[QuotaSpec, ...] = ()
    used: bool = False


NO_ACCESS = AccessSpecs()


# ------------------------------------------------------------------ SCRAM (RFC 5802)


def version_topic_problems(partitions: int, cleanup_policy: str | None) -> list[str]:
    """Why a live topic is not kgitops' passwordVersion topic (empty when it may be): more than
    one partition (another program's topic; kgitops reads only partition 0), or a cleanup
    policy without ``compact`` (its records would expire). A policy the broker does not report
    is not held against the topic."""
    out = []
    if partitions != 1:
        out.append(f"{partitions} partitions, not 1")
    if cleanup_policy is not None and "compact" not in [
        p.strip() for p in cleanup_policy.split(",")
    ]:
        out.append(f"cleanup.policy {cleanup_policy}, not compact")
    return out


def scram_stored_key(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Kafka's ScramFormatter: SaltedPassword = PBKDF2(HMAC-H, password, salt, i);
    ClientKey = HMAC(SaltedPassword, "Client Key"); StoredKey = H(ClientKey)."""
    return stored_key(mechanism, scram_salted_password(mechanism, password, salt, iterations))


def stored_key(mechanism: str, salted_password: bytes) -> bytes:
    """StoredKey = H(HMAC(SaltedPassword, "Client Key")): what the broker keeps."""
    name = _hash_name(mechanism)
    client_key = hmac.new(salted_password, b"Client Key", name).digest()
    return hashlib.new(name, client_key).digest()


def scram_salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, i) of RFC 5802: what AlterUserScramCredentials carries."""
    return hashlib.pbkdf2_hmac(_hash_name(mechanism), password.encode(), salt, iterations)


def _hash_name(mechanism: str) -> str:
    if mechanism == "SCRAM-SHA-256":
        return "sha256"
    if mechanism == "SCRAM-SHA-512":
        return "sha512"
    raise ValueError(f"not a SCRAM mechanism: {mechanism!r}")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ------------------------------------------------------------------ helpers


def _s(v: object) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, not {v!r}")
    return v


def _i(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, not {v!r}")
    return v


def _f(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError(f"expected a number, not {v!r}")
    return float(v)


def json_number(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


def _choice(v: object, choices: tuple[str, ...]) -> str:
    s = _s(v)
    if s not in choices:
        raise ValueError(f"{s!r} is not one of {', '.join(choices)}")
    return s
