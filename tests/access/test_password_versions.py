"""The passwordVersion records of the kafka-python adapter, without a broker: what a record
holds (never a secret), which record counts for a credential, hostile records, the topic's
layout and shape, and what the adapter does with what a read returns and a write answers
(the reads and writes themselves: tests/cluster/test_topic_log.py without a broker,
tests/access/test_password_versions_real.py on Apache Kafka)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from kgitops.access import ScramCredential, scram_salted_password
from kgitops.cluster.kafka import version_records as r
from kgitops.cluster.kafka import versions as v
from kgitops.cluster.kafka.logtopic import LogTopic
from kgitops.cluster.port import NewTopic, ScramUpsert
from kgitops.errors import ClusterError
from kgitops.model import Broker

A = ("orders-app", "SCRAM-SHA-512")
CRED = ScramCredential("orders-app", "SCRAM-SHA-512", 8192)
TOPIC = "_kgitops-password-versions"


def _key(user: str = A[0], mechanism: str = A[1]) -> bytes:
    return r.record_key(user, mechanism)


def test_a_record_holds_the_user_mechanism_version_and_iterations_never_a_secret() -> None:
    salt = b"S" * 32
    salted = scram_salted_password("SCRAM-SHA-512", "hunter2-secret", salt, 8192)
    upsert = ScramUpsert("orders-app", "SCRAM-SHA-512", 8192, salt, salted, 3)
    [(key, value)] = r.version_records([upsert])
    assert json.loads(key) == {"mechanism": "SCRAM-SHA-512", "user": "orders-app"}
    assert json.loads(value or b"") == {"iterations": 8192, "passwordVersion": 3}
    for secret in (b"hunter2-secret", salt, salted):
        assert secret not in key + (value or b"")


def test_a_credential_written_without_a_version_gets_a_tombstone() -> None:
    upsert = ScramUpsert("a", "SCRAM-SHA-256", 4096, b"s", b"p", None)
    assert r.version_records([upsert]) == [(_key("a", "SCRAM-SHA-256"), None)]
    records = [(0, _key("a", "SCRAM-SHA-256"), r.record_value(2, 4096))]
    records.append((1, _key("a", "SCRAM-SHA-256"), None))
    assert r.latest(records) == {}


@given(st.text(min_size=1, max_size=1000), st.sampled_from(["SCRAM-SHA-256", "SCRAM-SHA-512"]))
def test_any_user_name_round_trips_through_its_key(name: str, mechanism: str) -> None:
    key = r.record_key(name, mechanism)
    assert len(key) <= r.MAX_RECORD_BYTES
    got = r.latest([(0, key, r.record_value(1, 4096))])
    assert got == {(name, mechanism): r.VersionRecord(1, 4096, 0)}


def test_a_user_name_with_quotes_and_newlines_is_one_key_of_its_own() -> None:
    hostile = 'a"},"user":"b\n\r\u2028'
    records = [
        (0, _key(hostile), r.record_value(5, 4096)),
        (1, _key("b"), r.record_value(7, 4096)),
    ]
    assert r.latest(records) == {
        (hostile, A[1]): r.VersionRecord(5, 4096, 0),
        ("b", A[1]): r.VersionRecord(7, 4096, 1),
    }


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 9) | st.none())))
def test_the_last_record_of_a_key_wins_as_compaction_keeps_it(
    writes: list[tuple[str, int | None]],
) -> None:
    records = [
        (i, _key(user), None if ver is None else r.record_value(ver, 4096))
        for i, (user, ver) in enumerate(writes)
    ]
    want: dict[str, int] = {}
    for user, ver in writes:
        if ver is None:
            want.pop(user, None)
        else:
            want[user] = ver
    got = r.latest(records)
    assert {k[0]: r.version for k, r in got.items()} == want


def test_the_record_counts_only_when_its_iterations_are_the_credentials() -> None:
    records = {A: r.VersionRecord(version=4, iterations=8192, offset=7)}
    assert r.join({A: CRED}, records, TOPIC)[A].password_version == 4
    rewritten = ScramCredential("orders-app", "SCRAM-SHA-512", 4096)
    got = r.join({A: rewritten}, records, TOPIC)[A]
    assert got.password_version is None
    assert got.version_note == (
        "the record is for 8192 iterations, the credential has 4096: rewritten outside kgitops"
    )


def test_a_credential_without_a_record_has_no_version_and_says_so() -> None:
    got = r.join({A: CRED}, {}, TOPIC)[A]
    assert got.password_version is None
    assert got.version_note == f"no record in {TOPIC}"
    # a record of another user or mechanism does not count
    other = {("orders-app", "SCRAM-SHA-256"): r.VersionRecord(3, 8192, 0)}
    assert r.join({A: CRED}, other, TOPIC)[A].password_version is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (b"\xff\xfe\x00garbage", "not JSON"),
        (b"x" * (r.MAX_RECORD_BYTES + 1), f"{r.MAX_RECORD_BYTES + 1} bytes, not a kgitops record"),
        (b'{"passwordVersion": "2", "iterations": 8192}', "not positive integers"),
        (b'{"passwordVersion": true, "iterations": 8192}', "not positive integers"),
        (b'{"passwordVersion": 2.0, "iterations": 8192}', "not positive integers"),
        (b'{"passwordVersion": 0, "iterations": 8192}', "not positive integers"),
        (b'{"passwordVersion": 2}', "not positive integers"),
        (b"[2, 8192]", "not positive integers"),
        (b"[" * 10_000, "not JSON"),
        (b'{"passwordVersion": 1' + b"0" * 5000 + b', "iterations": 8192}', "not JSON"),
    ],
    ids=[
        "bytes",
        "huge",
        "string-version",
        "bool-version",
        "float-version",
        "zero",
        "no-iterations",
        "array",
        "deep",
        "5000-digits",
    ],
)
def test_a_hostile_record_is_skipped_and_named_in_the_credentials_note(
    value: bytes, problem: str
) -> None:
    records = r.latest([(0, _key(), r.record_value(2, 8192)), (9, _key(), value)])
    got = r.join({A: CRED}, records, TOPIC)[A]
    assert got.password_version is None  # never the older record: the last one wins
    assert got.version_note.startswith(f"unreadable record at offset 9 of {TOPIC}: ")
    assert problem in got.version_note


@pytest.mark.parametrize(
    "key",
    [
        None,
        b"\xff",
        b"orders-app",
        b'{"user": "orders-app"}',
        b'{"user": 1, "mechanism": 2}',
        b'{"mechanism":"SCRAM-SHA-512","user":"' + b"a" * r.MAX_RECORD_BYTES + b'"}',
    ],
    ids=["null", "bytes", "plain", "no-mechanism", "wrong-types", "huge"],
)
def test_a_record_whose_key_is_not_kgitops_is_ignored(key: bytes | None) -> None:
    records = [(0, _key(), r.record_value(2, 8192)), (1, key, r.record_value(9, 8192))]
    assert r.latest(records) == {A: r.VersionRecord(2, 8192, 0)}


@pytest.mark.parametrize(
    ("brokers", "replicas", "isr"),
    [
        ([Broker(111)], (111,), "1"),
        ([Broker(1), Broker(2)], (1, 2), "1"),  # RF 2: one broker down still takes writes
        ([Broker(i) for i in range(1, 7)], (1, 2, 3), "2"),
        ([Broker(1, "a"), Broker(2, "a"), Broker(3, "b"), Broker(4, "c")], (1, 3, 4), "2"),
        ([Broker(1, "a"), Broker(2)], (1, 2), "1"),  # some racks unknown: rack-unaware
    ],
)
def test_the_topic_has_one_partition_rf_up_to_3_and_min_isr_one_below_it(
    brokers: list[Broker], replicas: tuple[int, ...], isr: str
) -> None:
    got, configs = r.topic_layout(brokers)
    assert got == replicas
    assert configs == {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "min.insync.replicas": isr,
    }


# ------------------------------------------------------------------ the topic (Metadata, configs)


def _configs_answer(
    configs: dict[str, str], version: int = 4, name: str = TOPIC, error: int = 0
) -> object:
    """A DescribeConfigs answer for the version topic, as kafka-python decodes it."""
    R = DescribeConfigsResponse.DescribeConfigsResult
    E = R.DescribeConfigsResourceResult
    entries = [
        E(
            name=k,
            value=val,
            read_only=False,
            is_default=False,
            config_source=5,
            is_sensitive=False,
            synonyms=[],
            config_type=2,
            documentation=None,
        )
        for k, val in configs.items()
    ]
    resp = DescribeConfigsResponse(
        throttle_time_ms=0,
        results=[
            R(
                error_code=error,
                error_message=None,
                resource_type=2,
                resource_name=name,
                configs=entries,
            )
        ],
    )
    return DescribeConfigsResponse.decode(
        resp.encode(version=version, header=False), version=version
    )


COMPACTED = {"cleanup.policy": "compact", "compression.type": "uncompressed"}


class Partition:
    """The version topic as kafka-python's ``KafkaAdminClient.describe_topics`` reads it
    (``count`` partitions, partition 0's ``leader``, error ``code``, the principal's
    ``operations``: Kafka's AclOperation names, None when not reported), the brokers as
    ``describe_cluster`` lists them, its configs as DescribeConfigs answers them; CreateTopics
    (``create_topics``) makes it exist, led by the first replica. ``sent``: every call and
    request, by Kafka API."""

    def __init__(
        self,
        leader: int,
        code: int = 0,
        count: int = 1,
        configs: dict[str, str] = COMPACTED,
        *,
        operations: Collection[str] | None = None,
        brokers: Sequence[int] = (1,),
    ) -> None:
        self.leader, self.code, self.count, self.configs = leader, code, count, configs
        self.operations = operations
        self.brokers = brokers
        self.sent: list[str] = []
        self.created: list[NewTopic] = []

    def describe_topics(self, names: list[str]) -> list[dict[str, Any]]:
        assert names == [TOPIC]
        parts = [
            {"error_code": 0, "partition_index": i, "leader_id": self.leader, "replica_nodes": []}
            for i in range(self.count if self.code == 0 else 0)
        ]
        ops = None if self.operations is None else sorted(self.operations)
        return [
            {
                "error_code": self.code,
                "name": TOPIC,
                "partitions": parts,
                "authorized_operations": ops,
            }
        ]

    def describe_cluster(self) -> dict[str, Any]:
        return {
            "brokers": [{"broker_id": b, "rack": None, "is_fenced": False} for b in self.brokers]
        }

    def answer(self, request: object) -> object:
        assert isinstance(request, DescribeConfigsRequest)
        return _configs_answer(self.configs)

    def create_topics(self, topics: Sequence[NewTopic]) -> dict[str, ClusterError | None]:
        self.created.extend(topics)
        self.code, self.count, self.leader = 0, 1, topics[0].assignment[0][0]
        return {t.name: None for t in topics}


class Wire:
    """The adapter's ``Transport`` over ``broker``: its library calls and its requests."""

    timeout_ms = 2000

    def __init__(self, broker: Partition) -> None:
        self.library = broker
        self.broker = broker

    def call(self, operation: str, fn: Callable[..., Any], *args: Any) -> Any:
        self.broker.sent.append(operation)
        return fn(*args)

    def send(self, request: object, node_id: int | None = None) -> object:
        self.broker.sent.append(type(request).__name__.removesuffix("Request"))
        return self.broker.answer(request)


class FakeLog:
    """The records' reads and writes (``topiclog.TopicLog``, KafkaConsumer and
    KafkaProducer on a real cluster: tests/access/test_password_versions_real.py):
    ``records`` and ``undecoded`` are what a read returns; each write is kept, and each of
    its records answered with ``fail(index)`` (None: written)."""

    def __init__(
        self,
        records: list[r.Raw] | None = None,
        undecoded: list[r.Undecoded] | None = None,
        fail: Callable[[int], ClusterError | None] = lambda _: None,
    ) -> None:
        self.records = records or []
        self.undecoded = undecoded or []
        self.fail = fail
        self.reads: list[str] = []
        self.written: list[list[tuple[bytes, bytes | None]]] = []

    def read(self, topic: str, max_bytes: int) -> tuple[list[r.Raw], list[r.Undecoded]]:
        self.reads.append(topic)
        return list(self.records), list(self.undecoded)

    def write(
        self, topic: str, records: list[tuple[bytes, bytes | None]]
    ) -> list[ClusterError | None]:
        assert topic == TOPIC
        self.written.append(list(records))
        return [
            self.fail(len(self.written_records) - len(records) + i) for i in range(len(records))
        ]

    @property
    def written_records(self) -> list[tuple[bytes, bytes | None]]:
        return [rec for batch in self.written for rec in batch]


class Scripted(v.PasswordVersions):
    """The passwordVersion records over ``partition`` (a ``LogTopic`` on a ``Wire``); the
    records are ``log``'s."""

    def __init__(
        self, partition: Partition, log: FakeLog | None = None, drained: Sequence[int] = ()
    ) -> None:
        self.broker = partition
        self.log = log or FakeLog()
        topic = LogTopic(
            Wire(partition),  # type: ignore[arg-type]
            TOPIC,
            role=v.VERSION_TOPIC_ROLE,
            advice=v.VERSION_TOPIC_ADVICE,
            drained=drained,
            create_topics=lambda topics: partition.create_topics(topics),
            log=self.log,  # type: ignore[arg-type]
        )
        super().__init__(topic)


def test_a_missing_topic_is_no_records_and_a_refused_one_is_one_line_naming_it() -> None:
    missing = Scripted(Partition(-1, code=3))
    assert missing.read_versions() == {}
    assert missing.log.reads == []  # no consumer asks for a topic that is not there
    with pytest.raises(ClusterError) as info:
        Scripted(Partition(-1, code=29)).read_versions()  # TOPIC_AUTHORIZATION_FAILED
    assert str(info.value).startswith(f"cannot read the passwordVersion records (topic {TOPIC})")
    assert "\n" not in str(info.value)


def test_a_read_that_fails_is_one_line_naming_the_topic_and_keeps_its_class() -> None:
    from kgitops.errors import ClusterTimeout

    class Slow(FakeLog):
        def read(self, topic: str, max_bytes: int) -> tuple[list[r.Raw], list[r.Undecoded]]:
            raise ClusterTimeout("Fetch: reading topic t stopped at offset 3 of 9: ...")

    with pytest.raises(ClusterTimeout) as info:
        Scripted(Partition(1), Slow()).read_versions()
    assert str(info.value) == (
        f"cannot read the passwordVersion records (topic {TOPIC}): Fetch: reading topic t "
        "stopped at offset 3 of 9: ..."
    )


def test_a_batch_that_cannot_be_decoded_leaves_the_credentials_recorded_before_it_unknown() -> None:
    b = ("b", A[1])
    records: list[r.Raw] = [
        (0, _key(), r.record_value(1, 8192)),
        (1, _key("b"), r.record_value(3, 8192)),
        (7, _key("b"), r.record_value(4, 8192)),
    ]
    hidden = r.Undecoded(2, 6, "compressed with lz4, whose library is not installed")
    got = Scripted(Partition(1), FakeLog(records, [hidden])).read_versions()
    assert got[b] == r.VersionRecord(4, 8192, 7)  # b's record after the batch holds
    cred = r.join({A: CRED}, got, TOPIC)[A]
    assert cred.password_version is None  # counts as 1: a rotation is planned, never skipped
    assert cred.version_note == (
        f"unreadable record at offset 2 of {TOPIC}: the batch at offsets 2-6 cannot be decoded "
        "(compressed with lz4, whose library is not installed) and may hold a newer record of it"
    )


# ------------------------------------------------------------------ a topic that is not kgitops'


@pytest.mark.parametrize(
    ("count", "configs", "problem"),
    [
        (
            3,
            {"cleanup.policy": "delete"},
            "3 partitions, not 1; cleanup.policy delete, not compact",
        ),
        (1, {"cleanup.policy": "delete"}, "cleanup.policy delete, not compact"),
        (2, COMPACTED, "2 partitions, not 1"),
    ],
)
def test_an_existing_topic_that_is_not_kgitops_is_neither_read_nor_written(
    count: int, configs: dict[str, str], problem: str
) -> None:
    from kgitops.cluster.port import ScramUpsert

    reader = Scripted(Partition(1, count=count, configs=configs), [])
    with pytest.raises(ClusterError) as info:
        reader.read_versions()
    assert reader.log.reads == []  # not one record read
    message = str(info.value)
    assert f"topic {TOPIC} exists and is not kgitops' passwordVersion topic ({problem})" in message
    assert "passwordVersionTopic" in message and "\n" not in message
    writer = Scripted(Partition(1, count=count, configs=configs))
    assert writer.prepare_versions() is not None
    failed = writer.write_versions([ScramUpsert("a", "SCRAM-SHA-512", 8192, b"s", b"p", 2)])
    assert failed is not None and problem in str(failed)
    assert writer.log.written == []  # nothing written into another program's topic


def test_a_topic_whose_configs_may_not_be_read_is_refused_never_taken_for_kgitops() -> None:
    """KafkaAdminClient.describe_configs would answer it with no configs (kafka-python 3.0
    drops each resource's error code), which the shape check lets pass: the DescribeConfigs
    kgitops builds reads the error, and the refusal is one line naming the topic."""

    class NoConfigs(Partition):
        def answer(self, request: object) -> object:
            return _configs_answer({}, error=29)  # TOPIC_AUTHORIZATION_FAILED

    reader = Scripted(NoConfigs(1))
    with pytest.raises(ClusterError) as info:
        reader.read_versions()
    said = str(info.value)
    assert said.startswith(f"cannot read the passwordVersion records (topic {TOPIC}): ")
    assert "DescribeConfigs: authentication or authorisation failed" in said, said
    assert "\n" not in said and reader.log.reads == []


@pytest.mark.parametrize("policy", ["compact", "compact,delete", "delete, compact"])
def test_a_compacted_topic_of_one_partition_is_kgitops(policy: str) -> None:
    records: list[r.Raw] = [(0, _key(), r.record_value(2, 8192))]
    broker = Scripted(Partition(1, configs={"cleanup.policy": policy}), FakeLog(records))
    assert broker.read_versions() == {A: r.VersionRecord(2, 8192, 0)}


def test_an_existing_topic_whose_codec_is_missing_here_is_read_but_never_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kgitops.cluster.port import ScramUpsert

    monkeypatch.setitem(r.CODECS, 4, ("zstd", lambda: False, "zstandard"))
    zstd = {"cleanup.policy": "compact", "compression.type": "zstd"}
    broker = Scripted(Partition(1, configs=zstd))
    assert broker.read_versions() == {}
    writer = Scripted(Partition(1, configs=zstd))
    failed = writer.write_versions([ScramUpsert("a", "SCRAM-SHA-512", 8192, b"s", b"p", 2)])
    assert failed is not None
    assert "compression.type zstd, which kgitops cannot read back here" in str(failed)
    assert "pip install zstandard" in str(failed) and writer.log.written == []


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_describe_configs_asks_for_the_shape_configs_at_every_version(version: int) -> None:
    request = r.build_describe_configs(TOPIC)
    again = DescribeConfigsRequest.decode(
        request.encode(version=version, header=False), version=version, header=False
    )
    [res] = again.resources
    assert (res.resource_type, res.resource_name) == (2, TOPIC)
    assert res.configuration_keys is None  # every config: Tansu refuses a key list
    got = r.read_describe_configs(
        _configs_answer({"cleanup.policy": "delete", "x": "y"}, version), TOPIC
    )
    assert got == {"cleanup.policy": "delete"}


# ------------------------------------------------------------------ placement


@pytest.mark.parametrize(
    ("drained", "replicas"),
    [((1,), (2, 3, 4)), ((1, 3), (2, 4)), ((1, 2, 3, 4), (1, 2, 3)), ((9,), (1, 2, 3))],
)
def test_the_topic_is_never_placed_on_a_broker_being_decommissioned(
    drained: tuple[int, ...], replicas: tuple[int, ...]
) -> None:
    brokers = [Broker(i) for i in (1, 2, 3, 4)]
    assert r.topic_layout(brokers, drained)[0] == replicas  # all drained: every broker


def test_the_topic_created_by_apply_leaves_the_decommissioned_broker_out() -> None:
    """Brokers 1-4 (DescribeCluster), the topic missing until created."""
    broker = Partition(-1, code=3, brokers=(1, 2, 3, 4))
    c = Scripted(broker, drained=(1,))
    assert c.prepare_versions() is None
    [made] = broker.created
    assert made.assignment == {0: (2, 3, 4)}  # broker 1 neither a replica nor the leader
    # a topic made just now is not asked for its configs
    assert broker.sent == ["Metadata", "DescribeCluster", "Metadata"]


def test_a_fenced_broker_gets_no_replica_of_the_topic() -> None:
    """Kafka 4's DescribeCluster lists a fenced broker (down, or not yet caught up), marked;
    Metadata does not list it, and neither does the placement."""
    broker = Partition(-1, code=3, brokers=(1, 2, 3, 4))
    listed = broker.describe_cluster()
    listed["brokers"][0]["is_fenced"] = True
    broker.describe_cluster = lambda: listed  # type: ignore[method-assign]
    assert Scripted(broker).prepare_versions() is None
    assert broker.created[0].assignment == {0: (2, 3, 4)}


# ------------------------------------------------------------------ many credentials at once


def _upserts(n: int) -> list[ScramUpsert]:
    return [ScramUpsert(f"user-{i:06d}", "SCRAM-SHA-512", 8192, b"s", b"p", 2) for i in range(n)]


def test_each_credential_whose_record_failed_is_named_and_only_those() -> None:
    from kgitops.errors import ClusterRequestError

    refused = ClusterRequestError("Produce: INVALID_RECORD", code="INVALID_RECORD")
    writer = Scripted(Partition(1), FakeLog(fail=lambda i: refused if i in (1, 3) else None))
    ups = _upserts(5)
    failed = writer.record_versions(ups)
    assert set(failed) == {ups[1].key, ups[3].key}
    assert all(err is refused for err in failed.values())
    assert [json.loads(k)["user"] for k, _ in writer.log.written_records] == [u.name for u in ups]


def test_no_record_is_written_when_the_topic_cannot_be_made_ready() -> None:
    writer = Scripted(Partition(-1, code=29))  # TOPIC_AUTHORIZATION_FAILED
    failed = writer.record_versions(_upserts(2))
    assert len(failed) == 2 and all("authorisation failed" in str(e) for e in failed.values())
    assert writer.log.written == []
