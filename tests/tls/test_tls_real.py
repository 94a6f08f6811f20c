"""kgitops over Kafka's own TLS listener (the local cluster's SSL port, its certificate
signed by the CA in ``tls/ca.pem``): plan, apply and a clean re-plan, the result read back
by kafka-python over TLS, and the one-line verdicts for a foreign CA and for a plaintext
client on the TLS port. The stunnel tests (tests/tls) cover the rest of the TLS matrix."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cluster_folder
from tests.helpers import run_cli as _cli


def _folder(path: Path, bootstrap: str, ca: bytes, security: str, topic: str) -> str:
    topics = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {topic}\npartitions: 4\n"
        "replicationFactor: 3\nconfig:\n  retention.ms: 7200000\n"
    )
    extra = f"unmanagedTopics: ignore\n{security}"
    cluster_folder(path, "tls", bootstrap=bootstrap, extra=extra, files={"topics.yaml": topics})
    (path / "ca.pem").write_bytes(ca)
    return str(path)


@pytest.fixture
def tls(kafka_cluster: Any) -> tuple[str, bytes]:
    if kafka_cluster.ssl_bootstrap is None:
        # a folder made before the TLS listener (KGITOPS_KAFKA_DIR): `local down`, then `up`
        if os.environ.get("CI"):
            pytest.fail("the test cluster has no TLS listener")
        pytest.skip("this Kafka cluster folder was made before the TLS listener: down, up")
    return kafka_cluster.ssl_bootstrap, Path(kafka_cluster.ca_file).read_bytes()


def test_plan_apply_replan_over_kafkas_tls_listener(
    kafka_cluster: Any, tls: tuple[str, bytes], topic_prefix: str, tmp_path: Path
) -> None:
    bootstrap, ca = tls
    topic = topic_prefix + "tls"
    ssl = "security:\n  protocol: SSL\n  ssl: {caFile: ca.pem}\n"
    folder = _folder(tmp_path / "tls", bootstrap, ca, ssl, topic)
    code, out, err = _cli("plan", folder, "--detailed-exitcode")
    assert code == 2 and f"+ create_topic {topic}" in out, err
    code, out, err = _cli("apply", folder, "--yes")
    assert code == 0, err
    code, out, err = _cli("plan", folder, "--detailed-exitcode")
    assert code == 0, out + err

    import kafka
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = kafka.KafkaAdminClient(
        bootstrap_servers=bootstrap.split(","),
        security_protocol="SSL",
        ssl_cafile=str(tmp_path / "tls" / "ca.pem"),
        client_id="tls-read-back",
    )
    try:
        (described,) = admin.describe_topics([topic])
        configs = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
        )
    finally:
        admin.close()
    replicas = [p["replica_nodes"] for p in described["partitions"]]
    assert len(replicas) == 4 and all(len(set(r)) == 3 for r in replicas)
    assert configs["topic"][topic]["retention.ms"]["value"] == "7200000"


@pytest.mark.parametrize("case", ["foreign CA", "plaintext client"])
def test_a_wrong_tls_setting_is_one_line_and_creates_nothing(
    kafka_cluster: Any, tls: tuple[str, bytes], topic_prefix: str, tmp_path: Path, case: str
) -> None:
    bootstrap, ca = tls
    topic = topic_prefix + "never"
    if case == "foreign CA":
        from kgitops.cluster.kafka.localtls import make_keystore
        from kgitops.cluster.kafka.runtime import find_java

        make_keystore(str(tmp_path / "other"), find_java(), "another-ca-password")
        ca = (tmp_path / "other" / "tls" / "ca.pem").read_bytes()
        security = "security:\n  protocol: SSL\n  ssl: {caFile: ca.pem}\n"
        expected = "TLS: the broker's certificate is not signed by the CA in security.ssl.caFile"
    else:
        security = ""
        expected = "is a TLS listener (it answered a TLS handshake) but security.protocol is"
    folder = _folder(tmp_path / "tls", bootstrap, ca, security, topic)
    _refused_and_nothing_created(kafka_cluster, folder, topic, expected)


# ------------------------------------------------------------------ mutual TLS

KEY_PASSWORD_ENV = "KGITOPS_TEST_MTLS_KEY_PASSWORD"
MTLS = (
    "security:\n  protocol: SSL\n  ssl: {caFile: ca.pem, certFile: client.pem, "
    f"keyFile: client.key, keyPasswordEnv: {KEY_PASSWORD_ENV}}}\n"
)


@pytest.fixture
def mtls(kafka_cluster: Any) -> str:
    """The listeners that require a client certificate signed by the cluster's CA."""
    if kafka_cluster.mtls_bootstrap is None:
        # a folder made before the MTLS listener (KGITOPS_KAFKA_DIR): `local down`, then `up`
        if os.environ.get("CI"):
            pytest.fail("the test cluster has no MTLS listener")
        pytest.skip("this Kafka cluster folder was made before the MTLS listener: down, up")
    return str(kafka_cluster.mtls_bootstrap)


def _refused_and_nothing_created(
    kafka_cluster: Any, folder: str, topic: str, expected: str
) -> None:
    """`apply` of ``folder`` fails in the one line holding ``expected``, and the cluster (read
    through its PLAINTEXT listener) has no ``topic``."""
    code, _, err = _cli("apply", folder, "--yes")
    assert code == 1 and len(err.splitlines()) == 1 and expected in err, err
    import kafka

    consumer = kafka.KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap)
    try:
        assert topic not in consumer.topics()
    finally:
        consumer.close()


def _client_files(folder: Path, cert: str, key: str) -> None:
    (folder / "client.pem").write_bytes(Path(cert).read_bytes())
    (folder / "client.key").write_bytes(Path(key).read_bytes())


@pytest.mark.parametrize("key", ["encrypted", "unencrypted"])
def test_apply_over_the_listener_that_requires_the_clusters_client_certificate(
    kafka_cluster: Any,
    mtls: str,
    topic_prefix: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
) -> None:
    """The certificate and the encrypted key that `local up` made (or that key decrypted by
    openssl, the line local-broker.md gives): the broker takes the subject as the principal
    (a super user), so the topic is created."""
    password = kafka_cluster.client_key_password()
    monkeypatch.setenv(KEY_PASSWORD_ENV, password)
    topic = topic_prefix + "mtls"
    ca = Path(kafka_cluster.ca_file).read_bytes()
    security = MTLS
    key_file = kafka_cluster.client_key_file
    if key == "unencrypted":
        import subprocess

        from tlslab import need

        key_file = str(tmp_path / "client-plain.key")
        subprocess.run(
            [need("openssl", "openssl"), "pkcs8", "-in", kafka_cluster.client_key_file,
             "-passin", f"env:{KEY_PASSWORD_ENV}", "-out", key_file],
            check=True, capture_output=True,
        )  # fmt: skip
        assert Path(key_file).read_text().startswith("-----BEGIN PRIVATE KEY-----\n")
        security = MTLS.replace(f", keyPasswordEnv: {KEY_PASSWORD_ENV}", "")
        assert "keyPasswordEnv" not in security
    folder = _folder(tmp_path / "mtls", mtls, ca, security, topic)
    _client_files(Path(folder), kafka_cluster.client_cert_file, key_file)
    code, out, err = _cli("apply", folder, "--yes")
    assert code == 0, out + err
    assert password not in out + err
    code, out, err = _cli("plan", folder, "--detailed-exitcode")
    assert code == 0, out + err

    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap.split(","))
    try:
        (described,) = admin.describe_topics([topic])
    finally:
        admin.close()
    assert described["error_code"] == 0 and len(described["partitions"]) == 4


@pytest.mark.parametrize("case", ["no certificate", "another CA's certificate"])
def test_the_mtls_listener_refuses_a_client_without_the_cas_certificate_in_one_line(
    kafka_cluster: Any,
    mtls: str,
    topic_prefix: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    topic = topic_prefix + "never"
    ca = Path(kafka_cluster.ca_file).read_bytes()
    if case == "no certificate":  # what the SSL listener takes, on the MTLS port
        security = "security:\n  protocol: SSL\n  ssl: {caFile: ca.pem}\n"
        folder = _folder(tmp_path / "mtls", mtls, ca, security, topic)
        expected = "TLS: the broker requires a client certificate (mutual TLS) and none was sent"
    else:  # a certificate and key as `local up` makes them, signed by another throwaway CA
        from kgitops.cluster.kafka.localtls import make_keystore
        from kgitops.cluster.kafka.runtime import find_java

        other = tmp_path / "other"
        make_keystore(str(other), find_java(), "another-ca-password", "another-key-password")
        monkeypatch.setenv(KEY_PASSWORD_ENV, "another-key-password")
        folder = _folder(tmp_path / "mtls", mtls, ca, MTLS, topic)
        _client_files(Path(folder), str(other / "tls/client.pem"), str(other / "tls/client.key"))
        expected = f"TLS: the broker refused the client certificate {folder}/client.pem ("
    _refused_and_nothing_created(kafka_cluster, folder, topic, expected)
