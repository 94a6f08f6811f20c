"""murmur2 and the key partitioner are exactly Kafka's."""

from __future__ import annotations

import random

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kgitops.placement.partitioner import murmur2, partition_for, to_positive

# Kafka's UtilsTest.testMurmur2
KAFKA_CASES = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("data", "expected"), KAFKA_CASES.items())
def test_murmur2_matches_kafkas_utils_test(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_murmur2_agrees_with_kafka_python_on_100000_random_keys() -> None:
    rng = random.Random(20261121)
    for _ in range(100_000):
        key = rng.randbytes(rng.randrange(0, 64))
        ours = murmur2(key)
        assert -(2**31) <= ours < 2**31
        assert ours & 0xFFFFFFFF == kafka_python_murmur2(key)  # kafka-python is unsigned


def test_to_positive_masks_the_sign_bit_rather_than_taking_abs() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


def test_partition_is_to_positive_of_murmur2_modulo_count() -> None:
    assert partition_for("foobar", 12) == (-790332482 & 0x7FFFFFFF) % 12
    assert partition_for(b"21", 7) == (-973932308 & 0x7FFFFFFF) % 7


def test_string_keys_hash_as_utf8() -> None:
    assert partition_for("ключ", 10) == partition_for("ключ".encode(), 10)


def test_zero_partitions_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        partition_for("k", 0)


def test_the_command_answers_for_every_partition_count_kafka_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Kafka's partition count is a Java int; its own partitioner tests use
    Integer.MAX_VALUE partitions, so ``partition`` takes any count up to 2,147,483,647."""
    from kgitops.cli import main

    keys = ["user-1", "order-42", ""]
    assert main(["partition", "--partitions", "2147483647", *keys]) == 0
    expected = [(kafka_python_murmur2(k.encode()) & 0x7FFFFFFF) % 2147483647 for k in keys]
    assert capsys.readouterr().out.split() == [str(p) for p in expected]
