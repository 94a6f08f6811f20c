"""Every ``pattern`` of every schema means the same to an editor (ECMA-262) and to kgitops.

The editor reads ``kgitops/schemas/*.json`` with an ECMA-262 engine; kgitops checks the same
files with Python. Python's ``re`` reads ``$`` as "the end, or before a final newline", so
``"12d\\n"`` passed ``^...d$`` in kgitops while the editor refused it; ``\\s`` differs too
(U+FEFF is ECMA white space, U+001C is Python's). Each pattern is run against hostile strings
(a trailing newline, other scripts' digits such as ``１２d``, spaces and tabs around, a BOM,
U+2028) through kgitops' checks and through an ECMA reading: node's ``RegExp`` with the ``u``
flag when node is installed, else ``ecma_like`` below, which is checked against node whenever
node is there.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

import pytest

from kgitops.plan.mdescape import has_control
from kgitops.spec.config_table import CONFIGS
from kgitops.spec.schemacheck import SCHEMA_FILES, compile_schema, schema, validator
from kgitops.spec.topic_configs import check_config, readable_config

SCHEMAS = sorted(
    {*SCHEMA_FILES, *(p.name for p in resources.files("kgitops").joinpath("schemas").iterdir())}
)
SAMPLES = [
    "12d", "1h30m", "12", "-1", "1GiB", "0.5", "true", "compact,delete", "infinite", "abc",
    "User:alice", "broker-1:9092", "[::1]:9092", "0", "7", "sha256:" + "ab" * 32,
    "@acme/team", "KGITOPS_PASSWORD", "AAE=", "ff00", "DRAIN_HOTSPOT", "payments.orders",
]  # fmt: skip
TWISTS = [
    "{}", "{}\n", "{}\r\n", "\n{}", "{}\r", " {}", "{} ", " {} ", "\t{}", "{}\t", "{}\x0b",
    "{}\xa0", "\xa0{}", "{}\ufeff", "\ufeff{}", "{}\u2028", "{}\u3000", "{}\x1c", "{}\x85",
    "{}\x00", "{} x", "x{}", "{},", ",{}", "{},,{}", "{}, ,{}",
]  # fmt: skip
OTHER_DIGITS = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def hostile(samples: list[str]) -> list[str]:
    out = {t.replace("{}", s) for s in samples for t in TWISTS}
    out |= {s.translate(OTHER_DIGITS) for s in samples}
    out |= {s.translate(ARABIC_DIGITS) for s in samples}
    out |= {s.replace("1", "\u0661", 1) for s in samples}  # one Arabic-Indic digit among ASCII
    return sorted(out)


def patterns_of(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            if key == "patternProperties" and isinstance(value, dict):
                yield from value
            yield from patterns_of(value)
    elif isinstance(node, list):
        for item in node:
            yield from patterns_of(item)


ALL_PATTERNS = sorted({p for name in SCHEMAS for p in patterns_of(schema(name))})

# ------------------------------------------------------------------ an ECMA-262 reading

_ECMA_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def ecma_like(pattern: str, text: str) -> bool:
    """``new RegExp(pattern, "u").test(text)`` for the anchored patterns the schemas use,
    written apart from kgitops' translation: the body between ``^`` and ``$`` must match
    the whole text; ``\\s`` and ``.`` take ECMA's sets."""
    assert pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")
    body = pattern[1:-1]
    body = body.replace("[^@\\s]", f"[^@{_ECMA_SPACE}]").replace("\\s", f"[{_ECMA_SPACE}]")
    body = re.sub(r"(?<!\\)\.(?![^\[]*\])", lambda _: "[^\n\r\u2028\u2029]", body)
    assert "\\d" not in body and "\\w" not in body and "\\b" not in body
    return re.fullmatch(body, text) is not None


@cache
def node_answers() -> dict[tuple[str, str], bool] | None:
    """What node's ECMA-262 engine says for every (pattern, hostile string), or None."""
    node = shutil.which("node")
    if node is None:
        return None
    cases = [(p, s) for p in ALL_PATTERNS for s in hostile(SAMPLES)]
    cases += [(config_pattern(n) or "", s) for n in PATTERNED for s in hostile(config_samples(n))]
    script = (
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map(([p, s]) => new RegExp(p, 'u').test(s))));"
    )
    done = subprocess.run(
        [node, "-e", script], input=json.dumps(cases), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return dict(zip(cases, json.loads(done.stdout), strict=True))


def ecma(pattern: str, text: str) -> bool:
    answers = node_answers()
    return ecma_like(pattern, text) if answers is None else answers[(pattern, text)]


def test_the_ecma_reading_of_this_test_is_node_s_where_node_is_installed() -> None:
    answers = node_answers()
    if answers is None:
        pytest.skip("node is not installed: ecma_like stands in for it")
    wrong = [(p, s) for (p, s), said in answers.items() if ecma_like(p, s) != said]
    assert wrong == []


# ------------------------------------------------------------------ the two must agree


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_kgitops_reads_each_schema_pattern_as_an_editor_does(pattern: str) -> None:
    strict = validator("Cluster").__class__({"type": "string", "pattern": pattern})
    keyed = validator("Cluster").__class__(
        {"type": "object", "patternProperties": {pattern: False}}
    )
    fast = compile_schema({"type": "string", "pattern": pattern})
    disagree = []
    for text in hostile(SAMPLES):
        editor = ecma(pattern, text)
        if strict.is_valid(text) != editor or fast(text) != editor:
            disagree.append(text)
        if keyed.is_valid({text: 1}) == editor:  # a key the pattern matches is refused
            disagree.append(text)
    assert disagree == [], f"{pattern!r}: kgitops and an editor disagree on {disagree!r}"


def test_a_trailing_newline_never_passes_an_anchored_pattern() -> None:
    fast = compile_schema({"pattern": "^[0-9]+(ms|s|m|h|d|w)$"})
    strict = validator("Cluster").__class__({"pattern": "^[0-9]+(ms|s|m|h|d|w)$"})
    assert fast("12d") and strict.is_valid("12d")
    assert not fast("12d\n") and not strict.is_valid("12d\n")


def config_samples(name: str) -> list[str]:
    spec = CONFIGS[name]
    base = [spec.default, readable_config(name, spec.default)]
    if spec.type == "list" and spec.choices:
        base.append(", ".join(spec.choices[:2]))
    return [b for b in base if b] + ["12d", "12MiB"]


def config_pattern(name: str) -> str | None:
    for option in schema("topic.json")["properties"]["config"]["properties"][name].get("anyOf", []):
        if option.get("type") == "string" and "pattern" in option:
            return str(option["pattern"])
    return None


PATTERNED = [n for n in sorted(CONFIGS) if config_pattern(n) is not None]


@pytest.mark.parametrize("name", PATTERNED)
def test_a_config_value_the_editor_refuses_kgitops_refuses_and_the_other_way_round(
    name: str,
) -> None:
    pattern = config_pattern(name)
    assert pattern is not None
    disagree = []
    for text in hostile(config_samples(name)):
        kgitops = not has_control(text) and check_config(name, text)[1] is None
        if kgitops != ecma(pattern, text):
            disagree.append(text)
    assert disagree == [], f"{name}: kgitops and an editor disagree on {disagree!r}"


def test_durations_and_sizes_with_a_newline_or_other_digits_are_refused_by_both() -> None:
    for name, value in [("retention.ms", "12d"), ("segment.bytes", "12MiB")]:
        pattern = config_pattern(name)
        assert pattern is not None
        assert ecma(pattern, value) and check_config(name, value)[1] is None
        for bad in (value + "\n", value.translate(OTHER_DIGITS), " " + value, value + " "):
            assert not ecma(pattern, bad), bad
            assert check_config(name, bad)[1] is not None, bad
    assert check_config("retention.ms", " 12 ") == ("12", None)  # Kafka trims a bare number
