"""Retries at the kafka-python boundary: retriable item codes are sent again, only those items,
with backoff, until the deadline; everything else is answered at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from types import SimpleNamespace

import kafka.errors as kerr
import pytest

from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.describe import Describe
from kgitops.cluster.kafka.tls import TlsAdvice
from kgitops.cluster.kafka.topics import TopicWrites
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.errors import ClusterRequestError, ClusterTimeout, ClusterUnreachable
from kgitops.model import ClusterSpec


def transport(timeout_ms: int = 2000, manager: object = None) -> Transport:
    sender = Transport(manager, timeout_ms=timeout_ms, tls=TlsAdvice("c", "b:9092", "PLAINTEXT"))
    sender.controller = 1
    return sender


def bare_admin(timeout_ms: int = 2000, manager: object = None) -> KafkaAdmin:
    """A KafkaAdmin over a transport that sends through ``manager`` (no connection)."""
    admin = object.__new__(KafkaAdmin)
    admin._timeout_ms = timeout_ms
    admin._secrets = ()
    admin._transport = transport(timeout_ms, manager)
    admin._reads = Describe(admin._transport, None, ClusterSpec("c", "."), timeout_ms)
    admin._writes = TopicWrites(admin._transport, None, timeout_ms)
    return admin


class Scripted:
    """A broker that answers each attempt from a script: item -> code per attempt."""

    def __init__(self, script: dict[str, list[int]]) -> None:
        self.script = script
        self.calls: list[list[str]] = []

    def __call__(self, items: Sequence[str]) -> dict[str, tuple[int, str | None]]:
        self.calls.append(list(items))
        attempt = len(self.calls) - 1
        return {i: (self.script[i][min(attempt, len(self.script[i]) - 1)], None) for i in items}


def test_only_items_with_retriable_codes_are_sent_again() -> None:
    broker = Scripted({"a": [0], "b": [7, 0], "c": [36]})  # 7 REQUEST_TIMED_OUT, 36 exists
    out = transport().batched("CreateTopics", ["a", "b", "c"], str, broker)
    assert broker.calls == [["a", "b", "c"], ["b"]]
    assert out["a"] is None and out["b"] is None
    assert isinstance(out["c"], ClusterRequestError) and out["c"].code == "TOPIC_ALREADY_EXISTS"


def test_an_item_that_stays_retriable_fails_by_the_deadline() -> None:
    broker = Scripted({"a": [7]})
    start = time.monotonic()
    out = transport(timeout_ms=800).batched("DeleteTopics", ["a"], str, broker)
    assert time.monotonic() - start < 2.0
    assert len(broker.calls) >= 2
    assert isinstance(out["a"], ClusterTimeout)


def test_already_exists_after_a_retried_create_counts_as_created() -> None:
    broker = Scripted({"a": [7, 36]})
    out = transport().batched("CreateTopics", ["a"], str, broker, done_on_retry=frozenset({36}))
    assert out == {"a": None}


def test_an_unknown_topic_is_an_answer_not_a_reason_to_retry() -> None:
    broker = Scripted({"a": [3]})
    out = transport().batched("IncrementalAlterConfigs", ["a"], str, broker)
    assert len(broker.calls) == 1
    assert isinstance(out["a"], ClusterRequestError)
    assert out["a"].code == "UNKNOWN_TOPIC_OR_PARTITION"


def test_an_item_the_broker_does_not_mention_is_an_error() -> None:
    def silent(items: Sequence[str]) -> dict[str, tuple[int, str | None]]:
        return {}

    out = transport().batched("DeleteTopics", ["a"], str, silent)
    assert isinstance(out["a"], ClusterRequestError) and out["a"].code == "NO_RESPONSE"


def test_not_controller_forgets_the_controller() -> None:
    sender = transport(timeout_ms=300)
    sender.batched("ElectLeaders", ["a"], str, Scripted({"a": [41, 0]}))
    assert sender.controller is None


class FakeManager:
    """kafka-python's connection manager, answering per broker from a script."""

    def __init__(self, answers: dict[int, list[object]]) -> None:
        self.answers = answers
        self.sent: list[int] = []

    def send(self, request: object, node_id: int, request_timeout_ms: int) -> int:
        self.sent.append(node_id)
        return node_id

    async def wait_for(self, future: int, timeout_ms: int) -> object:
        script = self.answers[future]
        answer = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def run(self, fn: Callable[..., Awaitable[object]], *args: object) -> object:
        return asyncio.run(fn(*args))  # type: ignore[arg-type]


def config_entry(name: str, value: str, source: int) -> SimpleNamespace:
    return SimpleNamespace(name=name, value=value, config_source=source, synonyms=[])


def test_per_broker_reads_go_to_every_broker_and_one_failing_broker_is_an_error() -> None:
    rate = config_entry("leader.replication.throttled.rate", "100", 2)  # DYNAMIC_BROKER_CONFIG
    listeners = config_entry("listeners", "PLAINTEXT://:9092", 4)  # STATIC_BROKER_CONFIG
    ok = SimpleNamespace(results=[SimpleNamespace(error_code=0, configs=[rate, listeners])])
    manager = FakeManager(
        {1: [ok], 2: [kerr.KafkaConnectionError("refused")], None: [metadata(1, 2)]}
    )
    admin = bare_admin(timeout_ms=600, manager=manager)
    start = time.monotonic()
    # broker 2's throttle rates are unknown, not absent: a plan must not take "no rate" for it
    # (Metadata still lists it: it is up, only unreachable from here)
    with pytest.raises(ClusterUnreachable, match="could not read the configs of broker 2"):
        admin._reads._broker_configs([1, 2])
    assert time.monotonic() - start < 1.5
    assert manager.sent.count(1) == 1
    assert manager.sent.count(2) >= 2  # retried with backoff until the deadline
    assert manager.sent.count(None) == 1  # Metadata asked once more: does it still list 2?
    manager.answers[2] = [ok]
    assert admin._reads._broker_configs([1, 2]) == {
        b: {"leader.replication.throttled.rate": "100"} for b in (1, 2)
    }


def metadata(*brokers: int) -> SimpleNamespace:
    return SimpleNamespace(
        controller_id=brokers[0], brokers=[SimpleNamespace(node_id=b) for b in brokers]
    )


@pytest.mark.parametrize(
    "failure", [kerr.KafkaConnectionError("refused"), kerr.UnknownBrokerIdError("2")]
)
def test_a_broker_that_died_after_the_metadata_read_is_down_not_a_failed_read(
    failure: Exception,
) -> None:
    """Metadata listed broker 2, then it died (SIGKILL): its DescribeConfigs cannot be
    answered, and Metadata, asked again, no longer lists it (Kafka fenced it). It counts as
    down, like a broker the first Metadata had not listed; the read goes on."""
    rate = config_entry("leader.replication.throttled.rate", "100", 2)
    ok = SimpleNamespace(results=[SimpleNamespace(error_code=0, configs=[rate])])
    admin = bare_admin(
        timeout_ms=600, manager=FakeManager({1: [ok], 2: [failure], None: [metadata(1)]})
    )
    assert admin._reads._broker_configs([1, 2]) == {1: {"leader.replication.throttled.rate": "100"}}
    assert admin._reads._departed == {2}


def test_a_broker_kafka_python_no_longer_knows_fails_only_its_own_request() -> None:
    """kafka-python raises UnknownBrokerIdError at send (not in the future) for a node that
    left its Metadata: the other brokers' answers are kept."""

    class Forgetting(FakeManager):
        def send(self, request: object, node_id: int, request_timeout_ms: int) -> int:
            if node_id == 3:
                raise kerr.UnknownBrokerIdError("3")
            return super().send(request, node_id, request_timeout_ms)

    got = transport(timeout_ms=300, manager=Forgetting({4: ["fine"]})).send_each(
        {3: object(), 4: object()}
    )
    assert got[4] == "fine"
    assert isinstance(got[3], ClusterUnreachable)


def test_a_controller_bound_request_follows_the_controller_when_the_cached_one_died() -> None:
    """KRaft's Metadata names a random live broker as the controller (KIP-590); the one
    cached (1) died: the request goes to the one Metadata names now (2)."""
    resp = SimpleNamespace(error_code=0)
    manager = FakeManager({1: [kerr.UnknownBrokerIdError("1")], 2: [resp], None: [metadata(2)]})
    sender = transport(timeout_ms=2000, manager=manager)
    assert sender.send_controller(object(), lambda r: [r.error_code]) is resp
    assert manager.sent == [1, None, 2]
    assert sender.controller == 2


def test_send_each_names_why_a_broker_failed() -> None:
    manager = FakeManager({3: [kerr.KafkaTimeoutError("slow")], 4: ["fine"]})
    got = transport(timeout_ms=300, manager=manager).send_each({3: object(), 4: object()})
    assert got[4] == "fine"
    assert isinstance(got[3], ClusterTimeout)


def test_the_retry_policy_doubles_its_wait_to_the_cap_and_never_waits_past_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(time, "sleep", sleep)
    backoff = Backoff(5.0, cap=1.0)
    while backoff.wait():
        pass
    assert slept == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]  # 4.5 s: one more 1.0 passes 5.0
    assert backoff.remaining_ms() == pytest.approx(500, abs=1)


def test_a_library_call_to_a_controller_that_died_is_sent_again_to_the_one_metadata_names() -> None:
    """KafkaAdminClient caches the controller id and refreshes it only on NOT_CONTROLLER; a
    broker that died (KRaft names a random live broker, KIP-590) must not fail every call
    to the controller until the deadline: the transport makes both forget it."""
    library = SimpleNamespace(_controller_id=1)
    sender = Transport(None, timeout_ms=2000, tls=None, library=library)
    sender.controller = 1
    attempts: list[object] = []

    def elect() -> str:
        attempts.append(library._controller_id)
        if library._controller_id == 1:
            raise kerr.KafkaConnectionError("broker 1 is gone")
        return "elected"

    assert sender.controller_call("ElectLeaders", elect) == "elected"
    assert attempts == [1, None]
    assert sender.controller is None


def test_a_library_call_that_keeps_failing_is_a_kgitops_error_by_the_deadline() -> None:
    sender = Transport(None, timeout_ms=300, tls=None, library=SimpleNamespace(_controller_id=1))

    def elect() -> str:
        raise kerr.KafkaConnectionError("refused")

    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match="ElectLeaders: cannot reach the cluster"):
        sender.controller_call("ElectLeaders", elect)
    assert time.monotonic() - start < 1.0


class ResentCreate:
    """A KRaft cluster whose broker re-sent a CreateTopics to the controller after its own
    timeout (``controller.socket.timeout.ms``): the controller created the topics from the
    first copy, and the answer that reaches kgitops is the second copy's, 36 for each topic.
    ``before`` are the topics that existed before the request, ``live`` the assignments
    Metadata shows afterwards."""

    def __init__(self, before: set[str], live: dict[str, dict[int, tuple[int, ...]]]) -> None:
        self.before = before
        self.live = live
        self.created = False

    def metadata(self, names: Sequence[str] | None) -> SimpleNamespace:
        known = set(self.live) if self.created else self.before
        topics = [
            SimpleNamespace(
                name=n,
                error_code=0 if n in known else 3,
                partitions=[
                    SimpleNamespace(partition_index=p, replica_nodes=list(r))
                    for p, r in self.live.get(n, {}).items()
                ]
                if n in known
                else [],
            )
            for n in names or []
        ]
        return SimpleNamespace(topics=topics)

    def create_topics(self, wanted: dict[str, object], **_: object) -> dict[str, object]:
        """KafkaAdminClient.create_topics(..., raise_errors=False)'s answer."""
        self.created = True
        return {
            "topics": [
                {"name": n, "error_code": 36, "error_message": f"Topic '{n}' already exists."}
                for n in wanted
            ]
        }


def resent_admin(cluster: ResentCreate) -> KafkaAdmin:
    admin = bare_admin()
    admin._transport.live_brokers = (1, 2, 3, 4)
    admin._transport.metadata = cluster.metadata  # type: ignore[method-assign]
    admin._writes._client = cluster
    return admin


def test_already_exists_from_a_create_kafka_resent_is_created_when_the_topic_is_as_asked() -> None:
    """Found creating 1,000 topics (3,000 partitions) in one request on a busy 4-broker Kafka
    4.1.2 cluster: every topic answered TOPIC_ALREADY_EXISTS, every topic was there with its
    assignment, and apply reported that it changed nothing."""
    from kgitops.cluster.port import NewTopic

    cluster = ResentCreate(before=set(), live={"a": {0: (1, 2, 3)}, "b": {0: (2, 3, 4)}})
    out = resent_admin(cluster).create_topics(
        [NewTopic("a", {0: (1, 2, 3)}), NewTopic("b", {0: (2, 3, 4)})]
    )
    assert out == {"a": None, "b": None}


def test_already_exists_for_a_topic_that_existed_before_stays_an_error() -> None:
    from kgitops.cluster.port import NewTopic

    # the same assignment as asked: still not this request's doing
    cluster = ResentCreate(before={"old"}, live={"old": {0: (1, 2, 3)}, "new": {0: (2, 3, 4)}})
    out = resent_admin(cluster).create_topics(
        [NewTopic("old", {0: (1, 2, 3)}), NewTopic("new", {0: (2, 3, 4)})]
    )
    assert isinstance(out["old"], ClusterRequestError)
    assert out["old"].code == "TOPIC_ALREADY_EXISTS"
    assert out["new"] is None


def test_already_exists_with_another_assignment_stays_an_error() -> None:
    """Absent just before, there afterwards but not as asked: someone else created it."""
    from kgitops.cluster.port import NewTopic

    cluster = ResentCreate(before=set(), live={"a": {0: (4, 3, 2)}})
    out = resent_admin(cluster).create_topics([NewTopic("a", {0: (1, 2, 3)})])
    assert isinstance(out["a"], ClusterRequestError)
    assert out["a"].code == "TOPIC_ALREADY_EXISTS"


def test_a_name_metadata_does_not_deny_is_not_absent_so_already_exists_stays_an_error() -> None:
    """TOPIC_AUTHORIZATION_FAILED (29) in the look-up is no proof the topic was absent: a
    TOPIC_ALREADY_EXISTS for it is not taken for this request's own create."""
    from kgitops.cluster.port import NewTopic

    cluster = ResentCreate(before=set(), live={"a": {0: (1, 2, 3)}})
    real = cluster.metadata

    def hidden(names: Sequence[str] | None) -> SimpleNamespace:
        md = real(names)
        if not cluster.created:
            for t in md.topics:
                t.error_code = 29
        return md

    cluster.metadata = hidden  # type: ignore[method-assign]
    out = resent_admin(cluster).create_topics([NewTopic("a", {0: (1, 2, 3)})])
    assert isinstance(out["a"], ClusterRequestError)
    assert out["a"].code == "TOPIC_ALREADY_EXISTS"


class LostAnswer:
    """A controller that does what the first request asks and whose answer is lost (the
    client times out): the request is sent again and answered about what the first did."""

    def __init__(self, second: int) -> None:
        self.calls = 0
        self.second = second

    def delete_topics(self, names: list[str], **_: object) -> dict[str, object]:
        self.calls += 1
        if self.calls == 1:
            raise kerr.KafkaTimeoutError("no answer in time")
        return {"topics": [{"name": n, "error_code": self.second} for n in names]}


def test_a_delete_whose_answer_was_lost_and_sent_again_is_done() -> None:
    admin = bare_admin()
    controller = LostAnswer(second=3)  # UNKNOWN_TOPIC_OR_PARTITION: the first one deleted it
    admin._writes._client = controller
    assert admin.delete_topics(["a", "b"]) == {"a": None, "b": None}
    assert controller.calls == 2


def test_a_first_delete_of_an_unknown_topic_is_still_an_error() -> None:
    admin = bare_admin()
    controller = LostAnswer(second=3)
    controller.calls = 1  # answered at once: no resend
    admin._writes._client = controller
    out = admin.delete_topics(["a"])
    assert isinstance(out["a"], ClusterRequestError)
    assert out["a"].code == "UNKNOWN_TOPIC_OR_PARTITION"
