"""``kgitops analyze keys --topic T --cluster DIR`` on the real Kafka cluster: Spark's own
Kafka source reads the topic, and the report is the one ``sample-keys`` + ``analyze keys
--input`` gives for the same records; bounded by time and by a count per partition, over
SASL (SCRAM) as well as PLAINTEXT.

Spark's Kafka source jars are fetched by the code under test (``sparkjars.source_jars``,
Maven Central, cached like the broker's jars), never by the test. The session is the
shared test session, started without them: the command adds them (``ADD JAR``)."""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kgitops.cli import main
from tests.analytics.kafka_topics import create_topic
from tests.helpers import cluster_folder

pytestmark = [pytest.mark.spark, pytest.mark.slow]

USER_ENV = "KGITOPS_TS_USER"
PASSWORD_ENV = "KGITOPS_TS_PASSWORD"
OLD = 3 * 3600 * 1000  # the "old" records are three hours old


def _keys() -> list[bytes | None]:
    """Text keys with a heavy head, binary and empty keys, and null keys, shuffled."""
    keys: list[bytes | None] = [f"acct-{i % 173}".encode() for i in range(2400)]
    keys += [b"whale"] * 300 + [bytes([i % 256, 0xFF, i % 7]) for i in range(200)]
    keys += [b""] * 7 + [None] * 40
    random.Random(5).shuffle(keys)
    return keys


def _produce(bootstrap: str, topic: str, partitions: int) -> dict[str, Any]:
    """The first half of the records three hours old, the rest now; returns each record's
    key, age, value size and where Kafka put it."""
    import kafka

    create_topic(bootstrap, topic, partitions, settle=1.0)
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    keys = _keys()
    now = int(time.time() * 1000)
    futures = []
    for i, key in enumerate(keys):
        old = i < len(keys) // 2
        futures.append(
            (
                key,
                old,
                i % 50,
                producer.send(
                    topic, key=key, value=b"v" * (i % 50), timestamp_ms=now - OLD if old else now
                ),
            )
        )
    producer.flush()
    producer.close()
    sent = [(k, old, size, f.get(timeout=30)) for k, old, size, f in futures]
    return {"sent": sent}


def _folder(path: Path, bootstrap: str, *, sasl: bool = False) -> Path:
    security = (
        "security:\n  protocol: SASL_PLAINTEXT\n"
        f"  sasl: {{mechanism: SCRAM-SHA-512, usernameEnv: {USER_ENV}, "
        f"passwordEnv: {PASSWORD_ENV}}}\n"
        if sasl
        else ""
    )
    return cluster_folder(
        path, "real", bootstrap=bootstrap, extra="unmanagedTopics: ignore\n" + security
    )


def _without_source(report: dict[str, Any]) -> dict[str, Any]:
    """The report minus the fields naming where the keys came from (the file's path, or
    the topic and its cluster)."""
    return {k: v for k, v in report.items() if k not in ("input", "topic")}


def test_the_topic_read_by_spark_gives_the_report_of_a_sample_of_the_same_records(
    spark: Any,
    kafka_cluster: Any,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_prefix + "keys"
    produced = _produce(kafka_cluster.bootstrap, topic, 4)
    folder = _folder(tmp_path / "real", kafka_cluster.bootstrap)

    live = tmp_path / "live.json"
    argv = ["analyze", "keys", "--topic", topic, "--cluster", str(folder)]
    assert main([*argv, "--partitions", "4,6,12", "--out", str(live)]) == 0
    err = capsys.readouterr().err
    assert f"reading 4 partitions of topic {topic} of cluster real (2,947 offsets)" in err
    assert "analysed 2,947 messages" in err

    from kgitops.cluster.kafka.sample import sample_keys
    from kgitops.spec.load import load_specs_or_raise

    counted: list[tuple[int, int]] = []
    cluster = load_specs_or_raise(str(folder)).cluster
    assert cluster is not None
    rows = sample_keys(cluster, topic, 10_000, progress=lambda n, of: counted.append((n, of)))
    assert counted[-1] == (len(rows), 2947) == (2947, 2947)
    assert [n for n, _ in counted] == sorted(n for n, _ in counted)

    sample = tmp_path / "sample.parquet"
    assert main(["sample-keys", str(folder), "--topic", topic, "--out", str(sample)]) == 0
    from_file = tmp_path / "file.json"
    as_sampled = ["--key-column", "key", "--size-column", "bytes", "--current", "4"]
    argv = ["analyze", "keys", "--input", str(sample), *as_sampled, "--partitions", "4,6,12"]
    assert main([*argv, "--out", str(from_file)]) == 0
    topic_report = json.loads(live.read_text())
    file_report = json.loads(from_file.read_text())
    assert _without_source(topic_report) == _without_source(file_report)
    assert topic_report["input"] == f"topic {topic} of cluster real"
    assert topic_report["topic"] == topic and "topic" not in file_report

    # and the figures are the producer's own: Kafka put each keyed record on murmur2's
    # partition, so the per-partition counts for 4 are what each partition received
    sent = produced["sent"]
    keyed = Counter(meta.partition for key, _, _, meta in sent if key is not None)
    assert topic_report["partitionCounts"]["4"]["messages"] == [keyed[p] for p in range(4)]
    assert topic_report["messages"] == len(sent) and topic_report["nullKeys"] == 40
    assert topic_report["current"] == 4  # the live count, unless --current says otherwise
    assert topic_report["hotKeys"][0]["key"] == "whale"
    total = sum(len(key or b"") + size for key, _, size, _ in sent)
    assert sum(topic_report["partitionCounts"]["4"]["bytes"]) + _null_bytes(sent) == total


def _null_bytes(sent: list[Any]) -> int:
    return sum(size for key, _, size, _ in sent if key is None)


def test_since_and_a_count_per_partition_bound_the_read_over_sasl(
    spark: Any,
    kafka_cluster: Any,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user, password = kafka_cluster.credentials()
    monkeypatch.setenv(USER_ENV, user)
    monkeypatch.setenv(PASSWORD_ENV, password)
    topic = topic_prefix + "bounded"
    sent = _produce(kafka_cluster.bootstrap, topic, 3)["sent"]
    folder = _folder(tmp_path / "sasl", kafka_cluster.sasl_bootstrap, sasl=True)
    out = tmp_path / "bounded.json"
    argv = ["analyze", "keys", "--topic", topic, "--cluster", str(folder), "--partitions", "3"]
    bounds = ["--since", "1h", "--max-records-per-partition", "400"]
    assert main([*argv, *bounds, "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert password not in err
    assert "reading" not in err and "analysed" not in err and "starting Spark" not in err
    report = json.loads(out.read_text())

    # the records of the last hour (the new half), then each partition's last 400 of them
    recent: dict[int, list[Any]] = {}
    for key, old, size, meta in sent:
        if not old:
            recent.setdefault(meta.partition, []).append((meta.offset, key, size))
    kept = [r for rows in recent.values() for r in sorted(rows)[-400:]]
    assert report["messages"] == len(kept)
    assert report["nullKeys"] == sum(1 for _, key, _ in kept if key is None)
    keyed = Counter(
        p for p, rows in recent.items() for _, key, _ in sorted(rows)[-400:] if key is not None
    )
    assert report["partitionCounts"]["3"]["messages"] == [keyed[p] for p in range(3)]


def test_spark_reads_the_topic_over_the_clusters_tls_listener(
    spark: Any,
    kafka_cluster: Any,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Spark's Kafka source is a Java client: the CA of cluster.yaml reaches it as PEM text
    (``ssl.truststore.certificates``), and it must verify Kafka's own TLS listener with it."""
    if kafka_cluster.ssl_bootstrap is None:
        # a folder made before the TLS listener (KGITOPS_KAFKA_DIR): `local down`, then `up`
        if os.environ.get("CI"):
            pytest.fail("the test cluster has no TLS listener")
        pytest.skip("this Kafka cluster folder was made before the TLS listener: down, up")
    topic = topic_prefix + "tls"
    sent = _produce(kafka_cluster.bootstrap, topic, 3)["sent"]
    folder = _folder(tmp_path / "tls", kafka_cluster.ssl_bootstrap)
    (folder / "ca.pem").write_bytes(Path(kafka_cluster.ca_file).read_bytes())
    with (folder / "cluster.yaml").open("a") as f:
        f.write("security:\n  protocol: SSL\n  ssl: {caFile: ca.pem}\n")
    out = tmp_path / "tls.json"
    argv = ["analyze", "keys", "--topic", topic, "--cluster", str(folder), "--partitions", "3"]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["messages"] == len(sent)
    keyed = Counter(meta.partition for key, _, _, meta in sent if key is not None)
    assert report["partitionCounts"]["3"]["messages"] == [keyed[p] for p in range(3)]


def test_spark_reads_the_topic_through_a_listener_that_requires_a_client_certificate(
    spark: Any,
    kafka_cluster: Any,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutual TLS through the Java client: the certificate and its encrypted PKCS#8 key that
    `local up` made reach Spark as PEM text with the key's password
    (``ssl.keystore.certificate.chain``, ``ssl.keystore.key``, ``ssl.key.password``), and the
    MTLS listener (``ssl.client.auth=required``) lets the certificate's subject read."""
    if kafka_cluster.mtls_bootstrap is None:
        # a folder made before the MTLS listener (KGITOPS_KAFKA_DIR): `local down`, then `up`
        if os.environ.get("CI"):
            pytest.fail("the test cluster has no MTLS listener")
        pytest.skip("this Kafka cluster folder was made before the MTLS listener: down, up")
    password = kafka_cluster.client_key_password()
    monkeypatch.setenv(PASSWORD_ENV, password)
    topic = topic_prefix + "mtls"
    sent = _produce(kafka_cluster.bootstrap, topic, 3)["sent"]
    folder = _folder(tmp_path / "mtls", kafka_cluster.mtls_bootstrap)
    for name, source in (
        ("ca.pem", kafka_cluster.ca_file),
        ("client.pem", kafka_cluster.client_cert_file),
        ("client.key", kafka_cluster.client_key_file),
    ):
        (folder / name).write_bytes(Path(source).read_bytes())
    assert b"BEGIN ENCRYPTED PRIVATE KEY" in (folder / "client.key").read_bytes()
    with (folder / "cluster.yaml").open("a") as f:
        f.write(
            "security:\n  protocol: SSL\n  ssl: {caFile: ca.pem, certFile: client.pem, "
            f"keyFile: client.key, keyPasswordEnv: {PASSWORD_ENV}}}\n"
        )
    out = tmp_path / "mtls.json"
    argv = ["analyze", "keys", "--topic", topic, "--cluster", str(folder), "--partitions", "3"]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    assert password not in capsys.readouterr().err
    report = json.loads(out.read_text())
    # the figures are the producer's own, as over PLAINTEXT (the first test)
    assert report["input"] == f"topic {topic} of cluster real"
    assert report["messages"] == len(sent) and report["nullKeys"] == 40
    keyed = Counter(meta.partition for key, _, _, meta in sent if key is not None)
    assert report["partitionCounts"]["3"]["messages"] == [keyed[p] for p in range(3)]
    assert report["hotKeys"][0]["key"] == "whale"
    total = sum(len(key or b"") + size for key, _, size, _ in sent)
    assert sum(report["partitionCounts"]["3"]["bytes"]) + _null_bytes(sent) == total
