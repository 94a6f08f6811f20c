"""JSON from a file's content, refused with one positioned line (``shown:line:col``) for
every way it can be wrong: binary content, bad UTF-8 (a UTF-8 BOM is accepted), nesting
deeper than ``MAX_DEPTH``, malformed JSON, ``NaN``/``Infinity``, a number that reads as
infinity (``1e400``) or an integer too long to read. Every refusal is a ``FileRefused``.
Reading the file itself (regular files only, the size cap) is ``kgitops.files``'."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from kgitops.errors import FileRefused, Mark

#: JSON files nested deeper than this are refused (no kgitops file needs more than ten).
MAX_DEPTH = 200


def position(data: bytes | str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``data`` (columns count characters)."""
    if isinstance(data, str):
        line = data.count("\n", 0, offset) + 1
        return line, offset - (data.rfind("\n", 0, offset) + 1) + 1
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, len(data[start:offset].decode("utf-8", errors="replace")) + 1


def decode_utf8(data: bytes, shown: str) -> str:
    """UTF-8 text (a leading BOM dropped); ``FileRefused`` with the position of a NUL byte
    (a binary file) or of the first byte that is not UTF-8."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FileRefused(Mark(shown, *position(data, nul)), "a binary file (NUL byte), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRefused(
            Mark(shown, *position(data, exc.start)),
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
        ) from None


# Only brackets, quotes and backslashes decide JSON nesting.
_FLOW = str.maketrans({c: None for c in map(chr, range(128)) if c not in '[]{}"\\'})


def _nesting_fits(text: str) -> bool:
    """Whether ``text``'s brackets (outside strings) nest at most MAX_DEPTH deep. Fast on big
    files: the text shrinks to its brackets, strings drop out, and each round of removing the
    innermost ``[]``/``{}`` pairs peels one level."""
    flow = text.translate(_FLOW)
    if "\\" in flow:
        flow = flow.replace("\\\\", "").replace('\\"', "").replace("\\", "")
    if '"' in flow:
        # usually no string holds a bracket: each one is then an adjacent pair of quotes
        paired = flow.replace('""', "")
        flow = paired if '"' not in paired else "".join(flow.split('"')[0::2])
    for _ in range(MAX_DEPTH):
        shorter = flow.replace("[]", "").replace("{}", "")
        if len(shorter) == len(flow):
            return True  # nothing to peel: done, or unbalanced (the parser says where)
        flow = shorter
    return not flow


def _outside_strings(text: str) -> Iterator[tuple[int, str]]:
    """Each character of JSON ``text`` that stands outside a string, with its offset (slow;
    only to place the error in a refused file)."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            yield i, ch


def _too_deep_at(text: str) -> int:
    """The offset where nesting first passes MAX_DEPTH."""
    depth = 0
    for i, ch in _outside_strings(text):
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return i
        elif ch in "]}":
            depth -= 1
    return 0  # pragma: no cover - only called when _nesting_fits said no


def nesting_problem(text: str, shown: str) -> FileRefused | None:
    """``FileRefused`` at the place where ``text`` first nests deeper than MAX_DEPTH, or None."""
    if _nesting_fits(text):
        return None
    return FileRefused(Mark(shown, *position(text, _too_deep_at(text))), _TOO_DEEP)


_TOO_DEEP = f"nested more than {MAX_DEPTH} deep"


class _NotANumber(ValueError):
    pass


class _OutOfRange(ValueError):
    """A number ``json.loads`` would read as infinity (``1e400``) or cannot read at all (an
    integer longer than Python's ``int_max_str_digits``)."""


def number_problem(token: str) -> str:
    """Why the number written ``token`` is refused, for the JSON and the YAML loaders:
    ``'1e400' is too large a number: it reads as infinity (at most about 1.8e308)``. A long
    token is named by its length, not echoed."""
    text = token.strip()
    shown = repr(text) if len(text) <= 40 else f"a {len(text):,}-character number"
    bare = text.lower().lstrip("+-")
    if bare in (".nan", "nan"):
        return f"{shown} is not a number (NaN)"
    if bare in (".inf", "inf", "infinity"):
        return (
            f"{shown} is infinity, not a number kgitops reads "
            "(a config with no limit takes 'infinite')"
        )
    if not any(c in bare for c in ".e"):
        digits = sum(c.isdigit() for c in text)
        return (
            f"an integer of {digits:,} digits is too long to read "
            f"(at most {sys.get_int_max_str_digits():,})"
        )
    return f"{shown} is too large a number: it reads as infinity (at most about 1.8e308)"


def _finite(token: str) -> float:
    value = float(token)
    if value in (math.inf, -math.inf):
        raise _OutOfRange(token)
    return value


_STRING_OR_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*')


def _number_at(text: str, bad: Callable[[str], bool]) -> tuple[int, str]:
    """The offset and text of the first number outside strings that ``bad`` says is the
    one (slow; only to place the error in a refused file)."""
    for m in _STRING_OR_NUMBER.finditer(text):
        token = m.group()
        if token[0] != '"' and bad(token):
            return m.start(), token
    return 0, ""  # pragma: no cover - only called when the parser met one


def _too_large(token: str) -> bool:
    try:
        return not math.isfinite(float(token))
    except ValueError:
        return False


def _too_long(token: str) -> bool:
    return sum(c.isdigit() for c in token) > sys.get_int_max_str_digits() > 0


def _refuse_constant(name: str) -> Any:
    """``json.loads`` reads ``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not have
    (and a clock or a size of Infinity breaks what reads it): refuse them."""
    raise _NotANumber(name)


def _constant_at(text: str) -> int:
    """The offset of the first ``NaN``/``Infinity``/``-Infinity`` outside a string: outside
    strings, valid JSON has no capital letter."""
    for i, ch in _outside_strings(text):
        if ch in "NI":
            return i - 1 if i and text[i - 1] == "-" else i
    return 0  # pragma: no cover - only called when the parser met one


def loads_json(data: bytes | str, shown: str, *, check_depth: bool = True) -> Any:
    """Parse JSON from a file's content; ``FileRefused`` with ``shown:line:col`` for binary
    content, bad UTF-8, nesting deeper than MAX_DEPTH, or malformed JSON.

    ``check_depth=False`` is for a caller that reads the result by a fixed shape and checks
    the depth itself before reporting a shape problem (the state loader: the scan costs a
    tenth of loading a 1M-partition state, benchmarks/snapshot_load.py); the parser itself
    still refuses a nest deep enough to exhaust the stack."""
    text = decode_utf8(data, shown) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    if check_depth and (problem := nesting_problem(text, shown)) is not None:
        raise problem
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except _NotANumber:
        at = _constant_at(text)
        raise FileRefused(
            Mark(shown, *position(text, at)), "invalid JSON: NaN and Infinity are not JSON numbers"
        ) from None
    except json.JSONDecodeError as exc:
        raise FileRefused(Mark(shown, exc.lineno, exc.colno), f"invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # _OutOfRange, or an integer past int_max_str_digits
        at, token = _number_at(text, _too_large if isinstance(exc, _OutOfRange) else _too_long)
        raise FileRefused(
            Mark(shown, *position(text, at)), f"invalid JSON: {number_problem(token)}"
        ) from None
    except RecursionError:
        raise nesting_problem(text, shown) or FileRefused(Mark(shown), _TOO_DEEP) from None
