"""A cluster folder from a pull request cannot make kgitops read or write outside it.

Each test builds a hostile folder inside ``tmp_path/repo``, runs the CLI, and checks the
filesystem afterwards: exit 1, one line, and nothing created or changed outside the folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml, tree

CLUSTER = cluster_yaml("test", brokers=THREE_RACKS)


def _cluster(folder: Path, state: str = ".state/test.json") -> None:
    cluster_folder(folder, "test", brokers=THREE_RACKS, state_file=state)


TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 3
"""


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """(the cluster folder, a folder outside it that must stay untouched)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "repo" / "topics" / "prod"
    folder.mkdir(parents=True)
    (folder / "orders.yaml").write_text(TOPIC)
    return folder, outside


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("../../../x.json", "leads outside the repository"),
        ("OUTSIDE/x.json", "is an absolute path"),
        ("file:///tmp/x.json", "is a URI"),
    ],
)
def test_a_state_file_outside_the_folder_is_refused_with_its_position(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str], state: str, reason: str
) -> None:
    folder, outside = world
    state = state.replace("OUTSIDE", str(outside))
    _cluster(folder, state)
    before = tree(folder.parent.parent.parent)
    for command in (
        ["plan", str(folder)],
        ["status", str(folder)],
        ["snapshot", str(folder), "--out", "-"],
    ):
        assert main(command) == 1
        line = _one_error(capsys)
        assert line.startswith(f"{folder}/cluster.yaml:5:14: error: stateFile: ")
        assert reason in line
    assert tree(folder.parent.parent.parent) == before  # nothing created anywhere


def test_etc_passwd_as_state_file_is_refused_and_nothing_is_created(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = world
    _cluster(folder, "/etc/passwd")
    existed = os.path.exists("/etc/passwd.lock")
    assert main(["plan", str(folder)]) == 1
    assert "stateFile: '/etc/passwd' is an absolute path" in _one_error(capsys)
    assert os.path.exists("/etc/passwd.lock") == existed


def test_a_state_folder_symlinked_out_is_refused(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    (folder / ".state").symlink_to(outside)
    before = tree(outside)
    assert main(["plan", str(folder)]) == 1
    assert "leads through a symlink" in _one_error(capsys)
    assert tree(outside) == before


def test_a_committed_lock_symlink_of_the_simulated_cluster_is_not_followed(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    (folder / ".state").mkdir()
    (folder / ".state" / "test.json.lock").symlink_to(outside / "created-by-kgitops")
    assert main(["plan", str(folder)]) == 1
    assert "does not follow a symlink" in _one_error(capsys)
    assert not (outside / "created-by-kgitops").exists()


def test_update_lock_does_not_write_through_a_committed_tmp_symlink(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    (folder / "kgitops.lock.tmp").symlink_to(outside / "secret.txt")
    before = tree(outside)
    assert main(["plan", str(folder), "--update-lock"]) == 0
    assert tree(outside) == before
    assert (folder / "kgitops.lock").read_text().startswith("# kgitops.lock")
    assert (folder / "kgitops.lock.tmp").is_symlink()


def test_update_lock_refuses_a_symlinked_lock(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    (outside / "kgitops.lock").write_text("version: 1\nbrokerSets: {}\ntopics: {}\n")
    (folder / "kgitops.lock").symlink_to(outside / "kgitops.lock")
    assert main(["plan", str(folder), "--update-lock"]) == 1
    assert "a symlink to a file outside the cluster folder" in _one_error(capsys)
    assert (outside / "kgitops.lock").read_text() == "version: 1\nbrokerSets: {}\ntopics: {}\n"


def test_a_topic_file_symlinked_to_a_secret_is_refused_unread(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    (folder / "passwd.yaml").symlink_to(outside / "secret.txt")
    assert main(["validate", str(folder)]) == 1
    captured = capsys.readouterr()
    assert "root:" not in captured.out + captured.err
    assert f"{folder}/passwd.yaml:1:1: error: a symlink to a file outside the cluster folder" in (
        captured.out
    )


def test_a_topic_file_symlinked_to_dev_zero_is_refused(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = world
    _cluster(folder)
    (folder / "zero.yaml").symlink_to("/dev/zero")
    assert main(["validate", str(folder)]) == 1
    assert "zero.yaml:1:1: error: a symlink to a file outside the cluster folder" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("sample", "reason"),
    [("../../outside/secret.txt", "leads outside"), ("/etc/hostname", "is an absolute path")],
)
def test_a_key_sample_outside_the_folder_is_an_error(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str], sample: str, reason: str
) -> None:
    folder, _ = world
    _cluster(folder)
    (folder / "orders.yaml").write_text(TOPIC + f"keys:\n  sample: {sample}\n")
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"{folder}/orders.yaml:7:11: error: keys.sample: " in out and reason in out


def _state_with(topic: str, rack: str = "a") -> dict[str, object]:
    return {
        "format": "kgitops-state/v1",
        "brokers": [{"id": 0, "rack": rack}],
        "topics": {topic: {"partitions": {"0": {"replicas": [0]}}, "config": {}}},
    }


def test_import_of_a_topic_named_dot_dot_writes_nothing_outside(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    state = outside / "state.json"
    state.write_text(json.dumps(_state_with("../../../../outside/evil")))
    before = tree(folder.parent.parent.parent)
    assert main(["import", str(folder), "--state", str(state)]) == 1
    line = _one_error(capsys)
    assert "an illegal topic name" in line and line.startswith(f"{state}:")
    assert tree(folder.parent.parent.parent) == before


def test_a_rack_with_shell_syntax_is_refused_in_a_state_file_and_in_cluster_yaml(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    state = outside / "state.json"
    state.write_text(json.dumps(_state_with("clicks", rack="$(touch /tmp/pwned)")))
    assert main(["plan", str(folder), "--state", str(state)]) == 1
    assert "an illegal rack id" in _one_error(capsys)
    cluster_folder(folder, cluster=CLUSTER.replace("rack: a", "rack: '$(id)'"))
    assert main(["validate", str(folder)]) == 1
    assert f"{folder}/cluster.yaml:6:27: error: an illegal rack id" in capsys.readouterr().out
    assert (
        main(
            [
                "assign",
                "--brokers",
                "0,1",
                "--racks",
                "a,$(id)",
                "--partitions",
                "2",
                "--replication-factor",
                "2",
            ]
        )
        == 1
    )
    assert "--racks: a rack id is 1 to 255 ASCII letters" in _one_error(capsys)


def test_snapshot_out_creates_no_folder_and_overwrites_no_spec(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    spec = (folder / "orders.yaml").read_text()
    assert main(["snapshot", str(folder), "--out", str(folder / "orders.yaml")]) == 1
    assert "a state snapshot (JSON) is written to a file whose name ends in .json" in _one_error(
        capsys
    )
    assert (folder / "orders.yaml").read_text() == spec
    missing = outside / "a" / "b" / "snap.json"
    assert main(["snapshot", str(folder), "--out", str(missing)]) == 1
    assert "does not exist" in _one_error(capsys)
    assert not (outside / "a").exists()


def test_plan_out_does_not_write_through_a_symlink(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = world
    _cluster(folder)
    out = folder.parent / "plan.json"
    out.symlink_to(outside / "secret.txt")
    assert main(["plan", str(folder), "--out", str(out)]) == 1
    assert "a symlink; kgitops does not write through symlinks" in capsys.readouterr().err
    assert (outside / "secret.txt").read_text().startswith("root:x")
