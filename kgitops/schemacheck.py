"""The JSON Schemas of kgitops, compiled once, and their errors in words a user acts on.

jsonschema says ``'partitons' was unexpected`` or ``0 is less than the minimum of 1``; this
module turns each error into one positioned diagnostic: ``unknown field 'partitons' (did you
mean 'partitions'?)`` at the key, ``partitions must be at least 1, not 0`` at the value.

The topic-level ``config`` mapping is left to ``topic_configs`` (which the schema's config part
is generated from), so each bad config value is reported once, with Kafka's own ranges.
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from kgitops.errors import Diagnostic
from kgitops.yamlload import Document

SCHEMA_FILES = ("topic.json", "cluster.json", "plan.json", "state.json")


@cache
def schema(name: str) -> dict[str, Any]:
    """A schema shipped in ``kgitops/schemas`` (``topic.json``, ``cluster.json`` ...)."""
    text = resources.files("kgitops").joinpath("schemas", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def validator(kind: str) -> Draft202012Validator:
    """The compiled validator for a document kind (``Topic`` or ``Cluster``).

    For topics, ``config`` is checked as a mapping only: ``topic_configs`` checks its entries.
    """
    if kind == "Topic":
        data = copy.deepcopy(schema("topic.json"))
        data["properties"]["config"] = {
            "type": "object",
            "description": data["properties"]["config"]["description"],
        }
    else:
        data = schema("cluster.json")
    return Draft202012Validator(data)


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def type_word(value: object) -> str:
    """How a value is named in messages: ``the string '12'``, ``a list``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "null": "null",
}

_SECRET_HINTS = {
    "password": "passwordEnv",
    "username": "usernameEnv",
    "user": "usernameEnv",
    "keyPassword": "keyPasswordEnv",
}


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing."""
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return f" (did you mean {lowered[word.lower()]!r}?)"
    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _messages(error: ValidationError, doc: Document) -> Iterator[Diagnostic]:
    path = ".".join(str(p) for p in error.absolute_path)
    what = path or "the document"
    kind = error.validator
    value = error.instance
    rule: Any = error.validator_value
    mark = doc.mark(path)

    if kind == "additionalProperties" and isinstance(value, dict):
        sub = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = sorted(sub.get("properties", {}))
        for key in sorted(k for k in value if k not in allowed):
            where = f" in {path}" if path else ""
            if key in _SECRET_HINTS and path.startswith("security"):
                hint = (
                    f": secrets never go in a file; name the environment variable that "
                    f"holds it with {_SECRET_HINTS[key]}"
                )
            else:
                hint = did_you_mean(key, allowed) or f" (allowed: {', '.join(allowed)})"
            yield _error(doc.key_mark(_join(path, key)), f"unknown field {key!r}{where}{hint}")
        return
    if kind == "required" and isinstance(value, dict):
        for key in rule:
            if key not in value:
                where = f"{path}: " if path else ""
                yield _error(mark, f"{where}missing required field {key!r}")
        return
    if kind == "type":
        wanted = rule if isinstance(rule, list) else [rule]
        words = " or ".join(_TYPE_WORDS.get(str(w), str(w)) for w in wanted)
        yield _error(mark, f"{what} must be {words}, not {type_word(value)}")
        return
    if kind == "const":
        yield _error(mark, f"{what} must be {rule!r}, not {type_word(value)}")
        return
    if kind == "enum":
        choices = [str(c) for c in rule]
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        yield _error(
            mark, f"{what} must be one of {', '.join(choices)}, not {type_word(value)}{hint}"
        )
        return
    if kind == "minimum":
        yield _error(mark, f"{what} must be at least {rule}, not {value}")
        return
    if kind == "maximum":
        yield _error(mark, f"{what} must be at most {rule}, not {value}")
        return
    if kind == "exclusiveMinimum":
        yield _error(mark, f"{what} must be greater than {rule}, not {value}")
        return
    if kind == "minItems":
        yield _error(mark, f"{what} must not be empty")
        return
    if kind == "minLength":
        yield _error(mark, f"{what} must not be empty")
        return
    if kind == "uniqueItems":
        yield _error(mark, f"{what} lists the same value twice")
        return
    if kind in ("pattern", "maxLength", "not"):
        yield _error(mark, _pattern_message(path, value, kind, rule))
        return
    yield _error(mark, f"{what}: {error.message}")  # pragma: no cover - every keyword used is above


def _pattern_message(path: str, value: Any, kind: str, rule: Any) -> str:
    leaf = path.rsplit(".", 1)[-1]
    if path == "name" and kind == "maxLength":
        return f"topic name is {len(value)} characters long; Kafka allows at most 249"
    if path == "name" and kind == "not":
        return f"topic name cannot be {value!r}"
    if path == "name":
        bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "._-"))})
        shown = " ".join(repr(c) for c in bad)
        return (
            f"topic name {value!r} has characters Kafka does not allow ({shown}); "
            "use ASCII letters, digits, '.', '_' and '-'"
        )
    if path.startswith("bootstrapServers"):
        return f"bootstrap server {value!r} is not host:port"
    if leaf.endswith("Env"):
        return (
            f"{path} must name an environment variable (letters, digits and _), not hold "
            "the secret itself"
        )
    if path == "name" or leaf == "name":
        return f"{path} {value!r} may only use letters, digits, '.', '_' and '-'"
    return f"{path} {value!r} does not match {rule}"  # pragma: no cover


def _error(mark: Any, message: str) -> Diagnostic:
    return Diagnostic(mark, "error", message)


def check(doc: Document, kind: str) -> list[Diagnostic]:
    """Every schema problem of one document of ``kind``, positioned and in words."""
    out: list[Diagnostic] = []
    for error in validator(kind).iter_errors(doc.value):
        out.extend(_messages(error, doc))
    return out


def known_fields(kind: str) -> Mapping[str, Any]:
    """The top-level properties of a kind's schema (for messages)."""
    name = "topic.json" if kind == "Topic" else "cluster.json"
    props: Mapping[str, Any] = schema(name)["properties"]
    return props
