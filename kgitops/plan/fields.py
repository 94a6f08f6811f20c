"""The plan JSON's fields beyond its actions and fingerprint: their names, and the typed
``options`` of a saved plan. ``kgitops.plan.value.Plan`` holds each as a typed field and
writes it under the name here::

    "spread": {...}                      Plan.spread (only when it moves replicas)
    "accessFingerprint": "sha256:...",   Plan.access_fingerprint  } only when it covers
    "accessParts": ["acls", "users"],    Plan.access_parts        } access
    "targets": ["payments.*"],           Plan.targets (only a --target plan)
    "options": {"rebalance": false, ...}  Plan.options         } only a saved plan
    "recordedState": {...}                Plan.recorded_state  } (plan --out)

The readers below raise TypeError for a value of the wrong type (``Plan.from_json`` turns it
into "malformed plan").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kgitops.access import ACCESS_PARTS
from kgitops.jsonfields import empty, json_of, pruned

#: The plan field holding the digest of the live ACLs, SCRAM users and quotas it was made on.
ACCESS_FINGERPRINT = "accessFingerprint"
#: ... and which parts of it (``acls``, ``users``, ``quotas``) it read.
ACCESS_PARTS_FIELD = "accessParts"
#: The plan field with the per-broker figures before and after its moves.
SPREAD_FIELD = "spread"
#: The plan field listing the selectors of a targeted (partial) plan.
TARGETS_FIELD = "targets"
#: The saved plan's fields: how it was made, and the state it was made on.
OPTIONS_FIELD = "options"
RECORDED_STATE = "recordedState"

#: Every field named here (so not one ``Plan.extra`` keeps as unknown).
FIELDS = frozenset(
    {
        SPREAD_FIELD,
        ACCESS_FINGERPRINT,
        ACCESS_PARTS_FIELD,
        TARGETS_FIELD,
        OPTIONS_FIELD,
        RECORDED_STATE,
    }
)


#: PlanOptions' fields, in the order of its JSON (camelCase keys)
_OPTIONS = ("rebalance", "leaders", "allow_retention_drop", "targets")


@dataclass(frozen=True)
class PlanOptions:
    """How a saved plan was made (its JSON ``options``, written by ``plan --out``), so
    ``apply --plan`` plans again the same way, and only with the same flags given."""

    rebalance: bool = False
    leaders: bool = False
    allow_retention_drop: bool = False
    #: the ``--target`` selectors of a targeted plan (empty: a whole plan)
    targets: tuple[str, ...] = ()

    def used(self) -> dict[str, bool]:
        """Option (JSON name) -> whether the plan was made with it."""
        return {k: bool(v) for k, v in json_of(self, *_OPTIONS).items()}

    def to_json(self) -> dict[str, Any]:
        """Every option, ``targets`` only in a targeted plan."""
        out = json_of(self, *_OPTIONS)
        return pruned({**out, "targets": list(self.targets)}, {"targets": empty})

    @classmethod
    def from_json(cls, data: object) -> PlanOptions:
        if not isinstance(data, Mapping):
            raise TypeError("options is not an object")
        return cls(
            rebalance=bool(data.get("rebalance")),
            leaders=bool(data.get("leaders")),
            allow_retention_drop=bool(data.get("allowRetentionDrop")),
            targets=strings(data.get("targets") or [], "options.targets"),
        )


def fields_json(
    *,
    spread: Mapping[str, Any] | None,
    access_fingerprint: str | None,
    access_parts: tuple[str, ...] | None,
    targets: tuple[str, ...] | None,
    options: PlanOptions | None,
    recorded_state: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The fields as ``Plan.to_json`` writes them after the transfer, each only when set:
    spread, accessFingerprint, accessParts; in a targeted plan accessFingerprint,
    accessParts, spread, targets (the order plans have always had); then options and
    recordedState."""
    access: dict[str, Any] = {}
    if access_fingerprint is not None:
        access[ACCESS_FINGERPRINT] = access_fingerprint
    if access_parts is not None:
        access[ACCESS_PARTS_FIELD] = list(access_parts)
    spread_json = {} if spread is None else {SPREAD_FIELD: spread}
    if targets is None:
        out = spread_json | access
    else:
        out = access | spread_json | {TARGETS_FIELD: list(targets)}
    return out | saved_fields(options, recorded_state)


def fields_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """``Plan``'s keyword arguments for the fields of plan JSON ``data`` named here (None
    for each it lacks); TypeError for one of the wrong type."""
    parts, targets, options = (
        data.get(ACCESS_PARTS_FIELD),
        data.get(TARGETS_FIELD),
        data.get(OPTIONS_FIELD),
    )
    return {
        "spread": object_or_none(data.get(SPREAD_FIELD), SPREAD_FIELD),
        "access_fingerprint": string_or_none(data.get(ACCESS_FINGERPRINT), ACCESS_FINGERPRINT),
        "access_parts": None if parts is None else strings(parts, ACCESS_PARTS_FIELD),
        "targets": None if targets is None else strings(targets, TARGETS_FIELD),
        "options": None if options is None else PlanOptions.from_json(options),
        "recorded_state": object_or_none(data.get(RECORDED_STATE), RECORDED_STATE),
    }


def saved_fields(
    options: PlanOptions | None, recorded_state: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The fields ``plan --out`` adds to the plan's JSON: ``options`` and ``recordedState``
    (the shell adds them to the JSON it already has rather than serialise the plan twice)."""
    out: dict[str, Any] = {}
    if options is not None:
        out[OPTIONS_FIELD] = options.to_json()
    if recorded_state is not None:
        out[RECORDED_STATE] = recorded_state
    return out


def strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{where} is not a list of strings")
    return tuple(value)


def string_or_none(value: object, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{where} is not a string")


def object_or_none(value: object, where: str) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    raise TypeError(f"{where} is not an object")


def access_parts_of(parts: tuple[str, ...] | None) -> tuple[str, ...]:
    """The parts a plan recorded (all of them for a plan that recorded none)."""
    if parts is None:
        return ACCESS_PARTS
    return tuple(p for p in parts if p in ACCESS_PARTS)
