"""The schemas' regular expressions read as an editor reads them (ECMA-262), in Python.

``kgitops/schemas/*.json`` serve two readers: editors (VS Code's YAML extension and other
JSON Schema tools run ``pattern`` as an ECMA-262 ``RegExp`` with the ``u`` flag) and
kgitops itself (jsonschema and ``schemacheck.conforms`` run it with Python's ``re``). The
same text means different things in the two engines, so a value one accepts and the other
refuses::

    pattern            value      ECMA-262            Python re.search
    ^[0-9]+d$          "12d\\n"    refused             accepted ($ matches before a final \\n)
    ^\\s*[0-9]+\\s*$     "12\\ufeff"  accepted (\\s: BOM)  refused
    ^[0-9]+$           "１２"      refused             refused ([0-9] is ASCII in both)
    ^\\d+$             "１２"      refused             accepted (\\d: any Unicode digit)
    ^a.b$              "a\\rb"     refused             accepted (. excludes only \\n)

``schema_regex`` compiles a schema pattern into a Python regex with the ECMA meaning of
``$``, ``^``, ``.``, ``\\s``, ``\\d``, ``\\w`` (and their negations), so kgitops refuses
exactly what an editor refuses. A construct whose meaning differs and which it cannot
translate (a lookbehind, ``\\b``, a backreference) is a ValueError: the schemas must not use
it. ``tests/specs/test_schema_patterns.py`` runs every pattern of every schema against
hostile strings through this and through a real ECMA engine (node) when one is there.
"""

from __future__ import annotations

import re
from functools import cache

#: ECMA-262 WhiteSpace and LineTerminator: what ``\s`` means in an editor.
ECMA_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LINE_END = "\n\r\u2028\u2029"
_IN_CLASS = {"s": ECMA_SPACE, "d": "0-9", "w": "A-Za-z0-9_"}
_OUTSIDE = {
    "s": f"[{ECMA_SPACE}]",
    "S": f"[^{ECMA_SPACE}]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
}
_PLAIN_ESCAPES = frozenset("tnrfv.\\/^$*+?()[]{}|-")


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262) as Python regex text with the same meaning: ``^[0-9]+d$``
    becomes ``^[0-9]+d\\Z``, ``\\s`` the class of ECMA's white space and line ends."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= len(pattern):
                raise ValueError(f"pattern {pattern!r} ends in a lone backslash")
            nxt = pattern[i + 1]
            if in_class and nxt in _IN_CLASS:
                out.append(_IN_CLASS[nxt])
            elif not in_class and nxt in _OUTSIDE:
                out.append(_OUTSIDE[nxt])
            elif nxt in _PLAIN_ESCAPES:
                out.append("\\" + nxt)
            else:
                raise ValueError(f"pattern {pattern!r}: \\{nxt} is not translated")
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            elif ch == "[":
                out.append("\\[")
                i += 1
                continue
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            if pattern.startswith("^", i + 1):
                out.append("^")
                i += 1
            if pattern.startswith("]", i + 1):
                raise ValueError(f"pattern {pattern!r}: an empty class [] is not translated")
        elif ch == "$":
            out.append(r"\Z")
        elif ch == ".":
            out.append(f"[^{_LINE_END}]")
        elif ch == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            raise ValueError(f"pattern {pattern!r}: only (?: groups are translated")
        else:
            out.append(ch)
        i += 1
    if in_class:
        raise ValueError(f"pattern {pattern!r}: an unclosed [")
    return "".join(out)


@cache
def schema_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with its ECMA-262 meaning; ``.search`` it as JSON Schema does."""
    return re.compile(translate(pattern))
