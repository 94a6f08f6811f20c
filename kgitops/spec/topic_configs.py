"""A topic config's value: checked against Kafka's rules (``check_config``), held as the
string Kafka holds (``normalize_config``), and shown as a person writes it
(``readable_config``). The rules are the table's (``kgitops.spec.config_table``: name, type,
default, range, choices); validation uses ``check_config`` and the diff compares values
through ``normalize_config``.

Values are held as Kafka holds them, as strings::

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

import math
from collections.abc import Callable
from dataclasses import replace

from kgitops.spec.config_table import (
    BOOLEAN_PATTERN,
    CONFIGS,
    DOUBLE_PATTERN,
    INT_MAX,
    INT_MIN,
    INT_PATTERN,
    LONG_MAX,
    LONG_MIN,
    TopicConfig,
    suggest,
)
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

# CONFIGS is the table's (kgitops.spec.config_table); spec/load.py and plan/diff_topic.py still
# import it from here beside check_config and normalize_config.
__all__ = ["CONFIGS", "check_config", "normalize_config", "readable_config"]

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
    if isinstance(value, str) and INT_TEXT.find(value):
        if len(value.strip().lstrip("+-").lstrip("0")) > len(str(LONG_MAX)):
            raise AmountTooLarge(value)
        return int(value)
    return None


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and DOUBLE_TEXT.find(value):
        return float(value)
    return None


def _as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and BOOLEAN_TEXT.find(value):
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


#: How a double, boolean or list config is read (None: it is not one); then checked.
_READERS: dict[str, Callable[[object], float | bool | list[str] | None]] = {
    "double": _as_float,
    "boolean": _as_bool,
    "list": _list_items,
}

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
    if spec.type in _READERS:
        read = _READERS[spec.type](value)
        if read is None:
            return None, f"{name} must be {_EXPECTED[spec.type]}, not {_type_word(value)}"
        if isinstance(read, bool):
            return ("true" if read else "false"), None
        if isinstance(read, float):
            lo, hi = spec.bounds or (-math.inf, math.inf)
            if not lo <= read <= hi:
                return None, f"{name} must be {_range_words(spec)}, not {_render_float(read)}"
            return _render_float(read), None
        if spec.choices:
            for item in read:
                if item not in spec.choices:
                    return None, (
                        f"{name}: {item!r} is not one of {', '.join(spec.choices)}"
                        + _hint(item, list(spec.choices))
                    )
            if len(set(read)) != len(read):
                return None, f"{name} lists a value twice: {','.join(read)}"
        return ",".join(item for item in read if item), None
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
