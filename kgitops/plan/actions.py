"""The action kinds: one closed, ordered registry; each kind owns its order, symbol and JSON.

A kind is a frozen dataclass deriving from ``Action`` that names, in its class line
(``class Reassign(Action, kind="reassign", order=40, symbol="~", verb="to reassign")``, read
as class attributes of the same names), its JSON ``type`` (``kind``), where apply runs it
(``order``: lower first), its ``symbol`` and the ``verb`` of the plan's summary line, and
implements ``own_json`` (its JSON after the ``type`` and ``topic`` every action writes) /
``from_json`` and, for the renderers (which read the JSON form), ``headline`` and
``details`` (and, for the pull-request comment, ``unit``: what one action counts as, and
``diff``: its lines as a coloured diff).
Defining the class registers it; its entry in ``kgitops.plan.kinds`` (a test fails without
one) says what it acts on and which apply steps run it::

    order  symbol  kind             apply runs it as
       10    +     create_topic     one CreateTopics request for all
       20    ~     alter_config     one IncrementalAlterConfigs
       30    ~     add_partitions   one CreatePartitions
       40    ~     reassign         throttled, at most maxConcurrentMoves partitions at a time
       45    ~     remove_throttles leftover replication throttles no move in flight needs
       50    ~     elect_leaders    preferred-leader election where leaders drifted
       52    +     upsert_user      AlterUserScramCredentials  } plan/access_actions.py
       54    ~     alter_quota      AlterClientQuotas          }
       56    +     create_acl       CreateAcls                 }
       58    -     delete_acl       DeleteAcls (opt-in)        }
       60    -     delete_topic     only with --allow-delete

Orders leave room between them so a new kind can be placed where apply must run it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kgitops.errors import PlanError
from kgitops.jsonfields import empty, optional, pruned
from kgitops.plan import access_actions as _access_kinds  # noqa: F401  (registers them)
from kgitops.plan.action_base import REGISTRY
from kgitops.plan.action_base import Action as Action
from kgitops.spec.topic_configs import readable_config
from kgitops.units import human_bytes

_KEYS = [str(i) for i in range(10_000)]
#: a kind's ``origins`` (config -> where cluster.yaml set it) is in its JSON only when it has any
_ORIGINS_IF_ANY = {"origins": empty}


def _key(p: int) -> str:
    return _KEYS[p] if 0 <= p < 10_000 else str(p)


def _assignment_json(assignment: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
    """``{"0": [1, 2, 3], ...}`` by partition id, built in C (a plan creating 10,000 topics of
    100 partitions makes a million of these entries)."""
    ids = sorted(assignment)
    keys = (
        map(_KEYS.__getitem__, ids)
        if not ids or 0 <= ids[0] <= ids[-1] < 10_000
        else map(_key, ids)
    )
    return dict(zip(keys, map(list, map(assignment.__getitem__, ids)), strict=True))


def _assignment_from(data: Mapping[str, Any]) -> dict[int, tuple[int, ...]]:
    return {int(p): tuple(int(b) for b in r) for p, r in data.items()}


def _strings(data: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in data.items()}


def _assignment_rows(data: Mapping[str, Any]) -> list[str]:
    return [f"{p}: {r}" for p, r in data.get("assignment", {}).items()]


def kinds() -> tuple[type[Action], ...]:
    """Every kind, in the order apply runs them."""
    return tuple(sorted(REGISTRY.values(), key=lambda k: k.order))


def kind_named(name: str) -> type[Action] | None:
    """The kind whose JSON ``type`` is ``name``, or None."""
    return REGISTRY.get(name)


def action_from_json(data: Mapping[str, Any]) -> Action:
    """The inverse of ``Action.to_json``; PlanError for an unknown or malformed action."""
    if not isinstance(data, Mapping):
        raise PlanError(f"malformed action in plan: {data!r}")
    kind = kind_named(str(data.get("type")))
    if kind is None:
        raise PlanError(f"unknown action type in plan: {data.get('type')!r}")
    try:
        return kind.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanError(f"malformed {kind.kind} action in plan: {exc}") from None


@dataclass(frozen=True)
class CreateTopic(Action, kind="create_topic", order=10, symbol="+", verb="to create"):
    partitions: int = 0
    replication_factor: int = 0
    start_index: int | None = None
    assignment: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, str] = field(default_factory=dict)
    placement: str = "rack-unaware"
    #: for a value cluster.yaml set, as on AlterConfig: config -> "profile ... at file:line:col"
    origins: Mapping[str, str] = field(default_factory=dict)

    def own_json(self) -> dict[str, Any]:
        out = {
            "partitions": self.partitions,
            "replicationFactor": self.replication_factor,
            "startIndex": self.start_index,
            "placement": self.placement,
            "assignment": _assignment_json(self.assignment),
            "config": dict(sorted(self.config.items())),
            "origins": dict(sorted(self.origins.items())),
        }
        return pruned(out, _ORIGINS_IF_ANY)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CreateTopic:
        return cls(
            topic=str(data["topic"]),
            partitions=int(data["partitions"]),
            replication_factor=int(data["replicationFactor"]),
            start_index=optional(int, data.get("startIndex")),
            assignment=_assignment_from(data["assignment"]),
            config=_strings(data.get("config", {})),
            placement=str(data.get("placement", "rack-unaware")),
            origins=_strings(data.get("origins", {})),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        start = data.get("startIndex")
        where = f", start index {start}" if start is not None else ""
        return (
            f"{data['partitions']} partitions, RF {data['replicationFactor']}, "
            f"{data.get('placement', '')}{where}"
        )

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        origins = data.get("origins") or {}
        changes = [
            f"+ {k} = {_held(k, v)}" + (f"  ({origins[k]})" if k in origins else "")
            for k, v in data.get("config", {}).items()
        ]
        return changes, _assignment_rows(data)


@dataclass(frozen=True)
class AlterConfig(Action, kind="alter_config", order=20, symbol="~", verb="to alter config"):
    """A topic config change. ``after_reassign``: apply runs it once the topic's moves have
    completed instead of before them (a ``min.insync.replicas`` raise that needs the higher
    replication factor first; see ``kgitops.plan.value.min_isr_order``)."""

    set: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    previous: Mapping[str, str] = field(default_factory=dict)
    after_reassign: bool = False
    #: for a value cluster.yaml set: config -> "defaults at topics/prod/cluster.yaml:10:19"
    origins: Mapping[str, str] = field(default_factory=dict)

    def own_json(self) -> dict[str, Any]:
        out = {
            "set": dict(sorted(self.set.items())),
            "delete": sorted(self.delete),
            "previous": dict(sorted(self.previous.items())),
            "afterReassign": bool(self.after_reassign),
            "origins": dict(sorted(self.origins.items())),
        }
        return pruned(out, {"afterReassign": empty, **_ORIGINS_IF_ANY})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AlterConfig:
        return cls(
            topic=str(data["topic"]),
            set=_strings(data.get("set", {})),
            delete=tuple(str(k) for k in data.get("delete", [])),
            previous=_strings(data.get("previous", {})),
            after_reassign=data.get("afterReassign") is True,
            origins=_strings(data.get("origins", {})),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        after = "  (after the topic's moves)" if data.get("afterReassign") else ""
        return f"{len(data.get('set', {}))} set, {len(data.get('delete', []))} removed{after}"

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        previous = data.get("previous", {})
        origins = data.get("origins") or {}
        out = [
            (
                f"~ {k}: {_held(k, previous[k])} -> {_held(k, v)}"
                if k in previous
                else f"+ {k} = {_held(k, v)}"
            )
            + (f"  ({origins[k]})" if k in origins else "")
            for k, v in data.get("set", {}).items()
        ]
        for k in data.get("delete", []):
            was = _held(k, previous[k]).replace(" (", ", ").rstrip(")") if k in previous else ""
            out.append(f"- {k}" + (f" (was {was})" if was else ""))
        return out, []

    @classmethod
    def diff(cls, data: Mapping[str, Any]) -> list[str]:
        """``retention.ms: 1000 -> 2000`` as ``- retention.ms = 1000`` and ``+ retention.ms =
        2000``; a removed key as ``- key = old`` (Kafka's default applies)."""
        previous = data.get("previous", {})
        origins = data.get("origins") or {}
        out: list[str] = []
        for k, v in data.get("set", {}).items():
            if k in previous:
                out.append(f"- {k} = {_held(k, previous[k])}")
            out.append(f"+ {k} = {_held(k, v)}" + (f"  ({origins[k]})" if k in origins else ""))
        for k in data.get("delete", []):
            was = f" = {_held(k, previous[k])}" if k in previous else ""
            out.append(f"- {k}{was}  (removed)")
        return out


def _held(name: str, value: object) -> str:
    """A config value as Kafka holds it, with its human form when that says more:
    ``604800000 (7d)``, ``1073741824 (1GiB)``, ``-1 (infinite)``."""
    text = str(value)
    readable = readable_config(name, text)
    return text if readable == text else f"{text} ({readable})"


@dataclass(frozen=True)
class AddPartitions(Action, kind="add_partitions", order=30, symbol="~", verb="to add partitions"):
    from_count: int = 0
    to_count: int = 0
    start_index: int | None = None
    assignment: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def own_json(self) -> dict[str, Any]:
        return {
            "from": self.from_count,
            "to": self.to_count,
            "startIndex": self.start_index,
            "assignment": _assignment_json(self.assignment),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AddPartitions:
        return cls(
            topic=str(data["topic"]),
            from_count=int(data["from"]),
            to_count=int(data["to"]),
            start_index=optional(int, data.get("startIndex")),
            assignment=_assignment_from(data["assignment"]),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return f"partitions {data['from']} -> {data['to']}"

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        return [], _assignment_rows(data)


@dataclass(frozen=True)
class Move:
    """One partition's replica change and why it is needed."""

    source: tuple[int, ...]
    target: tuple[int, ...]
    reason: str = ""
    size_bytes: int = 0

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.target if b not in self.source)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(b for b in self.source if b not in self.target)


@dataclass(frozen=True)
class Reassign(Action, kind="reassign", order=40, symbol="~", verb="to reassign"):
    moves: Mapping[int, Move] = field(default_factory=dict)
    bytes_to_move: int = 0

    def own_json(self) -> dict[str, Any]:
        return {
            "moves": {
                str(p): {
                    "from": list(m.source),
                    "to": list(m.target),
                    "reason": m.reason,
                    "sizeBytes": m.size_bytes,
                }
                for p, m in sorted(self.moves.items())
            },
            "bytesToMove": self.bytes_to_move,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reassign:
        moves = {
            int(p): Move(
                source=tuple(int(b) for b in m["from"]),
                target=tuple(int(b) for b in m["to"]),
                reason=str(m.get("reason", "")),
                size_bytes=int(m.get("sizeBytes") or 0),
            )
            for p, m in data["moves"].items()
        }
        return cls(
            topic=str(data["topic"]),
            moves=moves,
            bytes_to_move=int(data.get("bytesToMove") or 0),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        n = len(data["moves"])
        return f"{n} partition(s), {human_bytes(data.get('bytesToMove', 0))} to copy"

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        rows = [
            f"{p}: {m['from']} -> {m['to']}  {m.get('reason', '')}".rstrip()
            for p, m in data.get("moves", {}).items()
        ]
        return [], rows

    @classmethod
    def diff(cls, data: Mapping[str, Any]) -> list[str]:
        """Moves grouped by reason, each reason said once in a hunk header::

        @@ broker 5 is decommissioned: 2 partition(s) @@
        - 0: [5, 1, 2]
        + 0: [3, 1, 2]
        """
        groups: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
        for p, m in data.get("moves", {}).items():
            groups.setdefault(str(m.get("reason", "")), []).append((p, m))
        out: list[str] = []
        for reason, moves in groups.items():
            out.append(f"@@ {reason or 'moved'}: {len(moves)} partition(s) @@")
            for p, m in moves:
                out += [f"- {p}: {m['from']}", f"+ {p}: {m['to']}"]
        return out


@dataclass(frozen=True)
class RemoveThrottles(
    Action, kind="remove_throttles", order=45, symbol="~", verb="to remove throttles"
):
    """Take out replication throttle configs no move in flight needs (leftovers of a
    ``--no-wait`` or killed apply, or of another tool): throttles are kgitops' own state.
    On a topic (``broker`` None) ``remove`` maps each throttled-replicas key to the entries
    to SUBTRACT (``*`` or ``""``: DELETE the key); on a broker (``topic`` ``""``) it names
    the rate keys to DELETE. ``kgitops.plan.throttles.stale_throttles`` decides."""

    broker: int | None = None
    remove: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def sort_key(self) -> tuple[int, str]:
        return (self.order, self.topic if self.broker is None else f"\0{self.broker:010d}")

    @property
    def name(self) -> str:
        return self.topic if self.broker is None else f"broker {self.broker}"

    def own_json(self) -> dict[str, Any]:
        return {
            "broker": self.broker,
            "remove": dict(sorted(self.remove.items())),
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RemoveThrottles:
        return cls(
            topic=str(data["topic"]),
            broker=optional(int, data.get("broker")),
            remove=_strings(data["remove"]),
            reason=str(data.get("reason", "")),
        )

    @classmethod
    def counted(cls, data: Mapping[str, Any]) -> tuple[str, str]:
        return ("broker", "brokers") if data.get("broker") is not None else cls.unit

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return str(data.get("reason", ""))

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        return [f"- {k}" + (f" {v}" if v else "") for k, v in data.get("remove", {}).items()], []


def subject(data: Mapping[str, Any]) -> str:
    """What an action in JSON form is about: its topic, or ``broker 2``."""
    broker = data.get("broker")
    return f"broker {broker}" if broker is not None else str(data["topic"])


@dataclass(frozen=True)
class ElectLeaders(Action, kind="elect_leaders", order=50, symbol="~", verb="to elect leaders"):
    partitions: tuple[int, ...] = ()

    def own_json(self) -> dict[str, Any]:
        return {"partitions": list(self.partitions)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ElectLeaders:
        return cls(
            topic=str(data["topic"]),
            partitions=tuple(int(p) for p in data.get("partitions", [])),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return "preferred leader for partition(s) " + ", ".join(str(p) for p in data["partitions"])


@dataclass(frozen=True)
class DeleteTopic(Action, kind="delete_topic", order=60, symbol="-", verb="to delete"):
    partitions: int = 0
    size_bytes: int | None = None

    def own_json(self) -> dict[str, Any]:
        return {"partitions": self.partitions, "sizeBytes": self.size_bytes}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeleteTopic:
        return cls(
            topic=str(data["topic"]),
            partitions=int(data.get("partitions") or 0),
            size_bytes=optional(int, data.get("sizeBytes")),
        )

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        return (
            f"{data.get('partitions', 0)} partitions, {human_bytes(data.get('sizeBytes'))}"
            "  (apply needs --allow-delete)"
        )
