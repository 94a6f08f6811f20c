"""The replication warnings, in one place: ``kgitops validate`` and ``kgitops plan`` both ask.

Two settings make a topic fragile without being wrong::

    RF_ONE             replicationFactor 1: one copy; its broker's failure makes the topic
                       unavailable and may lose it
    MIN_ISR_EQUALS_RF  min.insync.replicas = replicationFactor > 1: one broker down stops
                       producers with acks=all
    MIN_ISR_ABOVE_RF   min.insync.replicas > replicationFactor on Kafka 3.7+, which counts
                       it as the replica count (``versionrules.effective_min_isr``): with
                       RF > 1, as MIN_ISR_EQUALS_RF; before 3.7 it is an error (validate) and
                       an unsafe plan: acks=all producers could never write

On a one-broker cluster (the local broker, a laptop) replication factor 1 is the only one
possible, so RF_ONE is not said there: a warning nobody can act on teaches people to ignore
warnings. Validate and plan make the same choice; validate, which may not know the brokers,
treats a cluster whose bootstrap servers are all on loopback as one broker.

``min.insync.replicas`` is the value the topic really has: validate knows only the topic's own;
plan also the brokers' (``ClusterState.min_insync_replicas``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion, caps_min_isr, show_version


@dataclass(frozen=True)
class ReplicationWarning:
    """``code`` as the plan shows it, ``field`` the spec field it is about, and the text."""

    code: str
    field: str
    message: str


def replication_warnings(
    replication_factor: int,
    min_isr: int | None,
    *,
    single_broker: bool,
    version: KafkaVersion = DEFAULT_VERSION,
) -> list[ReplicationWarning]:
    """The warnings a topic of this replication factor and min.insync.replicas gets on a
    cluster running Kafka ``version``."""
    rf = replication_factor
    out = []
    if rf == 1 and not single_broker:
        out.append(
            ReplicationWarning(
                "RF_ONE",
                "replicationFactor",
                "replicationFactor 1: the topic has one copy; it is unavailable, and may be "
                "lost, when its broker fails",
            )
        )
    if rf > 1 and min_isr == rf:
        out.append(
            ReplicationWarning(
                "MIN_ISR_EQUALS_RF",
                "config.min.insync.replicas",
                f"min.insync.replicas {min_isr} equals replicationFactor {rf}: one broker "
                "down stops producers with acks=all",
            )
        )
    if min_isr is not None and min_isr > rf and caps_min_isr(version):
        out.append(
            ReplicationWarning(
                "MIN_ISR_ABOVE_RF",
                "config.min.insync.replicas",
                f"min.insync.replicas {min_isr} is above replicationFactor {rf}: Kafka "
                f"{show_version(version)} counts it as {rf} (every replica must be in sync)"
                + (", so one broker down stops producers with acks=all" if rf > 1 else ""),
            )
        )
    return out
