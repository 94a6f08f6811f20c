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
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from kgitops.errors import Diagnostic
from kgitops.spec.ecmaregex import schema_regex
from kgitops.spec.schemacompile import Predicate as Predicate
from kgitops.spec.schemacompile import compile_schema as compile_schema
from kgitops.spec.yamlload import Document

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

SCHEMA_FILES = (
    "topic.json",
    "cluster.json",
    "acl.json",
    "user.json",
    "quota.json",
    "plan.json",
    "state.json",
    "console.json",
    "tail.json",
    "reset-offsets.json",
    "apply.json",
)
#: The schema of each document kind.
KIND_SCHEMAS = {
    "Topic": "topic.json",
    "Cluster": "cluster.json",
    "ACL": "acl.json",
    "User": "user.json",
    "Quota": "quota.json",
}


@cache
def schema(name: str) -> dict[str, Any]:
    """A schema shipped in ``kgitops/schemas`` (``topic.json``, ``cluster.json`` ...)."""
    text = resources.files("kgitops").joinpath("schemas", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def validator(kind: str) -> Any:
    """The compiled validator for a document kind (``Topic`` or ``Cluster``).

    For topics, ``config`` is checked as a mapping only: ``topic_configs`` checks its entries.
    jsonschema is imported here, on first use: a folder whose documents all pass the
    compiled check (``conforms``) never needs it, and importing it costs a tenth of a second
    of every command's start.
    """
    return _strict()(kind_schema(kind))


@cache
def kind_schema(kind: str) -> dict[str, Any]:
    """The schema ``validator(kind)`` checks against (``validator``'s docstring)."""
    if kind == "Topic":
        data = copy.deepcopy(schema("topic.json"))
        data["properties"]["config"] = {
            "type": "object",
            "description": data["properties"]["config"]["description"],
        }
        # optional in the file (cluster.yaml's defaults: or a profile may give it); the
        # loader checks the topic with its layers merged in, where it must be there
        data["required"] = [*data["required"], "replicationFactor"]
    elif kind == "Cluster":  # the same for defaults: and profiles:
        data = copy.deepcopy(schema("cluster.json"))
        data["$defs"]["topicConfig"] = {"type": "object"}
    else:
        data = schema(KIND_SCHEMAS[kind])
    return data


def _whole(checker: object, instance: object) -> bool:
    """An integer is a JSON/YAML integer: ``48.0`` is a float (YAML's ``!!float``), refused
    where a count or an id is expected, never read as 48."""
    return type(instance) is int


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``pattern`` as an editor reads it (ECMA-262: ``$`` is the end of the text, ``\\s``
    ECMA's white space), not as Python's ``re.search`` would (``"12d\\n"`` passes ``^..d$``)."""
    from jsonschema.exceptions import ValidationError

    if type(instance) is str and schema_regex(pattern).find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, rules: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if type(instance) is not dict:
        return
    for pattern, subschema in rules.items():
        regex = schema_regex(pattern)
        for key, value in instance.items():
            if regex.find(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@cache
def _strict() -> Any:
    """Draft 2020-12 with ECMA patterns and whole-number integers (imported on first use)."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        {"pattern": _pattern, "patternProperties": _pattern_properties},
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _whole),
    )


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


def shown(value: object) -> str:
    """A value quoted as the user wrote it: ``'kgitops/v2'``, ``7``, ``a list``."""
    return repr(value) if isinstance(value, str) else type_word(value).removeprefix("the number ")


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


# Names other tools use for the same field (kafka-topics.sh, topicctl, Terraform, Strimzi).
_ALIASES = {
    "replicas": "replicationFactor",
    "rf": "replicationFactor",
    "replication": "replicationFactor",
    "topic": "name",
    "topicname": "name",
    "configs": "config",
    "brokers": "bootstrapServers",
    "bootstrap": "bootstrapServers",
}


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing."""
    alias = _ALIASES.get(word.lower().replace("_", "").replace("-", ""))
    if alias in choices:
        return f" (did you mean {alias!r}?)"
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return f" (did you mean {lowered[word.lower()]!r}?)"
    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _messages(
    error: ValidationError, doc: Document, doc_kind: str, excused: Collection[str] = ()
) -> Iterator[Diagnostic]:
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
            if key in _SECRET_HINTS and (path.startswith("security") or doc_kind == "User"):
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
            if key not in value and (path or key not in excused):
                where = f"{path}: " if path else ""
                layered = doc_kind == "Topic" and key == "replicationFactor" and not path
                hint = " (here, or in cluster.yaml's defaults: or a profile)" if layered else ""
                yield _error(mark, f"{where}missing required field {key!r}{hint}")
        return
    if kind == "type":
        wanted = rule if isinstance(rule, list) else [rule]
        words = " or ".join(_TYPE_WORDS.get(str(w), str(w)) for w in wanted)
        hint = ""
        if wanted == ["string"] and (value is None or isinstance(value, bool | int | float)):
            read_as = (
                "null" if value is None else "a boolean" if isinstance(value, bool) else "a number"
            )
            hint = f" (put it in quotes: unquoted, YAML reads it as {read_as})"
        yield _error(mark, f"{what} must be {words}, not {type_word(value)}{hint}")
        return
    if kind == "const":
        yield _error(mark, f"{what} must be {rule!r}, not {shown(value)}")
        return
    if kind == "enum":
        choices = [str(c) for c in rule]
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        yield _error(mark, f"{what} must be one of {', '.join(choices)}, not {shown(value)}{hint}")
        return
    if kind in _BOUNDS:
        yield _error(mark, f"{what} must be {_BOUNDS[kind]} {rule}, not {value}")
        return
    if kind in _PLAIN:
        yield _error(mark, f"{what} {_PLAIN[kind]}")
        return
    if kind == "anyOf":
        if doc_kind == "Quota" and not path:
            yield _error(mark, "a Quota names its entity: user, clientId, or both")
        else:
            yield _error(
                mark, f"{what} must be a principal ('User:name') or a mapping with principal"
            )
        return
    if kind in ("pattern", "maxLength", "not"):
        yield _error(mark, _pattern_message(path, value, kind, rule, doc_kind))
        return
    yield _error(mark, f"{what}: {error.message}")  # pragma: no cover - every keyword used is above


#: A numeric keyword's words: ``replicationFactor must be at least 1, not 0``.
_BOUNDS = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "greater than"}
#: What a keyword that needs no more than the field's name says about it.
_PLAIN = {
    "minItems": "must not be empty",
    "minLength": "must not be empty",
    "uniqueItems": "lists the same value twice",
}


def _pattern_message(path: str, value: Any, kind: str, rule: Any, doc_kind: str) -> str:
    leaf = path.rsplit(".", 1)[-1]
    if doc_kind == "Cluster" and path == "name":
        return f"cluster name {value!r} may only use letters, digits, '.', '_' and '-'"
    if doc_kind == "User" and path == "name":
        return f"user name is {len(value)} characters long; at most 1000"
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
    if leaf == "principal" or path.startswith("access."):
        return f"principal {value!r} must be 'User:<name>' (a type, ':', a name)"
    if path.startswith("bootstrapServers"):
        return f"bootstrap server {value!r} is not host:port"
    if leaf.endswith("Env"):
        return (
            f"{path} must name an environment variable (letters, digits and _), not hold "
            "the secret itself"
        )
    return f"{path} {value!r} does not match {rule}"  # pragma: no cover - no other patterns


def _error(mark: Any, message: str) -> Diagnostic:
    return Diagnostic(mark, "error", message)


def check(doc: Document, kind: str, *, excused: Collection[str] = ()) -> list[Diagnostic]:
    """Every schema problem of one document of ``kind``, positioned and in words.
    ``excused``: top-level required fields whose absence another error already explains
    (a topic's replicationFactor when the cluster.yaml layer that would give it is broken)."""
    if conforms(kind)(doc.value):
        return []
    out: list[Diagnostic] = []
    for error in validator(kind).iter_errors(doc.value):
        out.extend(_messages(error, doc, kind, excused))
    return out


@dataclass(frozen=True)
class Salvage:
    """What is left of a document once every part its schema refuses is taken out."""

    value: dict[str, Any]  # conforms to the schema, but for ``missing``
    pruned: frozenset[str]  # the dotted paths taken out
    missing: frozenset[str]  # top-level required fields absent (or taken out)

    def lost(self, field: str) -> bool:
        """Whether top-level ``field`` was taken out (or a part of it) or is missing."""
        return field in self.missing or any(
            p == field or p.startswith(field + ".") for p in self.pruned
        )


def salvage(value: Any, kind: str) -> Salvage | None:
    """``value`` with each part its schema refuses taken out, so the rest is still checked
    (validation reports every problem at once: a bad ``maxConcurrentMoves`` must not throw
    away cluster.yaml's ``defaults:``). A refused value inside a list takes the whole list
    out (a broker list missing one broker would be a different cluster); a mapping missing a
    required field is taken out whole. None when the document is not a mapping::

        {name: x, partitions: 0, colour: blue}  ->  value {name: x},
            pruned {partitions, colour}, missing {partitions, replicationFactor, ...}
    """
    if not isinstance(value, dict):
        return None
    kept: dict[str, Any] = copy.deepcopy(value)
    pruned: set[str] = set()
    check = validator(kind)
    for _ in range(64):  # each round takes out at least one part; documents are finite
        cuts: set[tuple[str, ...]] = set()
        for error in check.iter_errors(kept):
            path = list(error.absolute_path)
            cut = tuple(str(p) for p in _until_list(path))
            if error.validator == "required" and not path:
                continue  # reported as missing below
            if error.validator == "additionalProperties" and len(cut) == len(path):
                sub = error.schema if isinstance(error.schema, Mapping) else {}
                known = sub.get("properties", {})
                if isinstance(error.instance, dict):
                    cuts.update((*cut, str(k)) for k in error.instance if k not in known)
                    continue
            if not cut:
                return None  # the document as a whole is refused (a Quota naming no entity)
            cuts.add(cut)
        if not cuts:
            break
        if all(".".join(cut) in pruned for cut in cuts):
            return None  # taking out did not help: nothing left to trust
        for cut in cuts:
            _remove(kept, cut)
            pruned.add(".".join(cut))
    else:
        return None  # still refused after every round (never seen): trust none of it
    required = check.schema.get("required", ())
    missing = frozenset(k for k in required if k not in kept)
    return Salvage(kept, frozenset(pruned), missing)


def _until_list(path: list[Any]) -> list[Any]:
    """The path up to its first list index: ``assignment.1.0`` -> ``assignment``."""
    out = []
    for part in path:
        if isinstance(part, int):
            break
        out.append(part)
    return out


def _remove(value: dict[str, Any], path: tuple[str, ...]) -> None:
    node: Any = value
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(path[-1], None)


# ------------------------------------------------------------------ the fast path


@cache
def conforms(kind: str) -> Predicate:
    """A compiled yes/no check of a document against the same schema as ``validator``.

    jsonschema walks its schema anew for every instance, which costs about 0.1 ms a topic; a
    plan over 10,000 topics would spend a second there. This predicate is compiled once from
    the schema into plain closures (``schemacompile``), for the keywords kgitops' schemas
    use, cluster.yaml's included. It is
    conservative: True only when the document certainly conforms (a keyword it does not know
    makes it say False), and on False jsonschema runs and explains. A property test checks
    that it never says True where jsonschema finds an error.
    """
    return compile_schema(kind_schema(kind))
