"""`kgitops get` on a folder whose specs do not validate: it only reads, so it shows the
cluster, with one line on stderr saying the folder does not validate; only an error in how to
reach the cluster (cluster.yaml's connection fields) stops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder

from .test_get import BROKERS, four_brokers

BAD_TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 0
replicationFactor: 2
"""
TABLE = [
    "TOPIC   PARTITIONS  RF  BYTES  UNDER-REPLICATED  OFFLINE  OVERRIDES",
    "audit            1   2  0 B                   0        0          0",
    "clicks           2   2  0 B                   0        0          0",
    "orders           3   2  0 B                   0        0          1",
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """test_get's simulated cluster: orders, audit, clicks on four brokers."""
    return four_brokers(tmp_path)


def _break(folder: Path, cluster_extra: str = "reassignment: {maxConcurrentMoves: 0}\n") -> None:
    cluster_folder(folder, brokers=BROKERS, extra=cluster_extra)
    (folder / "orders.yaml").write_text(BAD_TOPIC)


def test_a_valid_folder_says_nothing_on_stderr(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["get", str(folder), "topics"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == TABLE
    assert err == ""


def test_bad_topic_files_and_a_bad_reassignment_setting_still_show_the_cluster(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _break(folder)
    assert main(["get", str(folder), "topics"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == TABLE
    assert err.splitlines() == [
        f"warning: 2 error(s) in 2 spec file(s) ({folder}/cluster.yaml, {folder}/orders.yaml); "
        f"showing the cluster anyway (`kgitops validate {folder}` lists them)"
    ]


def test_json_stays_clean_and_the_warning_is_said_once(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _break(folder)
    assert main(["get", str(folder), "brokers", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert [b["id"] for b in json.loads(out)["brokers"]] == [0, 1, 2, 3]
    assert len(err.splitlines()) == 1
    assert main(["get", str(folder), "groups"]) == 0
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_a_snapshot_with_a_folder_that_does_not_validate_is_shown(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _break(folder)
    state = str(folder / ".state" / "demo.json")
    assert main(["get", str(folder), "topics", "--state", state]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == TABLE
    assert err.startswith("warning: 2 error(s)")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("stateFile: .state/demo.json", "stateFile: ../../elsewhere.json", "leads outside"),
        ("stateFile: .state/demo.json", "stateFile: 7", "must be a string"),
        ("{id: 3, rack: az2}", "{id: x, rack: az2}", "must be an integer"),
    ],
)
def test_an_error_in_how_to_reach_the_cluster_still_stops_it(
    old: str, new: str, message: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _break(folder)
    text = (folder / "cluster.yaml").read_text()
    (folder / "cluster.yaml").write_text(text.replace(old, new))
    assert main(["get", str(folder), "topics"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{folder}/cluster.yaml:" in err and message in err
    assert "orders.yaml" not in err  # only cluster.yaml's errors: they are why
    assert not (folder.parent.parent / "elsewhere.json").exists()
