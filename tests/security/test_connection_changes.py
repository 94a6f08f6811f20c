"""Connection settings are plan content: ``plan --base REF`` shows every change to how kgitops
connects as CONNECTION_CHANGED, first, in every format; it never says "No changes" while one
exists; it does not connect with unreviewed settings; the pull-request check fails without
an explicit allow."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from pathlib import Path

import pytest

from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml, committed_repo, git
from tests.helpers import run_cli as cli

SIMULATED = cluster_yaml("prod", brokers=THREE_RACKS)
REAL = (
    cluster_yaml("prod", bootstrap="kafka-1.internal:9093")
    + """\
security:
  protocol: SASL_SSL
  sasl:
    mechanism: SCRAM-SHA-512
    usernameEnv: KGITOPS_KAFKA_USERNAME
    passwordEnv: KGITOPS_KAFKA_PASSWORD
  ssl: {caFile: certs/ca.pem}
"""
)
ORDERS = "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"
STATE = {
    "format": "kgitops-state/v1",
    "clusterId": "c",
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
    "topics": {
        "orders": {
            "partitions": {
                str(p): {"replicas": [p % 3, (p + 1) % 3, (p + 2) % 3]} for p in range(3)
            },
            "config": {},
        }
    },
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {
        "topics/prod/cluster.yaml": REAL,
        "topics/prod/orders.yaml": ORDERS,
        "state.json": json.dumps(STATE),
    }
    return committed_repo(tmp_path / "repo", files)


def folder(repo: Path) -> str:
    return str(repo / "topics" / "prod")


def hostile(repo: Path) -> None:
    """The pull request: only cluster.yaml changes; another host, other credential names."""
    text = (
        REAL.replace("kafka-1.internal:9093", "collector.example.net:9093")
        .replace("KGITOPS_KAFKA_USERNAME", "KGITOPS_OTHER_USER")
        .replace("certs/ca.pem", "certs/other.pem")
    )
    (repo / "topics" / "prod" / "cluster.yaml").write_text(text)


def test_every_format_puts_connection_changed_first_and_never_says_no_changes(repo: Path) -> None:
    hostile(repo)
    state = str(repo / "state.json")
    base = ["plan", folder(repo), "--base", "main", "--state", state, "--detailed-exitcode"]
    code, text, _ = cli(*base)
    assert code == 2
    lines = text.splitlines()
    assert lines[2].startswith("!! CONNECTION_CHANGED bootstrapServers: kafka-1.internal:9093 ->")
    assert (
        "!! CONNECTION_CHANGED security.sasl.usernameEnv: KGITOPS_KAFKA_USERNAME -> "
        "KGITOPS_OTHER_USER" in text
    )
    assert "!! CONNECTION_CHANGED security.ssl.caFile: certs/ca.pem -> certs/other.pem" in text
    assert "No changes" not in text

    code, md, _ = cli(*base, "--format", "markdown")
    assert code == 2
    body = md.split("\n", 2)[2]
    assert body.startswith("> [!CAUTION]\n> **CONNECTION_CHANGED**")
    assert "`bootstrapServers`: `kafka-1.internal:9093` → `collector.example.net:9093`" in md
    assert "No changes" not in md

    code, js, _ = cli(*base, "--format", "json")
    assert code == 2
    data = json.loads(js)
    assert list(data)[:3] == ["format", "cluster", "findings"]
    fields = [f["data"]["field"] for f in data["findings"]]
    assert fields == ["bootstrapServers", "security.sasl.usernameEnv", "security.ssl.caFile"]
    assert {f["code"] for f in data["findings"]} == {"CONNECTION_CHANGED"}
    assert data["actions"] == []


def test_without_a_change_the_plan_has_no_finding(repo: Path) -> None:
    code, text, _ = cli(
        "plan",
        folder(repo),
        "--base",
        "main",
        "--state",
        str(repo / "state.json"),
        "--detailed-exitcode",
    )
    assert code == 0 and "CONNECTION_CHANGED" not in text and "No changes" in text


def test_changed_settings_are_not_used_to_connect_until_allowed(repo: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    contacted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = listener.accept()
                contacted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        d = repo / "topics" / "prod"
        (d / "cluster.yaml").write_text(
            "apiVersion: kgitops/v1\nkind: Cluster\nname: prod\n"
            f'bootstrapServers: ["127.0.0.1:{port}"]\n'
        )
        code, _, err = cli("plan", folder(repo), "--base", "main")
        assert code == 1
        assert "changes how kgitops connects to the cluster since main" in err
        assert (
            f"CONNECTION_CHANGED bootstrapServers: kafka-1.internal:9093 -> 127.0.0.1:{port}" in err
        )
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert contacted == [], "kgitops connected with settings nobody allowed"


def test_a_changed_simulated_state_file_is_not_created_until_allowed(repo: Path) -> None:
    d = repo / "topics" / "prod"
    (d / "cluster.yaml").write_text(SIMULATED)
    git(repo, "commit", "-qam", "simulated")
    (d / "cluster.yaml").write_text(SIMULATED.replace(".state/prod.json", ".state/elsewhere.json"))
    code, _, err = cli("plan", folder(repo), "--base", "main")
    assert code == 1 and "simulated.stateFile: .state/prod.json -> .state/elsewhere.json" in err
    assert not (d / ".state" / "elsewhere.json").exists()
    code, out, _ = cli("plan", folder(repo), "--base", "main", "--allow-connection-change")
    assert code == 0 and out.splitlines()[2].startswith("!! CONNECTION_CHANGED simulated.stateFile")


def test_a_new_cluster_folder_is_all_connection_change(repo: Path) -> None:
    d = cluster_folder(
        repo / "topics" / "staging", "staging", brokers=THREE_RACKS, state_file=".state/prod.json"
    )
    code, out, _ = cli(
        "plan", str(d), "--base", "main", "--allow-connection-change", "--format", "json"
    )
    assert code == 0
    findings = json.loads(out)["findings"]
    assert findings[0]["message"].startswith("cluster.yaml is new since main")
    assert "simulated.stateFile" in [f["data"]["field"] for f in findings]


def test_the_pr_check_fails_on_a_connection_change_unless_allowed(repo: Path) -> None:
    hostile(repo)
    plan = repo.parent / "plan.json"
    code, _, err = cli(
        "plan",
        folder(repo),
        "--base",
        "main",
        "--state",
        str(repo / "state.json"),
        "--out",
        str(plan),
    )
    assert code == 0, err
    code, _, err = cli("github", "check-plan", str(plan))
    assert code == 1 and "CONNECTION_CHANGED bootstrapServers" in err
    # a plan file stripped of its findings does not pass either when the check compares itself
    data = json.loads(plan.read_text())
    del data["findings"]
    plan.write_text(json.dumps(data))
    code, _, err = cli("github", "check-plan", str(plan), "--base", "main")
    assert code == 1 and "CONNECTION_CHANGED security.ssl.caFile" in err
    code, _, err = cli(
        "github", "check-plan", str(plan), "--base", "main", "--allow-connection-change"
    )
    assert code == 0, err


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "no-such-branch", "main..HEAD", "main\n"])
def test_a_base_that_is_not_a_commit_is_one_clear_error(repo: Path, ref: str) -> None:
    code, _, err = cli("plan", folder(repo), f"--base={ref}", "--state", str(repo / "state.json"))
    assert code == 1
    assert err.startswith("error: --base") and len(err.splitlines()) == 1


def test_a_changed_token_command_is_a_connection_change_even_when_its_words_join_alike(
    repo: Path,
) -> None:
    # the command kgitops would run for an OAUTHBEARER token: ["a b"] is not ["a", "b"]
    oauth = REAL.replace(
        """  sasl:
    mechanism: SCRAM-SHA-512
    usernameEnv: KGITOPS_KAFKA_USERNAME
    passwordEnv: KGITOPS_KAFKA_PASSWORD
""",
        "  sasl:\n    mechanism: OAUTHBEARER\n    tokenCommand: [get-token, --audience kafka]\n",
    )
    d = repo / "topics" / "prod"
    (d / "cluster.yaml").write_text(oauth)
    git(repo, "commit", "-qam", "oauth")
    (d / "cluster.yaml").write_text(
        oauth.replace("[get-token, --audience kafka]", "[get-token, --audience, kafka]")
    )
    code, _, err = cli("plan", folder(repo), "--base", "main")
    assert code == 1
    assert (
        'CONNECTION_CHANGED security.sasl.tokenCommand: ["get-token", "--audience kafka"] -> '
        '["get-token", "--audience", "kafka"]' in err
    )


def test_other_bytes_at_the_same_tls_path_are_a_connection_change(repo: Path) -> None:
    """A pull request that keeps `caFile: certs/ca.pem` but swaps the CA's bytes changes whom
    kgitops trusts with the credentials: CONNECTION_CHANGED, and the PR check fails."""
    certs = repo / "topics" / "prod" / "certs"
    certs.mkdir()
    (certs / "ca.pem").write_bytes(b"-----BEGIN CERTIFICATE-----\nthe real CA\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ca")
    state = str(repo / "state.json")
    argv = ["plan", folder(repo), "--base", "main", "--state", state, "--detailed-exitcode"]
    code, text, _ = cli(*argv)
    assert code == 0 and "CONNECTION_CHANGED" not in text

    (certs / "ca.pem").write_bytes(b"-----BEGIN CERTIFICATE-----\nthe attacker's CA\n")
    code, text, _ = cli(*argv)
    assert code == 2
    assert "!! CONNECTION_CHANGED security.ssl.caFile content: sha256 " in text
    code, _, err = cli("plan", folder(repo), "--base", "main")  # would connect: refused
    assert code == 1 and "security.ssl.caFile content" in err

    plan = repo.parent / "plan.json"
    assert cli(*argv, "--out", str(plan))[0] == 2
    code, _, err = cli("github", "check-plan", str(plan), "--base", "main", "--state", state)
    assert code == 1 and "security.ssl.caFile content" in err

    (certs / "ca.pem").unlink()
    code, text, _ = cli(*argv)
    assert code == 2 and "-> (no such file)" in text


def test_removing_or_changing_the_cluster_id_pin_is_a_connection_change(repo: Path) -> None:
    d = repo / "topics" / "prod"
    (d / "cluster.yaml").write_text(REAL + "clusterId: c\n")
    git(repo, "commit", "-qam", "pin")
    state = str(repo / "state.json")
    argv = ["plan", folder(repo), "--base", "main", "--state", state, "--detailed-exitcode"]
    assert cli(*argv)[0] == 0
    (d / "cluster.yaml").write_text(REAL)
    code, text, _ = cli(*argv)
    assert code == 2 and "!! CONNECTION_CHANGED clusterId: c -> (unset)" in text
    state_b = json.dumps({**STATE, "clusterId": "other"})
    (repo / "state_b.json").write_text(state_b)
    (d / "cluster.yaml").write_text(REAL + "clusterId: other\n")
    code, text, _ = cli(*argv[:-2], str(repo / "state_b.json"), "--detailed-exitcode")
    assert code == 2 and "!! CONNECTION_CHANGED clusterId: c -> other" in text
