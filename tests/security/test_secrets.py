"""Credentials: only named secrets reach kgitops, only to the brokers cluster.yaml names, and
never back out in a message. Secrets are masked as whole values, never inside a host name or
a path, and a user name is no secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kafka.errors as kerr
import pytest

from kgitops.cli import main
from kgitops.cluster.kafka import admin as kafka_admin
from kgitops.cluster.kafka import bootstrap as kafka_bootstrap
from kgitops.cluster.kafka.errors import item_error, translate
from kgitops.cluster.kafka.settings import client_config, secret_values
from kgitops.errors import ClusterAuthError, ClusterError, remember_secrets, scrub_secrets
from kgitops.model import Broker, ClusterSpec, SaslSpec, SecuritySpec
from tests.helpers import cluster_folder


def folder(tmp_path: Path, security: str) -> Path:
    return cluster_folder(tmp_path / "prod", "prod", bootstrap="kafka-1:9092", extra=security)


@pytest.mark.parametrize(
    ("field", "name", "col"),
    [
        ("usernameEnv", "github_token", 49),
        ("usernameEnv", "GITHUB_TOKEN", 49),
        ("passwordEnv", "ACTIONS_RUNTIME_TOKEN", 86),
        ("passwordEnv", "actions_id_token_request_token", 86),
        ("usernameEnv", "Runner_Temp", 49),
        ("passwordEnv", "GITHUB_ENV", 86),
    ],
)
def test_validation_refuses_a_runner_or_github_variable_as_a_credential(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, name: str, col: int
) -> None:
    names = {"usernameEnv": "KGITOPS_KAFKA_USERNAME", "passwordEnv": "KGITOPS_KAFKA_PASSWORD"}
    names[field] = name
    d = folder(
        tmp_path,
        "security:\n  protocol: SASL_SSL\n"
        f"  sasl: {{mechanism: SCRAM-SHA-512, usernameEnv: {names['usernameEnv']}, "
        f"passwordEnv: {names['passwordEnv']}}}\n",
    )
    assert main(["validate", str(d)]) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err
    line = [ln for ln in text.splitlines() if "is a variable of the GitHub runner" in ln]
    assert len(line) == 1, text
    assert line[0].startswith(f"{d}/cluster.yaml:7:{col}: error: ")
    assert f"{field}: {name} is a variable of the GitHub runner" in line[0]


def test_sasl_plain_without_tls_needs_allow_plaintext_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sasl = (
        "  sasl: {mechanism: PLAIN, usernameEnv: KGITOPS_KAFKA_USERNAME, "
        "passwordEnv: KGITOPS_KAFKA_PASSWORD}\n"
    )
    d = folder(tmp_path, "security:\n  protocol: SASL_PLAINTEXT\n" + sasl)
    assert main(["validate", str(d)]) == 1
    out = capsys.readouterr()
    assert f"{d}/cluster.yaml:7:21: error: SASL PLAIN over SASL_PLAINTEXT sends the password" in (
        out.out + out.err
    )
    (d / "cluster.yaml").write_text(
        (d / "cluster.yaml")
        .read_text()
        .replace(
            "protocol: SASL_PLAINTEXT\n",
            "protocol: SASL_PLAINTEXT\n  allowPlaintextPassword: true\n",
        )
    )
    assert main(["validate", str(d)]) == 0


def test_the_client_refuses_plain_in_clear_even_without_validation() -> None:
    spec = ClusterSpec(
        "prod",
        "/x",
        ("k:9092",),
        SecuritySpec("SASL_PLAINTEXT", SaslSpec("PLAIN", "U", "P")),
    )
    with pytest.raises(ClusterError, match="would send the password unencrypted"):
        client_config(spec, environ={"U": "u", "P": "p"})


SCRAM = ClusterSpec(
    "prod",
    "/x",
    ("k:9092",),
    SecuritySpec(
        "SASL_SSL", SaslSpec("SCRAM-SHA-512", "KGITOPS_KAFKA_USERNAME", "KGITOPS_KAFKA_PASSWORD")
    ),
)
ENV = {"KGITOPS_KAFKA_USERNAME": "svc-topics", "KGITOPS_KAFKA_PASSWORD": "hunter2"}


def test_the_password_is_masked_and_the_user_name_is_not() -> None:
    secrets = secret_values(client_config(SCRAM, environ=ENV))
    assert secrets == ("hunter2",)
    err = translate(
        kerr.SaslAuthenticationFailedError("Authentication failed for user svc-topics (hunter2)"),
        "connect",
        secrets=secrets,
    )
    assert isinstance(err, ClusterAuthError)
    assert "hunter2" not in str(err)
    assert 'Authentication failed for user svc-topics (***)"' in str(err)


# a user named like a host name's first label, a password that is its second one
HOSTILE = ClusterSpec(
    "prod",
    "/x",
    ("kafka.invalid:9092",),
    SecuritySpec("SASL_SSL", SaslSpec("SCRAM-SHA-512", "KU", "KP")),
)


def test_a_failed_login_keeps_host_names_whole_and_masks_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(**kw: Any) -> Any:
        raise kerr.SaslAuthenticationFailedError(
            f"Authentication failed: invalid credentials for user {kw['sasl_plain_username']} "
            f"password={kw['sasl_plain_password']}"
        )

    monkeypatch.setattr(kafka_bootstrap, "KafkaAdminClient", refuse)
    with pytest.raises(ClusterAuthError) as info:
        kafka_admin.KafkaAdmin(HOSTILE, environ={"KU": "kafka", "KP": "invalid"})
    text = "\n".join(info.value.lines())
    assert "kafka.invalid:9092" in text and "***" in text
    assert "for user kafka password=***" in text
    assert "password=invalid" not in text


@pytest.mark.parametrize(
    ("secret", "text", "shown"),
    [
        ("kafka", "cannot reach kafka.invalid:9092", "cannot reach kafka.invalid:9092"),
        ("invalid", "cannot reach kafka.invalid:9092", "cannot reach kafka.invalid:9092"),
        ("u", "topics/u/cluster.yaml:3:1: error: bad", "topics/u/cluster.yaml:3:1: error: bad"),
        ("p", "topics/prod/cluster.yaml: p refused", "topics/prod/cluster.yaml: *** refused"),
        ("hunter2", "certs/hunter2.pem and hunter2_x", "certs/hunter2.pem and hunter2_x"),
        ("hunter2", "login alice:hunter2@kafka refused", "login alice:***@kafka refused"),
        ("hunter2", 'password="hunter2";', 'password="***";'),
        ("hunter2", "the password is hunter2.", "the password is ***."),
        ("hunter2", "[hunter2, x]\thunter2\x00", "[***, x]\t***\x00"),
        ("=hunter2", "password=hunter2 sent", "password*** sent"),
        ("hunter2", "hunter2", "***"),
        ("s3cret", "ab s3cret-long and s3cret", "ab s3cret-long and ***"),
    ],
)
def test_a_secret_is_masked_only_where_it_stands_whole(secret: str, text: str, shown: str) -> None:
    assert scrub_secrets(text, [secret]) == shown


def test_a_secret_containing_another_is_masked_whole() -> None:
    assert scrub_secrets("login pass word refused", ["pass", "pass word"]) == "login *** refused"


def test_the_last_guard_keeps_paths_whole_with_a_one_letter_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remember_secrets(["p", "t"])
    d = tmp_path / "prod"
    d.mkdir()
    (d / "cluster.yaml").write_text("apiVersion: kgitops/v1\nkind: Cluster\nname: [\n")
    assert main(["plan", str(d)]) == 1  # a SpecError: through the CLI's scrubbing
    err = capsys.readouterr().err
    assert f"{d}/cluster.yaml:4:1: error: invalid YAML" in err
    assert "***" not in err


def test_broker_supplied_text_is_quoted_truncated_and_one_line() -> None:
    message = "x" * 500 + "\n```\n</details>\n@acme/admins"
    err = item_error("CreateTopics", "orders", 40, message)  # INVALID_CONFIG
    assert err is not None
    text = str(err)
    assert "\n" not in text and "</details>" not in text
    assert '"' + "x" * 300 + '..."' in text


def test_export_secrets_refuses_every_secret_of_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    d = folder(
        tmp_path,
        "security:\n  protocol: SASL_SSL\n  sasl: {mechanism: SCRAM-SHA-512, "
        "usernameEnv: KGITOPS_KAFKA_USERNAME, passwordEnv: KGITOPS_KAFKA_PASSWORD}\n",
    )
    env_file = tmp_path / "github_env"
    everything = {
        "github_token": "ghs_x",
        "KGITOPS_KAFKA_USERNAME": "u",
        "KGITOPS_KAFKA_PASSWORD": "p",
    }
    monkeypatch.setenv("KGITOPS_SECRETS", json.dumps(everything))
    monkeypatch.setenv("GITHUB_ENV", str(env_file))
    assert main(["github", "export-secrets", str(d)]) == 1
    assert "toJSON(secrets)" in capsys.readouterr().err
    assert not env_file.exists()


def test_export_secrets_never_exports_a_runner_variable_a_cluster_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = folder(
        tmp_path,
        "security:\n  protocol: SASL_SSL\n  sasl: {mechanism: SCRAM-SHA-512, "
        "usernameEnv: github_token, passwordEnv: KGITOPS_KAFKA_PASSWORD}\n",
    )
    env_file = tmp_path / "github_env"
    monkeypatch.setenv(
        "KGITOPS_SECRETS", json.dumps({"GITHUB_TOKEN": "x", "KGITOPS_KAFKA_PASSWORD": "p"})
    )
    monkeypatch.setenv("GITHUB_ENV", str(env_file))
    assert main(["github", "export-secrets", str(d)]) == 1
    assert not env_file.exists()


def test_a_user_document_may_not_take_its_password_from_a_runner_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = (
        "apiVersion: kgitops/v1\nkind: User\nname: app\nmechanism: SCRAM-SHA-512\n"
        "passwordEnv: GITHUB_TOKEN\n"
    )
    d = cluster_folder(tmp_path / "dev", "dev", brokers=[Broker(0)], files={"users.yaml": user})
    assert main(["validate", str(d)]) == 1
    out = capsys.readouterr()
    assert (
        f"{d}/users.yaml:5:14: error: passwordEnv: GITHUB_TOKEN is a variable of the GitHub "
        "runner" in out.out + out.err
    )
