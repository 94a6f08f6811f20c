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
    code, _, err = _cli("apply", folder, "--yes")
    assert code == 1 and len(err.splitlines()) == 1 and expected in err, err
    import kafka

    consumer = kafka.KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap)
    try:
        assert topic not in consumer.topics()
    finally:
        consumer.close()
