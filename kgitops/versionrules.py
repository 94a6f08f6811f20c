"""Kafka's version-dependent replication rules: one function per rule, each citing its source.

cluster.yaml ``kafkaVersion: "3.6"`` says which Kafka a cluster runs; validate, plan, status and
the simulated cluster all ask these functions, so they can never disagree about a rule::

    rule                                   3.6     3.7     4.0     4.1
    effective min ISR (min.insync 3, RF 2)  3       2       2       2
    HW frozen while under min ISR          no      yes     yes     yes
    ELR on by default (new clusters)       no      no      no      yes
    minimum segment.bytes                  14      14      1 MiB   1 MiB
    share of a replication throttle used   21/22   21/22   23/24   23/24

A cluster.yaml without ``kafkaVersion`` gets ``DEFAULT_VERSION`` (the Kafka kgitops is
tested against); the admin API does not report a broker's version.
"""

from __future__ import annotations

import re

KafkaVersion = tuple[int, int]

#: The version a cluster without ``kafkaVersion`` is taken to run (kgitops' real-Kafka tests
#: run 4.1.2).
DEFAULT_VERSION: KafkaVersion = (4, 1)

_VERSION = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})(?:\.[0-9]{1,3})?")


def parse_version(text: str) -> KafkaVersion | None:
    """``"3.7"`` or ``"4.1.2"`` -> ``(major, minor)``; None when it is not a version.

    >>> parse_version("4.1.2"), parse_version("3.7"), parse_version("latest")
    ((4, 1), (3, 7), None)
    """
    m = _VERSION.fullmatch(str(text).strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def show_version(version: KafkaVersion) -> str:
    return f"{version[0]}.{version[1]}"


def caps_min_isr(version: KafkaVersion) -> bool:
    """Whether Kafka takes min(``min.insync.replicas``, replica count) as the min ISR
    (KAFKA-15583, 3.7: ``Partition.effectiveMinIsr`` on the leader and
    ``ReplicationControlManager.getTopicEffectiveMinIsr`` on the controller)."""
    return version >= (3, 7)


def effective_min_isr(min_isr: int, replicas: int, version: KafkaVersion) -> int:
    """The number of in-sync replicas an ``acks=all`` write needs.

    >>> effective_min_isr(3, 2, (4, 1)), effective_min_isr(3, 2, (3, 6))
    (2, 3)
    """
    if caps_min_isr(version) and replicas > 0:
        return min(min_isr, replicas)
    return min_isr


def hw_frozen_under_min_isr(version: KafkaVersion) -> bool:
    """Whether the leader stops advancing the high watermark while its ISR is below the
    effective min ISR (KAFKA-15583, 3.7: ``Partition.maybeIncrementLeaderHW``): records written
    with acks=1 then are not readable until the ISR grows back."""
    return version >= (3, 7)


def elr_default(version: KafkaVersion) -> bool:
    """Whether a new cluster keeps eligible leader replicas (KIP-966) without being told:
    ``eligible.leader.replicas.version=1`` is the default feature level from 4.1."""
    return version >= (4, 1)


def min_segment_bytes(version: KafkaVersion) -> int:
    """The smallest ``segment.bytes`` a topic may have: 1 MiB from 4.0 (KIP-1030), before it
    a legacy record's overhead (14 bytes, ``LegacyRecord.RECORD_OVERHEAD_V0``)."""
    return 1024 * 1024 if version >= (4, 0) else 14


def throttle_delivered(version: KafkaVersion) -> float:
    """The share of a ``*.replication.throttled.rate`` a throttled move gets, on average.

    ``ReplicationQuotaManager`` holds a fetch back while its ``SimpleRate`` -- the bytes in the
    window over ``now`` minus the oldest sample's start -- is above the rate. The window has
    ``replication.quota.window.num`` (11) samples of 1 s, plus one "overlapping sample" since
    3.8 (``SampledStat``, apache/kafka#15889). A follower held back waits
    ``replica.fetch.backoff.ms`` (1 s, one sample) and then fetches in a burst, so the window
    counts one burst more than the sample lengths it divides by: traffic that comes in bursts
    gets 11/12 of the rate (10/11 before 3.8), smooth traffic all of it. kgitops takes the
    midpoint, at most 4.3 % off either way: 290 MB at 5 MB/s copied at 0.958 of the rate on
    Kafka 4.1.2 here (docs/apply.md, ETA).

    >>> throttle_delivered((4, 1)), throttle_delivered((3, 7))
    (0.9583333333333334, 0.9545454545454546)
    """
    n = 11  # replication.quota.window.num's default
    slots = n + 1 if version >= (3, 8) else n
    return (2 * slots - 1) / (2 * slots)  # halfway between (slots - 1) / slots and 1
