"""Kafka's own code as the referee: kgitops' placement against Kafka 3.9.1's
``AdminUtils.assignReplicasToBrokers`` and its added-partitions rule, run in one JVM
(kafka_oracle.py), on a fixed-seed sample; ``benchmarks/placement_oracle.py`` runs a million.

Marked ``kafka``: skipped with the reason where java, javac or mvn is missing, a failure
instead when ``KGITOPS_REQUIRE_KAFKA=1``."""

from __future__ import annotations

import os
from collections.abc import Iterator

import kafka_oracle as ko
import pytest

from kgitops.model import Broker
from kgitops.placement import assignment

pytestmark = pytest.mark.kafka

SEED = 20_261_126
SAMPLE = 4_000


@pytest.fixture(scope="module")
def referee() -> Iterator[ko.Oracle]:
    required = os.environ.get("KGITOPS_REQUIRE_KAFKA") == "1"
    try:
        built = ko.build()
    except ko.OracleUnavailable as exc:
        if required:
            pytest.fail(f"KGITOPS_REQUIRE_KAFKA=1 but the placement referee cannot run: {exc}")
        pytest.skip(f"the placement referee cannot run: {exc}")
    with ko.Oracle(built) as oracle:
        yield oracle


def test_kgitops_places_as_kafka_39_admin_utils_on_a_fixed_seed_sample(
    referee: ko.Oracle,
) -> None:
    outcome = ko.Outcome()
    for batch in ko.batches(SEED, SAMPLE):
        ko.compare(referee, batch, outcome)
    assert outcome.cases == SAMPLE
    assert outcome.mismatch_count == 0, "\n".join(ko.describe(*m) for m in outcome.mismatches)
    # the sample reaches every kind of answer: placements, Kafka's refusals, and both sides
    # of its 32-bit limits
    assert outcome.verdicts["placed"] > SAMPLE // 2
    assert outcome.verdicts["refused"] > 100
    assert outcome.refusals["IndexOutOfBoundsException"] > 0


def test_the_referee_catches_a_rack_order_by_code_point(
    referee: ko.Oracle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka sorts racks as Java Strings (UTF-16 code units): U+1F600 before U+FF21. A
    placement that sorts by code point differs, and the referee says so."""
    racks = {0: "\U0001f600", 1: "\uff21", 2: "\U0001f600", 3: "\uff21"}
    case = ko.Case("create", tuple(Broker(i, r) for i, r in racks.items()), partitions=4, rf=2)
    [kafka] = referee.ask([ko.java_line(case)])
    assert ko.verdict(ko.kgitops_answer(case), kafka) == "placed"
    monkeypatch.setattr(assignment, "_java_order", lambda text: text)
    monkeypatch.setattr(assignment, "_LAYOUTS", {})
    monkeypatch.setattr(assignment, "_TOPICS", {})
    monkeypatch.setattr(assignment, "_LAST", [None, None, None, None])  # the last layout
    assert ko.verdict(ko.kgitops_answer(case), kafka) == "mismatch"


def test_a_refusal_must_be_kafkas_refusal(referee: ko.Oracle) -> None:
    """Partial rack information: Kafka throws AdminOperationException, kgitops refuses with
    Kafka's message; forcing rack-unaware placement is Kafka given no racks."""
    brokers = (Broker(1, "a"), Broker(2), Broker(3, "b"))
    partial = ko.Case("create", brokers, partitions=3, rf=2)
    unaware = ko.Case("create", brokers, rack_aware=False, partitions=3, rf=2)
    kafka = referee.ask([ko.java_line(partial), ko.java_line(unaware)])
    assert kafka[0].startswith("ERR AdminOperationException Not all brokers have rack")
    assert ko.verdict(ko.kgitops_answer(partial), kafka[0]) == "refused"
    assert ko.verdict(ko.kgitops_answer(unaware), kafka[1]) == "placed"
    assert ko.verdict("OK 0:1.2 1:2.3 2:3.1", kafka[0]) == "mismatch"


def test_a_start_index_and_shift_pair_is_one_fixed_start_index(referee: ko.Oracle) -> None:
    """kgitops' (start index, replica shift) = Kafka's fixedStartIndex F with F = s mod n and
    F = h mod (n - 1): every pair on 6 brokers agrees with Kafka."""
    six = tuple(Broker(i, f"r{i % 3}") for i in (0, 2, 5, 7, 8, 11))
    cases = [
        ko.Case("create", six, partitions=13, rf=3, start_index=s, replica_shift=h)
        for s in range(6)
        for h in range(5)
    ]
    kafka = referee.ask([ko.java_line(c) for c in cases])
    assert [ko.verdict(ko.kgitops_answer(c), k) for c, k in zip(cases, kafka, strict=True)] == [
        "placed"
    ] * len(cases)
    assert len(set(kafka)) == len(cases)  # 30 different placements, all Kafka's


def test_a_negative_sum_that_skips_a_broker_walks_on_as_kafka_does(referee: ko.Oracle) -> None:
    """256 brokers on 256 racks, start index just below 2^24: shift x racks wraps to a small
    negative int. A negative sum visits every position but one, so with (almost) every broker
    taken Kafka's walk goes round until the sum reaches 0; kgitops jumps there and lands on
    the same replicas (a short stretch here, so the JVM's loop is short too)."""
    brokers = tuple(Broker(i, f"r{i:03d}") for i in range(256))
    cases = [
        ko.Case("create", brokers, partitions=1, rf=rf, start_index=fixed,
                start_partition=(first - fixed) % 256)
        for fixed in range(2**24 - 12, 2**24)
        for first in (253, 255)
        for rf in (2, 255, 256)
    ]  # fmt: skip
    # 300 brokers on 256 racks, racks 2..45 with two brokers: when the negative stretch
    # misses the only broker of the last unused rack, brokers of used racks are left to place
    racks = [f"r{i:03d}" for i in range(256)] + [f"r{i:03d}" for i in range(2, 46)]
    shared = tuple(Broker(i, r) for i, r in enumerate(racks))
    cases += [
        ko.Case("create", shared, partitions=1, rf=rf, start_index=fixed,
                start_partition=(299 - fixed) % 300)
        for fixed in range(2**24 - 12, 2**24)
        for rf in (2, 150, 280, 300)
    ]  # fmt: skip
    kafka = referee.ask([ko.java_line(c) for c in cases])
    verdicts = [ko.verdict(ko.kgitops_answer(c), k) for c, k in zip(cases, kafka, strict=True)]
    assert verdicts == ["placed"] * len(cases)
