"""The package stays lint-clean and type-clean (ruff, mypy --strict), as CI checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
