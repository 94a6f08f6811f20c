"""kgitops over a real TLS listener (stunnel in front of Tansu, see conftest.py), run as the
README and the workflows run it: from the repository root, ``kgitops plan topics/tls``."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import kafka
import pytest
from tlslab import CLIENT_KEY_PASSWORD, TlsLab

from tests import helpers
from tests.helpers import run_cli

BUDGET_S = 10.0  # the connection budget a definitive failure must not wait out
# What "at once" is allowed: half the budget, for a 2-core machine under a load of 20. Measured
# unloaded: 0.01-0.1 s for a certificate verdict, 1.5 s (the stall probe) for Tansu's plaintext
# port, which waits for the rest of a ClientHello instead of closing it as Kafka does.
AT_ONCE_S = BUDGET_S / 2


def cluster_folder(
    repo: Path,
    lab: TlsLab,
    bootstrap: str,
    *,
    protocol: str = "SSL",
    ssl: str = "{caFile: certs/ca.pem}",
    certs: tuple[str, ...] = ("ca.pem",),
    topics: str = "",
) -> str:
    """``repo/topics/tls`` with cluster.yaml, the named certificate files in ``certs/`` and
    ``topics``; returns the folder relative to ``repo`` (the working folder)."""
    d = repo / "topics" / "tls"
    (d / "certs").mkdir(parents=True, exist_ok=True)
    for name in certs:
        shutil.copy(lab.certs / name, d / "certs" / name)
    security = f"security:\n  protocol: {protocol}\n" + (f"  ssl: {ssl}\n" if ssl else "")
    files = {"topics.yaml": topics} if topics else {}
    extra = "unmanagedTopics: ignore\n" + security
    helpers.cluster_folder(d, "tls", bootstrap=bootstrap, extra=extra, files=files)
    return "topics/tls"


def topic(name: str) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 3\n"
        "replicationFactor: 1\nconfig:\n  retention.ms: 3600000\n"
    )


def read_back(lab: TlsLab, bootstrap: str, name: str, **ssl: str) -> dict[str, object]:
    """The topic as kafka-python itself reads it over TLS: partitions and retention."""
    from kafka.admin import ConfigResource, ConfigResourceType

    client = kafka.KafkaAdminClient(
        bootstrap_servers=bootstrap,
        security_protocol="SSL",
        ssl_cafile=str(lab.certs / "ca.pem"),
        client_id="tls-test",
        **ssl,
    )
    try:
        meta = [t for t in client.describe_topics([name]) if t["error_code"] == 0]
        if not meta:
            return {}
        configs = client.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, name)], config_filter="all"
        )
        return {
            "partitions": len(meta[0]["partitions"]),
            "retention.ms": configs["topic"][name]["retention.ms"]["value"],
        }
    finally:
        client.close()


def test_plan_apply_replan_over_tls_from_the_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls_lab: TlsLab, topic_prefix: str
) -> None:
    name = f"{topic_prefix}orders"
    folder = cluster_folder(tmp_path, tls_lab, tls_lab.tls, topics=topic(name))
    monkeypatch.chdir(tmp_path)  # the repository root, as in CI

    code, out, err = run_cli("plan", folder, "--detailed-exitcode")
    assert code == 2 and err.startswith("hint: ") and "kgitops.lock is missing" in err, err
    assert f"+ create_topic {name}" in out
    code, out, err = run_cli("apply", folder, "--yes")
    assert code == 0 and "error" not in err, err  # stderr has the progress
    code, out, err = run_cli("plan", folder, "--detailed-exitcode")
    assert (code, err) == (0, ""), err

    assert read_back(tls_lab, tls_lab.tls, name) == {"partitions": 3, "retention.ms": "3600000"}


def test_mutual_tls_with_an_encrypted_key_whose_password_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls_lab: TlsLab, topic_prefix: str
) -> None:
    name = f"{topic_prefix}payments"
    folder = cluster_folder(
        tmp_path,
        tls_lab,
        tls_lab.mtls,
        ssl="{caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client-encrypted.key, keyPasswordEnv: TLS_KEY_PASSWORD}",
        certs=("ca.pem", "client.pem", "client-encrypted.key"),
        topics=topic(name),
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TLS_KEY_PASSWORD", CLIENT_KEY_PASSWORD)

    outputs = []
    for argv, expected in (
        (("plan", folder, "--detailed-exitcode"), 2),
        (("apply", folder, "--yes"), 0),
        (("plan", folder, "--detailed-exitcode", "--format", "json"), 0),
    ):
        code, out, err = run_cli(*argv)
        assert code == expected and "error" not in err, err
        outputs.append(out + err)
    assert not any(CLIENT_KEY_PASSWORD in o for o in outputs)

    certs = tls_lab.certs
    assert read_back(
        tls_lab,
        tls_lab.mtls,
        name,
        ssl_certfile=str(certs / "client.pem"),
        ssl_keyfile=str(certs / "client.key"),
    ) == {"partitions": 3, "retention.ms": "3600000"}


FAILURES = {
    # case: (listener, protocol, ssl, certs, the error line after "error: cluster 'tls' at ")
    "unknown CA": (
        "foreign",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: the broker's certificate is not signed by the CA in security.ssl.caFile "
        "(topics/tls/certs/ca.pem): unable to get local issuer certificate; set caFile to the "
        "CA that signed the brokers' certificates",
    ),
    "hostname mismatch": (
        "wronghost",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: the broker's certificate does not name the host connected to (IP address "
        "mismatch, certificate is not valid for '127.0.0.1'); use in bootstrapServers (and in "
        "the brokers' advertised listeners) a host name or IP address that the certificate's "
        "subjectAltName lists",
    ),
    "expired certificate": (
        "expired",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: the broker's certificate has expired; renew the broker's certificate "
        "(or check this machine's clock)",
    ),
    "missing client certificate": (
        "mtls",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: the broker requires a client certificate (mutual TLS) and none was "
        "sent; set security.ssl.certFile and keyFile to the client certificate and its key",
    ),
    "client certificate from another CA": (
        "mtls",
        "SSL",
        "{caFile: certs/ca.pem, certFile: certs/stranger.pem, keyFile: certs/stranger.key}",
        ("ca.pem", "stranger.pem", "stranger.key"),
        "{addr}: TLS: the broker refused the client certificate topics/tls/certs/stranger.pem "
        "(unknown ca); check that certFile is signed by a CA the broker trusts and is still "
        "valid",
    ),
    "expired client certificate": (
        "mtls",
        "SSL",
        "{caFile: certs/ca.pem, certFile: certs/expired-client.pem, keyFile: certs/client.key}",
        ("ca.pem", "expired-client.pem", "client.key"),
        "{addr}: TLS: the broker refused the client certificate "
        "topics/tls/certs/expired-client.pem (certificate expired); check that certFile is "
        "signed by a CA the broker trusts and is still valid",
    ),
    "TLS client, plaintext port": (
        "plain",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: {addr} is a plaintext listener (it answered a Kafka request without "
        "TLS) but security.protocol is SSL; put the brokers' TLS port in bootstrapServers, or "
        "set security.protocol to PLAINTEXT",
    ),
    "TLS client, Kafka's plaintext port": (
        "kafka_plain",
        "SSL",
        "{caFile: certs/ca.pem}",
        ("ca.pem",),
        "{addr}: TLS: {addr} is a plaintext listener (it answered a Kafka request without "
        "TLS) but security.protocol is SSL; put the brokers' TLS port in bootstrapServers, or "
        "set security.protocol to PLAINTEXT",
    ),
    "plaintext client, TLS port": (
        "tls",
        "PLAINTEXT",
        "",
        (),
        "{addr}: TLS: {addr} is a TLS listener (it answered a TLS handshake) but "
        "security.protocol is PLAINTEXT; set security.protocol to SSL (with "
        "security.ssl.caFile), or put the plaintext port in bootstrapServers",
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_definitive_tls_failure_is_one_line_at_once_and_never_retried(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls_lab: TlsLab
) -> None:
    listener, protocol, ssl, certs, expected = FAILURES[case]
    addr = getattr(tls_lab, listener)
    folder = cluster_folder(tmp_path, tls_lab, addr, protocol=protocol, ssl=ssl, certs=certs)
    monkeypatch.chdir(tmp_path)

    start = time.monotonic()
    code, _, err = run_cli("plan", folder)
    took = time.monotonic() - start

    assert code == 1
    assert err == "error: cluster 'tls' at " + expected.format(addr=addr) + "\n"
    assert took < AT_ONCE_S < BUDGET_S


def test_a_client_certificate_demanded_after_the_bootstrap_fails_at_once_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls_lab: TlsLab
) -> None:
    # The bootstrap listener takes no client certificate; the broker it names does.
    folder = cluster_folder(tmp_path, tls_lab, tls_lab.mtls_front)
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    code, _, err = run_cli("plan", folder)
    assert code == 1
    assert "TLS: the broker requires a client certificate (mutual TLS)" in err
    assert len(err.splitlines()) == 1
    assert time.monotonic() - start < AT_ONCE_S


@pytest.mark.parametrize("case", ["unknown CA", "TLS client, plaintext port"])
def test_sample_keys_meets_the_same_verdicts_and_never_hangs(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls_lab: TlsLab
) -> None:
    # The consumer connects under the same guard: before, a TLS client on a plaintext port
    # waited for ever there.
    listener, protocol, ssl, certs, expected = FAILURES[case]
    addr = getattr(tls_lab, listener)
    folder = cluster_folder(tmp_path, tls_lab, addr, protocol=protocol, ssl=ssl, certs=certs)
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    out = str(tmp_path / "keys.parquet")
    code, _, err = run_cli("sample-keys", folder, "--topic", "orders", "--max", "10", "--out", out)
    assert code == 1
    assert err == "error: cluster 'tls' at " + expected.format(addr=addr) + "\n"
    assert time.monotonic() - start < AT_ONCE_S
