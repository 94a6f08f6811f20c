"""The numpy murmur2 kernel (the Arrow fallback) is exactly Kafka's murmur2."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.analytics.kernel import murmur2_arrow
from kgitops.placement.partitioner import murmur2
from tests.analytics.conftest import keys_of_every_kind


def test_kernel_matches_kafka_test_vectors() -> None:
    # Kafka's UtilsTest: murmur2("21") and murmur2("foobar")
    got = murmur2_arrow(pa.array([b"21", b"foobar"], pa.binary()))
    assert [int(x) for x in got] == [-973932308, -790332482]


def test_kernel_equals_partitioner_on_keys_of_every_kind() -> None:
    keys = keys_of_every_kind()
    got = murmur2_arrow(pa.array(keys, pa.binary()))
    assert [int(x) for x in got] == [murmur2(k) for k in keys]


def test_kernel_reads_sliced_large_and_string_arrays() -> None:
    keys = keys_of_every_kind()
    sliced = pa.array(keys, pa.binary()).slice(20, 50)
    assert [int(x) for x in murmur2_arrow(sliced)] == [murmur2(k) for k in keys[20:70]]
    large = pa.array(keys, pa.large_binary())
    assert [int(x) for x in murmur2_arrow(large)] == [murmur2(k) for k in keys]
    text = ["héllo", "", "user-1"]
    assert [int(x) for x in murmur2_arrow(pa.array(text))] == [murmur2(t.encode()) for t in text]
    chunked = pa.chunked_array([keys[:10], keys[10:30]], pa.binary())
    assert [int(x) for x in murmur2_arrow(chunked)] == [murmur2(k) for k in keys[:30]]


def test_kernel_hashes_a_null_slot_as_the_empty_key_without_reading_its_bytes() -> None:
    got = murmur2_arrow(pa.array([b"abcde", None, b"xy"], pa.binary()))
    assert [int(x) for x in got] == [murmur2(b"abcde"), murmur2(b""), murmur2(b"xy")]


def test_kernel_on_an_empty_batch_is_empty() -> None:
    assert len(murmur2_arrow(pa.array([], pa.binary()))) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=120), max_size=40))
def test_kernel_equals_partitioner_for_any_batch(keys: list[bytes]) -> None:
    got = murmur2_arrow(pa.array(keys, pa.binary()))
    assert [int(x) for x in got] == [murmur2(k) for k in keys]
