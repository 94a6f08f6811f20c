"""The base of every action kind, and the registry that defining a kind fills.

The kinds themselves live in ``kgitops.plan.actions`` (the topic kinds) and
``kgitops.plan.access_actions`` (the access kinds); both derive from ``Action`` here, so
neither imports the other. ``kgitops.plan.actions`` imports both and answers for the whole
registry (``kinds``, ``kind_named``, ``action_from_json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

#: kind -> class, filled by defining a kind; read it through ``kgitops.plan.actions``, which
#: imports every kind
REGISTRY: dict[str, type[Action]] = {}


@dataclass(frozen=True)
class Action:
    """Base of all kinds. ``kind`` is the JSON ``type``; ``topic`` sorts within a kind."""

    kind: ClassVar[str] = ""
    order: ClassVar[int] = 0
    symbol: ClassVar[str] = "?"
    verb: ClassVar[str] = ""
    #: what one action of the kind counts as in the pull-request comment's summary
    unit: ClassVar[tuple[str, str]] = ("topic", "topics")
    topic: str

    def __init_subclass__(
        cls, *, kind: str = "", order: int = 0, symbol: str = "?", verb: str = "", **kwargs: Any
    ) -> None:
        """A kind says what it is in its class line, ``class Reassign(Action, kind="reassign",
        order=40, symbol="~", verb="to reassign")``, which sets those class attributes and
        registers it (a class without ``kind`` is no kind and is not registered)."""
        super().__init_subclass__(**kwargs)
        if not kind:
            return
        cls.kind, cls.order, cls.symbol, cls.verb = kind, order, symbol, verb
        for other in REGISTRY.values():
            if other.kind == cls.kind or other.order == cls.order:
                raise TypeError(f"action kind {cls.kind!r} clashes with {other.kind!r}")
        REGISTRY[cls.kind] = cls

    @property
    def sort_key(self) -> tuple[int, str]:
        return (self.order, self.topic)

    @property
    def name(self) -> str:
        """What the action is about, as a report names it: the topic (``broker 2`` for a
        kind that acts on a broker)."""
        return self.topic

    def to_json(self) -> dict[str, Any]:
        """The action as a plan's JSON holds it: ``type`` (the kind) and ``topic``, then the
        kind's own fields (``own_json``)."""
        return {"type": self.kind, "topic": self.topic, **self.own_json()}

    def own_json(self) -> dict[str, Any]:
        """The kind's own fields in its JSON form, in order."""
        raise NotImplementedError

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Action:
        """The inverse of ``to_json`` (KeyError/TypeError/ValueError on a malformed one)."""
        raise NotImplementedError

    @classmethod
    def headline(cls, data: Mapping[str, Any]) -> str:
        """One line after ``<symbol> <kind> <topic>``, from the JSON form."""
        return ""

    @classmethod
    def details(cls, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """The lines under the headline, from the JSON form: (changes, per-partition rows);
        renderers may cut the rows, never the changes."""
        return [], []

    @classmethod
    def counted(cls, data: Mapping[str, Any]) -> tuple[str, str]:
        """What this action counts as, singular and plural (``unit``; a kind whose subject
        varies says so per action)."""
        return cls.unit

    @classmethod
    def diff(cls, data: Mapping[str, Any]) -> list[str]:
        """The details as the lines of a markdown ``diff`` fence: each starts with ``+``,
        ``-`` or ``@@``, the marks GitHub colours (a ``~`` line or a bare row stays grey).
        By default the changes of ``details`` and its rows marked with the kind's symbol;
        a kind with a before and an after says both (``- old`` then ``+ new``)."""
        changes, rows = cls.details(data)
        mark = cls.symbol if cls.symbol in ("+", "-") else "+"
        return [*changes, *(f"{mark} {r}" for r in rows)]
