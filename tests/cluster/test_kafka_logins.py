"""Logins beyond PLAIN/SCRAM: OAUTHBEARER (token from a variable or a command, refreshed)
and AWS MSK IAM. No broker here speaks them, so these tests check exactly what kafka-python
is given, that tokens refresh when they should, and that no token reaches any output."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth

from kgitops.cli import main
from kgitops.cluster.kafka.bootstrap import kafka_settings
from kgitops.cluster.kafka.settings import client_config, secret_values
from kgitops.cluster.kafka.token import TokenSource, jwt_expiry
from kgitops.errors import ClusterAuthError, ClusterError
from kgitops.model import ClusterSpec, SaslSpec, SecuritySpec
from tests.helpers import cluster_folder, cluster_yaml

TOKEN = "eyJhbGciOiJub25lIn0.c2VjcmV0LXRva2Vu.sig-Q9zW-never-printed"


def spec(sasl: SaslSpec, protocol: str = "SASL_SSL", directory: str = ".") -> ClusterSpec:
    return ClusterSpec(
        name="cloud",
        directory=directory,
        bootstrap_servers=("broker.example:9093",),
        security=SecuritySpec(protocol=protocol, sasl=sasl),
    )


def test_oauthbearer_from_a_variable_gives_kafka_python_a_token_provider() -> None:
    config = client_config(
        spec(SaslSpec("OAUTHBEARER", token_env="KAFKA_TOKEN")), {"KAFKA_TOKEN": TOKEN}
    )
    assert config["security_protocol"] == "SASL_SSL"
    assert config["sasl_mechanism"] == "OAUTHBEARER"
    assert "sasl_plain_username" not in config and "sasl_plain_password" not in config
    given = kafka_settings(config)["sasl_oauth_token_provider"]
    assert isinstance(given, AbstractTokenProvider)
    mechanism = SaslMechanismOAuth(sasl_oauth_token_provider=given)
    assert mechanism.auth_bytes() == f"n,,\x01auth=Bearer {TOKEN}\x01\x01".encode()
    assert TOKEN in secret_values(config)  # scrubbed from every message
    assert TOKEN not in repr(config) and TOKEN not in repr(given)


def _counter_command(tmp_path: Path, token_of: str = "'tok-%d' % n") -> list[str]:
    """A command printing a new token each run (tok-1, tok-2 ...), counting its runs."""
    script = tmp_path / "token.py"
    script.write_text(
        "import pathlib\n"
        "p = pathlib.Path(__file__).with_suffix('.n')\n"
        "n = int(p.read_text()) + 1 if p.exists() else 1\n"
        "p.write_text(str(n))\n"
        f"print({token_of})\n"
    )
    return [sys.executable, str(script)]


def test_a_command_token_is_reused_until_it_is_old_then_fetched_again(tmp_path: Path) -> None:
    now = [0.0]
    source = TokenSource(
        command=_counter_command(tmp_path), refresh_seconds=300, clock=lambda: now[0]
    )
    assert source.token() == "tok-1"
    now[0] = 299.0
    assert source.token() == "tok-1"
    now[0] = 300.0
    assert source.token() == "tok-2"
    assert source.seen == ("tok-1", "tok-2")


def test_a_jwt_is_fetched_again_a_minute_before_it_expires(tmp_path: Path) -> None:
    def jwt(exp: int) -> str:
        body = base64.urlsafe_b64encode(json.dumps({"exp": exp}).encode()).decode().rstrip("=")
        return f"e30.{body}.sig"

    assert jwt_expiry(jwt(1000)) == 1000.0 and jwt_expiry("opaque") is None
    wall = [0.0]
    command = _counter_command(tmp_path, token_of=f"{jwt(1000)!r} + '' * n")
    source = TokenSource(command=command, refresh_seconds=3600, wall_clock=lambda: wall[0])
    first = source.token()
    wall[0] = 939.0
    assert source.token() == first and (tmp_path / "token.n").read_text() == "1"
    wall[0] = 941.0
    source.token()
    assert (tmp_path / "token.n").read_text() == "2"


def test_a_failing_token_command_is_named_and_its_output_never_shown(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    leaked = "refresh-token-s3cr3t"  # a helper that prints a credential as it fails
    script.write_text(
        f"import sys\nprint({TOKEN!r})\nsys.exit('denied: bad refresh token {leaked}')\n"
    )
    with pytest.raises(ClusterAuthError) as info:
        TokenSource(command=[sys.executable, str(script)], where="cluster.yaml:4:5").token()
    text = str(info.value)
    assert "cluster.yaml:4:5: security.sasl.tokenCommand" in text
    assert "exited with status 1" in text and "bad.py" in text
    assert leaked not in text and "denied" not in text and TOKEN not in text
    with pytest.raises(ClusterAuthError, match="no such program 'no-such-token-tool'"):
        TokenSource(command=["no-such-token-tool"]).token()


def test_an_unset_token_variable_is_named_before_any_connection() -> None:
    with pytest.raises(ClusterAuthError, match=r"KAFKA_TOKEN .*is not set"):
        client_config(spec(SaslSpec("OAUTHBEARER", token_env="KAFKA_TOKEN")), {})


def test_oauthbearer_over_plaintext_is_refused_unless_allowed() -> None:
    with pytest.raises(ClusterError, match="bearer token unencrypted"):
        client_config(spec(SaslSpec("OAUTHBEARER", token_env="T"), "SASL_PLAINTEXT"), {"T": TOKEN})


def test_msk_iam_gives_kafka_python_the_mechanism_and_no_credential(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    config = client_config(spec(SaslSpec("AWS_MSK_IAM")), {})
    assert config["sasl_mechanism"] == "AWS_MSK_IAM"
    assert config["security_protocol"] == "SASL_SSL"
    assert not {k for k in config if k.startswith("sasl_plain") or "token" in k}
    with pytest.raises(ClusterError, match="AWS_MSK_IAM needs protocol SASL_SSL"):
        client_config(spec(SaslSpec("AWS_MSK_IAM"), "SASL_PLAINTEXT"), {})


def test_msk_iam_without_botocore_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "botocore" else real(n, *a)
    )
    with pytest.raises(ClusterError, match="botocore"):
        client_config(spec(SaslSpec("AWS_MSK_IAM")), {})


CLUSTER = cluster_yaml(
    "cloud",
    bootstrap="127.0.0.1:1",
    extra="requestTimeoutMs: 1000\nsecurity:\n  protocol: SASL_SSL\n  sasl: %s\n",
)


@pytest.mark.parametrize(
    ("sasl", "expected"),
    [
        (
            "{mechanism: OAUTHBEARER}",
            "OAUTHBEARER needs exactly one of security.sasl.tokenEnv",
        ),
        (
            "{mechanism: OAUTHBEARER, tokenEnv: T, tokenCommand: [x]}",
            "OAUTHBEARER needs exactly one of security.sasl.tokenEnv",
        ),
        (
            "{mechanism: OAUTHBEARER, tokenEnv: T, usernameEnv: U}",
            "security.sasl.usernameEnv does not apply to OAUTHBEARER",
        ),
        (
            "{mechanism: AWS_MSK_IAM, passwordEnv: P}",
            "security.sasl.passwordEnv does not apply to AWS_MSK_IAM",
        ),
        ("{mechanism: SCRAM-SHA-512, tokenEnv: T}", "missing required field 'usernameEnv'"),
    ],
)
def test_each_mechanism_takes_its_own_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sasl: str, expected: str
) -> None:
    cluster_folder(tmp_path, cluster=CLUSTER % sasl)
    assert main(["validate", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert expected in out + err


def test_the_token_never_reaches_the_output_of_a_failed_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_TOKEN", TOKEN)
    cluster_folder(tmp_path, cluster=CLUSTER % "{mechanism: OAUTHBEARER, tokenEnv: KAFKA_TOKEN}")
    assert main(["validate", str(tmp_path)]) == 0
    code = main(["plan", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1 and "error: cannot reach cluster 'cloud' at 127.0.0.1:1" in err
    assert TOKEN not in out + err
