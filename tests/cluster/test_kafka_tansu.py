"""KafkaAdmin against a real Kafka-protocol broker (Tansu), through the real kafka-python path."""

from __future__ import annotations

import contextlib
import socket
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from kgitops.cluster.connect import open_cluster
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.transport import Transport
from kgitops.cluster.local import free_port, start_broker
from kgitops.cluster.port import ClusterAdmin, ConfigChange, NewPartitions, NewTopic
from kgitops.errors import (
    ClusterAuthError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.model import ClusterSpec, SaslSpec, SecuritySpec
from tests.helpers import cluster_folder

TIMEOUT_MS = 3000


def spec_for(bootstrap: str, timeout_ms: int = TIMEOUT_MS) -> ClusterSpec:
    return ClusterSpec(
        name="local", directory=".", bootstrap_servers=(bootstrap,), request_timeout_ms=timeout_ms
    )


@pytest.fixture
def admin(local_broker: str) -> Iterator[KafkaAdmin]:
    a = KafkaAdmin(spec_for(local_broker))
    try:
        yield a
    finally:
        a.close()


def broker_id(admin: KafkaAdmin) -> int:
    return admin.describe([]).brokers[0].id


def test_kafka_admin_satisfies_the_cluster_port(admin: KafkaAdmin) -> None:
    assert isinstance(admin, ClusterAdmin)


def test_open_cluster_gives_the_kafka_adapter_for_a_real_cluster(local_broker: str) -> None:
    a = open_cluster(spec_for(local_broker))
    try:
        assert isinstance(a, KafkaAdmin)
    finally:
        a.close()


def test_describe_reports_the_broker_and_topics_with_replicas_isr_and_leaders(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    name = topic_prefix + "a"
    assert admin.create_topics([NewTopic(name, {0: (b,), 1: (b,)})]) == {name: None}
    state = admin.describe()
    assert [x.id for x in state.brokers] == [b]
    assert state.brokers[0].online
    assert state.cluster_id
    topic = state.topics[name]
    assert sorted(topic.partitions) == [0, 1]
    for p in topic.partitions.values():
        assert p.replicas == (b,)
        assert p.isr == (b,)
        assert p.leader == b


def test_describe_of_named_topics_skips_absent_ones(admin: KafkaAdmin, topic_prefix: str) -> None:
    b = broker_id(admin)
    name = topic_prefix + "present"
    admin.create_topics([NewTopic(name, {0: (b,)})])
    state = admin.describe([name, topic_prefix + "absent"])
    assert set(state.topics) == {name}


def test_create_is_one_batch_and_each_topic_is_verified(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    topics = [
        NewTopic(
            topic_prefix + f"t{i}",
            {p: (b,) for p in range(i + 1)},
            {"retention.ms": str(1000 * (i + 1))},
        )
        for i in range(5)
    ]
    results = admin.create_topics(topics)
    assert results == {t.name: None for t in topics}
    state = admin.describe([t.name for t in topics])
    for i, t in enumerate(topics):
        live = state.topics[t.name]
        assert live.partition_count == i + 1
        assert {p: s.replicas for p, s in live.partitions.items()} == dict(t.assignment)
        assert live.config == {"retention.ms": str(1000 * (i + 1))}


def test_create_of_an_existing_topic_is_that_topics_error_only(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    old, new = topic_prefix + "old", topic_prefix + "new"
    admin.create_topics([NewTopic(old, {0: (b,)})])
    results = admin.create_topics([NewTopic(old, {0: (b,)}), NewTopic(new, {0: (b,)})])
    assert results[new] is None
    err = results[old]
    assert isinstance(err, ClusterRequestError)
    assert err.code == "TOPIC_ALREADY_EXISTS"
    assert old in str(err)


def test_an_assignment_the_broker_did_not_honour_is_reported(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    # Tansu has one broker; asking for a replica on a broker that does not exist makes it
    # create the topic its own way (it ignores explicit assignments), and the check says so.
    b = broker_id(admin)
    name = topic_prefix + "ignored"
    results = admin.create_topics([NewTopic(name, {0: (b + 1,)})])
    err = results[name]
    assert isinstance(err, ClusterRequestError)
    assert err.code in {"ASSIGNMENT_MISMATCH", "INVALID_REPLICA_ASSIGNMENT", "BROKER_NOT_AVAILABLE"}


def test_topic_defaults_are_not_reported_as_set(admin: KafkaAdmin, topic_prefix: str) -> None:
    b = broker_id(admin)
    name = topic_prefix + "plain"
    admin.create_topics([NewTopic(name, {0: (b,)})])
    assert admin.describe([name]).topics[name].config == {}


def test_incremental_config_set_and_delete_touch_only_what_is_named(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    a, c = topic_prefix + "a", topic_prefix + "c"
    admin.create_topics(
        [
            NewTopic(a, {0: (b,)}, {"retention.ms": "1000", "segment.bytes": "1048576"}),
            NewTopic(c, {0: (b,)}),
        ]
    )
    results = admin.alter_topic_configs(
        {
            a: ConfigChange(set={"cleanup.policy": "compact"}, delete=("retention.ms",)),
            c: ConfigChange(set={"retention.ms": "5000"}),
        }
    )
    assert results == {a: None, c: None}
    state = admin.describe([a, c])
    assert state.topics[a].config == {"cleanup.policy": "compact", "segment.bytes": "1048576"}
    assert state.topics[c].config == {"retention.ms": "5000"}


def test_delete_removes_topics_and_reports_unknown_ones(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    x, y, ghost = topic_prefix + "x", topic_prefix + "y", topic_prefix + "ghost"
    admin.create_topics([NewTopic(x, {0: (b,)}), NewTopic(y, {0: (b,)})])
    results = admin.delete_topics([x, y, ghost])
    assert results[x] is None and results[y] is None
    err = results[ghost]
    assert isinstance(err, ClusterRequestError) and err.code == "UNKNOWN_TOPIC_OR_PARTITION"
    assert set(admin.describe([x, y]).topics) == set()


def test_add_partitions_names_the_missing_api(admin: KafkaAdmin, topic_prefix: str) -> None:
    b = broker_id(admin)
    name = topic_prefix + "grow"
    admin.create_topics([NewTopic(name, {0: (b,)})])
    with pytest.raises(UnsupportedOperation, match="does not support CreatePartitions"):
        admin.create_partitions([NewPartitions(name, 2, {1: (b,)})])


def test_reassignment_names_the_missing_api(admin: KafkaAdmin, topic_prefix: str) -> None:
    with pytest.raises(UnsupportedOperation, match="does not support AlterPartitionReassignments"):
        admin.alter_reassignments({(topic_prefix + "t", 0): (1,)})


def test_leader_election_names_the_missing_api(admin: KafkaAdmin, topic_prefix: str) -> None:
    with pytest.raises(UnsupportedOperation, match="does not support ElectLeaders"):
        admin.elect_preferred_leaders([(topic_prefix + "t", 0)])


def test_sizes_are_absent_without_describe_log_dirs(admin: KafkaAdmin, topic_prefix: str) -> None:
    b = broker_id(admin)
    name = topic_prefix + "sized"
    admin.create_topics([NewTopic(name, {0: (b,)})])
    state = admin.describe([name])
    assert state.topics[name].partitions[0].size_bytes is None


def test_no_reassignment_is_reported_in_flight_when_none_is(
    admin: KafkaAdmin, topic_prefix: str
) -> None:
    b = broker_id(admin)
    admin.create_topics([NewTopic(topic_prefix + "still", {0: (b,)})])
    assert admin.list_reassignments() == {}
    assert admin.describe().reassignments == {}


def test_broker_throttle_rates_are_set_incrementally(admin: KafkaAdmin) -> None:
    b = broker_id(admin)
    change = ConfigChange(set={"leader.replication.throttled.rate": "1000000"})
    assert admin.alter_broker_configs({b: change}) == {f"broker:{b}": None}
    assert admin.alter_broker_configs(
        {b: ConfigChange(delete=("leader.replication.throttled.rate",))}
    ) == {f"broker:{b}": None}


# ---------------------------------------------------------------- failures, no hang


def test_a_port_nobody_listens_on_is_unreachable_within_the_timeout() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match=f"127.0.0.1:{port}"):
        KafkaAdmin(spec_for(f"127.0.0.1:{port}", timeout_ms=1500))
    assert time.monotonic() - start < 1500 / 1000 + 2.0


def test_a_silent_server_times_out_instead_of_hanging() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)  # accepts connections, never answers a request
        port = server.getsockname()[1]
        start = time.monotonic()
        with pytest.raises((ClusterUnreachable, ClusterTimeout)):
            KafkaAdmin(spec_for(f"127.0.0.1:{port}", timeout_ms=1500))
        assert time.monotonic() - start < 1500 / 1000 + 2.0


def test_a_tls_handshake_that_never_ends_is_cut_off_at_the_timeout() -> None:
    # kafka-python alone waits forever here: its bootstrap deadline does not cover the TLS
    # handshake. The adapter's watchdog stops it.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        spec = ClusterSpec(
            name="tls",
            directory=".",
            bootstrap_servers=(f"127.0.0.1:{server.getsockname()[1]}",),
            request_timeout_ms=1500,
            security=SecuritySpec(protocol="SSL"),
        )
        start = time.monotonic()
        with pytest.raises(ClusterUnreachable, match="security settings match the listener"):
            KafkaAdmin(spec)
        assert time.monotonic() - start < 1.5 + 2.0


@pytest.mark.broker
def test_a_broker_that_goes_down_gives_an_error_within_the_timeout() -> None:
    broker = start_broker()
    try:
        a = KafkaAdmin(spec_for(broker.bootstrap, timeout_ms=1500))
        a.describe([])
    finally:
        broker.stop()
    try:
        start = time.monotonic()
        with pytest.raises((ClusterUnreachable, ClusterTimeout)):
            a.describe()
        assert time.monotonic() - start < 1500 / 1000 + 2.0
    finally:
        a.close()


def test_sasl_the_broker_does_not_offer_is_an_auth_error_without_the_password(
    local_broker: str,
) -> None:
    sec = SecuritySpec(protocol="SASL_PLAINTEXT", sasl=SaslSpec("SCRAM-SHA-512", "KU", "KP"))
    spec = ClusterSpec(
        name="local",
        directory=".",
        bootstrap_servers=(local_broker,),
        request_timeout_ms=1500,
        security=sec,
    )
    start = time.monotonic()
    with pytest.raises(ClusterAuthError) as info:
        KafkaAdmin(spec, environ={"KU": "bob", "KP": "hunter2-secret"})
    assert time.monotonic() - start < 1.5 + 2.0
    assert "hunter2-secret" not in str(info.value)
    assert "UnsupportedSaslMechanism" in str(info.value)


# ---------------------------------------------------------------- batching


@pytest.mark.slow
def test_describing_a_thousand_topics_costs_as_many_requests_as_describing_ten(
    local_broker: str, topic_prefix: str, count_requests: Counter[str]
) -> None:
    # A patient adapter: on a loaded machine one CreateTopics of 1,000 topics can outlast the
    # other tests' 3 s, and a retry would be counted as a second request.
    admin = KafkaAdmin(spec_for(local_broker, timeout_ms=60_000))
    b = broker_id(admin)
    small = [NewTopic(f"{topic_prefix}s{i:04d}", {0: (b,)}) for i in range(10)]
    large = [
        NewTopic(f"{topic_prefix}l{i:04d}", {0: (b,)}, {"retention.ms": "1000"})
        for i in range(1000)
    ]

    count_requests.clear()
    assert all(e is None for e in admin.create_topics(small).values())
    create_small = Counter(count_requests)
    count_requests.clear()
    assert all(e is None for e in admin.create_topics(large).values())
    # a create is one Metadata look-up of the new names, one CreateTopics and one Metadata
    # check of their assignments, whatever the number of topics (KafkaAdminClient asked
    # Metadata for the controller once, in broker_id above: it keeps the answer)
    assert count_requests == create_small == Counter({"CreateTopics": 1, "Metadata": 2})

    count_requests.clear()
    s = admin.describe([t.name for t in small])
    describe_small = dict(count_requests)
    count_requests.clear()
    big = admin.describe([t.name for t in large])
    assert dict(count_requests) == describe_small
    assert describe_small["Metadata"] == 1
    assert describe_small["DescribeConfigs"] == 1 + len(s.brokers)
    assert len(big.topics) == 1000
    assert all(t.config == {"retention.ms": "1000"} for t in big.topics.values())

    count_requests.clear()
    results = admin.delete_topics([t.name for t in large])
    admin.close()
    assert all(e is None for e in results.values())
    assert dict(count_requests) == {"DeleteTopics": 1}


def test_every_request_the_adapter_builds_encodes_at_every_protocol_version(
    local_broker: str, topic_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real Kafka 3.x/4.x negotiate other versions than Tansu does; each request kgitops
    builds (including the APIs Tansu lacks) must encode and decode at every version."""
    from kafka.net.connection import KafkaConnection

    built: list[Any] = []
    original = KafkaConnection._send_request

    def recording(self: object, request: Any, *args: object, **kwargs: object) -> object:
        built.append(request)
        return original(self, request, *args, **kwargs)

    monkeypatch.setattr(KafkaConnection, "_send_request", recording)
    monkeypatch.setattr(Transport, "supports", lambda self, cls: True)
    a = KafkaAdmin(spec_for(local_broker))
    try:
        b = broker_id(a)
        name = topic_prefix + "x"
        a.create_topics([NewTopic(name, {0: (b,)}, {"retention.ms": "1000"})])
        a.alter_topic_configs({name: ConfigChange(set={"segment.ms": "1000"}, delete=("x",))})
        a.alter_broker_configs({b: ConfigChange(set={"leader.replication.throttled.rate": "1"})})
        for call in (
            lambda: a.create_partitions([NewPartitions(name, 2, {1: (b,)})]),
            lambda: a.alter_reassignments({(name, 0): (b,), (name, 1): None}),
            lambda: a.elect_preferred_leaders([(name, 0)]),
            lambda: a.describe(),  # with DescribeLogDirs, which Tansu lacks
        ):
            with contextlib.suppress(UnsupportedOperation):
                call()
        a.delete_topics([name])
    finally:
        a.close()
    ours = {
        "MetadataRequest",
        "CreateTopicsRequest",
        "DescribeConfigsRequest",
        "IncrementalAlterConfigsRequest",
        "CreatePartitionsRequest",
        "AlterPartitionReassignmentsRequest",
        "ElectLeadersRequest",
        "DescribeLogDirsRequest",
        "ListPartitionReassignmentsRequest",
        "DeleteTopicsRequest",
    }
    # built by kafka-python's KafkaAdminClient (with plain tuples inside, which encode but
    # have no to_dict): checked to encode and decode at every version only
    library = {"ElectLeadersRequest"}
    assert {type(r).__name__ for r in built} >= ours
    for request in (r for r in built if type(r).__name__ in ours):
        cls = type(request)
        for version in range(cls.min_version, cls.max_version + 1):
            data = request.encode(version=version, header=False)
            again = cls.decode(data, version=version, header=False)
            if cls.__name__ in library:
                continue
            assert _set(again.to_dict()) == _set(request.to_dict()), (cls.__name__, version)


def _set(value: Any) -> Any:
    """A to_dict() without the fields left unset (None), which versions differ in having."""
    if isinstance(value, dict):
        return {k: _set(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_set(v) for v in value]
    return value


def test_a_cluster_nobody_answers_is_one_error_line_from_the_cli(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from kgitops.cli import main

    cluster_folder(
        tmp_path, "gone", bootstrap=f"127.0.0.1:{free_port()}", extra="requestTimeoutMs: 1500\n"
    )
    start = time.monotonic()
    code = main(["snapshot", str(tmp_path), "--out", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert code == 1
    assert time.monotonic() - start < 1.5 + 3.0
    assert err.startswith("error: cannot reach cluster 'gone'")
    assert "Traceback" not in err and "kafka." not in err
