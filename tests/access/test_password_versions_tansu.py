"""The passwordVersion records for real, on the local Tansu broker: the topic is created,
written and read back through the Kafka protocol. Tansu's SCRAM APIs are stubs (Describe's
answer is cut short and never decodes, Alter answers success and stores nothing: see
docs/access.md), so the credentials themselves are kept by ``KafkaScram``, which answers
AlterUserScramCredentials and DescribeUserScramCredentials (their access probes included)
as Kafka's controller does, through kafka-python's real response classes; everything else
(the version topic, Metadata, Produce, Fetch) is Tansu's.

The lifecycle runs through the CLI (plan, apply, plan) and asserts the final state: the
credentials KafkaScram holds and the records the topic holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from kgitops.cli import main
from kgitops.cluster.kafka import version_records as r
from kgitops.cluster.kafka.access import MECHANISMS
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.logtopic import Described, LogTopic
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.port import ScramUpsert
from kgitops.errors import ClusterTimeout
from kgitops.model import ClusterSpec, SecuritySpec
from tests.helpers import cluster_folder

TIMEOUT_MS = 2500
PASSWORD = "correct horse battery staple"
USER = 'orders "app"'  # quotes: a key is JSON, never a string pasted together
MECH = "SCRAM-SHA-512"

_BY_CODE = {code: name for name, code in MECHANISMS.items()}


class KafkaScram:
    """SCRAM credentials as Kafka keeps them (mechanism, iterations, salt, salted password),
    answering the two SCRAM requests with kafka-python's response classes."""

    def __init__(self) -> None:
        self.creds: dict[tuple[str, str], tuple[int, bytes]] = {}
        self.writes = 0

    def answer(self, request: Any) -> Any:
        if isinstance(request, DescribeUserScramCredentialsRequest):
            R = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
            known = sorted({u for u, _ in self.creds})
            # every user, or those named: an unknown one is RESOURCE_NOT_FOUND (91)
            asked = [u.name for u in request.users] if request.users else known
            return DescribeUserScramCredentialsResponse(
                throttle_time_ms=0,
                error_code=0,
                error_message=None,
                results=[
                    R(
                        user=u,
                        error_code=0 if u in known else 91,
                        error_message=None,
                        credential_infos=[
                            R.CredentialInfo(mechanism=MECHANISMS[m], iterations=it)
                            for (name, m), (it, _) in sorted(self.creds.items())
                            if name == u
                        ],
                    )
                    for u in asked
                ],
            )
        assert isinstance(request, AlterUserScramCredentialsRequest)
        U = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
        for up in request.upsertions:
            self.creds[(up.name, _BY_CODE[up.mechanism])] = (up.iterations, bytes(up.salt))
            self.writes += 1
        return AlterUserScramCredentialsResponse(
            throttle_time_ms=0,
            results=[
                U(user=up.name, error_code=0, error_message=None) for up in request.upsertions
            ],
        )


@pytest.fixture
def scram(monkeypatch: pytest.MonkeyPatch) -> KafkaScram:
    """The SCRAM requests of every KafkaAdmin go to a ``KafkaScram``; all others to Tansu."""
    fake = KafkaScram()
    real = Transport.send

    def send(self: Transport, request: Any, *args: Any, **kwargs: Any) -> Any:
        scram_requests = (DescribeUserScramCredentialsRequest, AlterUserScramCredentialsRequest)
        if isinstance(request, scram_requests):
            return fake.answer(request)
        return real(self, request, *args, **kwargs)

    monkeypatch.setattr(Transport, "send", send)
    return fake


def _spec(bootstrap: str, topic: str) -> ClusterSpec:
    return ClusterSpec(
        name="local",
        directory=".",
        bootstrap_servers=(bootstrap,),
        request_timeout_ms=TIMEOUT_MS,
        password_version_topic=topic,
        security=SecuritySpec(allow_cleartext_credentials=True),  # a local broker
    )


@pytest.fixture
def admin(local_broker: str, topic_prefix: str) -> Iterator[KafkaAdmin]:
    a = KafkaAdmin(_spec(local_broker, topic_prefix + "pv"))
    try:
        yield a
    finally:
        a.close()


def _raw(admin: KafkaAdmin, records: list[tuple[bytes, bytes | None]]) -> None:
    """Write records to the version topic as another program would (a topic of the cluster
    anyone with Write on it can write), with kafka-python's own producer."""
    from kafka import KafkaProducer

    admin._access.versions.topic.ready(create=True, writing=True)
    producer = KafkaProducer(bootstrap_servers=list(admin._spec.bootstrap_servers))
    try:
        for k, v in records:
            producer.send(admin._access.versions.name, key=k, value=v, partition=0)
        producer.flush(timeout=10)
    finally:
        producer.close()


def _stored(bootstrap: str, topic: str, partition: int = 0) -> list[tuple[bytes, bytes]]:
    """(key, value) of every record of the partition, read with kafka-python's consumer."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        out: list[tuple[bytes, bytes]] = []
        while consumer.position(tp) < end:
            for rec in consumer.poll(timeout_ms=500).get(tp, []):
                out.append((rec.key or b"", rec.value or b""))
        return out
    finally:
        consumer.close()


@pytest.mark.slow
def test_records_round_trip_through_the_topic_created_compacted_on_the_first_write(
    admin: KafkaAdmin,
) -> None:
    topic = admin._access.versions.name
    assert admin._access.versions.read_versions() == {}  # no topic: no records, not an error
    assert topic not in admin.describe([topic]).topics  # reading created nothing
    hostile = 'a"b\nc\u2028'
    ups = [
        ScramUpsert(hostile, "SCRAM-SHA-256", 4096, b"s" * 32, b"p" * 32, 2),
        ScramUpsert("x", MECH, 8192, b"s" * 32, b"p" * 64, 1),
    ]
    assert admin._access.versions.write_versions(ups) is None
    live = admin.describe([topic]).topics[topic]
    assert list(live.partitions) == [0]
    assert live.config == {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "min.insync.replicas": "1",
    }
    assert admin._access.versions.read_versions() == {
        (hostile, "SCRAM-SHA-256"): r.VersionRecord(2, 4096, 0),
        ("x", MECH): r.VersionRecord(1, 8192, 1),
    }
    # later writes win; a credential written without a version loses its record
    assert (
        admin._access.versions.write_versions([ScramUpsert("x", MECH, 8192, b"s", b"p", 3)]) is None
    )
    assert (
        admin._access.versions.write_versions(
            [ScramUpsert(hostile, "SCRAM-SHA-256", 4096, b"s", b"p")]
        )
        is None
    )
    assert admin._access.versions.read_versions() == {("x", MECH): r.VersionRecord(3, 8192, 2)}


@pytest.mark.slow
def test_reading_ends_after_many_single_record_batches(admin: KafkaAdmin) -> None:
    for i in range(1, 41):
        assert (
            admin._access.versions.write_versions(
                [ScramUpsert(f"u{i % 7}", MECH, 4096, b"s", b"p", i)]
            )
            is None
        )
    got = admin._access.versions.read_versions()
    assert {k[0]: r.version for k, r in got.items()} == {f"u{i % 7}": i for i in range(34, 41)}


@pytest.mark.slow
def test_hostile_records_in_the_topic_are_notes_never_a_traceback(
    admin: KafkaAdmin, scram: KafkaScram
) -> None:
    for user in ("garbage", "huge", "typed", "good"):
        scram.creds[(user, MECH)] = (8192, b"s")
    _raw(
        admin,
        [
            (r.record_key("garbage", MECH), b"\xff\x00\xfe not json"),
            (r.record_key("huge", MECH), b"9" * 200_000),
            (r.record_key("typed", MECH), b'{"passwordVersion":"2","iterations":8192}'),
            (b"\xff\xfe", r.record_value(9, 8192)),  # not a kgitops key: ignored
            (r.record_key("good", MECH), r.record_value(4, 8192)),
        ],
    )
    got = admin.describe_scram_users()
    assert got[("good", MECH)].password_version == 4
    notes = {u: got[(u, MECH)].version_note for u in ("garbage", "huge", "typed")}
    assert all(got[(u, MECH)].password_version is None for u in notes)
    assert "offset 0" in notes["garbage"] and "not JSON" in notes["garbage"]
    assert "200000 bytes, not a kgitops record" in notes["huge"]
    assert "not positive integers" in notes["typed"]


# ------------------------------------------------------------------ the lifecycle (CLI)


def _folder(tmp: Path, bootstrap: str, topic: str, version: int, iterations: int = 8192) -> None:
    extra = (
        "unmanagedTopics: ignore\n"
        "security: {allowCleartextCredentials: true}  # a local broker, no wire to tap\n"
        f"requestTimeoutMs: {TIMEOUT_MS}\npasswordVersionTopic: {topic}\n"
    )
    user = (
        f"apiVersion: kgitops/v1\nkind: User\nname: '{USER}'\nmechanism: {MECH}\n"
        f"passwordEnv: ORDERS_PW\niterations: {iterations}\npasswordVersion: {version}\n"
    )
    cluster_folder(tmp, "local", bootstrap=bootstrap, extra=extra, files={"users.yaml": user})


def _plan(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code = main(["plan", str(tmp), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return list(json.loads(out)["actions"])


def _apply(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["apply", str(tmp), "--yes"])
    out, err = capsys.readouterr()
    return code, out + err


def _reasons(actions: list[dict[str, Any]]) -> list[str]:
    return [a["reason"] for a in actions if a["type"] == "upsert_user"]


@pytest.mark.slow
def test_a_password_version_bump_rotates_once_on_a_real_cluster_and_a_replan_is_empty(
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    scram: KafkaScram,
    admin: KafkaAdmin,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ORDERS_PW", PASSWORD)
    topic = admin._access.versions.name
    key = (USER, MECH)

    def record() -> r.VersionRecord | None:
        return admin._access.versions.read_versions().get(key)

    # create
    _folder(tmp_path, local_broker, topic, 1)
    assert _reasons(_plan(tmp_path, capsys)) == ["new credential"]
    assert _apply(tmp_path, capsys)[0] == 0
    assert scram.creds[key][0] == 8192 and scram.writes == 1
    assert record() == r.VersionRecord(1, 8192, 0)
    assert _plan(tmp_path, capsys) == []

    # bump -> rotates once (a new salt), recorded; a re-plan is empty
    _folder(tmp_path, local_broker, topic, 2)
    assert _reasons(_plan(tmp_path, capsys)) == ["passwordVersion 1 -> 2"]
    salt = scram.creds[key][1]
    code, text = _apply(tmp_path, capsys)
    assert code == 0, text
    assert scram.writes == 2 and scram.creds[key][1] != salt
    assert record() == r.VersionRecord(2, 8192, 1)
    assert _plan(tmp_path, capsys) == []

    # iterations changed outside kgitops (kafka-configs.sh): written back, re-recorded
    scram.creds[key] = (4096, b"by hand")
    assert _reasons(_plan(tmp_path, capsys)) == ["iterations 4096 -> 8192"]
    assert _apply(tmp_path, capsys)[0] == 0
    assert scram.creds[key][0] == 8192 and record() == r.VersionRecord(2, 8192, 2)
    assert _plan(tmp_path, capsys) == []

    # a record that does not match the credential's iterations counts as none (version 1)
    _raw(admin, [(r.record_key(*key), r.record_value(2, 4096))])
    [reason] = _reasons(_plan(tmp_path, capsys))
    assert reason == (
        "passwordVersion 1 (the record is for 4096 iterations, the credential has 8192: "
        "rewritten outside kgitops) -> 2"
    )
    assert _apply(tmp_path, capsys)[0] == 0
    assert _plan(tmp_path, capsys) == []

    # the record write fails after the credential was written: NOT done, exit 3, and a new
    # plan finishes the job
    _folder(tmp_path, local_broker, topic, 3)
    real_write = TopicLog.write

    def produce_times_out(self: TopicLog, topic: str, records: Any) -> Any:
        return [ClusterTimeout("Produce: the cluster did not answer in time")] * len(records)

    monkeypatch.setattr(TopicLog, "write", produce_times_out)
    writes = scram.writes
    code, text = _apply(tmp_path, capsys)
    assert code == 3, text
    assert "NOT done: + upsert_user" in text
    assert "the credential was written, but its passwordVersion was not recorded" in text
    assert scram.writes == writes + 1  # the credential itself was written
    monkeypatch.setattr(TopicLog, "write", real_write)
    assert record() is not None and record().version == 2  # type: ignore[union-attr]
    assert _reasons(_plan(tmp_path, capsys)) == ["passwordVersion 2 -> 3"]
    assert _apply(tmp_path, capsys)[0] == 0
    assert record() is not None and record().version == 3  # type: ignore[union-attr]
    assert _plan(tmp_path, capsys) == []

    # nothing secret ever reached the topic
    blob = b"".join(k + val for k, val in _stored(local_broker, topic))
    assert PASSWORD.encode() not in blob
    assert all(salt not in blob for _, salt in scram.creds.values())


@pytest.mark.slow
def test_a_credential_kgitops_never_wrote_counts_as_version_1_until_a_bump(
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    scram: KafkaScram,
    admin: KafkaAdmin,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ORDERS_PW", PASSWORD)
    topic = admin._access.versions.name
    scram.creds[(USER, MECH)] = (8192, b"made by kafka-configs.sh")
    _folder(tmp_path, local_broker, topic, 1)
    assert _plan(tmp_path, capsys) == []
    assert scram.writes == 0
    _folder(tmp_path, local_broker, topic, 2)
    assert _reasons(_plan(tmp_path, capsys)) == [f"passwordVersion 1 (no record in {topic}) -> 2"]
    assert main(["plan", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (
        "PASSWORD_VERSION_UNRECORDED" in out and f"{USER} (SCRAM-SHA-512, passwordVersion 2)" in out
    )
    assert _apply(tmp_path, capsys)[0] == 0
    assert admin._access.versions.read_versions() == {(USER, MECH): r.VersionRecord(2, 8192, 0)}
    assert _plan(tmp_path, capsys) == []


@pytest.mark.slow
def test_no_credential_is_written_when_the_version_topic_cannot_be_made(
    local_broker: str, scram: KafkaScram
) -> None:
    """A name the broker refuses stands for any reason the topic cannot be created (no
    Create permission, too few brokers): the credentials stay as they were."""
    admin = KafkaAdmin(_spec(local_broker, "no such topic name!"))
    try:
        results = admin.upsert_scram_users([ScramUpsert("a", MECH, 8192, b"s", b"p", 2)])
    finally:
        admin.close()
    err = results["a " + MECH]
    assert err is not None and "not written: the passwordVersion topic" in str(err)
    assert "\n" not in str(err)
    assert scram.writes == 0 and scram.creds == {}


@pytest.mark.slow
def test_another_programs_topic_named_as_the_version_topic_is_never_written(
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    scram: KafkaScram,
    admin: KafkaAdmin,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kgitops.cluster.port import NewTopic

    monkeypatch.setenv("ORDERS_PW", PASSWORD)
    events = topic_prefix + "payments.events"  # another team's: 3 partitions, delete
    assignment = {p: (admin.describe().brokers[0].id,) for p in range(3)}
    configs = {"cleanup.policy": "delete", "retention.ms": "86400000"}
    assert admin.create_topics([NewTopic(events, assignment, configs)])[events] is None
    scram.creds[(USER, MECH)] = (8192, b"s")
    _folder(tmp_path, local_broker, events, 2)
    assert main(["plan", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"topic {events} exists and is not kgitops' passwordVersion topic (3 partitions, " in err
    assert "cleanup.policy delete, not compact" in err and len(err.strip().splitlines()) == 1
    code, text = _apply(tmp_path, capsys)
    assert code == 1, text
    assert scram.writes == 0  # no credential written
    for p in range(3):  # and nothing appended to their topic
        assert _stored(local_broker, events, p) == []


@pytest.mark.slow
@pytest.mark.parametrize("refusal", ["create", "write"])
def test_a_version_topic_that_cannot_be_written_refuses_apply_before_the_topics_are_created(
    refusal: str,
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    scram: KafkaScram,
    admin: KafkaAdmin,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kgitops.errors import ClusterRequestError

    monkeypatch.setenv("ORDERS_PW", PASSWORD)
    orders = topic_prefix + "orders"
    _folder(tmp_path, local_broker, admin._access.versions.name, 1)
    (tmp_path / "t.yaml").write_text(
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {orders}\npartitions: 1\n"
        "replicationFactor: 1\n"
    )
    if refusal == "create":  # a principal without Create on it

        def no_create(self: KafkaAdmin, topics: Any) -> Any:
            if any(t.name == admin._access.versions.name for t in topics):
                raise ClusterRequestError(
                    "CreateTopics: TOPIC_AUTHORIZATION_FAILED", code="TOPIC_AUTHORIZATION_FAILED"
                )
            return real_create(self, topics)

        real_create = KafkaAdmin.create_topics
        monkeypatch.setattr(KafkaAdmin, "create_topics", no_create)
    else:  # Create allowed, no Write ACL on the new topic: Metadata v8+ says so
        real_describe = LogTopic.describe

        def no_write(self: LogTopic) -> Described:
            return replace(real_describe(self), operations=frozenset({"DESCRIBE", "READ"}))

        monkeypatch.setattr(LogTopic, "describe", no_write)
    code, text = _apply(tmp_path, capsys)
    assert code == 1, text
    # without Write the (new) version topic was created, empty, and nothing else
    tail = "nothing was changed" if refusal == "create" else "(created just now, empty)"
    assert tail in text and text.rstrip().endswith("was changed"), text
    assert "done:" not in text
    assert orders not in admin.describe().topics  # the plan's topic was not created
    assert scram.writes == 0  # nor any credential written
