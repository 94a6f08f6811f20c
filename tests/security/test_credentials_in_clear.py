"""Credentials never in clear, and never kgitops' own: a plan that writes SCRAM credentials
(AlterUserScramCredentials carries the salted password) over a connection without TLS is
refused unless cluster.yaml says so (``security.allowCleartextCredentials``, a connection
setting), and then the plan says so; a User document may not take over kgitops' login."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import THREE_BROKERS, cluster_folder, cluster_yaml
from tests.helpers import run_cli as cli

SIMULATED = cluster_yaml("prod", brokers=THREE_BROKERS)
REAL = (
    cluster_yaml("prod", bootstrap="kafka-1.internal:9092")
    + """\
security:
  protocol: {protocol}
  sasl: {{mechanism: SCRAM-SHA-512, usernameEnv: KGITOPS_KAFKA_USERNAME,
    passwordEnv: KGITOPS_KAFKA_PASSWORD}}
"""
)
USER = """\
apiVersion: kgitops/v1
kind: User
name: orders-app
mechanism: SCRAM-SHA-512
passwordEnv: ORDERS_APP_PASSWORD
"""


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, Path]:
    """A cluster folder with one User, and a snapshot of a cluster without it."""
    quota = (
        USER.replace("kind: User", "kind: Quota").split("name:")[0]
        + "user: nobody\nproducerByteRate: 1048576\n"
    )
    d = cluster_folder(
        tmp_path / "prod", "prod", brokers=THREE_BROKERS, files={"users.yaml": quota}
    )
    state = tmp_path / "state.json"
    code, out, err = cli("snapshot", str(d), "--out", str(state))
    assert code == 0, out + err
    (d / "users.yaml").write_text(USER)
    return d, state


def test_a_scram_upsert_over_plaintext_is_refused_and_nothing_is_planned(
    folder: tuple[Path, Path],
) -> None:
    d, state = folder
    for protocol in ("PLAINTEXT", "SASL_PLAINTEXT"):
        text = REAL.format(protocol=protocol)
        if protocol == "PLAINTEXT":
            text = text.split("  sasl:")[0]
        (d / "cluster.yaml").write_text(text)
        out_file = d.parent / "plan.json"
        code, out, err = cli("plan", str(d), "--state", str(state), "--out", str(out_file))
        assert code == 1, out + err
        assert (
            f"error: upsert_user writes SCRAM credentials (the salted password, enough to log "
            f"in as the user) over protocol {protocol}, without TLS" in err
        )
        assert "upsert_user orders-app" in err
        assert not out_file.exists()


def test_over_tls_the_upsert_is_planned_without_a_warning(folder: tuple[Path, Path]) -> None:
    d, state = folder
    (d / "cluster.yaml").write_text(REAL.format(protocol="SASL_SSL"))
    code, out, err = cli("plan", str(d), "--state", str(state), "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert [a["type"] for a in plan["actions"]] == ["upsert_user"]
    assert "CLEARTEXT_CREDENTIALS" not in out


def test_the_opt_in_is_said_on_the_plan_and_is_a_connection_setting(
    folder: tuple[Path, Path],
) -> None:
    d, state = folder
    text = REAL.format(protocol="SASL_PLAINTEXT") + "  allowCleartextCredentials: true\n"
    (d / "cluster.yaml").write_text(text)
    code, out, err = cli("plan", str(d), "--state", str(state), "--format", "json")
    assert code == 0, err
    warnings = [w for w in json.loads(out)["warnings"] if w["code"] == "CLEARTEXT_CREDENTIALS"]
    assert len(warnings) == 1 and "orders-app" in warnings[0]["message"]
    code, md, _ = cli("plan", str(d), "--state", str(state), "--format", "markdown")
    assert "over protocol SASL_PLAINTEXT, without TLS, as cluster.yaml allows" in md

    from kgitops.model import ClusterSpec, SecuritySpec
    from kgitops.plan.connection import connection_changes

    before = ClusterSpec(name="prod", directory=str(d), security=SecuritySpec("SASL_PLAINTEXT"))
    after = ClusterSpec(
        name="prod",
        directory=str(d),
        security=SecuritySpec("SASL_PLAINTEXT", allow_cleartext_credentials=True),
    )
    changes = connection_changes(before, after, base="main")
    assert [f.data["field"] for f in changes] == ["security.allowCleartextCredentials"]


def test_the_adapter_refuses_to_send_credentials_without_tls() -> None:
    from kgitops.cluster.kafka.access import AccessRequests
    from kgitops.cluster.port import ScramUpsert
    from kgitops.model import ClusterSpec, SecuritySpec

    sent: list[Any] = []

    class Admin(AccessRequests):
        def _call(self, request: Any) -> Any:
            sent.append(request)
            raise AssertionError("nothing may be sent")

    class Versions:
        def prepare_versions(self) -> str | None:
            sent.append("prepare")
            return None

    admin = Admin.__new__(Admin)
    admin._spec = ClusterSpec(name="p", directory=".", security=SecuritySpec("SASL_PLAINTEXT"))
    admin.versions = Versions()  # type: ignore[assignment]
    upsert = ScramUpsert("orders-app", "SCRAM-SHA-512", 8192, b"s" * 32, b"p" * 32, 1)
    results = admin.upsert_scram_users([upsert])
    error = results[upsert.key]
    assert error is not None and getattr(error, "code", None) == "CLEARTEXT_CREDENTIALS"
    assert sent == []


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            "KGITOPS_KAFKA_PASSWORD",
            "is a variable kgitops logs in with (security.sasl.passwordEnv)",
        ),
        (
            "KGITOPS_KAFKA_USERNAME",
            "is a variable kgitops logs in with (security.sasl.usernameEnv)",
        ),
        ("KGITOPS_SSL_KEY_PASSWORD", "is a variable kgitops logs in with (the kgitops workflows'"),
        ("PATH", "is a system variable that holds no secret"),
        ("HOME", "is a system variable that holds no secret"),
    ],
)
def test_a_user_taking_kgitops_own_variable_is_an_error_at_its_position(
    folder: tuple[Path, Path], env: str, says: str
) -> None:
    d, _ = folder
    (d / "cluster.yaml").write_text(REAL.format(protocol="SASL_SSL"))
    (d / "users.yaml").write_text(USER.replace("ORDERS_APP_PASSWORD", env))
    code, out, err = cli("validate", str(d))
    assert code == 1
    assert f"{d}/users.yaml:5:14: error: passwordEnv: {env} {says}" in out + err


def test_a_user_named_as_kgitops_own_principal_is_an_error(
    folder: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    d, _ = folder
    (d / "cluster.yaml").write_text(REAL.format(protocol="SASL_SSL"))
    monkeypatch.setenv("KGITOPS_KAFKA_USERNAME", "kgitops-ci")
    (d / "users.yaml").write_text(USER.replace("name: orders-app", "name: kgitops-ci"))
    code, out, err = cli("validate", str(d))
    assert code == 1
    assert (
        f"{d}/users.yaml:3:7: error: user 'kgitops-ci' is the principal kgitops logs in as"
        in out + err
    )


def test_snapshots_and_plan_json_hold_no_salt_stored_key_or_foreign_broker_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "prod"
    d.mkdir()
    (d / "cluster.yaml").write_text(SIMULATED)
    (d / "users.yaml").write_text(USER)
    monkeypatch.setenv("ORDERS_APP_PASSWORD", "hunter2-the-password")
    code, out, err = cli("apply", str(d), "--yes")
    assert code == 0, out + err
    state_file = d / ".state" / "prod.json"
    stored = json.loads(state_file.read_text())
    assert stored["access"]["users"][0]["storedKey"]  # the simulated broker's own storage
    stored["brokerConfigs"] = {
        "0": {
            "leader.replication.throttled.rate": "1048576",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "password=broker-secret",
            "log.cleaner.threads": "4",
        }
    }
    state_file.write_text(json.dumps(stored))
    snap = tmp_path / "snap.json"
    code, _, err = cli("snapshot", str(d), "--out", str(snap))
    assert code == 0, err
    (d / "users.yaml").write_text(USER + "passwordVersion: 2\n")
    plan = tmp_path / "plan.json"
    code, _, err = cli("plan", str(d), "--out", str(plan))
    assert code == 0, err
    for path in (snap, plan):
        text = path.read_text()
        assert '"salt"' not in text and '"storedKey"' not in text, path
        assert "serverKey" not in text and "broker-secret" not in text, path
        assert "log.cleaner.threads" not in text, path
        assert '"leader.replication.throttled.rate": "1048576"' in text, path
    assert "upsert_user" in plan.read_text()
