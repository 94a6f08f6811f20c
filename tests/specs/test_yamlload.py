"""YAML loading keeps the position of every value and key, and turns every problem into a
positioned diagnostic instead of an exception."""

from __future__ import annotations

import codecs
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.errors import Mark
from kgitops.model import Broker
from kgitops.spec import yamlload
from kgitops.spec.yamlload import load_file, load_text
from tests.helpers import cluster_folder


def test_every_value_keeps_its_line_and_column() -> None:
    text = "name: a\nconfig:\n  retention.ms: 1000\nassignment:\n  - [1, 2]\n  - [3, 4]\n"
    [doc], problems = load_text(text, "t.yaml")
    assert problems == []
    assert doc.value == {
        "name": "a",
        "config": {"retention.ms": 1000},
        "assignment": [[1, 2], [3, 4]],
    }
    assert doc.mark("name") == Mark("t.yaml", 1, 7)
    assert doc.mark("config.retention.ms") == Mark("t.yaml", 3, 17)
    assert doc.mark("assignment.1") == Mark("t.yaml", 6, 5)
    assert doc.mark("assignment.1.1") == Mark("t.yaml", 6, 9)
    assert doc.key_mark("config.retention.ms") == Mark("t.yaml", 3, 3)


def test_a_missing_path_falls_back_to_its_closest_parent() -> None:
    [doc], _ = load_text("config:\n  a: 1\n", "t.yaml")
    assert doc.mark("config.b") == Mark("t.yaml", 2, 3)
    assert doc.mark("nothing.here") == Mark("t.yaml", 1, 1)


def test_several_documents_in_one_file_keep_their_own_positions() -> None:
    docs, problems = load_text("a: 1\n---\nb: 2\n---\n", "t.yaml")
    assert problems == []
    assert [d.value for d in docs] == [{"a": 1}, {"b": 2}]
    assert [d.index for d in docs] == [0, 1]
    assert docs[1].mark("b") == Mark("t.yaml", 3, 4)


def test_yaml_1_1_scalars_are_read_as_pyyaml_reads_them() -> None:
    text = "a: 012\nb: 0x1F\nc: 1_000\nd: yes\ne: ~\nf: 1.5e+3\ng: '12'\nh: 2001-12-14\n"
    [doc], _ = load_text(text, "t.yaml")
    assert doc.value == {
        "a": 10,
        "b": 31,
        "c": 1000,
        "d": True,
        "e": None,
        "f": 1500.0,
        "g": "12",
        "h": "2001-12-14",
    }


def test_anchors_and_aliases_are_expanded() -> None:
    [doc], problems = load_text("base: &b {x: 1}\nother: *b\n", "t.yaml")
    assert problems == []
    assert doc.value == {"base": {"x": 1}, "other": {"x": 1}}


def test_a_utf16_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_bytes(codecs.BOM_UTF16_LE + "name: café\n".encode("utf-16-le"))
    [doc], problems = load_file(str(path))
    assert problems == []
    assert doc.value == {"name": "café"}


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_bytes(codecs.BOM_UTF8 + b"a: 1\n")
    [doc], _ = load_file(str(path))
    assert doc.value == {"a": 1}
    assert doc.mark("a") == Mark(str(path), 1, 4)


def test_an_unreadable_path_is_a_diagnostic(tmp_path: Path) -> None:
    docs, [problem] = load_file(str(tmp_path / "missing.yaml"))
    assert docs == []
    assert str(problem).endswith(
        "missing.yaml:1:1: error: cannot read the file: No such file or directory"
    )


def test_a_complex_mapping_key_is_an_error() -> None:
    _, [problem] = load_text("? [a, b]\n: 1\n", "t.yaml")
    assert str(problem) == "t.yaml:1:3: error: a mapping key must be a plain scalar"


def test_a_non_string_key_is_read_as_its_text() -> None:
    [doc], _ = load_text("1: a\ntrue: b\n", "t.yaml")
    assert doc.value == {"1": "a", "true": "b"}


def test_a_control_character_is_an_error_at_its_position() -> None:
    _, [problem] = load_text("a: 1\nb: x\x07y\n", "t.yaml")
    assert str(problem) == (
        "t.yaml:2:5: error: a control character (U+0007) that YAML does not allow"
    )


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_no_text_makes_the_loader_raise(text: str) -> None:
    docs, problems = load_text(text, "t.yaml")
    for p in problems:
        assert p.mark.path == "t.yaml" and p.mark.line >= 1 and p.mark.col >= 1
    assert docs or problems


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_no_bytes_make_the_loader_raise(tmp_path_factory: object, data: bytes) -> None:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".yaml") as handle:
        handle.write(data)
        handle.flush()
        docs, problems = load_file(handle.name, "b.yaml")
    assert docs or problems


def test_deep_flow_nesting_is_an_error_not_a_crash() -> None:
    n = 100_000  # libyaml's recursive composer would overflow the C stack
    _, [problem] = load_text("a: " + "[" * n + "]" * n + "\n", "t.yaml")
    # libyaml 0.2.6 (PyYAML 6.0.4's wheels) refuses flow nesting past 1,000 levels in its
    # scanner, which reads ahead of the events kgitops counts: its own positioned error then
    assert str(problem) in (
        "t.yaml:1:203: error: nested more than 200 levels deep",
        "t.yaml:1:1003: error: invalid YAML: exceeded maximum nesting depth (while increasing "
        "flow level)",
    )


def test_flow_nesting_past_the_limit_is_kgitops_own_error() -> None:
    _, [problem] = load_text("a: " + "[" * 300 + "]" * 300 + "\n", "t.yaml")
    assert str(problem) == "t.yaml:1:203: error: nested more than 200 levels deep"


def test_deep_block_nesting_is_an_error_not_a_crash() -> None:
    _, [problem] = load_text("- " * 100_000 + "x\n", "t.yaml")
    assert str(problem) == "t.yaml:1:401: error: nested more than 200 levels deep"


def test_nesting_up_to_the_limit_is_fine() -> None:
    docs, problems = load_text("[" * 200 + "]" * 200 + "\n", "t.yaml")
    assert problems == []
    assert len(docs) == 1


def test_a_billion_laughs_is_stopped_early() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdefghij":
        prev = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [" + ", ".join([f"*{prev}"] * 10) + "]")
    _, [problem] = load_text("\n".join(lines) + "\n", "t.yaml")
    assert problem.message == "aliases expand to more than 100,000 values"


NON_FINITE = [
    (".inf", "'.inf' is infinity, not a number kgitops reads"),
    ("-.Inf", "'-.Inf' is infinity, not a number kgitops reads"),
    (".nan", "'.nan' is not a number (NaN)"),
    ("1.0e+400", "'1.0e+400' is too large a number: it reads as infinity"),
    ("9" * 5000, "an integer of 5,000 digits is too long to read (at most 4,300)"),
]


@pytest.mark.parametrize(("number", "message"), NON_FINITE)
@pytest.mark.parametrize(
    ("where", "line", "col"),
    [("topic", 4, 13), ("cluster", 7, 32)],
)
def test_a_yaml_number_that_is_not_finite_is_one_positioned_error_and_nothing_is_written(
    tmp_path: Path,
    number: str,
    message: str,
    where: str,
    line: int,
    col: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeout = number if where == "cluster" else "60"
    partitions = number if where == "topic" else "1"
    topic = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: a\npartitions: {partitions}\n"
        "replicationFactor: 1\n"
    )
    cluster_folder(
        tmp_path,
        "t",
        brokers=[Broker(0)],
        state_file="s.json",
        extra=f"reassignment: {{timeoutSeconds: {timeout}}}\n",
        files={"a.yaml": topic},
    )
    for command in ("validate", "plan"):
        assert main([command, str(tmp_path)]) == 1
        out = capsys.readouterr()
        errors = [x for x in (out.out + out.err).splitlines() if ": error: " in x]
        file = tmp_path / ("a.yaml" if where == "topic" else "cluster.yaml")
        assert len(errors) == 1, errors
        assert errors[0].startswith(f"{file}:{line}:{col}: error: {message}"), errors
        assert "sys.set_int_max_str_digits" not in out.err + out.out
    assert not (tmp_path / "s.json").exists()


# --- plain block YAML is read line by line (yamlload._plain_documents), not composed ---

_KEYS = ["a", "b", "name", "config", "retention.ms", "on", "null", "yes", "_x", "a-b", "True"]
_VALUES = [
    *("1", "0", "012", "0x1F", "0o17", "1_000", "190:20:30", "1.5", "1.0e+3", "1e5", ".5"),
    *("yes", "NO", "Off", "null", "~", "2001-12-14", "kgitops/v1", "a b", "a - b", "a ... b"),
    *("/p", "_u", "-1", "1.5.6", "Topic", "604800000", "9" * 5000, ".inf", "'q'", "a  b"),
    *("- x", "a: b", "#c", "x #c", "[1]", "{a: 1}", "&a x", "*a", "!t x", "<<", "x:", "a:b"),
]


@st.composite
def _block_yaml(draw: st.DrawFn) -> str:
    """Block mappings of plain scalars, mostly well formed, now and then broken: a key again,
    an indentation off by one, an empty value, a quoted or flow value, a comment, a ``---``."""
    lines: list[str] = []

    def mapping(indent: int, depth: int) -> None:
        step = draw(st.sampled_from([1, 2, 4]))
        for _ in range(draw(st.integers(1, 4))):
            key = draw(st.sampled_from(_KEYS)) + draw(st.sampled_from(["", "", "1", "2", "3"]))
            if depth < 3 and draw(st.integers(0, 3)) == 0:
                lines.append(" " * indent + key + ":" + draw(st.sampled_from(["", "", "  "])))
                lines.extend(draw(st.lists(st.sampled_from(["", "# c", "   # d: e"]), max_size=1)))
                mapping(indent + draw(st.sampled_from([step, step, step, 0])), depth + 1)
            else:
                gap = draw(st.sampled_from([" ", " ", "  ", ""]))
                lines.append(" " * indent + key + ":" + gap + draw(st.sampled_from(_VALUES)))

    for n in range(draw(st.integers(1, 3))):
        if n or draw(st.booleans()):
            lines.append("---")
        mapping(draw(st.sampled_from([0, 0, 2])), 0)
    extra = ["---", "...", "--- ", "- a", "a", "  x: 1", "a: 1", "# c", ""]
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(extra)))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", "\n---\n"]))


def _loaded(text: str) -> tuple[list[tuple[object, ...]], list[str]]:
    docs, problems = load_text(text, "t.yaml")
    return [
        (d.index, repr(d.value), list(d.positions.items()), list(d.key_positions.items()))
        for d in docs
    ], [str(p) for p in problems]


@settings(max_examples=400, deadline=None)
@given(_block_yaml())
def test_plain_yaml_read_line_by_line_equals_the_composed_documents(text: str) -> None:
    """The same documents, values (types included), positions, key positions and problems
    as libyaml's composition, or the text is left to it."""
    read = _loaded(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlload, "_plain_documents", lambda *_: None)
        composed = _loaded(text)
    assert read == composed


def test_a_topic_file_is_read_without_composing_it() -> None:
    text = (
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders.v1\npartitions: 12\n"
        "config:\n  retention.ms: 604800000\n  cleanup.policy: delete\n"
        "# a comment\n---\nkind: Topic\nname: b\n"
    )
    [first, second] = yamlload._plain_documents(text, "t.yaml") or []
    assert first.value["config"] == {"retention.ms": 604800000, "cleanup.policy": "delete"}
    assert first.mark("config.retention.ms") == Mark("t.yaml", 6, 17)
    assert first.key_mark("config") == Mark("t.yaml", 5, 1)
    assert (second.index, second.mark("name")) == (1, Mark("t.yaml", 11, 7))
    assert _loaded(text)[0][0][1] == repr(first.value)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # a duplicate key: reported by the composed path
        "a:\nb: 1\n",  # an empty value
        "a: 1\n  b: 2\n",  # a deeper line after a value
        "a: x #c\n",  # a trailing comment
        "a: 1\r\nb: 2\n",  # a carriage return
        "a: '1'\n",
        "a: " + "9" * 5000 + "\n",  # too many digits: an error at its position
    ],
)
def test_anything_but_plain_block_yaml_is_composed(text: str) -> None:
    assert yamlload._plain_documents(text, "t.yaml") is None


def test_an_integer_past_a_lowered_digit_limit_is_a_positioned_error_not_an_exception() -> None:
    """PYTHONINTMAXSTRDIGITS (or -X int_max_str_digits) may lower Python's limit down to 640
    digits: a plain integer of 700 digits is then the composed path's positioned error, and
    reading it line by line must not raise."""
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        text = "name: a\npartitions: " + "9" * 700 + "\n"
        read = _loaded(text)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(yamlload, "_plain_documents", lambda *_: None)
            composed = _loaded(text)
    finally:
        sys.set_int_max_str_digits(before)
    message = "t.yaml:2:13: error: an integer of 700 digits is too long to read (at most 640)"
    assert read == composed == ([], [message])


# words a plain scalar may be made of: digits, signs, dots, underscores and the letters of
# YAML 1.1's numbers (0x, 0o, 0b, e, inf, nan), so the resolver's corners are met; the first
# word of a value mostly starts as the line-by-line reader allows
_WORD = st.text("0123456789_.-/exobEXOBaflsnuirtyY", min_size=1, max_size=12)
_FIRST = "0123456789_/eoxnNyYtTfF"  # a value's first character the reader allows, mostly
_COMMENT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=8)
_KEYS_1_1 = ["yes", "No", "ON", "off", "y", "n", "null", "Null", "NULL", "True"]


def _rarely(draw: st.DrawFn) -> bool:
    """True about once in 30 draws (hypothesis favours the ends of a range: not 0 or 30)."""
    return draw(st.integers(0, 30)) == 13


@st.composite
def _any_block_yaml(draw: st.DrawFn) -> str:
    """Block mappings of generated keys and values: keys to past the 1,000 characters the
    reader allows, values of generated words, trailing spaces, comments of any text at any
    indentation, blank lines of spaces, empty and comment-only documents, any root
    indentation, a nested mapping now and then indented wrongly; no last line break at times."""
    lines: list[str] = []

    def mapping(indent: int, depth: int) -> None:
        step = draw(st.integers(1, 5))
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 5)) == 0:
                pad = " " * draw(st.integers(0, 8))
                comment = draw(_COMMENT)
                if _rarely(draw):  # a character YAML reads as a line break, or refuses
                    comment = draw(st.text(max_size=3))
                lines.append(pad + ("" if _rarely(draw) else "# ") + comment)
            key = draw(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,6}", fullmatch=True))
            if draw(st.integers(0, 8)) == 4:
                key = draw(st.sampled_from(_KEYS_1_1))
            if _rarely(draw):  # libyaml looks 1,024 characters ahead for a key's colon
                key = "k" * draw(st.integers(998, 1001))
            if depth < 4 and draw(st.integers(0, 3)) == 0:
                lines.append(" " * indent + key + ":" + " " * draw(st.integers(0, 2)))
                shift = draw(st.sampled_from([0, -1])) if _rarely(draw) else step
                mapping(indent + shift, depth + 1)
            else:
                first = draw(_WORD) if _rarely(draw) else draw(st.sampled_from(_FIRST))
                words = [first + draw(_WORD), *draw(st.lists(_WORD, max_size=2))]
                gap = "" if _rarely(draw) else " " * draw(st.integers(1, 2))
                trail = " " * draw(st.integers(0, 2))
                lines.append(" " * indent + key + ":" + gap + " ".join(words) + trail)

    for n in range(draw(st.integers(1, 3))):
        if n or draw(st.booleans()):
            lines.extend(draw(st.lists(st.sampled_from(["---", "# only", "  "]), max_size=2)))
            lines.append("---")
        mapping(draw(st.sampled_from([0, 0, 0, 1, 3])), 0)
    end = draw(st.sampled_from(["", "\n", " \n", "\n---\n", "\n# \u00e9 \U0001f600"]))
    return "\n".join(lines) + end


@settings(max_examples=300, deadline=None)
@given(_any_block_yaml())
def test_generated_block_yaml_read_line_by_line_equals_the_composed_documents(text: str) -> None:
    read = _loaded(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlload, "_plain_documents", lambda *_: None)
        composed = _loaded(text)
    assert read == composed
