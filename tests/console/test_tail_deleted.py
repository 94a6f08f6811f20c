"""`tail --follow` on a topic deleted under it, whichever request first meets the deletion: the
adapter's consumer (kgitops/cluster/kafka/tail.py) is replaced at its kafka-python boundary
(``topic_consumer``) by one that answers as kafka-python 3.0 does on Kafka 4.1.

A Fetch that meets UNKNOWN_TOPIC_OR_PARTITION raises nothing: kafka-python refreshes the
metadata of the topic, and the Metadata answer naming that one topic unknown fails the refresh
with ``UnknownTopicOrPartitionError``, raised to whatever call waits on it next (the real
cluster test is tests/console/test_console_real.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.errors import UnknownTopicIdError, UnknownTopicOrPartitionError

from kgitops.cluster.kafka import tail
from kgitops.cluster.kafka.errors import translate
from kgitops.errors import ClusterRequestError, KgitopsError
from kgitops.model import ClusterSpec
from kgitops.records import TailRequest

TOPIC = "orders"
GONE = f"topic '{TOPIC}' no longer exists on the cluster (deleted while tail followed it)"
#: requestTimeoutMs 1000: the idle check comes after 0.25 s of quiet
SPEC = ClusterSpec(
    name="c", directory=".", bootstrap_servers=("127.0.0.1:1",), request_timeout_ms=1000
)


class Consumer:
    """A group-less consumer of TOPIC's partitions 0 and 1, ``end`` records each. ``pft``,
    ``listing`` and ``polls``: what ``partitions_for_topic``, ``topics`` and ``poll`` answer,
    in turn (an exception is raised; the last answer repeats)."""

    def __init__(
        self, *, pft: list[Any], listing: list[Any], polls: list[Any], end: int = 0
    ) -> None:
        self.pft, self.listing, self.polls, self.end = pft, listing, polls, end
        self.calls: list[str] = []
        self.positions: dict[Any, int] = {}

    @staticmethod
    def _next(answers: list[Any]) -> Any:
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def partitions_for_topic(self, topic: str) -> set[int]:
        self.calls.append("partitions_for_topic")
        return set(self._next(self.pft))

    def topics(self) -> set[str]:
        self.calls.append("topics")
        return set(self._next(self.listing))

    def poll(self, timeout_ms: int = 0, max_records: int = 500) -> dict[Any, list[Any]]:
        self.calls.append("poll")
        time.sleep(timeout_ms / 1000)
        return dict(self._next(self.polls))

    def end_offsets(self, tps: list[Any], timeout_ms: int | None = None) -> dict[Any, int]:
        self.calls.append("end_offsets")
        return dict.fromkeys(tps, self.end)

    def beginning_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return dict.fromkeys(tps, 0)

    def assign(self, tps: list[Any]) -> None:
        self.positions = dict.fromkeys(tps, 0)

    def seek(self, tp: Any, offset: int) -> None:
        self.positions[tp] = offset

    def position(self, tp: Any) -> int:
        return self.positions[tp]

    def pause(self, *tps: Any) -> None:
        pass

    resume = pause


@pytest.fixture
def consumer(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Consumer]]:
    """Makes ``tail`` open the Consumer put in the list; library errors are translated as
    ``reader_client`` translates them (one ``ClusterError`` naming Fetch)."""
    made: list[Consumer] = []

    @contextlib.contextmanager
    def fake(spec: Any, topic: str, call: str, environ: Any, *, absent: str) -> Iterator[Any]:
        try:
            yield made[0], {0, 1}
        except KgitopsError:
            raise
        except Exception as exc:
            raise translate(exc, call) from None

    monkeypatch.setattr(tail, "topic_consumer", fake)
    yield made


def _follow(timeout: float) -> tuple[BaseException | None, float]:
    """Follows TOPIC from its end for at most ``timeout`` s: what ended it, and when."""
    started = time.monotonic()
    try:
        for _batch in tail.follow_messages(SPEC, TailRequest(TOPIC, timeout=timeout)):
            pass
    except Exception as exc:
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


def _unknown() -> UnknownTopicOrPartitionError:
    return UnknownTopicOrPartitionError(TOPIC)


def test_a_fetch_meeting_the_deletion_ends_follow_with_no_longer_exists(
    consumer: list[Consumer],
) -> None:
    """The Fetch's metadata refresh of the topic is under way when the idle check asks the
    consumer's metadata: ``partitions_for_topic`` and then ``topics`` wait for it and raise its
    UNKNOWN_TOPIC_OR_PARTITION (it was the CI race's raw "Fetch: the broker refused the
    request: UNKNOWN_TOPIC_OR_PARTITION" line); the listing of every topic lacks it."""
    consumer.append(Consumer(pft=[_unknown()], listing=[_unknown(), {"other"}], polls=[{}]))
    exc, took = _follow(timeout=5)
    assert isinstance(exc, ClusterRequestError), exc
    assert str(exc) == GONE and exc.code == "UNKNOWN_TOPIC_OR_PARTITION"
    assert took < 2, took  # at the first idle check, not at the timeout
    assert consumer[0].calls.count("topics") == 2  # the failed refresh, then every topic


@pytest.mark.parametrize("error", [UnknownTopicOrPartitionError, UnknownTopicIdError])
def test_a_poll_raising_the_deletion_ends_follow_with_no_longer_exists(
    consumer: list[Consumer], error: type[Exception]
) -> None:
    """The poll itself raises the failed refresh (or UNKNOWN_TOPIC_ID); ``topics`` first
    raises the same refresh's error, then lists every topic but this one. The consumer's
    cache still lists it: before, the next checks found it and the leaders answering, and
    follow never ended."""
    consumer.append(
        Consumer(pft=[{0, 1}], listing=[error(TOPIC), {"other"}], polls=[error(TOPIC), {}])
    )
    exc, took = _follow(timeout=3)
    assert isinstance(exc, ClusterRequestError) and str(exc) == GONE, exc
    assert took < 1, took


def test_a_refresh_failing_while_the_cluster_still_lists_the_topic_goes_on_following(
    consumer: list[Consumer],
) -> None:
    """A broker's lagging metadata (or a leader moving) answers UNKNOWN_TOPIC_OR_PARTITION
    while the cluster still lists the topic: no "no longer exists", and no raw error; the
    leaders are asked and following goes on until its timeout."""
    consumer.append(
        Consumer(
            pft=[_unknown(), _unknown(), {0, 1}],
            listing=[_unknown(), {TOPIC, "other"}],
            polls=[_unknown(), {}],
        )
    )
    exc, took = _follow(timeout=2)
    assert exc is None, exc
    assert took >= 2
    calls = consumer[0].calls
    assert calls.count("end_offsets") >= 3  # every idle check asked the leaders
    assert calls.count("partitions_for_topic") >= 3


def test_the_cluster_not_answering_the_confirmation_keeps_the_check_going(
    consumer: list[Consumer],
) -> None:
    """The confirming Metadata fails otherwise (the cluster does not answer): the topic is
    not called deleted on one broker's word; the leaders' check decides."""
    from kafka.errors import KafkaTimeoutError

    consumer.append(Consumer(pft=[_unknown(), {0, 1}], listing=[KafkaTimeoutError()], polls=[{}]))
    exc, _took = _follow(timeout=1)
    assert exc is None, exc


def test_a_deletion_met_while_the_backlog_is_read_ends_follow_with_no_longer_exists(
    consumer: list[Consumer],
) -> None:
    """Each partition has a record to read first (the ``--max`` backlog); the poll reading it
    raises the failed refresh of the topic, and every topic's list lacks it."""
    consumer.append(Consumer(pft=[{0, 1}], listing=[{"other"}], polls=[_unknown()], end=1))
    exc, took = _follow(timeout=3)
    assert isinstance(exc, ClusterRequestError) and str(exc) == GONE, exc
    assert took < 1, took
    assert consumer[0].calls == ["end_offsets", "poll", "topics"]  # read from the backlog
