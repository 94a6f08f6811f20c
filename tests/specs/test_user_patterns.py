"""A ``policies.names`` pattern is the platform team's and the topic name a pull request's:
matching runs in time linear in the name (RE2), or, without ``google-re2``, a pattern shaped
to backtrack exponentially in Python's ``re`` is refused at its line."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import kgitops.spec.userregex as userregex
from kgitops.cli import main
from kgitops.spec.userregex import UserPatternError, compile_user_pattern, nested_quantifier
from tests.helpers import THREE_RACKS, cluster_folder

POLICY = """\
policies:
  names:
    - {{folder: ., pattern: '{pattern}'}}
"""
EVIL = "^(a+)+$"
NAME = "a" * 31 + "."  # 35 s in Python's re, doubling with each further 'a'


def _folder(tmp_path: Path, pattern: str, name: str = NAME) -> Path:
    topic = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 1\nreplicationFactor: 1\n"
    )
    return cluster_folder(
        tmp_path,
        "test",
        brokers=THREE_RACKS,
        state_file="state.json",
        extra=POLICY.format(pattern=pattern),
        files={"t.yaml": topic},
    )


def test_an_exponential_pattern_against_a_long_name_is_checked_at_once(tmp_path: Path) -> None:
    pytest.importorskip("re2")
    folder = _folder(tmp_path, EVIL)
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kgitops", "validate", str(folder)],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert time.monotonic() - start < 15
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert f"t.yaml:3:7: error: topic '{NAME}' in this cluster folder must match ^(a+)+$" in out
    assert "re2.cc" not in out  # RE2's own logging stays off


def test_a_pattern_re2_cannot_run_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("re2")
    folder = _folder(tmp_path, "^(?!tmp)", name="orders")
    assert main(["validate", str(folder)]) == 1
    captured = capsys.readouterr()
    err = captured.out + captured.err
    assert "cluster.yaml:9:28: error: pattern '^(?!tmp)' cannot run in time linear" in err
    assert "no lookaround" in err and "re2.cc" not in err


def test_without_re2_a_nested_quantifier_is_refused_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(userregex, "_re2", lambda: None)
    folder = _folder(tmp_path, EVIL)
    start = time.monotonic()
    assert main(["validate", str(folder)]) == 1
    assert time.monotonic() - start < 10
    captured = capsys.readouterr()
    err = captured.out + captured.err
    assert "cluster.yaml:9:28: error: pattern '^(a+)+$' cannot run in bounded time" in err


@pytest.mark.parametrize("engine", ["re2", "re"])
def test_plain_patterns_mean_the_same_in_both_engines(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine == "re2":
        pytest.importorskip("re2")
    else:
        monkeypatch.setattr(userregex, "_re2", lambda: None)
    cases = {
        r"^team-a\.": {"team-a.x": True, "team-ab": False, "x.team-a.y": False},
        r"\.v[0-9]+$": {"a.v2": True, "a.v2x": False},
        r"^(orders|payments)[._-]\w+$": {"orders.eu": True, "refunds.eu": False},
    }
    for pattern, names in cases.items():
        compiled = compile_user_pattern(pattern)
        assert {n: compiled.search(n) for n in names} == names


def test_a_bad_pattern_reads_the_same_whichever_engine_runs() -> None:
    with pytest.raises(UserPatternError, match="is not a regular expression: missing \\)"):
        compile_user_pattern("(unclosed")


@pytest.mark.parametrize(
    ("pattern", "nested"),
    [
        ("^(a+)+$", True),
        ("(a*b?)*", True),
        ("(?:x{2,})+", True),
        ("((ab)+c)*", True),
        ("(a|b)+", False),
        ("(a+)?", False),
        ("^team-a\\.", False),
        ("[(+)]+", False),
        ("\\(a+\\)+", False),
        ("(a{2})+", False),
    ],
)
def test_the_static_check_finds_nested_quantifiers(pattern: str, nested: bool) -> None:
    assert (nested_quantifier(pattern) is not None) is nested
