"""The schemas' regular expressions read as an editor reads them (ECMA-262), by an ECMA-262
engine: ``regress`` (Python bindings of the Rust ``regress`` crate).

``kgitops/schemas/*.json`` serve two readers: editors (VS Code's YAML extension and other
JSON Schema tools run ``pattern`` as an ECMA-262 ``RegExp`` with the ``u`` flag) and
kgitops itself (the jsonschema validator and ``schemacheck``'s compiled fast path). The
same text means different things in Python's ``re``, so kgitops never runs a schema pattern
with ``re``::

    pattern            value      ECMA-262            Python re.search
    ^[0-9]+d$          "12d\\n"    refused             accepted ($ matches before a final \\n)
    ^\\s*[0-9]+\\s*$     "12\\ufeff"  accepted (\\s: BOM)  refused
    ^\\d+$             "１２"      refused             accepted (\\d: any Unicode digit)
    ^a.b$              "a\\rb"     refused             accepted (. excludes only \\n)

``schema_regex(pattern).find(text)`` is ``new RegExp(pattern, "u").test(text)``: a match or
None, searched anywhere as JSON Schema does (the schemas anchor with ``^`` and ``$``).
``tests/specs/test_schema_patterns.py`` runs every pattern of every schema against hostile
strings through kgitops' checks and through node's ``RegExp`` when node is there.
"""

from __future__ import annotations

from functools import cache

from regress import Regex


@cache
def schema_regex(pattern: str) -> Regex:
    """``pattern`` compiled with its ECMA-262 meaning (the ``u`` flag, as editors use it)."""
    return Regex(pattern, "u")
