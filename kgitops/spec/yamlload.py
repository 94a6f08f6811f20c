"""YAML files -> plain Python values, with the file, line and column of every value kept.

PyYAML's constructors forget positions and silently accept duplicate keys, so kgitops only
asks libyaml (``CSafeLoader``) to *compose* the node graph and builds the values itself (a
file of plain block YAML, most spec files, is read line by line instead, to the same values
and positions: ``_plain_documents``):

* every value's position is kept under its dotted path (``"config.retention.ms"``,
  ``"assignment.3"``), 1-based as editors count, and every mapping key's position too;
* a key seen twice in one mapping is an error at the second one;
* tabs, malformed YAML, binary content, bad UTF-8, control characters, empty files, unknown
  tags, recursive aliases, nesting past ``MAX_DEPTH`` and alias bombs are positioned
  diagnostics, never exceptions (nor crashes: libyaml composes recursively in C);
* aliases are budgeted by the *nodes* they copy, scalars included: one 20,000-item list
  aliased 9,000 times (a 67 KB file, 180 million values) stops after a few copies;
* files are read through ``kgitops.files``: regular files only, at most the size cap, and
  (given a ``root``) never through a symlink that leads out of the cluster folder.

Example: the document ``name: a\\nconfig:\\n  retention.ms: 1000`` gives the value
``{"name": "a", "config": {"retention.ms": 1000}}``, and ``doc.mark("config.retention.ms")``
is line 3, column 17.
"""

from __future__ import annotations

import codecs
import math
import operator
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from kgitops.errors import Diagnostic, FileRefused, Mark
from kgitops.files import read_bytes
from kgitops.jsontext import number_problem

try:  # libyaml: ~10x faster composing; the pure-Python loader is the fallback
    _Base: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml is part of the PyYAML wheels
    _Base = yaml.SafeLoader

_RESOLVED: dict[str, str] = {}
_SCALAR_NODE = yaml.ScalarNode
_MAPPING_NODE = yaml.MappingNode


class _Loader(_Base):  # type: ignore[misc]
    """The safe loader, with the tag of a plain scalar remembered by its text.

    Implicit resolution (is ``12`` an int, ``true`` a bool?) depends only on the text, and
    spec folders repeat the same texts thousands of times (``kgitops/v1``, ``Topic``, ``3``).
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # libyaml calls this for every node without a tag: the answers of PyYAML's resolver
        # when no path resolver is registered (none is: ``descend_resolver`` keeps no path)
        if kind is _SCALAR_NODE:
            if not implicit[0]:
                return _STR  # a quoted scalar
            return _plain_tag(value)
        return _MAP if kind is _MAPPING_NODE else _SEQ

    # kgitops registers no path resolvers: libyaml's composer calls these two for every node
    # (340,000 calls for 10,000 topics) and ignores what they return, so each is a C
    # callable of the right arity that does nothing (a builtin is not bound to the loader)
    descend_resolver = operator.is_  # (current_node, current_index)
    ascend_resolver = tuple  # ()


_RESOLVER: Any = yaml.resolver.Resolver()


def _plain_tag(value: str) -> str:
    """The tag PyYAML's resolver gives the plain (unquoted) scalar ``value``."""
    tag = _RESOLVED.get(value)
    if tag is None:
        tag = _RESOLVER.resolve(_SCALAR_NODE, value, (True, False))
        if len(_RESOLVED) < 100_000:
            _RESOLVED[value] = tag
    return tag


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"

_CONSTRUCTOR = SafeConstructor()


class _Failure(Exception):
    """A positioned problem found while building values (internal; becomes a Diagnostic)."""

    def __init__(self, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


@dataclass(frozen=True, eq=False)
class Document:
    """One YAML document: its value, and the position of every value and key in it."""

    path: str  # the file, as it is shown to the user
    index: int  # 0-based position of the document in its file
    value: Any
    positions: Mapping[str, tuple[int, int]]  # dotted path -> (line, col) of the value
    key_positions: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: A value another file set (cluster.yaml's ``defaults:``, a profile): path -> that file.
    files: Mapping[str, str] = field(default_factory=dict)
    #: Who set an inherited value: path -> ``defaults`` or ``profile critical``.
    origins: Mapping[str, str] = field(default_factory=dict)

    def file_of(self, path: str) -> str:
        """The file that set the value at ``path``."""
        return self.files.get(path, self.path) if self.files else self.path

    def mark(self, path: str = "") -> Mark:
        """The position of the value at ``path``, or of its closest parent that has one."""
        while True:
            pos = self.positions.get(path)
            if pos is not None:
                return Mark(self.file_of(path), pos[0], pos[1])
            if not path:
                return Mark(self.path, 1, 1)
            path = path.rpartition(".")[0] if "." in path else ""

    def key_mark(self, path: str) -> Mark:
        """The position of the key of the mapping entry at ``path`` (else of its value)."""
        pos = self.key_positions.get(path)
        if pos is not None:
            return Mark(self.file_of(path), pos[0], pos[1])
        return self.mark(path)


class Marks(Mapping[str, Mark]):
    """A read-only ``path -> Mark`` view over a document's positions, built lazily.

    Loading 10,000 topics keeps hundreds of thousands of positions; most are never asked
    for, so Marks are made on access.
    """

    __slots__ = ("_files", "_path", "_positions")

    def __init__(
        self,
        path: str,
        positions: Mapping[str, tuple[int, int]],
        files: Mapping[str, str] | None = None,
    ):
        self._path = path
        self._positions = positions
        self._files = files or {}

    def __getitem__(self, key: str) -> Mark:
        pos = self._positions[key]
        return Mark(self._files.get(key, self._path), pos[0], pos[1])

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    """Turns one composed node graph into values and positions.

    An alias is expanded into a copy of its anchor's value; a chain of aliases to aliases
    (the "billion laughs") grows exponentially, and one big anchor aliased many times grows
    quadratically, so every node an alias copies (scalars too) is counted and limited.
    """

    def __init__(self) -> None:
        self.positions: dict[str, tuple[int, int]] = {}
        self.key_positions: dict[str, tuple[int, int]] = {}
        self._active: set[int] = set()
        self._sizes: dict[int, int] = {}  # collection node -> nodes in its value
        self._built = 0  # nodes built so far (keys and scalars included)
        self._copied = 0  # nodes built again through aliases
        # problems that do not stop the build (duplicate keys: the first value is kept so
        # the rest of the document is still checked and every error reported at once)
        self.problems: list[tuple[int, int, str]] = []

    def build(self, node: yaml.Node, path: str) -> Any:
        self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node)
        ident = id(node)
        if ident in self._active:
            line, col = _pos(node)
            raise _Failure(line, col, "a recursive alias (an anchor used inside itself)")
        size = self._sizes.get(ident)
        if size is not None:
            self._copied += size
            if self._copied > MAX_ALIAS_NODES:
                line, col = _pos(node)
                raise _Failure(line, col, f"aliases expand to more than {MAX_ALIAS_NODES:,} values")
        self._active.add(ident)
        before = self._built
        # a mapping counts its keys and values, a sequence its items (a nested collection
        # is counted again by its own build: a budget may over-count, never under-count)
        self._built += 1 + len(node.value) * (2 if isinstance(node, yaml.MappingNode) else 1)
        try:
            if isinstance(node, yaml.SequenceNode):
                _check_tag(node, _SEQ)
                prefix = path + "." if path else ""
                return [self.build(item, f"{prefix}{i}") for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode):
                _check_tag(node, _MAP)
                return self._mapping(node, path)
        finally:
            self._active.discard(ident)
            self._sizes[ident] = self._built - before
        line, col = _pos(node)  # pragma: no cover - composer makes only these three
        raise _Failure(line, col, "unsupported YAML node")

    def _mapping(self, node: yaml.MappingNode, path: str) -> dict[str, Any]:
        # The hot loop of loading: scalar keys and values are handled inline.
        out: dict[str, Any] = {}
        prefix = path + "." if path else ""
        positions = self.positions
        key_positions = self.key_positions
        scalar = yaml.ScalarNode
        for key_node, value_node in node.value:
            mark = key_node.start_mark
            line, col = mark.line + 1, mark.column + 1
            if type(key_node) is not scalar:
                raise _Failure(line, col, "a mapping key must be a plain scalar")
            tag = key_node.tag
            if tag == _STR:
                key = key_node.value
            elif tag == _MERGE:
                raise _Failure(line, col, "merge keys (<<) are not supported; write the fields")
            else:
                key = _scalar(key_node)
                if not isinstance(key, str):
                    key = _plain_key(key_node)
            child = prefix + key
            if key in out:
                first = key_positions.get(child, (line, col))[0]
                self.problems.append(
                    (line, col, f"duplicate key {key!r} (first defined at line {first})")
                )
                continue
            key_positions[child] = (line, col)
            if type(value_node) is scalar:
                mark = value_node.start_mark
                positions[child] = (mark.line + 1, mark.column + 1)
                out[key] = value_node.value if value_node.tag == _STR else _scalar(value_node)
            else:
                out[key] = self.build(value_node, child)
        return out


def _plain_key(node: yaml.ScalarNode) -> str:
    return str(node.value)


def _check_tag(node: yaml.Node, expected: str) -> None:
    if node.tag != expected:
        line, col = _pos(node)
        raise _Failure(line, col, f"unsupported YAML tag {node.tag!r}")


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    try:
        if tag == _INT:
            text = node.value
            if text.isdigit() and (text[0] != "0" or len(text) == 1):
                return int(text)  # the common case; YAML 1.1 reads 012 as octal
            return _CONSTRUCTOR.construct_yaml_int(node)
        if tag == _FLOAT:
            value = _CONSTRUCTOR.construct_yaml_float(node)
            if not math.isfinite(value):
                line, col = _pos(node)
                raise _Failure(line, col, number_problem(node.value))
            return value
        if tag == _BOOL:
            return _CONSTRUCTOR.construct_yaml_bool(node)
        if tag == _NULL:
            return None
        if tag == _TIMESTAMP:
            return node.value  # dates stay text: no field of kgitops is a date
    except (ValueError, yaml.YAMLError) as exc:
        line, col = _pos(node)
        if tag == _INT and "digits" in str(exc):  # Python's int_max_str_digits
            raise _Failure(line, col, number_problem(node.value)) from None
        raise _Failure(line, col, f"invalid {tag.rsplit(':', 1)[-1]}: {exc}") from None
    line, col = _pos(node)
    raise _Failure(line, col, f"unsupported YAML tag {tag!r}")


def _yaml_problem(exc: yaml.YAMLError, path: str, text: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    if _char_at(text, line, col) == "\t" or "'\\t'" in problem:
        message = "a tab character: YAML indentation must use spaces"
    else:
        message = f"invalid YAML: {problem}"
        if context:
            message += f" ({context})"
    return Diagnostic(Mark(path, line, col), "error", message)


def _char_at(text: str, line: int, col: int) -> str:
    lines = text.split("\n", line)
    if len(lines) < line:
        return ""
    row = lines[line - 1]
    return row[col - 1] if 0 < col <= len(row) else ""


def _decode(data: bytes, path: str) -> tuple[str | None, Diagnostic | None]:
    """Bytes -> text, or a positioned error for binary content and bad UTF-8."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError:
            return None, Diagnostic(Mark(path), "error", "not valid UTF-16 text")
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _offset_position(data, nul)
        return None, Diagnostic(
            Mark(path, line, col), "error", "a binary file (NUL byte), not YAML text"
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line, col = _offset_position(data, exc.start)
        return None, Diagnostic(
            Mark(path, line, col),
            "error",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
        )


def _offset_position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return line, col


# What YAML 1.1 does not allow in a stream: C0 controls but tab, LF and CR; DEL; C1 but NEL;
# surrogates; U+FFFE and U+FFFF.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


#: How many values (lists, mappings, keys and scalars) aliases may copy in one document.
MAX_ALIAS_NODES = 100_000

#: libyaml composes recursively in C: tens of thousands of nested levels overflow the C stack
#: and kill the process. No spec needs more than a handful.
MAX_DEPTH = 200
_NOT_FLOW = re.compile(r"[^\[\]{}]+")
_FLOW_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where the nesting first passes MAX_DEPTH, or None.

    Block nesting needs a deeper column for each level, so it is bounded by the longest
    line, and flow nesting by the bracket depth; only when these allow a deep document are
    the parse events (not recursive) walked to find out.
    """
    flow = _NOT_FLOW.sub("", text)
    flow_depth = max(accumulate(map(_FLOW_DELTA.__getitem__, flow)), default=0)
    longest = max(map(len, text.splitlines()), default=0)
    if flow_depth + longest <= MAX_DEPTH:
        return None
    loader = _Loader(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                mark = event.start_mark
                if depth > MAX_DEPTH and mark is not None:
                    return mark.line + 1, mark.column + 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None  # the compose step reports the syntax error with its position
    finally:
        loader.dispose()
    return None


# The plain block YAML ``_plain_documents`` reads. A line: indentation, a key, then a plain
# scalar or nothing (a nested mapping follows). Keys start with a letter or ``_`` (YAML 1.1
# reads such a key as its text: at most a bool or null, which kgitops keys by their text);
# a value's words are letters, digits and ``_./-`` split by single spaces, its first
# character no YAML indicator. Nothing here can be a tag, an anchor, an alias, a quote, a
# flow collection, a comment, a merge key or a sequence. A key is at most 1,000 characters
# (libyaml looks at most 1,024 ahead for a key's colon).
_PLAIN_LINE = re.compile(
    r"( *)([A-Za-z_][A-Za-z0-9_.\-]{0,999}):"
    r"(?:( +)([A-Za-z0-9_/][A-Za-z0-9_./\-]*(?: [A-Za-z0-9_./\-]+)*))? *"
)
_BLANK_OR_COMMENT = re.compile(r" *(?:#.*)?")
# characters YAML reads as line breaks besides LF, a tab (indentation), a BOM
_NOT_PLAIN = re.compile("[\r\t\x85\u2028\u2029\ufeff]")


def _plain_documents(text: str, path: str) -> list[Document] | None:
    """The documents of ``text`` when it is plain block YAML: nested block mappings of plain
    keys and plain scalars, whole-line comments, blank lines and ``---`` lines; None for
    anything else (then libyaml composes it, and says what is wrong). What a spec folder
    written by hand or by a program mostly is; read here line by line, without a node graph,
    the same values and positions as the composed documents (tests/specs/test_yamlload.py
    compares the two on generated texts). Anything the composed path would report (a
    duplicate key, an empty value, a bad number) also returns None."""
    if _NOT_PLAIN.search(text) is not None:
        return None
    documents: list[Document] = []
    index = 0  # of the current document, counting empty ones as the composer does
    started = False  # the current document has begun: a ``---`` or a first entry
    match_line = _PLAIN_LINE.fullmatch
    skip = _BLANK_OR_COMMENT.fullmatch
    resolved = _RESOLVED.get
    positions: dict[str, tuple[int, int]] = {}
    key_positions: dict[str, tuple[int, int]] = {}
    root: dict[str, Any] = {}
    # the open mappings, innermost last: (indentation, mapping, path prefix); the innermost
    # one also in ``level``, ``mapping`` and ``prefix`` (-1: no mapping open)
    stack: list[tuple[int, dict[str, Any], str]] = []
    level, mapping, prefix = -1, root, ""
    pending: tuple[dict[str, Any], str, str] | None = None  # a key whose mapping follows
    str_tag, int_tag = _STR, _INT
    for number, line in enumerate(text.split("\n"), 1):
        m = match_line(line)
        if m is None:
            if line == "---":
                if pending is not None:
                    return None  # an empty value: libyaml's null, positioned by its composer
                if stack:
                    documents.append(Document(path, index, root, positions, key_positions))
                    positions, key_positions, root, stack = {}, {}, {}, []
                    level, mapping, prefix = -1, root, ""
                if started:
                    index += 1
                started = True
                continue
            if skip(line) is not None:
                continue
            return None
        spaces, key, gap, value = m.groups()
        indent = len(spaces)
        if indent != level or pending is not None:
            if pending is not None:
                if indent <= level:
                    return None
                parent, name, child = pending
                mapping = {}
                parent[name] = mapping
                positions[child] = (number, indent + 1)
                level, prefix = indent, child + "."
                stack.append((level, mapping, prefix))
                pending = None
            elif level < 0:
                positions[""] = (number, indent + 1)
                level, mapping, prefix = indent, root, ""
                stack.append((level, mapping, prefix))
                started = True
            else:
                while indent < stack[-1][0]:
                    stack.pop()
                    if not stack:
                        return None
                level, mapping, prefix = stack[-1]
                if indent != level:
                    return None
        if key in mapping:
            return None  # a duplicate key: the composed path reports it
        child = prefix + key
        key_positions[child] = (number, indent + 1)
        if value is None:
            mapping[key] = None  # holds the key's place; its mapping is set next line
            pending = (mapping, key, child)
            continue
        column = indent + len(key) + 1 + len(gap)
        positions[child] = (number, column + 1)
        tag = resolved(value) or _plain_tag(value)
        if tag == str_tag:
            mapping[key] = value
        elif tag == int_tag and value.isdigit() and value[0] != "0" and len(value) <= 640:
            mapping[key] = int(value)  # _scalar's common case (640: the lowest int_max_str_digits)
        else:
            node = yaml.ScalarNode(tag, value, yaml.Mark(path, 0, number - 1, column, None, 0))
            try:
                mapping[key] = _scalar(node)
            except _Failure:
                return None
    if pending is not None:
        return None
    if stack:
        documents.append(Document(path, index, root, positions, key_positions))
    return documents or None


def load_text(text: str, path: str) -> tuple[list[Document], list[Diagnostic]]:
    """Every document of one YAML stream, and the problems found in it.

    Documents before a syntax error are kept; an empty document (a bare ``---``) is skipped;
    a stream with no document at all is an error.
    """
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    bad = _FORBIDDEN.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        col = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        message = f"a control character (U+{ord(bad.group()):04X}) that YAML does not allow"
        return [], [Diagnostic(Mark(path, line, col), "error", message)]
    deep = _too_deep(text)
    if deep is not None:
        message = f"nested more than {MAX_DEPTH} levels deep"
        return [], [Diagnostic(Mark(path, *deep), "error", message)]
    plain = _plain_documents(text, path)
    if plain is not None:
        return plain, []
    loader = _Loader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            this = index
            index += 1
            if node is None or (
                isinstance(node, yaml.ScalarNode) and node.tag == _NULL and node.value == ""
            ):
                continue
            builder = _Builder()
            try:
                value = builder.build(node, "")
            except _Failure as failure:
                diagnostics.append(
                    Diagnostic(Mark(path, failure.line, failure.col), "error", failure.message)
                )
                continue
            except RecursionError:
                line, col = _pos(node)
                diagnostics.append(
                    Diagnostic(Mark(path, line, col), "error", "the document is nested too deeply")
                )
                continue
            diagnostics.extend(
                Diagnostic(Mark(path, line, col), "error", message)
                for line, col, message in builder.problems
            )
            documents.append(Document(path, this, value, builder.positions, builder.key_positions))
    except yaml.YAMLError as exc:
        diagnostics.append(_yaml_problem(exc, path, text))
    finally:
        loader.dispose()
    if not documents and not diagnostics:
        diagnostics.append(Diagnostic(Mark(path), "error", "an empty file: no YAML document in it"))
    return documents, diagnostics


def load_file(
    filename: str, shown_as: str | None = None, *, root: str | None = None
) -> tuple[list[Document], list[Diagnostic]]:
    """``load_text`` for a file; unreadable files are diagnostics too. ``root``: the
    file must resolve inside this folder (a symlink out of it is refused, unread)."""
    path = shown_as if shown_as is not None else filename
    try:
        data = read_bytes(filename, shown=path, root=root)
    except FileRefused as exc:
        return [], [Diagnostic(exc.mark, "error", exc.reason)]
    except OSError as exc:
        return [], [Diagnostic(Mark(path), "error", f"cannot read the file: {exc.strerror or exc}")]
    text, problem = _decode(data, path)
    if problem is not None or text is None:
        return [], [problem] if problem is not None else []
    return load_text(text, path)
