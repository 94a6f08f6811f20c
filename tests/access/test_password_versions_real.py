"""The passwordVersion and owner records on Apache Kafka (the ``kafka_cluster`` fixture), read
with kafka-python's ``KafkaConsumer`` and written with its ``KafkaProducer(acks="all")``
(kgitops/cluster/kafka/topiclog.py), logged in as the admin client is: over the SASL
listener (SCRAM-SHA-512), where Kafka enforces ACLs.

Each test names its own version topic (``passwordVersionTopic``), so the shared cluster's
other records never mix in; the owner topic is one for the cluster, so its test adds records
under names of its own."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from kgitops.access import Acl, scram_salted_password
from kgitops.cluster.kafka import version_records as r
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.port import NewTopic, ScramUpsert
from kgitops.errors import ClusterAuthError, ClusterError
from kgitops.model import OWNER_TOPIC, ClusterSpec, SaslSpec, SecuritySpec
from tests.helpers import eventually

if TYPE_CHECKING:
    from kgitops.cluster.kafka.localcluster import KafkaCluster

MECH = "SCRAM-SHA-512"
USER_ENV, PASSWORD_ENV = "KGITOPS_PV_USER", "KGITOPS_PV_PASSWORD"


def _spec(bootstrap: str, topic: str) -> ClusterSpec:
    return ClusterSpec(
        name="real",
        directory=".",
        bootstrap_servers=tuple(bootstrap.split(",")),
        request_timeout_ms=15000,
        password_version_topic=topic,
        security=SecuritySpec(
            protocol="SASL_PLAINTEXT",
            sasl=SaslSpec(MECH, username_env=USER_ENV, password_env=PASSWORD_ENV),
            allow_cleartext_credentials=True,  # a loopback test cluster has no TLS listener
        ),
    )


def _admin(cluster: KafkaCluster, topic: str, user: str, password: str) -> KafkaAdmin:
    return KafkaAdmin(
        _spec(cluster.sasl_bootstrap, topic), environ={USER_ENV: user, PASSWORD_ENV: password}
    )


@pytest.fixture
def admin(kafka_cluster: KafkaCluster, topic_prefix: str) -> Iterator[KafkaAdmin]:
    """The cluster's admin super user over SASL, with a version topic of this test's own."""
    a = _admin(kafka_cluster, f"{topic_prefix}pv", *kafka_cluster.credentials())
    try:
        yield a
    finally:
        topic = a._access.versions.name
        if topic in a.describe([topic]).topics:
            a.delete_topics([topic])
        a.close()


def _upsert(name: str, version: int | None, iterations: int = 8192) -> ScramUpsert:
    salt = secrets.token_bytes(32)
    salted = scram_salted_password(MECH, secrets.token_urlsafe(12), salt, iterations)
    return ScramUpsert(name, MECH, iterations, salt, salted, version)


def _produce(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], **kw: Any) -> None:
    """Records written by another program (kafka-python's producer, PLAINTEXT listener), in
    one batch (a batch of one small record is not worth compressing: kafka-python then
    writes it uncompressed)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), linger_ms=200, **kw)
    try:
        sent = [producer.send(topic, key=k, value=v, partition=0) for k, v in records]
        assert {f.get(timeout=15).offset for f in sent}  # all written
    finally:
        producer.close()


def test_records_round_trip_over_sasl_last_one_winning_and_a_tombstone_removing_one(
    admin: KafkaAdmin,
) -> None:
    topic = admin._access.versions.name
    assert admin._access.versions.read_versions() == {}  # no topic: no records, and none created
    assert topic not in admin.describe([topic]).topics
    hostile = 'a"b\nc\u2028'
    assert (
        admin._access.versions.write_versions([_upsert(hostile, 2, 4096), _upsert("x", 1)]) is None
    )
    live = admin.describe([topic]).topics[topic]
    assert list(live.partitions) == [0] and len(live.partitions[0].replicas) == 3
    assert live.config == {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "min.insync.replicas": "2",
    }
    assert admin._access.versions.read_versions() == {
        (hostile, MECH): r.VersionRecord(2, 4096, 0),
        ("x", MECH): r.VersionRecord(1, 8192, 1),
    }
    assert admin._access.versions.write_versions([_upsert("x", 3), _upsert(hostile, None)]) is None
    assert admin._access.versions.read_versions() == {("x", MECH): r.VersionRecord(3, 8192, 2)}


def test_twenty_thousand_records_are_written_in_order_in_batches_kafka_accepts(
    admin: KafkaAdmin,
) -> None:
    """~2.3 MB of records: more than Kafka's default 1 MiB a batch (message.max.bytes), so
    one batch would be refused with RECORD_TOO_LARGE."""
    ups = [ScramUpsert(f"user-{i:06d}", MECH, 8192, b"s", b"p", 2) for i in range(20_000)]
    ups[7] = ScramUpsert("user-000007", MECH, 8192, b"s", b"p", 5)  # no secret in a record
    assert admin._access.versions.write_versions(ups) is None
    got = admin._access.versions.read_versions()
    assert len(got) == 20_000
    assert [got[(u.name, MECH)].offset for u in ups] == list(range(20_000))  # in order
    assert got[("user-000007", MECH)].version == 5


def test_a_batch_another_writer_compressed_with_a_codec_missing_here_is_skipped(
    kafka_cluster: KafkaCluster, admin: KafkaAdmin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A topic whose compression.type is ``producer`` keeps each writer's codec; a gzip batch
    read where kafka-python has no gzip (``kafka.codec.has_gzip`` False) is skipped, and the
    read goes on past it."""
    import kafka.codec

    topic = admin._access.versions.name
    layout = {0: (1, 2, 3)}
    configs = {"cleanup.policy": "compact", "compression.type": "producer"}
    assert admin.create_topics([NewTopic(topic, layout, configs)]) == {topic: None}
    assert admin._access.versions.write_versions([_upsert("a", 1), _upsert("b", 3)]) is None
    hidden = [(r.record_key(f"h{i}", MECH), r.record_value(9, 8192)) for i in range(50)]
    hidden.append((r.record_key("a", MECH), r.record_value(2, 8192)))
    _produce(kafka_cluster.bootstrap, topic, hidden, compression_type="gzip")
    assert admin._access.versions.write_versions([_upsert("b", 4)]) is None
    assert (
        admin._access.versions.read_versions()[("a", MECH)].version == 2
    )  # gzip is installed here

    monkeypatch.setattr(kafka.codec, "has_gzip", lambda: False)
    monkeypatch.setitem(r.CODECS, 1, ("gzip", lambda: False, "gzip"))
    got = admin._access.versions.read_versions()
    assert got[("b", MECH)] == r.VersionRecord(4, 8192, got[("b", MECH)].offset)
    assert not any(name.startswith("h") for name, _ in got)  # the hidden batch: unread
    problem = got[("a", MECH)].problem  # recorded before the batch: may be stale
    assert problem.startswith("the batch at offsets 2-") and "cannot be decoded" in problem
    assert "UnsupportedCodecError" in problem and "pip install gzip" in problem


def test_a_principal_without_read_is_told_in_one_line_which_rights_to_grant(
    kafka_cluster: KafkaCluster, admin: KafkaAdmin, topic_prefix: str
) -> None:
    """The consumer's TOPIC_AUTHORIZATION_FAILED is kgitops' one line, naming the topic and
    the rights, never kafka-python's exception; the password appears nowhere."""
    user, password = f"{topic_prefix}reader", secrets.token_urlsafe(16)
    salt = secrets.token_bytes(32)
    cred = ScramUpsert(
        user, MECH, 8192, salt, scram_salted_password(MECH, password, salt, 8192), None
    )
    assert admin.upsert_scram_users([cred]) == {cred.key: None}
    grants = [
        Acl(f"User:{user}", "topic", OWNER_TOPIC, "literal", op)
        for op in ("describe", "describe_configs")
    ]
    assert all(err is None for err in admin.create_acls(grants).values())
    admin.record_owners({f"{topic_prefix}someone": None})  # the topic exists
    try:

        def attempt() -> str:
            limited = _admin(kafka_cluster, f"{topic_prefix}pv", user, password)
            try:
                limited.read_owners()
                return "read"
            except ClusterError as exc:
                return f"{type(exc).__name__}: {exc}"
            finally:
                limited.close()

        said = eventually(attempt, lambda s: "Fetch" in s)
        assert said.startswith(
            f"ClusterAuthError: cannot read the owner records (topic {OWNER_TOPIC}): Fetch: "
            "authentication or authorisation failed"
        ), said
        assert "grant its principal Describe, DescribeConfigs and Read" in said
        assert "\n" not in said and password not in said

        # nor may it write: each record's refusal is one kgitops error, no retry to a deadline
        limited = _admin(kafka_cluster, f"{topic_prefix}pv", user, password)
        try:
            started = time.monotonic()
            with pytest.raises(ClusterAuthError) as info:
                limited.record_owners({f"{topic_prefix}someone": None})
            assert time.monotonic() - started < 10
        finally:
            limited.close()
        assert str(info.value).startswith("Produce: authentication or authorisation failed")
        assert "TopicAuthorizationFailedError" in str(info.value)
        assert "\n" not in str(info.value) and password not in str(info.value)
    finally:
        admin.delete_acls(grants)


def test_the_preflight_refuses_a_principal_that_may_not_write_the_topic(
    kafka_cluster: KafkaCluster, admin: KafkaAdmin, topic_prefix: str
) -> None:
    """Metadata v8+ reports the principal's operations on the topic (kafka-python 3.0 names
    the field ``authorized_operations``: KafkaAdminClient.describe_topics reads it). A
    principal that may create the topic but not write it is refused by apply's preflight in
    one line, the topic named and said to be new; one that finds it existing is refused
    without that. No password in either."""
    topic = f"{topic_prefix}pv-nowrite"  # not the fixture's: writing the user records there
    user, password = f"{topic_prefix}nowrite", secrets.token_urlsafe(16)
    salt = secrets.token_bytes(32)
    cred = ScramUpsert(
        user, MECH, 8192, salt, scram_salted_password(MECH, password, salt, 8192), None
    )
    assert admin.upsert_scram_users([cred]) == {cred.key: None}
    grants = [
        Acl(f"User:{user}", "topic", topic, "literal", op)
        for op in ("create", "describe", "describe_configs", "read")
    ]
    assert all(err is None for err in admin.create_acls(grants).values())
    try:

        def preflight() -> str:
            limited = _admin(kafka_cluster, topic, user, password)
            try:
                limited.ready_scram_versions()
                return "ready"
            except ClusterError as exc:
                return f"{type(exc).__name__}: {exc} changed={getattr(exc, 'changed', None)}"
            finally:
                limited.close()

        said = eventually(preflight, lambda s: "may not" in s)
        assert said.startswith(
            f"ClusterRequestError: the principal kgitops logs in as may not write the "
            f"passwordVersion topic {topic} (created just now, empty): "
        ), said
        assert said.endswith("grant it Write on that topic changed=True"), said
        assert "\n" not in said and password not in said
        live = admin.describe([topic]).topics[topic]  # created by the preflight, as kgitops does
        assert live.config["cleanup.policy"] == "compact" and len(live.partitions) == 1

        again = preflight()  # the topic exists now: nothing was changed this time
        assert f"may not write the passwordVersion topic {topic}: " in again, again
        assert again.endswith("changed=False"), again
    finally:
        admin.delete_acls(grants)
        if topic in admin.describe([topic]).topics:
            admin.delete_topics([topic])
