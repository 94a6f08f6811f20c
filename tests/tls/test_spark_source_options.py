"""A cluster folder's connection as the options of Spark's Kafka source (``analyze keys
--topic T --cluster DIR``): a pure mapping, tested without Spark or a broker. Secrets come
from the environment variables cluster.yaml names, travel only inside the options, and
never show in their repr nor in an error. Real certificates (tlslab.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kgitops.analytics.kafkasource import TopicSource, offsets_json, source_options
from kgitops.analytics.sparkjars import newest_before
from kgitops.cli import main
from kgitops.errors import ClusterError, ClusterTlsError
from kgitops.spec.load import load_specs_or_raise
from tests.helpers import cluster_folder

PASSWORD = 'p"a\\ss-w0rd-secret'  # a quote and a backslash: JAAS must quote them


def _cluster(tmp_path: Path, security: str, files: dict[str, Path] | None = None) -> object:
    d = tmp_path / "prod"
    (d / "certs").mkdir(parents=True, exist_ok=True)
    for name, source in (files or {}).items():
        shutil.copy(source, d / "certs" / name)
    cluster_folder(d, "prod", bootstrap="b1.example:9093,b2.example:9093", extra=security)
    specs = load_specs_or_raise(str(d))
    assert specs.cluster is not None
    return specs.cluster


SCRAM = (
    "security:\n  protocol: SASL_SSL\n"
    "  sasl: {mechanism: SCRAM-SHA-512, usernameEnv: K_USER, passwordEnv: K_PASS}\n"
    "  ssl: {caFile: certs/ca.pem}\n"
)


def test_plaintext_is_the_servers_and_the_protocol_only(tmp_path: Path) -> None:
    options = source_options(_cluster(tmp_path, ""), {})  # type: ignore[arg-type]
    assert dict(options) == {
        "kafka.bootstrap.servers": "b1.example:9093,b2.example:9093",
        "kafka.security.protocol": "PLAINTEXT",
    }


def test_scram_over_tls_is_a_jaas_line_and_the_ca_as_pem_text(
    tmp_path: Path, tls_certs: Path
) -> None:
    cluster = _cluster(tmp_path, SCRAM, {"ca.pem": tls_certs / "ca.pem"})
    options = source_options(cluster, {"K_USER": "svc-keys", "K_PASS": PASSWORD})  # type: ignore[arg-type]
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert options["kafka.sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="svc-keys" password="p\\"a\\\\ss-w0rd-secret";'
    )
    assert options["kafka.ssl.truststore.type"] == "PEM"
    ca = (tls_certs / "ca.pem").read_text().strip()
    assert options["kafka.ssl.truststore.certificates"] == ca
    assert "kafka.ssl.endpoint.identification.algorithm" not in options  # hostname checked
    shown = repr(options) + str(options)
    assert PASSWORD not in shown and "svc-keys" not in shown.split("jaas")[1][:40]
    assert "'kafka.sasl.jaas.config': '***'" in shown


def test_a_client_certificate_travels_as_text_with_its_key_password(
    tmp_path: Path, tls_certs: Path
) -> None:
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key, keyPasswordEnv: K_KEYPASS, checkHostname: false}\n"
    )
    files = {n: tls_certs / n for n in ("ca.pem", "client.pem")}
    files["client.key"] = tls_certs / "client-encrypted-pbe1.key"
    cluster = _cluster(tmp_path, security, files)
    from tlslab import CLIENT_KEY_PASSWORD

    options = source_options(cluster, {"K_KEYPASS": CLIENT_KEY_PASSWORD})  # type: ignore[arg-type]
    assert options["kafka.ssl.keystore.type"] == "PEM"
    assert options["kafka.ssl.keystore.certificate.chain"].startswith("-----BEGIN CERTIFICATE")
    assert options["kafka.ssl.keystore.key"].startswith("-----BEGIN ENCRYPTED PRIVATE KEY")
    assert options["kafka.ssl.key.password"] == CLIENT_KEY_PASSWORD
    assert options["kafka.ssl.endpoint.identification.algorithm"] == ""
    shown = repr(options)
    assert CLIENT_KEY_PASSWORD not in shown and "PRIVATE KEY" not in shown


def test_a_pbes2_encrypted_key_is_refused_with_the_conversion_to_make(
    tmp_path: Path, tls_certs: Path
) -> None:
    """openssl's default encryption of a PKCS#8 key (``pkcs8 -topk8``, ``pkey -aes256``):
    Kafka's Java client fails on it inside Spark ("PBES2 SecretKeyFactory not available"),
    which reached the user as "An error occurred while calling o348.collectToPython"."""
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key, keyPasswordEnv: K_KEYPASS}\n"
    )
    files = {n: tls_certs / n for n in ("ca.pem", "client.pem")}
    files["client.key"] = tls_certs / "client-encrypted.key"
    cluster = _cluster(tmp_path, security, files)
    from tlslab import CLIENT_KEY_PASSWORD

    with pytest.raises(ClusterTlsError) as caught:
        source_options(cluster, {"K_KEYPASS": CLIENT_KEY_PASSWORD})  # type: ignore[arg-type]
    message = str(caught.value)
    assert "the client key is encrypted with PBES2" in message and "\n" not in message
    assert "`openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in KEY -out KEY.pk8`" in message
    assert CLIENT_KEY_PASSWORD not in message


@pytest.mark.parametrize("scheme, refused", [("PBE-SHA1-2DES", True), ("PBE-SHA1-3DES", False)])
def test_a_pbes1_scheme_the_jdk_lacks_is_refused_too(
    tmp_path: Path, tls_certs: Path, scheme: str, refused: bool
) -> None:
    """``openssl pkcs8 -topk8 -v1 PBE-SHA1-2DES``: Kafka's Java client fails on it as on PBES2
    ("1.2.840.113549.1.12.1.4 SecretKeyFactory not available"); 3-key 3DES it reads."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl")
    from tlslab import CLIENT_KEY_PASSWORD

    key = tmp_path / "client.key"
    subprocess.run(
        [openssl, "pkcs8", "-topk8", "-v1", scheme, "-in", str(tls_certs / "client.key"),
         "-passout", "env:K_KEYPASS", "-out", str(key)],
        check=True, capture_output=True, env={"K_KEYPASS": CLIENT_KEY_PASSWORD},
    )  # fmt: skip
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key, keyPasswordEnv: K_KEYPASS}\n"
    )
    files = {"ca.pem": tls_certs / "ca.pem", "client.pem": tls_certs / "client.pem"}
    cluster = _cluster(tmp_path, security, {**files, "client.key": key})
    environ = {"K_KEYPASS": CLIENT_KEY_PASSWORD}
    if not refused:
        assert source_options(cluster, environ)["kafka.ssl.keystore.key"] == key.read_text().strip()  # type: ignore[arg-type]
        return
    with pytest.raises(ClusterTlsError) as caught:
        source_options(cluster, environ)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "the client key is encrypted with PKCS#12's PBE with 2-key 3DES" in message
    assert "`openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in KEY -out KEY.pk8`" in message
    assert "\n" not in message and CLIENT_KEY_PASSWORD not in message


def test_spark_gets_the_key_file_openssl_checked_not_a_key_the_certificate_bundle_holds(
    tmp_path: Path, tls_certs: Path
) -> None:
    """certFile a bundle (the certificate and the PBES2 key it came with), keyFile that key
    converted as the refusal says: OpenSSL (kafka-python) loads keyFile's key, and so must
    Spark. Before, the bundle's key went to Spark and the converted key was refused as PBES2."""
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key, keyPasswordEnv: K_KEYPASS}\n"
    )
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(
        (tls_certs / "client.pem").read_text() + (tls_certs / "client-encrypted.key").read_text()
    )
    files = {"ca.pem": tls_certs / "ca.pem", "client.pem": bundle}
    files["client.key"] = tls_certs / "client-encrypted-pbe1.key"
    cluster = _cluster(tmp_path, security, files)
    from tlslab import CLIENT_KEY_PASSWORD

    options = source_options(cluster, {"K_KEYPASS": CLIENT_KEY_PASSWORD})  # type: ignore[arg-type]
    converted = (tls_certs / "client-encrypted-pbe1.key").read_text().strip()
    assert options["kafka.ssl.keystore.key"] == converted
    chain = options["kafka.ssl.keystore.certificate.chain"]
    assert chain == (tls_certs / "client.pem").read_text().strip()


def test_a_hostile_key_block_in_the_certificate_file_costs_no_time(
    tmp_path: Path, tls_certs: Path
) -> None:
    """A key block OpenSSL never loads (certFile's, beside keyFile) was the one Spark got and
    whose scheme kgitops decoded: an OBJECT IDENTIFIER of 400 KB took ~30 s of CPU
    (quadratic). Now Spark gets keyFile's key, and der.oid refuses such an OID at once."""
    import base64
    import time

    def tlv(tag: int, body: bytes) -> bytes:
        return bytes([tag, 0x83]) + len(body).to_bytes(3, "big") + body

    der = tlv(0x30, tlv(0x30, tlv(0x06, b"\xff" * 400_000 + b"\x0d")) + tlv(0x04, b"x"))
    block = base64.encodebytes(der).decode("ascii")
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(
        (tls_certs / "client.pem").read_text()
        + f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{block}-----END ENCRYPTED PRIVATE KEY-----\n"
    )
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key, keyPasswordEnv: K_KEYPASS}\n"
    )
    files = {"ca.pem": tls_certs / "ca.pem", "client.pem": bundle}
    cluster = _cluster(tmp_path, security, {**files, "client.key": tls_certs / "client.key"})
    started = time.process_time()
    options = source_options(cluster, {"K_KEYPASS": "unused"})  # type: ignore[arg-type]
    assert time.process_time() - started < 3.0
    assert options["kafka.ssl.keystore.key"] == (tls_certs / "client.key").read_text().strip()


def test_a_pkcs1_key_is_refused_with_the_conversion_to_make(
    tmp_path: Path, tls_certs: Path
) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl")
    rsa = tmp_path / "rsa.key"
    subprocess.run(
        [openssl, "genrsa", "-traditional", "-out", str(rsa), "2048"],
        check=True,
        capture_output=True,
    )
    if "BEGIN RSA PRIVATE KEY" not in rsa.read_text():
        pytest.skip("this openssl cannot write a PKCS#1 key")
    cert = tmp_path / "rsa.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-key",
            str(rsa),
            "-out",
            str(cert),
            "-subj",
            "/CN=c",
            "-days",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    security = (
        "security:\n  protocol: SSL\n  ssl: {caFile: certs/ca.pem, certFile: certs/client.pem, "
        "keyFile: certs/client.key}\n"
    )
    cluster = _cluster(
        tmp_path,
        security,
        {"ca.pem": tls_certs / "ca.pem", "client.pem": cert, "client.key": rsa},
    )
    with pytest.raises(ClusterTlsError, match=r"PKCS#8 keys only.*openssl pkcs8 -topk8 -v1"):
        source_options(cluster, {})  # type: ignore[arg-type]


def test_a_mechanism_the_java_client_cannot_take_from_kgitops_is_named(tmp_path: Path) -> None:
    security = (
        "security:\n  protocol: SASL_SSL\n  sasl: {mechanism: OAUTHBEARER, tokenEnv: K_TOKEN}\n"
    )
    cluster = _cluster(tmp_path, security)
    with pytest.raises(ClusterError, match="OAUTHBEARER cannot be handed to Spark") as caught:
        source_options(cluster, {"K_TOKEN": "tok-secret-value-123"})  # type: ignore[arg-type]
    assert "tok-secret-value-123" not in str(caught.value)


def test_an_unset_password_variable_is_named_never_a_value(tmp_path: Path, tls_certs: Path) -> None:
    cluster = _cluster(tmp_path, SCRAM, {"ca.pem": tls_certs / "ca.pem"})
    with pytest.raises(ClusterError, match="K_PASS"):
        source_options(cluster, {"K_USER": "svc-keys"})  # type: ignore[arg-type]


def test_the_read_is_pinned_to_offsets_per_partition(tmp_path: Path) -> None:
    options = source_options(_cluster(tmp_path, ""), {})  # type: ignore[arg-type]
    source = TopicSource("orders", "prod", {1: (5, 9), 0: (0, 3)}, options, min_partitions=8)
    read = source.reader_options()
    assert read["assign"] == '{"orders": [0, 1]}'
    assert read["startingOffsets"] == '{"orders": {"0": 0, "1": 5}}'
    assert read["endingOffsets"] == '{"orders": {"0": 3, "1": 9}}'
    assert read["minPartitions"] == "8"
    assert read["kafka.bootstrap.servers"] == "b1.example:9093,b2.example:9093"
    assert source.records == 7
    assert offsets_json("t", {0: (1, 2)}, 1) == '{"t": {"0": 2}}'
    assert "subscribe" not in read and "startingTimestamp" not in read


def test_the_newest_published_release_before_pysparks_is_chosen() -> None:
    listed = "".join(
        f"<version>{v}</version>"
        for v in ("3.5.6", "4.0.0", "4.1.3", "4.2.0-preview5", "4.2.0", "4.3.0-preview1", "5.0.0")
    )
    assert newest_before(listed, "4.3.0") == "4.2.0"
    assert newest_before(listed, "4.1.0") == "4.0.0"
    assert newest_before(listed, "4.0.0") is None  # never another major version
    assert newest_before(listed, "4.3.0.dev1") is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give the key sample (--input) or a live topic (--topic, --cluster)"),
        (["--input", "k.parquet", "--cluster", "c"], "--input and --cluster are two sources"),
        (["--cluster", "c"], "--cluster needs --topic"),
        (["--input", "k.parquet", "--since", "1h"], "--since needs --cluster"),
        (
            ["--input", "k.parquet", "--max-records-per-partition", "5"],
            "--max-records-per-partition needs --cluster",
        ),
        (["--cluster", "c", "--topic", "t", "--key-column", "k"], "describe a file"),
    ],
)
def test_the_source_flags_are_checked_before_anything_connects(
    tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "k.parquet").write_bytes(b"")
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["analyze", "keys", "--partitions", "6", *argv]) == 1
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["../../x", "4.2.0/../../..", "latest", "4.2.0 ", "-1"])
def test_a_version_override_that_is_no_version_is_one_line_and_names_no_path(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """``KGITOPS_SPARK_KAFKA_VERSION`` names a cache folder (rmtree'd on a failed fetch) and
    goes into a pom: a path or text is refused before either."""
    from kgitops.analytics.sparkjars import VERSION_ENV, chosen_version
    from kgitops.errors import AnalyticsError

    monkeypatch.setenv(VERSION_ENV, value)
    with pytest.raises(AnalyticsError, match="is not a version"):
        chosen_version()
    monkeypatch.setenv(VERSION_ENV, "4.2.0")
    assert chosen_version() == "4.2.0"
