"""The passwordVersion records of the kafka-python adapter, without a broker: what a record
holds (never a secret), which record counts for a credential, hostile records, the topic's
layout, and the Produce / Fetch requests at every version kgitops sends."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record import MemoryRecords, MemoryRecordsBuilder

from kgitops.access import ScramCredential, scram_salted_password
from kgitops.cluster.kafka import version_records as r
from kgitops.cluster.kafka import versions as v
from kgitops.cluster.port import ScramUpsert
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


# ------------------------------------------------------------------ the requests


def _records(data: bytes) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    for batch in MemoryRecords(data):
        out += [(r.offset, r.key, r.value) for r in batch]
    return out


def test_the_produce_request_is_one_batch_acks_all_at_every_version_it_may_use() -> None:
    recs = [(_key(), r.record_value(2, 8192)), (_key("b"), None)]
    request = r.build_produce(TOPIC, recs, 5000, 1_700_000_000_000)
    assert request.acks == -1
    versions = range(ProduceRequest.min_version, r.PRODUCE_MAX_VERSION + 1)
    for version in versions:
        if version < 3:
            continue  # magic 2 batches need v3+, which every broker kgitops supports has
        data = request.encode(version=version, header=False)
        again = ProduceRequest.decode(data, version=version, header=False)
        [topic] = again.topic_data
        assert topic.name == TOPIC
        [part] = topic.partition_data
        assert part.index == 0
        assert len(list(MemoryRecords(bytes(part.records)))) == 1  # one batch
        assert _records(bytes(part.records)) == [(0, *recs[0]), (1, *recs[1])]


@pytest.mark.parametrize("version", [3, 8, 9])
def test_produce_answers_read_back_as_the_partitions_error(version: int) -> None:
    R = ProduceResponse.TopicProduceResponse
    P = R.PartitionProduceResponse

    def answer(code: int) -> object:
        resp = ProduceResponse(
            responses=[R(name=TOPIC, partition_responses=[P(index=0, error_code=code)])],
            throttle_time_ms=0,
        )
        return ProduceResponse.decode(resp.encode(version=version, header=False), version=version)

    assert r.read_produce(answer(0))[0] == 0
    assert r.read_produce(answer(19))[0] == 19  # NOT_ENOUGH_REPLICAS
    assert r.read_produce(ProduceResponse(responses=[], throttle_time_ms=0)) == (-2, None)


def _fetch_response(version: int, data: bytes, hw: int, code: int = 0) -> object:
    T = FetchResponse.FetchableTopicResponse
    P = T.PartitionData
    resp = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            T(
                topic=TOPIC,
                partitions=[
                    P(
                        partition_index=0,
                        error_code=code,
                        high_watermark=hw,
                        last_stable_offset=hw,
                        log_start_offset=0,
                        aborted_transactions=[],
                        preferred_read_replica=-1,
                        records=data,
                    )
                ],
            )
        ],
    )
    return FetchResponse.decode(resp.encode(version=version, header=False), version=version)


def _batch(base: int, items: list[tuple[bytes, bytes | None]]) -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=base)
    for k, val in items:
        b.append(timestamp=0, key=k, value=val, headers=[])
    b.close()
    return bytes(b.buffer())


@pytest.mark.parametrize("version", [4, 7, 11, 12])
def test_a_fetch_reads_every_record_and_where_the_next_fetch_starts(version: int) -> None:
    request = r.build_fetch(TOPIC, 5)
    data = request.encode(version=version, header=False)
    again = FetchRequest.decode(data, version=version, header=False)
    assert again.topics[0].topic == TOPIC
    assert again.topics[0].partitions[0].fetch_offset == 5
    assert again.max_wait_ms > 0  # Tansu answers nothing to a fetch that may not wait
    two = _batch(3, [(_key(), r.record_value(1, 8192)), (_key("b"), None)])
    got = r.read_fetch(_fetch_response(version, _batch(0, [(_key(), b"x")]) + two, 5))
    assert got.code == 0 and got.high_watermark == 5 and got.next_offset == 5
    assert [r[0] for r in got.records] == [0, 3, 4]
    empty = r.read_fetch(_fetch_response(version, b"", 5))
    assert empty.records == () and empty.next_offset == -1


def test_a_corrupt_batch_is_one_clear_error_and_a_cut_one_ends_the_read() -> None:
    good = _batch(0, [(_key(), r.record_value(1, 8192))])
    corrupt = good[:-8] + b"\x00" * 8 + good  # a batch whose CRC / lengths lie
    with pytest.raises(ClusterError, match="passwordVersion topic fails its CRC"):
        r.read_fetch(_fetch_response(12, corrupt, 2))
    # a batch cut short (as at the end of a fetch's byte limit) is no record, and no progress
    cut = r.read_fetch(_fetch_response(12, good[:40], 2))
    assert cut.records == () and cut.next_offset == -1


# ------------------------------------------------------------------ the read loop


def _configs_answer(configs: dict[str, str], version: int = 4, name: str = TOPIC) -> object:
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
                error_code=0,
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
    """Metadata as kafka-python reads it, for the version topic (``count`` partitions), and
    its configs as DescribeConfigs answers them."""

    def __init__(
        self, leader: int, code: int = 0, count: int = 1, configs: dict[str, str] = COMPACTED
    ) -> None:
        self.leader, self.code, self.count, self.configs = leader, code, count, configs

    def metadata(self) -> object:
        from types import SimpleNamespace as NS

        parts = [NS(partition_index=i, leader_id=self.leader) for i in range(self.count)]
        return NS(
            brokers=[NS(node_id=1, rack=None)],
            topics=[NS(name=TOPIC, error_code=self.code, partitions=parts)],
        )

    def answer(self, request: object) -> object:
        if isinstance(request, DescribeConfigsRequest):
            return _configs_answer(self.configs)
        return self.metadata()


class Scripted(v.PasswordVersions):
    """A broker answering from a script: Metadata from ``partition``, each Fetch with the
    next answer of ``fetches`` (what a real broker sent, in kafka-python's classes)."""

    _timeout_ms = 2000

    def __init__(self, partition: Partition, fetches: list[object]) -> None:
        from types import SimpleNamespace as NS

        self._spec = NS(password_version_topic=TOPIC)
        self.partition = partition
        self.fetches = fetches
        self.offsets: list[int] = []
        self.log_start = 0
        self.listed: list[tuple[list[tuple[str, int]], int]] = []

    def list_offsets(self, partitions: object, spec: int) -> dict[tuple[str, int], int]:
        wanted = list(partitions)  # type: ignore[call-overload]
        self.listed.append((wanted, spec))
        return {tp: self.log_start for tp in wanted}

    def _send(self, request: object, node_id: int | None = None) -> object:
        if isinstance(request, FetchRequest):
            self.offsets.append(request.topics[0].partitions[0].fetch_offset)
            return self.fetches.pop(0)
        return self.partition.answer(request)


def _out_of_range(version: int = 12) -> object:
    """Kafka's answer to a consumer Fetch below the log start (``ReplicaManager``
    ``createLogReadResult(exception)``): high watermark and log start both unknown (-1)."""
    T = FetchResponse.FetchableTopicResponse
    gone = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            T(
                topic=TOPIC,
                partitions=[
                    T.PartitionData(
                        partition_index=0,
                        error_code=v.OFFSET_OUT_OF_RANGE,
                        high_watermark=-1,
                        last_stable_offset=-1,
                        log_start_offset=-1,
                        aborted_transactions=[],
                        preferred_read_replica=-1,
                        records=b"",
                    )
                ],
            )
        ],
    )
    return FetchResponse.decode(gone.encode(version=version, header=False), version=version)


@pytest.mark.parametrize("version", [4, 12])
def test_reading_starts_again_at_the_log_start_after_offset_out_of_range(version: int) -> None:
    data = _batch(7, [(_key(), r.record_value(6, 8192)), (_key("b"), r.record_value(1, 4096))])
    broker = Scripted(Partition(1), [_out_of_range(version), _fetch_response(12, data, 9)])
    broker.log_start = 7  # what ListOffsets (EARLIEST) says after kafka-delete-records.sh
    assert broker.read_versions() == {
        A: r.VersionRecord(6, 8192, 7),
        ("b", A[1]): r.VersionRecord(1, 4096, 8),
    }
    assert broker.offsets == [0, 7]
    assert broker.listed == [([(TOPIC, 0)], v.EARLIEST)]


def test_offset_out_of_range_at_the_log_start_itself_is_one_line_not_a_loop() -> None:
    broker = Scripted(Partition(1), [_out_of_range(), _out_of_range()])
    broker.log_start = 0
    with pytest.raises(ClusterError) as info:
        broker.read_versions()
    assert "OFFSET_OUT_OF_RANGE" in str(info.value) and "\n" not in str(info.value)
    assert broker.offsets == [0]


def test_a_leader_change_is_retried_and_an_empty_answer_ends_the_read() -> None:
    moved = _fetch_response(12, b"", 0, code=6)  # NOT_LEADER_OR_FOLLOWER
    first = _fetch_response(12, _batch(0, [(_key(), r.record_value(2, 8192))]), 5)
    empty = _fetch_response(12, b"", 5)  # a high watermark past the data: Tansu's quirk
    broker = Scripted(Partition(1), [moved, first, empty])
    assert broker.read_versions() == {A: r.VersionRecord(2, 8192, 0)}
    assert broker.offsets == [0, 0, 1]


def test_a_missing_topic_is_no_records_and_a_refused_one_is_one_line_naming_it() -> None:
    assert Scripted(Partition(-1, code=3), []).read_versions() == {}
    with pytest.raises(ClusterError) as info:
        Scripted(Partition(-1, code=29), []).read_versions()  # TOPIC_AUTHORIZATION_FAILED
    assert str(info.value).startswith(f"cannot read the passwordVersion records (topic {TOPIC})")
    assert "\n" not in str(info.value)


def test_a_corrupt_batch_in_the_topic_stops_the_read_in_one_line() -> None:
    good = _batch(0, [(_key(), r.record_value(1, 8192))])
    corrupt = good[:-8] + b"\x00" * 8
    with pytest.raises(ClusterError) as info:
        Scripted(Partition(1), [_fetch_response(12, corrupt, 1)]).read_versions()
    assert str(info.value) == (
        f"cannot read the passwordVersion records (topic {TOPIC}): Fetch: a record batch of "
        "the passwordVersion topic fails its CRC (offset 0)"
    )


def test_a_topic_far_larger_than_kgitops_records_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(v, "MAX_TOPIC_BYTES", 1000)
    batches = [_batch(i, [(_key(), b"x" * 600)]) for i in range(3)]
    broker = Scripted(Partition(1), [_fetch_response(12, b, 3) for b in batches])
    with pytest.raises(ClusterError, match="holds more than"):
        broker.read_versions()
    assert broker.offsets == [0, 1]


# ------------------------------------------------------------------ batches kgitops cannot decode


def _with_codec(base: int, items: list[tuple[bytes, bytes | None]], codec: int) -> bytes:
    """One v2 batch of ``items`` at ``base`` labelled as compressed with ``codec``, its CRC
    recomputed: what a broker with that ``compression.type`` stores, as kafka-python sees it
    without the codec's library."""
    import struct

    from kafka.record.util import calc_crc32c

    raw = bytearray(_batch(0, items))
    raw[0:8] = struct.pack(">q", base)  # the base offset (outside the CRC)
    at = 8 + 4 + 4 + 1 + 4  # baseOffset, length, leaderEpoch, magic, crc
    attrs = struct.unpack(">h", raw[at : at + 2])[0]
    raw[at : at + 2] = struct.pack(">h", (attrs & ~7) | codec)
    raw[17:21] = struct.pack(">I", calc_crc32c(bytes(raw[at:])))
    return bytes(raw)


def test_the_topic_is_created_uncompressed_whatever_the_brokers_compression() -> None:
    _, configs = r.topic_layout([Broker(1)])
    assert configs["compression.type"] == "uncompressed"
    request = r.build_produce(TOPIC, [(_key(), r.record_value(2, 8192))], 5000, 0)
    data = request.encode(version=9, header=False)
    [part] = ProduceRequest.decode(data, version=9, header=False).topic_data[0].partition_data
    assert [b.compression_type for b in MemoryRecords(bytes(part.records))] == [0]


@pytest.mark.parametrize(("codec", "package"), [(2, "python-snappy"), (3, "lz4"), (4, "zstandard")])
def test_a_batch_compressed_with_a_codec_not_installed_is_skipped_not_a_failed_read(
    codec: int, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, _, _ = r.CODECS[codec]
    monkeypatch.setitem(r.CODECS, codec, (name, lambda: False, package))
    before = _batch(0, [(_key(), r.record_value(1, 8192)), (_key("b"), r.record_value(3, 8192))])
    hidden = _with_codec(2, [(_key(), r.record_value(2, 8192))], codec)
    after = _batch(3, [(_key("b"), r.record_value(4, 8192))])
    broker = Scripted(Partition(1), [_fetch_response(12, before + hidden + after, 4)])
    got = broker.read_versions()
    assert broker.offsets == [0]
    # b's record after the batch holds; orders-app's record before it may be stale
    assert got[("b", A[1])] == r.VersionRecord(4, 8192, 3)
    cred = r.join({A: CRED}, got, TOPIC)[A]
    assert cred.password_version is None  # counts as 1: a rotation is planned, never skipped
    assert f"offset 2 of {TOPIC}" in cred.version_note
    assert f"compressed with {name}" in cred.version_note
    assert f"pip install {package}" in cred.version_note


def test_a_batch_whose_records_do_not_decode_is_skipped_and_the_read_goes_on() -> None:
    good = _batch(0, [(_key(), r.record_value(5, 8192))])
    broken = _with_codec(1, [(_key("b"), r.record_value(2, 8192))], 1)  # gzip: not gzip
    later = _batch(2, [(_key("c"), r.record_value(7, 8192))])
    got = r.read_fetch(_fetch_response(12, good + broken + later, 3))
    assert [r[0] for r in got.records] == [0, 2]
    assert got.next_offset == 3
    [u] = got.undecoded
    assert (u.first, u.last) == (1, 1) and "do not decode" in u.reason


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
    assert reader.offsets == []  # not one Fetch
    message = str(info.value)
    assert f"topic {TOPIC} exists and is not kgitops' passwordVersion topic ({problem})" in message
    assert "passwordVersionTopic" in message and "\n" not in message
    writer = Producing(Partition(1, count=count, configs=configs))
    assert writer.prepare_versions() is not None
    failed = writer.write_versions([ScramUpsert("a", "SCRAM-SHA-512", 8192, b"s", b"p", 2)])
    assert failed is not None and problem in str(failed)
    assert writer.produced == []  # nothing written into another program's topic


@pytest.mark.parametrize("policy", ["compact", "compact,delete", "delete, compact"])
def test_a_compacted_topic_of_one_partition_is_kgitops(policy: str) -> None:
    broker = Scripted(Partition(1, configs={"cleanup.policy": policy}), [])
    broker.fetches.append(_fetch_response(12, _batch(0, [(_key(), r.record_value(2, 8192))]), 1))
    assert broker.read_versions() == {A: r.VersionRecord(2, 8192, 0)}


def test_an_existing_topic_whose_codec_is_missing_here_is_read_but_never_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kgitops.cluster.port import ScramUpsert

    monkeypatch.setitem(r.CODECS, 4, ("zstd", lambda: False, "zstandard"))
    zstd = {"cleanup.policy": "compact", "compression.type": "zstd"}
    broker = Scripted(Partition(1, configs=zstd), [_fetch_response(12, b"", 0)])
    assert broker.read_versions() == {}
    writer = Producing(Partition(1, configs=zstd))
    failed = writer.write_versions([ScramUpsert("a", "SCRAM-SHA-512", 8192, b"s", b"p", 2)])
    assert failed is not None
    assert "compression.type zstd, which kgitops cannot read back here" in str(failed)
    assert "pip install zstandard" in str(failed) and writer.produced == []


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


class Producing(v.PasswordVersions):
    """A broker for writes: Metadata and DescribeConfigs from ``partition``; each Produce is
    kept and answered with success."""

    _timeout_ms = 2000

    def __init__(self, partition: Partition) -> None:
        from types import SimpleNamespace as NS

        self._spec = NS(password_version_topic=TOPIC, decommission=())
        self.partition = partition
        self.produced: list[object] = []

    def _send(self, request: object, node_id: int | None = None) -> object:
        if isinstance(request, ProduceRequest):
            self.produced.append(request)
            R = ProduceResponse.TopicProduceResponse
            P = R.PartitionProduceResponse
            return ProduceResponse(
                responses=[R(name=TOPIC, partition_responses=[P(index=0, error_code=0)])],
                throttle_time_ms=0,
            )
        return self.partition.answer(request)


# ------------------------------------------------------------------ quotas


def _throttled(throttle_ms: int, version: int = 12) -> object:
    """Kafka's answer to a sessionless fetch over the principal's quota
    (``SessionlessFetchContext.getThrottledResponse``, KIP-219): no partition at all."""
    resp = FetchResponse(throttle_time_ms=throttle_ms, error_code=0, session_id=0, responses=[])
    return FetchResponse.decode(resp.encode(version=version, header=False), version=version)


@pytest.mark.parametrize("version", [4, 12])
def test_a_quota_throttled_answer_is_waited_out_never_taken_for_the_end_of_the_log(
    version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(v.time, "sleep", slept.append)
    first = _fetch_response(12, _batch(0, [(_key(), r.record_value(1, 8192))]), 2)
    later = _fetch_response(12, _batch(1, [(_key(), r.record_value(2, 8192))]), 2)
    broker = Scripted(Partition(7), [first, _throttled(300, version), later])
    assert broker.read_versions() == {A: r.VersionRecord(2, 8192, 1)}
    assert broker.offsets == [0, 1, 1]  # the throttled fetch is sent again
    assert slept == [0.3]  # its throttle_time_ms
    assert r.read_fetch(_throttled(300, version)).answered is False


def test_a_read_throttled_until_its_deadline_fails_in_one_line_naming_the_quota(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]
    monkeypatch.setattr(v.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(v.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    broker = Scripted(Partition(1), [_throttled(60_000) for _ in range(10)])
    with pytest.raises(ClusterError) as info:
        broker.read_versions()
    message = str(info.value)
    assert "throttled 60000 ms" in message and "quota" in message and "\n" not in message
    assert clock[0] <= broker._timeout_ms / 1000 + v.MAX_THROTTLE_WAIT  # bounded
    assert broker.offsets == [0, 0]  # one wait (capped by the 2 s deadline), one retry


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
    from types import SimpleNamespace as NS

    from kgitops.cluster.port import NewTopic

    class Creating(v.PasswordVersions):
        """Metadata of brokers 1-4 (the topic missing until created), and CreateTopics."""

        _timeout_ms = 2000

        def __init__(self) -> None:
            self._spec = NS(password_version_topic=TOPIC, decommission=(1,))
            self.created: list[NewTopic] = []

        def _send(self, request: object, node_id: int | None = None) -> object:
            if isinstance(request, DescribeConfigsRequest):
                return _configs_answer(COMPACTED)
            parts = [NS(partition_index=0, leader_id=2)] if self.created else []
            return NS(
                brokers=[NS(node_id=b, rack=None) for b in (1, 2, 3, 4)],
                topics=[NS(name=TOPIC, error_code=0 if self.created else 3, partitions=parts)],
            )

        def create_topics(self, topics: list[NewTopic]) -> dict[str, None]:
            self.created.extend(topics)
            return {t.name: None for t in topics}

    c = Creating()
    assert c.prepare_versions() is None
    [made] = c.created
    assert made.assignment == {0: (2, 3, 4)}  # broker 1 neither a replica nor the leader


# ------------------------------------------------------------------ many credentials at once


def _upserts(n: int) -> list[ScramUpsert]:
    return [ScramUpsert(f"user-{i:06d}", "SCRAM-SHA-512", 8192, b"s", b"p", 2) for i in range(n)]


def test_twenty_thousand_records_go_in_batches_each_below_the_brokers_message_size() -> None:
    writer = Producing(Partition(1))
    ups = _upserts(20_000)
    assert writer.write_versions(ups) is None
    assert len(writer.produced) > 1
    seen = []
    for request in writer.produced:
        data = request.encode(version=9, header=False)  # type: ignore[attr-defined]
        [part] = ProduceRequest.decode(data, version=9, header=False).topic_data[0].partition_data
        raw = bytes(part.records)
        assert len(raw) < r.MAX_BATCH_BYTES <= 1024 * 1024  # Kafka's default: 1 MiB
        assert len(list(MemoryRecords(raw))) == 1  # one batch a request (Produce v3+)
        seen += [json.loads(k)["user"] for _, k, _ in _records(raw)]
    assert seen == [u.name for u in ups]  # every record, in order


def test_a_failed_batch_leaves_the_earlier_ones_recorded_and_names_the_rest() -> None:
    writer = Producing(Partition(1))
    answers = iter([0, 87, 0])  # 87: INVALID_RECORD, not retriable
    real = writer._send

    def send(request: object, node_id: int | None = None) -> object:
        if isinstance(request, ProduceRequest):
            code = next(answers)
            writer.produced.append(request)
            R = ProduceResponse.TopicProduceResponse
            P = R.PartitionProduceResponse
            return ProduceResponse(
                responses=[R(name=TOPIC, partition_responses=[P(index=0, error_code=code)])],
                throttle_time_ms=0,
            )
        return real(request, node_id)

    writer._send = send  # type: ignore[method-assign]
    ups = _upserts(12_000)
    chunks = r.split_batches([(u, r) for u, r in zip(ups, r.version_records(ups), strict=True)])
    assert len(chunks) >= 3
    failed = writer.record_versions(ups)
    assert len(writer.produced) == 2  # nothing sent after the failed batch
    assert set(failed) == {u.key for chunk in chunks[1:] for u, _ in chunk}
    assert all("INVALID_RECORD" in str(e) for e in failed.values())
