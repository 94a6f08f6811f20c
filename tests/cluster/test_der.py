"""The DER reader of key files (``kgitops.cluster.kafka.der``) on hostile input: a
``ValueError`` naming what is wrong, at once, never another exception nor a long wait."""

from __future__ import annotations

import time

import pytest

from kgitops.cluster.kafka.der import MAX_OID, elements, oid


def test_the_oids_kgitops_compares_read_as_dotted_text() -> None:
    assert oid(bytes.fromhex("2a864886f70d01050d")) == "1.2.840.113549.1.5.13"
    assert oid(bytes.fromhex("2a864886f70d010c0103")) == "1.2.840.113549.1.12.1.3"
    assert oid(bytes.fromhex("8837")) == "2.999"  # a first arc of 2 takes the rest


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"\x30", "cut short"),
        (b"\x30\x05\x01", "longer than its container"),
        (b"\x30\x80\x00\x00", "not definite"),  # BER's indefinite length
        (b"\x30\x85\x01\x00\x00\x00\x00", "not definite"),  # a 5-byte length
        (b"\x30\x84\xff\xff\xff\xff\x00", "longer than its container"),  # 4 GiB claimed
        (b"\x1f\x81\x01\x00", "more than one byte"),  # a high tag number
    ],
)
def test_a_malformed_encoding_is_a_value_error(data: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        elements(data)


def test_an_oid_cut_short_is_refused_not_read_as_its_prefix() -> None:
    """``...01 05 0d 86``: the last arc says another byte follows; read as PBES2 before."""
    with pytest.raises(ValueError, match="cut short"):
        oid(bytes.fromhex("2a864886f70d01050d86"))


def test_a_huge_oid_is_refused_at_once() -> None:
    """Each byte of an arc shifts a Python int: 400 KB of continuation bytes took ~20 s of
    CPU (quadratic) before the length cap."""
    started = time.process_time()
    for body in (b"\xff" * 400_000 + b"\x01", b"\x01" * (MAX_OID + 1)):
        with pytest.raises(ValueError, match=f"over {MAX_OID} bytes"):
            oid(body)
    assert time.process_time() - started < 1.0
