"""Names that Kafka (or a kgitops file format) fixes and that several layers need: one home.

Replication throttles (Kafka's ``kafka.server.DynamicConfig`` and ``LogConfig``): a reassignment
is throttled by two per-broker rates and two per-topic replica lists::

    broker 1: leader.replication.throttled.rate = follower.replication.throttled.rate = 50000000
    topic a:  leader.replication.throttled.replicas = "0:1,0:2"   (the sources)
              follower.replication.throttled.replicas = "0:3"     (the replicas being added)

Apply sets and removes them; the topic lists are never drift, never part of a plan's state,
and a spec may not set them.

Internal topics: Kafka's own (``__consumer_offsets``...), by convention every name starting
with ``__`` (Connect's, Streams', Kafka's future ones), and kgitops' own on a real cluster
(the passwordVersion records, ``ClusterSpec.own_topics``). The brokers hold their replicas
like any other topic's: they are read, counted by ``status`` and moved by a drain, but never
managed by a spec, reported as unmanaged, imported or rebalanced (docs/planning.md,
"Internal topics").
"""

from __future__ import annotations

from collections.abc import Collection

#: Java's int and long limits: Kafka's partition counts, broker ids and 32-bit fields are ints,
#: its amounts (bytes, milliseconds) longs.
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

MIN_ISR = "min.insync.replicas"
UNCLEAN = "unclean.leader.election.enable"
LAG_TIME_MAX = "replica.lag.time.max.ms"

THROTTLE_LEADER_RATE = "leader.replication.throttled.rate"
THROTTLE_FOLLOWER_RATE = "follower.replication.throttled.rate"
THROTTLE_LEADER_REPLICAS = "leader.replication.throttled.replicas"
THROTTLE_FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"

#: The per-broker dynamic configs a cluster state keeps (so snapshots and plan JSON hold no
#: other): the throttle rates apply sets, and the broker-level values topics inherit.
STATE_BROKER_CONFIGS = frozenset(
    {
        THROTTLE_LEADER_RATE,
        THROTTLE_FOLLOWER_RATE,
        MIN_ISR,
        UNCLEAN,
    }
)

#: The topic configs apply manages around a reassignment.
THROTTLED_REPLICAS_CONFIGS = frozenset({THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS})

#: Topics the brokers create and own: a spec may never manage them. Kafka's ``Topic.isInternal``
#: names the first three (Metadata flags them ``is_internal``); tiered storage's
#: ``__remote_log_metadata`` is made by the brokers too (TopicBasedRemoteLogMetadataManager).
KAFKA_INTERNAL_TOPICS = frozenset(
    {
        "__consumer_offsets",
        "__transaction_state",
        "__share_group_state",
        "__remote_log_metadata",
        "__cluster_metadata",
    }
)

#: KRaft's metadata log: no topic of the admin API (Metadata never lists it, CreateTopics
#: refuses the name, AlterPartitionReassignments does not know it); its replicas are the
#: controller quorum's voters (``kafka-metadata-quorum.sh``). Never reassigned.
KAFKA_METADATA_TOPIC = "__cluster_metadata"

#: The cluster state JSON's format (docs/simulated-cluster.md, kgitops/schemas/state.json).
STATE_FORMAT = "kgitops-state/v1"


def is_internal_topic(name: str, own: Collection[str] = ()) -> bool:
    """Kafka's or another framework's internal topic: a name starting with ``__``, or one of
    kgitops' own topics ``own`` (``ClusterSpec.own_topics``: the passwordVersion records).
    Never reported as unmanaged, never imported unless asked (Kafka's own never), drained
    whatever ``unmanagedTopics`` says."""
    return name.startswith("__") or name in own


#: The names of a cluster folder's cluster file (``cluster.yml`` is read like ``cluster.yaml``).
CLUSTER_FILES = ("cluster.yaml", "cluster.yml")
