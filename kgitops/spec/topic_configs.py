"""Kafka's topic-level configs (3.x and 4.x): name, type, default, valid values, and meaning.

This table is the one source of truth: the ``config`` part of ``schemas/topic.json`` is
generated from it (``python -m kgitops.spec.topic_configs`` rewrites it; a test checks they agree),
validation uses it, and the diff compares values through ``normalize_config``.

Types are Kafka's ``ConfigDef.Type``; ranges and enums are those of Kafka's ``LogConfig``
(``storage/.../log/LogConfig.java``). Values are held as Kafka holds them, as strings::

    >>> normalize_config("retention.ms", 604800000)
    '604800000'
    >>> normalize_config("unclean.leader.election.enable", False)
    'false'
    >>> normalize_config("cleanup.policy", ["compact", "delete"])
    'compact,delete'
    >>> normalize_config("cleanup.policy", "compact, delete")
    'compact,delete'
    >>> normalize_config("min.cleanable.dirty.ratio", "0.50")
    '0.5'

Configs Kafka holds in milliseconds (``*.ms``) or bytes (``*.bytes``) also take human units
(``kgitops.units``), held as the number Kafka holds, so ``7d`` and a live ``604800000`` are the
same value; ``infinite`` is ``-1`` where Kafka reads -1 as "no limit"::

    >>> normalize_config("retention.ms", "7d")
    '604800000'
    >>> normalize_config("segment.bytes", "512MiB")
    '536870912'
    >>> normalize_config("retention.bytes", "infinite")
    '-1'
"""

from __future__ import annotations

import difflib
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from kgitops.names import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from kgitops.spec.ecmaregex import schema_regex
from kgitops.units import (
    AmountTooLarge,
    shown_text,
    spec_bytes,
    spec_bytes_text,
    spec_millis,
    spec_millis_text,
)
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion, min_segment_bytes

ConfigType = Literal["long", "int", "double", "boolean", "string", "list"]

INT_MAX, INT_MIN, LONG_MAX, LONG_MIN = INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """One topic-level config as Kafka's ``LogConfig`` defines it."""

    name: str
    type: ConfigType
    default: str  # Kafka's default, as the string it reports
    doc: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()  # enum for strings; allowed items for lists
    removed_in: str | None = None  # e.g. "4.0": the config is gone in that version
    since: str | None = None  # the first Kafka version that has it
    extra_values: tuple[int, ...] = ()  # single values allowed outside [minimum, maximum]
    infinite: bool = False  # -1 means "no limit", so ``infinite`` may be written for it

    @property
    def unit(self) -> Literal["ms", "bytes"] | None:
        """The quantity Kafka holds: ``ms`` for ``*.ms``, ``bytes`` for ``*.bytes``."""
        if self.type not in ("int", "long"):
            return None
        if self.name.endswith(".ms"):
            return "ms"
        if self.name.endswith(".bytes"):
            return "bytes"
        return None

    @property
    def bounds(self) -> tuple[int | float, int | float] | None:
        """The inclusive range of a number, including the limits of Kafka's int and long."""
        if self.type == "int":
            lo: int | float = INT_MIN if self.minimum is None else self.minimum
            hi: int | float = INT_MAX if self.maximum is None else self.maximum
            return lo, hi
        if self.type == "long":
            lo = LONG_MIN if self.minimum is None else self.minimum
            hi = LONG_MAX if self.maximum is None else self.maximum
            return lo, hi
        if self.type == "double":
            lo = -math.inf if self.minimum is None else self.minimum
            hi = math.inf if self.maximum is None else self.maximum
            return lo, hi
        return None


def _c(name: str, type_: ConfigType, default: str, doc: str, **kw: Any) -> TopicConfig:
    return TopicConfig(name, type_, default, doc, **kw)


_LONG_MAX_S = str(LONG_MAX)

CONFIGS: Mapping[str, TopicConfig] = {
    c.name: c
    for c in (
        _c(
            "cleanup.policy",
            "list",
            "delete",
            "How old log segments are discarded: delete (by retention time or size), compact "
            "(keep the latest value per key), or both (compact,delete).",
            choices=("compact", "delete"),
        ),
        _c(
            "compression.type",
            "string",
            "producer",
            "The final compression of the topic's data; producer keeps what the producer sent.",
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _c(
            "compression.gzip.level",
            "int",
            "-1",
            "The gzip level when compression.type is gzip: 1..9, or -1 for the default.",
            minimum=1,
            maximum=9,
            extra_values=(-1,),
            since="3.8",
        ),
        _c(
            "compression.lz4.level",
            "int",
            "9",
            "The lz4 level when compression.type is lz4.",
            minimum=1,
            maximum=17,
            since="3.8",
        ),
        _c(
            "compression.zstd.level",
            "int",
            "3",
            "The zstd level when compression.type is zstd.",
            minimum=-131072,
            maximum=22,
            since="3.8",
        ),
        _c(
            "delete.retention.ms",
            "long",
            "86400000",
            "How long delete tombstones are kept on a compacted topic.",
            minimum=0,
        ),
        _c(
            "file.delete.delay.ms",
            "long",
            "60000",
            "How long a deleted segment file waits before it is removed from disk.",
            minimum=0,
        ),
        _c(
            "flush.messages",
            "long",
            _LONG_MAX_S,
            "Force an fsync after this many messages (normally left to the OS and replication).",
            minimum=1,
        ),
        _c(
            "flush.ms",
            "long",
            _LONG_MAX_S,
            "Force an fsync after this many milliseconds (normally left to the OS).",
            minimum=0,
        ),
        _c(
            "follower.replication.throttled.replicas",
            "list",
            "",
            "Replicas throttled on the follower side (partition:broker,... or *). Set by "
            "kgitops apply during reassignments; do not set it in a spec.",
        ),
        _c(
            "index.interval.bytes",
            "int",
            "4096",
            "How often an entry is added to the offset index, in bytes.",
            minimum=0,
        ),
        _c(
            "leader.replication.throttled.replicas",
            "list",
            "",
            "Replicas throttled on the leader side (partition:broker,... or *). Set by "
            "kgitops apply during reassignments; do not set it in a spec.",
        ),
        _c(
            "local.retention.bytes",
            "long",
            "-2",
            "With tiered storage: the most bytes kept on local disk; -2 means retention.bytes, "
            "-1 no limit.",
            minimum=-2,
            since="3.6",
            infinite=True,
        ),
        _c(
            "local.retention.ms",
            "long",
            "-2",
            "With tiered storage: how long data stays on local disk; -2 means retention.ms, "
            "-1 forever.",
            minimum=-2,
            since="3.6",
            infinite=True,
        ),
        _c(
            "max.compaction.lag.ms",
            "long",
            _LONG_MAX_S,
            "The longest a message may stay ineligible for compaction.",
            minimum=1,
        ),
        _c(
            "max.message.bytes",
            "int",
            "1048588",
            "The largest record batch the topic accepts, in bytes.",
            minimum=0,
        ),
        _c(
            "message.downconversion.enable",
            "boolean",
            "true",
            "Whether brokers down-convert messages for old consumers.",
            removed_in="4.0",
        ),
        _c(
            "message.format.version",
            "string",
            "3.0-IV1",
            "The message format version (deprecated; ignored since 3.0).",
            removed_in="4.0",
        ),
        _c(
            "message.timestamp.after.max.ms",
            "long",
            "3600000",
            "How far in the future a message timestamp may be (Kafka 3.6..3.9 default: "
            "Long.MAX_VALUE).",
            minimum=0,
            since="3.6",
        ),
        _c(
            "message.timestamp.before.max.ms",
            "long",
            _LONG_MAX_S,
            "How far in the past a message timestamp may be.",
            minimum=0,
            since="3.6",
        ),
        _c(
            "message.timestamp.difference.max.ms",
            "long",
            _LONG_MAX_S,
            "The largest difference between a message timestamp and the broker's clock "
            "(deprecated: use message.timestamp.before/after.max.ms).",
            minimum=0,
            removed_in="4.0",
        ),
        _c(
            "message.timestamp.type",
            "string",
            "CreateTime",
            "Whose timestamp a message keeps: the producer's (CreateTime) or the broker's "
            "(LogAppendTime).",
            choices=("CreateTime", "LogAppendTime"),
        ),
        _c(
            "min.cleanable.dirty.ratio",
            "double",
            "0.5",
            "The share of the log that must be uncompacted before the cleaner runs.",
            minimum=0,
            maximum=1,
        ),
        _c(
            "min.compaction.lag.ms",
            "long",
            "0",
            "The shortest a message stays uncompacted.",
            minimum=0,
        ),
        _c(
            "min.insync.replicas",
            "int",
            "1",
            "How many in-sync replicas must acknowledge a write with acks=all.",
            minimum=1,
        ),
        _c(
            "preallocate",
            "boolean",
            "false",
            "Preallocate the file when a new segment is created.",
        ),
        _c(
            "remote.copy.lag.bytes",
            "long",
            "0",
            "With tiered storage: how many bytes may wait before being copied to remote "
            "storage; -1 means local.retention.bytes. Kafka's trunk only (KIP-1241): Kafka 4.1 "
            "refuses it.",
            minimum=-1,
        ),
        _c(
            "remote.copy.lag.ms",
            "long",
            "0",
            "With tiered storage: how long data may wait before being copied to remote "
            "storage; -1 means local.retention.ms. Kafka's trunk only (KIP-1241): Kafka 4.1 "
            "refuses it.",
            minimum=-1,
        ),
        _c(
            "remote.log.copy.disable",
            "boolean",
            "false",
            "With tiered storage: stop copying segments to remote storage (read-only remote).",
            since="3.9",
        ),
        _c(
            "remote.log.delete.on.disable",
            "boolean",
            "false",
            "Delete the remote data when remote.storage.enable is turned off.",
            since="3.9",
        ),
        _c(
            "remote.storage.enable",
            "boolean",
            "false",
            "Keep older segments in remote (tiered) storage.",
            since="3.6",
        ),
        _c(
            "retention.bytes",
            "long",
            "-1",
            "The most bytes a partition keeps before old segments are deleted; -1: no limit.",
            infinite=True,
        ),
        _c(
            "retention.ms",
            "long",
            "604800000",
            "How long messages are kept; -1: forever.",
            minimum=-1,
            infinite=True,
        ),
        _c(
            "segment.bytes",
            "int",
            "1073741824",
            "The size of one log segment file (Kafka 4.0 refuses less than 1 MiB).",
            minimum=1048576,
        ),
        _c(
            "segment.index.bytes",
            "int",
            "10485760",
            "The size of the index that maps offsets to file positions.",
            minimum=4,
        ),
        _c(
            "segment.jitter.ms",
            "long",
            "0",
            "The largest random jitter subtracted from segment.ms, to avoid rolling all at once.",
            minimum=0,
        ),
        _c(
            "segment.ms",
            "long",
            "604800000",
            "Roll a new segment after this long even if it is not full.",
            minimum=1,
        ),
        _c(
            "unclean.leader.election.enable",
            "boolean",
            "false",
            "Allow an out-of-sync replica to become leader (may lose data).",
        ),
    )
}


def suggest(name: str, candidates: list[str] | None = None) -> str | None:
    """The closest known config name, for "did you mean" (None when nothing is close)."""
    pool = candidates if candidates is not None else list(CONFIGS)
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return matches[0] if matches else None


# ------------------------------------------------------------------ values


# The text forms Kafka's ConfigDef parses (it trims spaces first); the schema uses the same
# patterns, read as an editor reads them (ECMA-262, kgitops.spec.ecmaregex). Only a space is
# trimmed: a tab or a newline is a control character (refused in any config value), and
# ECMA's and Python's \s disagree (U+FEFF, U+001C..U+001F), so no pattern uses \s.
INT_PATTERN = r"^ *[+-]?[0-9]+ *$"
DOUBLE_PATTERN = r"^ *[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? *$"
BOOLEAN_PATTERN = r"^ *([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]) *$"
INT_TEXT = schema_regex(INT_PATTERN)
DOUBLE_TEXT = schema_regex(DOUBLE_PATTERN)
BOOLEAN_TEXT = schema_regex(BOOLEAN_PATTERN)


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and INT_TEXT.match(value):
        if len(value.strip().lstrip("+-").lstrip("0")) > len(str(LONG_MAX)):
            raise AmountTooLarge(value)
        return int(value)
    return None


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and DOUBLE_TEXT.match(value):
        return float(value)
    return None


def _as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and BOOLEAN_TEXT.match(value):
        return value.strip(" ").lower() == "true"
    return None


def _list_items(value: object) -> list[str] | None:
    """The items of a list config: ``"compact, delete"`` (spaces around items trimmed, as
    Kafka does; no other white space, as the schema's pattern says) or a YAML list (items
    as written)."""
    if isinstance(value, str):
        return [item.strip(" ") for item in value.split(",")] if value.strip(" ") else []
    if isinstance(value, list | tuple):
        if not all(isinstance(item, str) for item in value):
            return None
        return list(value)
    return None


def _render_float(x: float) -> str:
    """One text per double: ``0.50``, ``.5`` and ``5e-1`` are all ``0.5``."""
    return repr(x)


def _type_word(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else f"a {len(value)}-character string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_EXPECTED = {
    "long": "an integer",
    "int": "an integer",
    "double": "a number",
    "boolean": "true or false",
    "string": "a string",
    "list": "a comma-separated string or a list of strings",
}


def _as_amount(spec: TopicConfig, value: object) -> int | None:
    """An integer, or a human amount for a config in milliseconds or bytes (``7d``, ``1GiB``,
    ``infinite``)."""
    number = _as_int(value)
    if number is not None or not isinstance(value, str) or spec.unit is None:
        return number
    if spec.infinite and value.strip(" ").lower() == "infinite":
        return -1
    return spec_millis(value) if spec.unit == "ms" else spec_bytes(value)


_UNIT_WORDS = {
    "ms": "a duration (7d, 36h, 15m, 500ms) or a number of milliseconds",
    "bytes": "a size (1GiB, 512MiB, 10MB) or a number of bytes",
}


def check_config(
    name: str, value: object, *, units: bool = True, version: KafkaVersion = DEFAULT_VERSION
) -> tuple[str | None, str | None]:
    """Validate one config value: ``(normalised value, None)`` or ``(None, error message)``.

    Unknown names are the caller's business (see ``suggest``); they normalise as strings.
    ``units=False`` is the broker's view: only the number Kafka holds, no ``7d``.
    ``version``: the Kafka whose bounds apply (``segment.bytes``: ``min_segment_bytes``).
    """
    spec = CONFIGS.get(name)
    if spec is None:
        return _plain(value), None
    if name == "segment.bytes" and spec.minimum != min_segment_bytes(version):
        spec = replace(spec, minimum=min_segment_bytes(version))
    if spec.type in ("int", "long"):
        try:
            number = _as_amount(spec, value) if units else _as_int(value)
        except AmountTooLarge:
            hi = (spec.bounds or (LONG_MIN, LONG_MAX))[1]
            return None, f"{name} must be at most {hi}, not {shown_text(str(value))}"
        if number is None:
            words = _UNIT_WORDS[spec.unit] if units and spec.unit else _EXPECTED[spec.type]
            if units and spec.infinite:
                words += ", or infinite"
            return None, f"{name} must be {words}, not {_type_word(value)}"
        lo, hi = spec.bounds or (LONG_MIN, LONG_MAX)
        if not lo <= number <= hi and number not in spec.extra_values:
            width = "a 32-bit int" if spec.type == "int" else "a 64-bit long"
            if number > hi and hi in (INT_MAX, LONG_MAX):
                return (
                    None,
                    f"{name} must be at most {hi} (Kafka holds it in {width}), not {number}",
                )
            if number < lo and lo in (INT_MIN, LONG_MIN):
                return (
                    None,
                    f"{name} must be at least {lo} (Kafka holds it in {width}), not {number}",
                )
            return None, f"{name} must be {_range_words(spec)}, not {number}"
        return str(number), None
    if spec.type == "double":
        real = _as_float(value)
        if real is None:
            return None, f"{name} must be a number, not {_type_word(value)}"
        lo, hi = spec.bounds or (-math.inf, math.inf)
        if not lo <= real <= hi:
            return None, f"{name} must be {_range_words(spec)}, not {_render_float(real)}"
        return _render_float(real), None
    if spec.type == "boolean":
        flag = _as_bool(value)
        if flag is None:
            return None, f"{name} must be true or false, not {_type_word(value)}"
        return ("true" if flag else "false"), None
    if spec.type == "list":
        items = _list_items(value)
        if items is None:
            return None, f"{name} must be {_EXPECTED['list']}, not {_type_word(value)}"
        if spec.choices:
            for item in items:
                if item not in spec.choices:
                    return None, (
                        f"{name}: {item!r} is not one of {', '.join(spec.choices)}"
                        + _hint(item, list(spec.choices))
                    )
            if len(set(items)) != len(items):
                return None, f"{name} lists a value twice: {','.join(items)}"
        return ",".join(item for item in items if item), None
    # string
    if not isinstance(value, str):
        hint = " (put it in quotes)" if isinstance(value, int | float) else ""
        return None, f"{name} must be a string, not {_type_word(value)}{hint}"
    if spec.choices and value not in spec.choices:
        return None, (
            f"{name} must be one of {', '.join(spec.choices)}, not {value!r}"
            + _hint(value, list(spec.choices))
        )
    return value, None


def _hint(value: str, choices: list[str]) -> str:
    if value.lower() == "none" and "uncompressed" in choices:
        return " ('none' is the producer's word; a topic says 'uncompressed')"
    lowered = {c.lower(): c for c in choices}
    if value.lower() in lowered:
        return f" (did you mean {lowered[value.lower()]!r}?)"
    close = suggest(value, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _range_words(spec: TopicConfig) -> str:
    lo, hi = spec.bounds or (None, None)
    extra = "".join(f" or {v}" for v in spec.extra_values)
    limits_lo = lo in (INT_MIN, LONG_MIN, -math.inf)
    limits_hi = hi in (INT_MAX, LONG_MAX, math.inf)
    if limits_hi:
        return f"at least {lo}{extra}"
    if limits_lo:
        return f"at most {hi}{extra}"
    return f"between {lo} and {hi}{extra}"


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_plain(v).strip() for v in value)
    if value is None:
        return ""
    return str(value)


def normalize_config(name: str, value: object) -> str:
    """The string Kafka holds for ``value``: ints as decimal, booleans ``true``/``false``,
    lists comma-joined without spaces, doubles in one canonical form. Both sides of the diff
    go through it, so ``604800000``, ``"604800000"`` and ``"0604800000"`` compare equal.

    Never raises: a value that does not fit the config's type comes back as a plain string
    (validation reports it; the diff then shows it as a change).
    """
    normal, error = check_config(name, value)
    if error is None and normal is not None:
        return normal
    spec = CONFIGS.get(name)
    if spec is not None and spec.type == "boolean" and isinstance(value, str):
        return value.strip().lower()
    return _plain(value)


def readable_config(name: str, value: str) -> str:
    """A held value as a person writes it: ``retention.ms`` ``604800000`` -> ``7d``,
    ``segment.bytes`` ``1073741824`` -> ``1GiB``, ``retention.ms`` ``-1`` -> ``infinite``;
    anything else unchanged. ``normalize_config`` reads every result back to ``value``."""
    spec = CONFIGS.get(name)
    number = _as_int(value) if spec is not None and spec.unit is not None else None
    if spec is None or number is None or check_config(name, number)[1] is not None:
        return value  # not a value Kafka takes: shown as it is
    if number == -1 and spec.infinite:
        return "infinite"
    return spec_millis_text(number) if spec.unit == "ms" else spec_bytes_text(number)


# ------------------------------------------------------------------ schema


def value_schema(spec: TopicConfig) -> dict[str, Any]:
    """The JSON Schema of one config value (what an editor checks as you type)."""
    suffix = f" Kafka default: {spec.default!r}." if spec.default != "" else ""
    if spec.since:
        suffix += f" Since Kafka {spec.since}."
    if spec.removed_in:
        suffix += f" Removed in Kafka {spec.removed_in}."
    out: dict[str, Any] = {"description": spec.doc + suffix}
    if spec.type in ("int", "long"):
        lo, hi = spec.bounds or (LONG_MIN, LONG_MAX)
        number: dict[str, Any] = {"type": "integer", "minimum": lo, "maximum": hi}
        if spec.extra_values:
            number = {
                "type": "integer",
                "anyOf": [
                    {"minimum": lo, "maximum": hi},
                    {"enum": list(spec.extra_values)},
                ],
            }
        out["anyOf"] = [number, {"type": "string", "pattern": _amount_pattern(spec)}]
        out["default"] = int(spec.default)
        if spec.unit is not None:
            out["description"] += _UNIT_NOTE[spec.unit] + (
                " infinite means -1." if spec.infinite else ""
            )
    elif spec.type == "double":
        lo_f, hi_f = spec.bounds or (-math.inf, math.inf)
        num: dict[str, Any] = {"type": "number"}
        if math.isfinite(lo_f):
            num["minimum"] = lo_f
        if math.isfinite(hi_f):
            num["maximum"] = hi_f
        out["anyOf"] = [num, {"type": "string", "pattern": DOUBLE_PATTERN}]
        out["default"] = float(spec.default)
    elif spec.type == "boolean":
        out["anyOf"] = [{"type": "boolean"}, {"type": "string", "pattern": BOOLEAN_PATTERN}]
        out["default"] = spec.default == "true"
    elif spec.type == "list":
        if spec.choices:
            out["anyOf"] = [
                {"type": "string", "pattern": _list_pattern(spec.choices)},
                {
                    "type": "array",
                    "items": {"enum": list(spec.choices)},
                    "uniqueItems": True,
                },
            ]
        else:
            out["anyOf"] = [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
        out["default"] = spec.default
    else:
        out["type"] = "string"
        if spec.choices:
            out["enum"] = list(spec.choices)
        out["default"] = spec.default
    if spec.removed_in:
        out["deprecated"] = True
    return out


_UNIT_PATTERN = {
    "ms": r"([0-9]+(\.[0-9]+)?(ms|s|m|h|d|w))+",
    "bytes": r"[0-9]+(\.[0-9]+)?([kKmMgGtT]i?[bB]|[bB])",
}
_UNIT_NOTE = {
    "ms": " In milliseconds, or with units: 500ms, 15m, 36h, 7d, 1w, 1h30m.",
    "bytes": " In bytes, or with units: 10MB (decimal, 1000), 512MiB (binary, 1024), 1GiB.",
}


def _amount_pattern(spec: TopicConfig) -> str:
    """What a string value may say: the integer Kafka holds, or a human amount."""
    if spec.unit is None:
        return INT_PATTERN
    # the grammar of kgitops/units.py: no space inside or around an amount with units
    words = [r" *[+-]?[0-9]+ *", _UNIT_PATTERN[spec.unit]]
    if spec.infinite:
        words.append(r" *[Ii][Nn][Ff][Ii][Nn][Ii][Tt][Ee] *")
    return "^(" + "|".join(words) + ")$"


def _list_pattern(choices: tuple[str, ...]) -> str:
    alt = "|".join(choices)
    return f"^ *(({alt})( *, *({alt}))*)? *$"


def config_schema() -> dict[str, Any]:
    """The ``config`` property of ``schemas/topic.json``."""
    return {
        "type": "object",
        "description": "Topic-level configs, by Kafka's name. Values may be written as YAML "
        "numbers, booleans or strings; kgitops holds them as the strings Kafka holds.",
        "additionalProperties": False,
        "properties": {name: value_schema(spec) for name, spec in sorted(CONFIGS.items())},
    }


SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def _write_schema() -> None:
    path = SCHEMA_DIR / "topic.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["properties"]["config"] = config_schema()
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    path = SCHEMA_DIR / "cluster.json"  # defaults: and profiles: take the same configs
    data = json.loads(path.read_text(encoding="utf-8"))
    data["$defs"]["topicConfig"] = config_schema()
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    _write_schema()
