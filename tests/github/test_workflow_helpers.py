"""The helpers the workflows run: `github check-plan` and `github export-secrets`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.model import Broker
from tests.helpers import cluster_folder, cluster_yaml

SASL_CLUSTER = cluster_yaml(
    "prod",
    bootstrap="kafka-1:9092",
    extra="security:\n  protocol: SASL_SSL\n"
    "  sasl: {mechanism: SCRAM-SHA-512, usernameEnv: KAFKA_USERNAME, "
    "passwordEnv: KAFKA_PASSWORD}\n",
)


def saved_plan(tmp_path: Path, topics: str, state: dict[str, object]) -> Path:
    """``kgitops plan --out`` of a folder holding ``topics``, on ``state``."""
    folder = cluster_folder(
        tmp_path / "topics" / "prod",
        "prod",
        brokers=[Broker(1), Broker(2)],
        files={"topics.yaml": topics},
    )
    state_path = tmp_path / "planned-on.json"
    state_path.write_text(json.dumps(state), encoding="utf-8")
    path = tmp_path / "plan.json"
    assert main(["plan", str(folder), "--state", str(state_path), "--out", str(path)]) == 0
    return path


STATE: dict[str, object] = {
    "format": "kgitops-state/v1",
    "clusterId": "c",
    "brokers": [{"id": 1}, {"id": 2}],
    "topics": {"old.events": {"partitions": {"0": {"replicas": [1, 2]}}, "config": {}}},
}


def test_check_plan_fails_a_plan_that_deletes_unless_deletion_is_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved_plan(
        tmp_path,
        "apiVersion: kgitops/v1\nkind: Topic\nname: old.events\npartitions: 1\n"
        "replicationFactor: 2\ndelete: true\n",
        STATE,
    )
    capsys.readouterr()
    assert main(["github", "check-plan", str(path)]) == 1
    err = capsys.readouterr().err
    assert "--allow-delete" in err and "old.events: deletes the topic" in err
    assert main(["github", "check-plan", str(path), "--allow-delete"]) == 0
    assert "passes apply's safety gates" in capsys.readouterr().out


def test_check_plan_with_the_state_refuses_replicas_on_an_offline_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved_plan(
        tmp_path,
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 1\nreplicationFactor: 2\n",
        {**STATE, "topics": {}},
    )
    state = {
        "format": "kgitops-state/v1",
        "clusterId": "c",
        "brokers": [{"id": 1}, {"id": 2, "online": False}],
        "topics": {},
    }
    state_path = tmp_path / "state.json"
    state_path.write_text(json.dumps(state), encoding="utf-8")
    capsys.readouterr()
    assert main(["github", "check-plan", str(path)]) == 0
    capsys.readouterr()
    assert main(["github", "check-plan", str(path), "--state", str(state_path)]) == 1
    assert "offline" in capsys.readouterr().err


def test_check_plan_on_a_file_that_is_not_a_plan_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plan.json"
    path.write_text("{not json", encoding="utf-8")
    assert main(["github", "check-plan", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:1:2: error:") and "invalid JSON" in err


def cluster_dir(tmp_path: Path, text: str = SASL_CLUSTER) -> Path:
    return cluster_folder(tmp_path / "topics" / "prod", cluster=text)


def test_export_secrets_writes_exactly_the_named_credentials_and_prints_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cluster_dir(tmp_path)
    env_file = tmp_path / "github_env"
    secrets = {"KAFKA_USERNAME": "svc-topics", "KAFKA_PASSWORD": "pa55\nword", "OTHER": "nope"}
    monkeypatch.setenv("KGITOPS_SECRETS", json.dumps(secrets))
    monkeypatch.setenv("GITHUB_ENV", str(env_file))
    monkeypatch.delenv("KAFKA_USERNAME", raising=False)
    monkeypatch.delenv("KAFKA_PASSWORD", raising=False)
    assert main(["github", "export-secrets", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "exported KAFKA_USERNAME (security.sasl.usernameEnv)" in out
    assert "svc-topics" not in out and "pa55" not in out

    lines = env_file.read_text(encoding="utf-8").split("\n")
    exported: dict[str, str] = {}
    i = 0
    while i < len(lines) - 1:  # GitHub's NAME<<DELIMITER multi-line syntax
        name, delimiter = lines[i].split("<<")
        end = lines.index(delimiter, i + 1)
        exported[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    assert exported == {"KAFKA_USERNAME": "svc-topics", "KAFKA_PASSWORD": "pa55\nword"}


def test_export_secrets_names_every_missing_secret_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cluster_dir(tmp_path)
    env_file = tmp_path / "github_env"
    monkeypatch.setenv("KGITOPS_SECRETS", json.dumps({"KAFKA_USERNAME": "u"}))
    monkeypatch.setenv("GITHUB_ENV", str(env_file))
    monkeypatch.delenv("KAFKA_PASSWORD", raising=False)
    assert main(["github", "export-secrets", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "KAFKA_PASSWORD (security.sasl.passwordEnv)" in err
    assert not env_file.exists()


def test_export_secrets_for_a_cluster_without_credentials_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cluster_dir(tmp_path, cluster_yaml("dev", bootstrap="k:9092"))
    monkeypatch.delenv("GITHUB_ENV", raising=False)
    assert main(["github", "export-secrets", str(folder)]) == 0
    assert "names no credentials" in capsys.readouterr().out
