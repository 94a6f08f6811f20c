"""``kgitops validate``: sorted ``path:line:col: severity: message`` lines on stdout, a summary
on stderr, exit 1 when any error, 0 with warnings only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.errors import SpecError
from kgitops.spec.load import load_specs_or_raise
from tests.helpers import cluster_folder

from .conftest import CLUSTER, TOPIC


def _folder(root: Path, files: dict[str, str], cluster: str = CLUSTER) -> Path:
    return cluster_folder(root, cluster=cluster, files=files)


def test_a_valid_folder_exits_0_and_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    assert main(["validate", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{folder}: 1 topic, 0 error(s), 0 warning(s)\n"


def test_errors_are_printed_sorted_one_per_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(
        tmp_path / "dev",
        {
            "b.yaml": TOPIC.replace("partitions: 3", "partitions: 0"),
            "a.yaml": TOPIC.replace("orders", "x").replace("tionFactor: 3", "tionFactor: 1"),
        },
    )
    assert main(["validate", str(folder)]) == 1
    out, _ = capsys.readouterr()
    assert out.splitlines() == [
        f"{folder}/a.yaml:5:20: warning: replicationFactor 1: the topic has one copy; it is "
        "unavailable, and may be lost, when its broker fails",
        f"{folder}/b.yaml:4:13: error: partitions must be at least 1, not 0",
    ]


def test_warnings_alone_exit_0(tmp_path: Path) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 1")
    assert main(["validate", str(_folder(tmp_path / "dev", {"a.yaml": text}))]) == 0


def test_quiet_prints_errors_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 1")
    assert main(["validate", "-q", str(_folder(tmp_path / "dev", {"a.yaml": text}))]) == 0
    assert capsys.readouterr() == ("", "")


def test_a_folder_of_cluster_folders_validates_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    _folder(tmp_path / "prod", {"a.yaml": TOPIC.replace("partitions: 3", "partitions: -1")})
    assert main(["validate", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == f"{tmp_path}/prod/a.yaml:4:13: error: partitions must be at least 1, not -1\n"
    assert err.splitlines() == [
        f"{tmp_path}/dev: 1 topic, 0 error(s), 0 warning(s)",
        f"{tmp_path}/prod: 0 topics, 1 error(s), 0 warning(s)",
    ]


def test_a_lock_left_with_merge_conflict_markers_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    (folder / "kgitops.lock").write_text(
        "version: 1\n<<<<<<< HEAD\ntopics: {}\n=======\ntopics: {}\n>>>>>>> branch\n"
    )
    assert main(["validate", str(folder)]) == 1
    assert capsys.readouterr().out == (
        f"{folder}/kgitops.lock:2:1: error: a merge conflict is left in the lock (git's "
        "conflict markers); run `kgitops plan DIR --update-lock` on the merged specs: it keeps "
        "the entries both sides agree on and computes the others again (or take one side "
        "first: `git checkout --ours -- kgitops.lock`)\n"
    )
    assert main(["plan", str(folder), "--update-lock"]) == 0, "validate's advice works"
    capsys.readouterr()
    assert main(["validate", str(folder)]) == 0


def test_an_unreadable_lock_is_an_error_at_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    (folder / "kgitops.lock").write_text("version: 1\ntopics: [\n")
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{folder}/kgitops.lock:3:1: error: invalid YAML")


def test_json_format_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC.replace("partitions: 3", "partitions: 0")})
    assert main(["validate", "--format", "json", str(folder)]) == 1
    assert json.loads(capsys.readouterr().out) == [
        {
            "path": f"{folder}/a.yaml",
            "line": 4,
            "col": 13,
            "severity": "error",
            "message": "partitions must be at least 1, not 0",
        }
    ]


def test_github_format_annotates_the_line_in_the_pull_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 1")
    folder = _folder(tmp_path / "dev", {"a.yaml": text})
    assert main(["validate", "--format", "github", str(folder)]) == 0
    assert capsys.readouterr().out == (
        f"::warning file={folder}/a.yaml,line=5,col=20,title=kgitops validate::"
        "replicationFactor 1: the topic has one copy; it is unavailable, and may be lost, "
        "when its broker fails\n"
    )


def test_cluster_folders_at_any_depth_are_found(tmp_path: Path) -> None:
    from kgitops.spec.folders import cluster_dirs

    _folder(tmp_path / "eu" / "prod", {})
    _folder(tmp_path / "eu" / "prod" / "canary", {})
    _folder(tmp_path / "us", {})
    (tmp_path / ".git" / "x").mkdir(parents=True)
    (tmp_path / ".git" / "x" / "cluster.yaml").write_text("")
    assert cluster_dirs(str(tmp_path)) == [
        f"{tmp_path}/eu/prod",
        f"{tmp_path}/eu/prod/canary",
        f"{tmp_path}/us",
    ]
    assert cluster_dirs(str(tmp_path / "us")) == [f"{tmp_path}/us"]


def test_the_directory_defaults_to_topics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _folder(tmp_path / "topics" / "dev", {"a.yaml": TOPIC})
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 0
    assert capsys.readouterr().err == f"topics{os.sep}dev: 1 topic, 0 error(s), 0 warning(s)\n"


def test_a_missing_folder_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().out == f"{tmp_path}/nope:1:1: error: no such folder\n"


def test_a_file_instead_of_a_folder_says_which_folder_to_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    assert main(["validate", str(folder / "a.yaml")]) == 1
    assert capsys.readouterr().out == (
        f"{folder}/a.yaml:1:1: error: a file, not a cluster folder (give {folder})\n"
    )


def test_the_brokers_of_a_state_file_are_checked_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cluster_folder(tmp_path / "prod", "p", bootstrap="k:9092", files={"a.yaml": TOPIC})
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps({"format": "kgitops-state/v1", "brokers": [{"id": 1}, {"id": 2}], "topics": {}})
    )
    assert main(["validate", str(folder)]) == 0  # brokers unknown: nothing to compare
    assert main(["validate", str(folder), "--state", str(state)]) == 1
    assert capsys.readouterr().out.endswith(
        "a.yaml:5:20: error: replicationFactor 3 is larger than the number of brokers (2)\n"
    )


def test_a_bad_state_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "dev", {"a.yaml": TOPIC})
    state = tmp_path / "state.json"
    state.write_text("{not json")
    assert main(["validate", str(folder), "--state", str(state)]) == 1
    err = capsys.readouterr().err
    assert str(state) in err
    assert "Traceback" not in err


def test_load_specs_or_raise_carries_every_diagnostic(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "dev",
        {"a.yaml": TOPIC.replace("partitions: 3", "partitions: 0") + "startIndex: 7\n"},
    )
    with pytest.raises(SpecError) as caught:
        load_specs_or_raise(str(folder))
    assert caught.value.lines() == [  # the schema error hides no other check
        f"{folder}/a.yaml:4:13: error: partitions must be at least 1, not 0",
        f"{folder}/a.yaml:6:13: error: startIndex 7 is out of range: placement uses 3 "
        "brokers, so it must be below 3",
    ]


def test_a_valid_folder_loads_into_specs_sorted_by_name(tmp_path: Path) -> None:
    text = TOPIC.replace("orders", "zeta") + "---\n" + TOPIC + "config:\n  retention.ms: '5'\n"
    specs = load_specs_or_raise(str(_folder(tmp_path / "dev", {"a.yaml": text})))
    assert [t.name for t in specs.topics] == ["orders", "zeta"]
    orders = specs.topics[0]
    assert orders.partitions == 3 and orders.replication_factor == 3
    assert dict(orders.config) == {"retention.ms": "5"}
    assert orders.mark_of("config.retention.ms").line == 13
    assert orders.mark_of("partitions").line == 10
