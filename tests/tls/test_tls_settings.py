"""security.ssl without a broker: files resolve against the cluster folder from any working
folder and never leave it; a bad CA file, key or password is named before any connection; the
password never shows. Real certificates (tlslab.py), no mocks."""

from __future__ import annotations

import os
import shutil
import ssl
from pathlib import Path

import pytest
from tlslab import CLIENT_KEY_PASSWORD

from kgitops.cluster.kafka.settings import client_config
from kgitops.cluster.kafka.tls import TlsAdvice, is_ambiguous, is_definitive
from kgitops.errors import ClusterError, ClusterTlsError, KgitopsError
from kgitops.spec.load import load_specs, load_specs_or_raise
from tests.helpers import cluster_folder, run_cli


def folder(repo: Path, certs: Path, ssl_yaml: str, files: tuple[str, ...] = ("ca.pem",)) -> Path:
    d = repo / "topics" / "tls"
    (d / "certs").mkdir(parents=True, exist_ok=True)
    for name in files:
        shutil.copy(certs / name, d / "certs" / name)
    security = f"security:\n  protocol: SSL\n  ssl: {ssl_yaml}\n"
    return cluster_folder(d, "tls", bootstrap="127.0.0.1:9093", extra=security)


def errors_of(directory: str) -> list[str]:
    return [str(d) for d in load_specs(directory).errors]


def test_a_relative_ca_file_resolves_against_the_folder_from_the_repository_root(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder(tmp_path, tls_certs, "{caFile: certs/ca.pem}")
    monkeypatch.chdir(tmp_path)
    cfg = client_config(load_specs_or_raise("topics/tls").cluster, environ={})  # type: ignore[arg-type]
    assert cfg["ssl_cafile"] == str(tmp_path / "topics/tls/certs/ca.pem")
    assert isinstance(cfg["ssl_context"], ssl.SSLContext)
    assert cfg["ssl_context"].check_hostname


def test_the_same_folder_resolves_the_same_from_inside_it_and_from_elsewhere(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = folder(tmp_path, tls_certs, "{caFile: certs/ca.pem}")
    seen = set()
    for cwd, arg in ((d, "."), (tmp_path, "topics/tls"), (tmp_path / "topics", "tls")):
        monkeypatch.chdir(cwd)
        spec = load_specs_or_raise(arg).cluster
        assert spec is not None
        seen.add(client_config(spec, environ={})["ssl_cafile"])
    assert seen == {str(d / "certs" / "ca.pem")}


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../../ca.pem", "'../../ca.pem' leads outside the cluster folder"),
        (
            "/etc/ssl/certs/ca.pem",
            "is an absolute path; give a path relative to the cluster folder",
        ),
        ("file:///etc/ssl/ca.pem", "is a URI; give a path relative to the cluster folder"),
    ],
)
def test_a_ca_file_outside_the_folder_is_a_positioned_validation_error(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch, path: str, problem: str
) -> None:
    folder(tmp_path, tls_certs, f"{{caFile: {path!r}}}")
    monkeypatch.chdir(tmp_path)
    (line,) = errors_of("topics/tls")
    assert line.startswith("topics/tls/cluster.yaml:7:17: error: security.ssl.caFile: ")
    assert line.endswith(problem)


def test_a_symlink_out_of_the_folder_is_refused_and_its_target_never_read(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(tls_certs / "ca.pem", outside / "ca.pem")
    d = folder(tmp_path, tls_certs, "{caFile: certs/ca.pem}", files=())
    (d / "certs").rmdir()
    os.symlink(outside, d / "certs")  # certs -> ../../elsewhere, committed in a pull request
    monkeypatch.chdir(tmp_path)

    (line,) = errors_of("topics/tls")
    assert line == (
        "topics/tls/cluster.yaml:7:17: error: security.ssl.caFile: 'certs/ca.pem' leads "
        "outside the cluster folder through a symlink"
    )
    code, err = run("plan", "topics/tls")
    assert code == 1 and "through a symlink" in err and "BEGIN CERTIFICATE" not in err


def test_a_symlink_that_stays_inside_the_folder_is_fine(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = folder(tmp_path, tls_certs, "{caFile: current-ca.pem}")
    os.symlink("certs/ca.pem", d / "current-ca.pem")
    monkeypatch.chdir(tmp_path)
    assert errors_of("topics/tls") == []
    spec = load_specs_or_raise("topics/tls").cluster
    assert spec is not None
    assert client_config(spec, environ={})["ssl_cafile"].endswith("topics/tls/current-ca.pem")


def run(*argv: str) -> tuple[int, str]:
    result = run_cli(*argv)
    return result.code, result.err


def cluster_of(d: Path) -> object:
    spec = load_specs_or_raise(str(d)).cluster
    assert spec is not None
    return spec


def test_a_missing_ca_file_is_named_as_the_user_wrote_the_folder(
    tmp_path: Path, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder(tmp_path, tls_certs, "{caFile: certs/nope.pem}")
    monkeypatch.chdir(tmp_path)
    code, err = run("plan", "topics/tls")
    assert code == 1
    assert err == (
        "error: topics/tls/cluster.yaml:7:17: security.ssl.caFile: no such file: "
        "topics/tls/certs/nope.pem\n"
    )


def test_a_ca_file_that_holds_no_certificate_is_named_before_any_connection(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(tmp_path, tls_certs, "{caFile: certs/ca.pem}")
    (d / "certs" / "ca.pem").write_text("not a certificate\n")
    with pytest.raises(ClusterTlsError, match=r"caFile .*ca\.pem: not a PEM file of CA cert"):
        client_config(cluster_of(d), environ={})  # type: ignore[arg-type]


MTLS = (
    "{caFile: certs/ca.pem, certFile: certs/client.pem, keyFile: certs/client-encrypted.key, "
    "keyPasswordEnv: TLS_KEY_PASSWORD}"
)
MTLS_FILES = ("ca.pem", "client.pem", "client-encrypted.key")


def test_an_encrypted_key_opens_with_the_password_from_the_environment(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(tmp_path, tls_certs, MTLS, MTLS_FILES)
    cfg = client_config(cluster_of(d), environ={"TLS_KEY_PASSWORD": CLIENT_KEY_PASSWORD})  # type: ignore[arg-type]
    assert isinstance(cfg["ssl_context"], ssl.SSLContext)
    assert cfg["ssl_certfile"] == str(d / "certs" / "client.pem")


def test_a_wrong_key_password_is_named_without_the_password(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(tmp_path, tls_certs, MTLS, MTLS_FILES)
    with pytest.raises(ClusterTlsError) as info:
        client_config(cluster_of(d), environ={"TLS_KEY_PASSWORD": "wrong-guess-42"})  # type: ignore[arg-type]
    assert str(info.value).endswith(
        "security.ssl.keyFile "
        f"{d / 'certs' / 'client-encrypted.key'}: the key does not decrypt with the "
        "password keyPasswordEnv names"
    )
    assert "wrong-guess-42" not in str(info.value)


def test_an_encrypted_key_without_a_password_fails_and_never_prompts(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(
        tmp_path,
        tls_certs,
        "{caFile: certs/ca.pem, certFile: certs/client.pem, keyFile: certs/client-encrypted.key}",
        MTLS_FILES,
    )
    # OpenSSL's own fallback reads the terminal; with no terminal that would hang or fail
    # obscurely. stdin is pytest's (not a terminal), so a prompt would show as a hang here.
    with pytest.raises(ClusterTlsError, match="the key is encrypted and no keyPasswordEnv"):
        client_config(cluster_of(d), environ={})  # type: ignore[arg-type]


def test_an_unset_key_password_variable_is_named(tmp_path: Path, tls_certs: Path) -> None:
    d = folder(tmp_path, tls_certs, MTLS, MTLS_FILES)
    with pytest.raises(ClusterError, match="environment variable TLS_KEY_PASSWORD"):
        client_config(cluster_of(d), environ={})  # type: ignore[arg-type]


def test_a_key_that_belongs_to_another_certificate_is_named(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(
        tmp_path,
        tls_certs,
        "{caFile: certs/ca.pem, certFile: certs/client.pem, keyFile: certs/stranger.key}",
        ("ca.pem", "client.pem", "stranger.key"),
    )
    with pytest.raises(ClusterTlsError, match="the key does not belong to the certificate"):
        client_config(cluster_of(d), environ={})  # type: ignore[arg-type]


# ---------------------------------------------------------------- what is definitive


def verification_error(code: int, message: str) -> ssl.SSLCertVerificationError:
    e = ssl.SSLCertVerificationError(1, f"[SSL: CERTIFICATE_VERIFY_FAILED] {message}")
    e.verify_code = code
    e.verify_message = message
    return e


def alert(reason: str) -> ssl.SSLError:
    e = ssl.SSLError(1, f"[SSL: {reason}] alert")
    e.reason = reason
    return e


def wrapped(inner: BaseException) -> BaseException:
    """As kafka-python hands it over: KafkaConnectionError(SSLError), raised while handling."""
    import kafka.errors as kerr

    try:
        try:
            raise inner
        except Exception as e:
            raise kerr.KafkaConnectionError(f"Handshake failed: {e}") from None
    except Exception as outer:
        outer.__context__ = inner
        return outer


@pytest.mark.parametrize(
    "exc",
    [
        verification_error(10, "certificate has expired"),
        verification_error(20, "unable to get local issuer certificate"),
        verification_error(64, "IP address mismatch"),
        alert("TLSV13_ALERT_CERTIFICATE_REQUIRED"),
        alert("TLSV1_ALERT_UNKNOWN_CA"),
        alert("WRONG_VERSION_NUMBER"),
    ],
    ids=lambda e: getattr(e, "reason", None) or str(getattr(e, "verify_code", "")),
)
def test_a_refused_certificate_is_definitive_however_deep_kafka_python_wraps_it(
    exc: ssl.SSLError,
) -> None:
    import kafka.errors as kerr

    from kgitops.cluster.kafka.errors import retriable_exc

    for e in (exc, wrapped(exc), kerr.KafkaConnectionError(exc)):
        assert is_definitive(e)
        assert not retriable_exc(e)
        err = TlsAdvice("tls", "b:9093", "SSL", "topics/tls/certs/ca.pem").explain(e)
        assert err is not None and str(err).startswith("cluster 'tls' at b:9093: TLS: ")
        assert "\n" not in str(err)


@pytest.mark.parametrize(
    "exc",
    [
        ssl.SSLEOFError(8, "EOF occurred in violation of protocol"),
        ConnectionResetError(104, "Connection reset by peer"),
        alert("TLSV1_ALERT_INTERNAL_ERROR"),
    ],
)
def test_an_ending_connection_is_not_taken_for_a_verdict(exc: BaseException) -> None:
    assert not is_definitive(exc)
    assert TlsAdvice("tls", "b:9093", "SSL").explain(exc) is None


def test_an_ending_connection_is_worth_a_probe() -> None:
    import kafka.errors as kerr

    assert is_ambiguous(kerr.KafkaConnectionError(ssl.SSLEOFError(8, "EOF occurred")))
    assert is_ambiguous(kerr.KafkaConnectionError("socket disconnected"))
    assert not is_ambiguous(kerr.KafkaConnectionError("Connection refused"))


def test_a_fifo_as_ca_file_is_refused_without_blocking(tmp_path: Path, tls_certs: Path) -> None:
    d = folder(tmp_path, tls_certs, "{caFile: certs/ca.pem}", files=())
    os.mkfifo(d / "certs" / "ca.pem")  # OpenSSL would wait on it for ever
    with pytest.raises(KgitopsError, match="a FIFO, not a regular file"):
        client_config(cluster_of(d), environ={})  # type: ignore[arg-type]


def test_an_encrypted_key_of_another_certificate_is_named_as_such_not_as_a_bad_password(
    tmp_path: Path, tls_certs: Path
) -> None:
    d = folder(
        tmp_path,
        tls_certs,
        "{caFile: certs/ca.pem, certFile: certs/stranger.pem, "
        "keyFile: certs/client-encrypted.key, keyPasswordEnv: TLS_KEY_PASSWORD}",
        ("ca.pem", "stranger.pem", "client-encrypted.key"),
    )
    with pytest.raises(ClusterTlsError, match="the key does not belong to the certificate"):
        client_config(cluster_of(d), environ={"TLS_KEY_PASSWORD": CLIENT_KEY_PASSWORD})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reason", ["SSLV3_ALERT_BAD_CERTIFICATE", "SSLV3_ALERT_CERTIFICATE_UNKNOWN"]
)
def test_a_java_brokers_bad_certificate_alert_with_no_certificate_sent_asks_for_one(
    reason: str,
) -> None:
    """JSSE (JDK 17) answers an empty client certificate with bad_certificate, not TLS 1.3's
    certificate_required (tests/tls/test_tls_real.py meets it on Kafka's MTLS listener)."""
    none_sent = TlsAdvice("tls", "b:9093", "SSL", "ca.pem").explain(alert(reason))
    assert str(none_sent) == (
        "cluster 'tls' at b:9093: TLS: the broker requires a client certificate (mutual TLS) "
        "and none was sent; set security.ssl.certFile and keyFile to the client certificate "
        "and its key"
    )
    sent = TlsAdvice("tls", "b:9093", "SSL", "ca.pem", "certs/client.pem").explain(alert(reason))
    assert "the broker refused the client certificate certs/client.pem (" in str(sent)
