"""The access action kinds: their fields, JSON and order among all kinds.

::

    +  upsert_user   one AlterUserScramCredentials (new user, iterations, passwordVersion bump)
    ~  alter_quota   one AlterClientQuotas (set and remove keys per entity)
    +  create_acl    one CreateAcls for every binding
    -  delete_acl    one DeleteAcls (exact filters); only when cluster.yaml has
                     ``unmanagedAcls: delete``, and apply needs --allow-delete

Each kind registers itself in ``kgitops.plan.action_base`` (orders 52-58: after the topic
changes, before delete_topic); ``kgitops.plan.actions`` imports this module, so the registry
it answers for holds them. An action's ``topic`` is its subject (what results and reports
are keyed by): the binding's
``key`` (``User:a allow write topic:orders``), the quota entity (``user=a``), or
``name mechanism`` for a user. A plan never holds a password: ``upsert_user`` names the
environment variable apply reads it from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kgitops.access import Acl, QuotaEntity, json_number
from kgitops.jsonfields import empty, json_of, pruned
from kgitops.plan.action_base import Action

_NO_ENTITY = QuotaEntity()
_NO_ACL = Acl("", "topic", "", "literal", "read")


def _n(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


@dataclass(frozen=True)
class UpsertUser(
    Action, kind="upsert_user", order=52, symbol="+", verb="SCRAM credential(s) to write"
):
    unit: ClassVar[tuple[str, str]] = ("SCRAM user", "SCRAM users")
    api: ClassVar[str] = "AlterUserScramCredentials"  # the Kafka API apply sends it in
    name: str = ""
    mechanism: str = ""
    iterations: int = 8192
    password_env: str = ""
    password_version: int = 1
    reason: str = ""

    def own_json(self) -> dict[str, Any]:
        fields = ("mechanism", "iterations", "password_env", "password_version", "reason")
        return {"user": self.name, **json_of(self, *fields)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UpsertUser:
        return upsert_user(
            str(data["user"]),
            str(data["mechanism"]),
            int(data["iterations"]),
            str(data["passwordEnv"]),
            int(data.get("passwordVersion", 1)),
            str(data.get("reason", "")),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return (
            f"{data['iterations']} iterations, password from ${data['passwordEnv']} "
            f"({data.get('reason', '')})"
        )


def upsert_user(
    name: str,
    mechanism: str,
    iterations: int,
    password_env: str,
    password_version: int,
    reason: str,
) -> UpsertUser:
    return UpsertUser(
        f"{name} {mechanism}", name, mechanism, iterations, password_env, password_version, reason
    )


@dataclass(frozen=True)
class AlterQuota(Action, kind="alter_quota", order=54, symbol="~", verb="quota(s) to change"):
    unit: ClassVar[tuple[str, str]] = ("quota", "quotas")
    api: ClassVar[str] = "AlterClientQuotas"  # the Kafka API apply sends it in
    entity: QuotaEntity = _NO_ENTITY
    set: Mapping[str, float] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    previous: Mapping[str, float] = field(default_factory=dict)

    def own_json(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_json(),
            "set": {k: json_number(v) for k, v in sorted(self.set.items())},
            "delete": sorted(self.delete),
            "previous": {k: json_number(v) for k, v in sorted(self.previous.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AlterQuota:
        return alter_quota(
            QuotaEntity.from_json(data["entity"]),
            {str(k): float(v) for k, v in data.get("set", {}).items()},
            tuple(str(k) for k in data.get("delete", [])),
            {str(k): float(v) for k, v in data.get("previous", {}).items()},
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        prev = data.get("previous", {})
        parts = [
            f"{k}: {_n(prev[k])} -> {_n(v)}" if k in prev else f"{k} = {_n(v)}"
            for k, v in data.get("set", {}).items()
        ]
        parts += [f"{k} removed (was {_n(prev.get(k, '?'))})" for k in data.get("delete", [])]
        return ", ".join(parts)


def alter_quota(
    entity: QuotaEntity,
    set_: Mapping[str, float],
    delete: tuple[str, ...],
    previous: Mapping[str, float],
) -> AlterQuota:
    return AlterQuota(entity.key, entity, dict(set_), tuple(sorted(delete)), dict(previous))


@dataclass(frozen=True)
class CreateAcl(Action, kind="create_acl", order=56, symbol="+", verb="ACL(s) to create"):
    unit: ClassVar[tuple[str, str]] = ("ACL", "ACLs")
    api: ClassVar[str] = "CreateAcls"  # the Kafka API apply sends it in
    acl: Acl = _NO_ACL
    source: str = ""

    def own_json(self) -> dict[str, Any]:
        return pruned({"acl": self.acl.to_json(), "source": self.source}, {"source": empty})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CreateAcl:
        return create_acl(Acl.from_json(data["acl"]), str(data.get("source", "")))

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return f"from {data['source']}" if data.get("source") else ""


@dataclass(frozen=True)
class DeleteAcl(Action, kind="delete_acl", order=58, symbol="-", verb="ACL(s) to delete"):
    unit: ClassVar[tuple[str, str]] = ("ACL", "ACLs")
    api: ClassVar[str] = "DeleteAcls"  # the Kafka API apply sends it in
    acl: Acl = _NO_ACL

    def own_json(self) -> dict[str, Any]:
        return {"acl": self.acl.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeleteAcl:
        return delete_acl(Acl.from_json(data["acl"]))

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return "not in git (unmanagedAcls: delete; apply needs --allow-delete)"


def create_acl(acl: Acl, source: str = "") -> CreateAcl:
    return CreateAcl(acl.key, acl, source)


def delete_acl(acl: Acl) -> DeleteAcl:
    return DeleteAcl(acl.key, acl)


_ACCESS_CLASSES = (UpsertUser, AlterQuota, CreateAcl, DeleteAcl)


def write_apis(actions: Iterable[Action]) -> list[str]:
    """The Kafka APIs apply sends ``actions``' access changes in, sorted: what apply's
    preflight probes before it changes anything (``kgitops.apply.access``)."""
    return sorted({a.api for a in actions if isinstance(a, _ACCESS_CLASSES)})
