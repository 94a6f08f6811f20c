"""A JSON Schema compiled into plain closures: a yes/no check without jsonschema.

jsonschema walks its schema anew for every instance (about 0.1 ms a topic: a second for a
folder of 10,000 topics) and costs a tenth of a second to import. ``compile_schema`` turns a
schema into one predicate, once, for the keywords kgitops' schemas use (``$ref`` to
``$defs``, ``allOf``/``anyOf``/``oneOf``, ``if``/``then``/``else``, ``propertyNames`` ...).

It is conservative: True only when the document certainly conforms; a keyword it does not
know makes it say False, and then jsonschema runs and explains (``schemacheck.check``). A
keyword whose answer flips with its part's (``not``, ``oneOf``, the condition of ``if``)
is compiled only over parts checked exactly, so "conservative" holds through them too::

    compile_schema({"oneOf": [{"type": "boolean"}, {"type": "object"}]})(True)   # True
    compile_schema({"dependentRequired": {"a": ["b"]}})({})                       # False
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kgitops.spec.ecmaregex import schema_regex

Predicate = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"$schema", "$id", "title", "description", "default", "deprecated", "examples", "$comment"}
)
_OBJECT_KEYS = frozenset({"properties", "additionalProperties", "required"})
#: Keywords read with another one (``then``/``else`` with ``if``) or only through ``$ref``.
_READ_ELSEWHERE = frozenset({"then", "else", "$defs"})


def compile_schema(node: Any) -> Predicate:
    """Compile a (subset of) JSON Schema into a conservative predicate (module docstring)."""
    return _Compiler(node).compile(node)[0]


def _never(v: Any) -> bool:
    return False


def _always(v: Any) -> bool:
    return True


class _Compiler:
    """Compiles the parts of one schema; ``$ref`` pointers are resolved against its root.

    Each part compiles to ``(predicate, exact)``: ``exact`` when the predicate's False also
    means the part refuses the value (no unknown keyword, no unsure answer, inside it).
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, tuple[Predicate, bool]] = {}
        self.resolving: set[str] = set()

    def compile(self, node: Any) -> tuple[Predicate, bool]:
        if node is True:
            return _always, True
        if not isinstance(node, Mapping):
            return _never, False
        checks: list[Predicate] = []
        exact = True
        if _OBJECT_KEYS & node.keys():
            check, ok = self._object(node)
            checks.append(check)
            exact = exact and ok
        for key, rule in node.items():
            if key in _ANNOTATIONS or key in _OBJECT_KEYS or key in _READ_ELSEWHERE:
                continue
            compiled = self._keyword(key, rule, node)
            if compiled is None:
                return _never, False
            checks.append(compiled[0])
            exact = exact and compiled[1]
        return _all_of(checks), exact

    def _all(self, nodes: Any) -> tuple[tuple[Predicate, ...], bool]:
        parts = [self.compile(sub) for sub in nodes]
        return tuple(p for p, _ in parts), all(ok for _, ok in parts)

    def _object(self, node: Mapping[str, Any]) -> tuple[Predicate, bool]:
        """properties + additionalProperties + required, in one pass over the mapping."""
        compiled = {k: self.compile(sub) for k, sub in node.get("properties", {}).items()}
        props = {k: p for k, (p, _) in compiled.items()}
        exact = all(ok for _, ok in compiled.values())
        extra_rule = node.get("additionalProperties", True)
        extra: Predicate | None = None
        if extra_rule is not False:
            extra, ok = self.compile(extra_rule)
            exact = exact and ok
        required = frozenset(node.get("required", ()))

        def check_object(v: Any) -> bool:
            if type(v) is not dict:
                return True
            for key, value in v.items():
                check = props.get(key)
                if check is None:
                    if extra is None or not extra(value):
                        return False
                elif not check(value):
                    return False
            return v.keys() >= required

        return check_object, exact

    def _ref(self, ref: Any) -> tuple[Predicate, bool] | None:
        """A local ``$ref`` (``#/$defs/name``); None for any other (or a cycle)."""
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in self.resolving:
            return None
        if ref not in self.refs:
            target = self.root
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    return None
                target = target[part]
            self.resolving.add(ref)
            try:
                self.refs[ref] = self.compile(target)
            finally:
                self.resolving.discard(ref)
        return self.refs[ref]

    def _keyword(
        self, key: str, rule: Any, node: Mapping[str, Any]
    ) -> tuple[Predicate, bool] | None:
        """One keyword's check and whether it is exact; None for a keyword not known here."""
        simple = _simple(key, rule)
        if simple is not None:
            return simple
        if key == "$ref":
            return self._ref(rule)
        if key in ("allOf", "anyOf", "oneOf"):
            options, exact = self._all(rule)
            if key == "allOf":
                return _all_of(list(options)), exact
            if key == "anyOf":
                return (lambda v: any(o(v) for o in options)), exact
            if not exact:
                return None  # exactly one: an unsure "no" could hide a second "yes"
            return (lambda v: sum(1 for o in options if o(v)) == 1), True
        if key == "not":
            inner, exact = self.compile(rule)
            return ((lambda v: not inner(v)), True) if exact else None
        if key == "if":
            condition, exact = self.compile(rule)
            if not exact:
                return None
            then, then_exact = self.compile(node.get("then", True))
            other, other_exact = self.compile(node.get("else", True))
            return (lambda v: then(v) if condition(v) else other(v)), then_exact and other_exact
        if key == "items":
            each, exact = self.compile(rule)
            return (lambda v: type(v) is not list or all(each(x) for x in v)), exact
        if key == "propertyNames":
            name, exact = self.compile(rule)
            return (lambda v: type(v) is not dict or all(name(k) for k in v)), exact
        return None


def _simple(key: str, rule: Any) -> tuple[Predicate, bool] | None:
    """A keyword that reads no sub-schema: its check and whether it is exact."""
    check: Predicate
    if key == "type":
        preds = tuple(_is_type(str(n)) for n in (rule if isinstance(rule, list) else [rule]))
        check = preds[0] if len(preds) == 1 else (lambda v: any(p(v) for p in preds))
        return check, all(p is not _never for p in preds)
    if key in ("const", "enum"):
        allowed = [rule] if key == "const" else list(rule)
        if not all(type(a) is str for a in allowed):
            return None
        members = frozenset(allowed)
        return (lambda v: type(v) is str and v in members), True
    if key == "minimum":
        check = lambda v: not (type(v) is int or type(v) is float) or v >= rule  # noqa: E731
    elif key == "maximum":
        check = lambda v: not (type(v) is int or type(v) is float) or v <= rule  # noqa: E731
    elif key == "exclusiveMinimum":
        check = lambda v: not (type(v) is int or type(v) is float) or v > rule  # noqa: E731
    elif key == "minLength":
        check = lambda v: type(v) is not str or len(v) >= rule  # noqa: E731
    elif key == "maxLength":
        check = lambda v: type(v) is not str or len(v) <= rule  # noqa: E731
    elif key == "pattern":
        find = schema_regex(rule).find
        check = lambda v: type(v) is not str or find(v) is not None  # noqa: E731
    elif key == "minItems":
        check = lambda v: type(v) is not list or len(v) >= rule  # noqa: E731
    elif key == "minProperties":
        check = lambda v: type(v) is not dict or len(v) >= rule  # noqa: E731
    elif key == "uniqueItems":
        return (_unique, False) if rule else (_always, True)
    else:
        return None
    return check, True


def _is_type(name: str) -> Predicate:
    def is_integer(v: Any) -> bool:
        return type(v) is int

    def is_number(v: Any) -> bool:
        return type(v) is int or type(v) is float

    simple: dict[str, type] = {
        "string": str,
        "array": list,
        "object": dict,
        "boolean": bool,
        "null": type(None),
    }
    if name == "integer":
        return is_integer
    if name == "number":
        return is_number
    exact = simple.get(name)
    if exact is None:
        return _never

    def is_exact(v: Any) -> bool:
        return type(v) is exact

    return is_exact


def _all_of(checks: list[Predicate]) -> Predicate:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    frozen = tuple(checks)

    def all_of(v: Any) -> bool:
        for check in frozen:  # noqa: SIM110 - a loop: no generator for each of 170,000 values
            if not check(v):
                return False
        return True

    return all_of


def _unique(v: Any) -> bool:
    if type(v) is not list:
        return True
    if not all(type(x) in (int, str) for x in v):
        return False  # let jsonschema decide (its equality differs for bools and floats)
    return len(set(v)) == len(v)
