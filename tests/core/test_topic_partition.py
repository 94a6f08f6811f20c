"""TopicPartition: the one key for a partition, printed as Kafka's tools print it."""

from __future__ import annotations

from kgitops.model import TopicPartition


def test_a_topic_partition_prints_as_topic_dash_partition_even_when_the_topic_has_dashes() -> None:
    assert str(TopicPartition("payments-eu", 12)) == "payments-eu-12"


def test_a_topic_partition_sorts_by_topic_then_partition_number_not_text() -> None:
    tps = [TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 9)]
    assert sorted(tps) == [TopicPartition("a", 9), TopicPartition("a", 10), TopicPartition("b", 0)]


def test_a_mapping_keyed_by_topic_partition_answers_the_plain_tuple_too() -> None:
    results = {TopicPartition("a", 0): None}
    assert ("a", 0) in results
    topic, partition = TopicPartition("a", 0)
    assert (topic, partition) == ("a", 0)
