"""The JSON Schema of the topic configs, generated from their table
(``kgitops.spec.config_table``): the ``config`` part of ``schemas/topic.json`` and the
``topicConfig`` of ``schemas/cluster.json`` (what an editor checks as you type).
``python -m kgitops.spec.config_schema`` rewrites both; a test checks they agree."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from kgitops.spec.config_table import (
    BOOLEAN_PATTERN,
    CONFIGS,
    DOUBLE_PATTERN,
    INT_PATTERN,
    LONG_MAX,
    LONG_MIN,
    TopicConfig,
)


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
