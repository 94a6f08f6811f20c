"""``simulated.stateFile`` may name a file elsewhere in the repository (two cluster folders
sharing one simulated cluster), never outside it and never through a symlink. Each refusal is
one line at the stateFile's position, exit 1, and nothing is created anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_BROKERS, cluster_folder, tree


def _cluster(folder: Path, state: str) -> None:
    cluster_folder(folder, "shared", brokers=THREE_BROKERS, state_file=state)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "topics" / "team").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return root


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_a_state_file_elsewhere_in_the_repository_is_used(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = repo / "topics" / "team"
    _cluster(folder, "../../shared-state.json")
    assert main(["validate", str(folder)]) == 0
    assert main(["status", str(folder)]) == 0
    assert (repo / "shared-state.json").is_file()


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("../../../outside/x.json", "leads outside the repository"),
        ("../../../../x.json", "leads outside the repository"),
        ("../../.git/config", "leads into the repository's .git folder"),
    ],
)
def test_a_state_file_outside_the_repository_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], state: str, reason: str | None
) -> None:
    folder = repo / "topics" / "team"
    _cluster(folder, state)
    before = tree(repo.parent)
    assert main(["plan", str(folder)]) == 1
    line = _one_error(capsys)
    assert line.startswith(f"{folder}/cluster.yaml:5:14: error: stateFile: ")
    assert reason in line
    assert tree(repo.parent) == before


def test_a_symlinked_state_file_is_refused_even_inside_the_repository(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = repo / "topics" / "team"
    (repo / "real.json").write_text("{}")
    (repo / "shared-state.json").symlink_to(repo / "real.json")
    _cluster(folder, "../../shared-state.json")
    before = tree(repo.parent)
    assert main(["plan", str(folder)]) == 1
    line = _one_error(capsys)
    assert "leads through a symlink" in line and line.startswith(f"{folder}/cluster.yaml:5:14:")
    assert tree(repo.parent) == before
    assert (repo / "real.json").read_text() == "{}"


@pytest.mark.parametrize("target", ["inside", "outside"])
def test_a_symlinked_parent_folder_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    folder = repo / "topics" / "team"
    real = repo / "real" if target == "inside" else repo.parent / "outside"
    real.mkdir(exist_ok=True)
    (repo / "state").symlink_to(real)
    _cluster(folder, "../../state/shared.json")
    before = tree(repo.parent)
    assert main(["plan", str(folder)]) == 1
    assert "leads through a symlink" in _one_error(capsys)
    assert tree(repo.parent) == before
    assert not (real / "shared.json").exists()
