"""JSON objects from a value's fields, as every kgitops JSON file writes them.

A field's JSON key is its name in camelCase (``replication_factor``: ``replicationFactor``);
``json_of`` writes the named fields in the order given. A field that is left out when
unset says so in a rule table: ``pruned(out, {"salt": empty, "passwordVersion": is_none})``.
``optional`` reads such a field back (``None`` stays ``None``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


@cache
def camel(name: str) -> str:
    """``under_min_isr`` -> ``underMinIsr``."""
    first, *rest = name.split("_")
    return first + "".join(w.capitalize() for w in rest)


def json_of(value: object, *names: str) -> dict[str, Any]:
    """``{camel(name): value.<name>}`` for each of ``names``, in that order."""
    return {camel(n): getattr(value, n) for n in names}


def empty(value: object) -> bool:
    """A drop rule: the value is empty (``""``, ``0``, ``False``, an empty list or object,
    None)."""
    return not value


def is_none(value: object) -> bool:
    """A drop rule: the value is None (``0`` and ``""`` are kept)."""
    return value is None


def pruned(out: dict[str, Any], drop: Mapping[str, Callable[[Any], bool]]) -> dict[str, Any]:
    """``out``, each entry ``drop`` has a rule for removed (in place) when the rule says its
    value is unset; the order of the rest kept."""
    for key, unset in drop.items():
        if key in out and unset(out[key]):
            del out[key]
    return out


def optional(read: Callable[[Any], T], value: object) -> T | None:
    """``read(value)``, or None for None: a field ``pruned`` leaves out, or JSON null."""
    return None if value is None else read(value)
