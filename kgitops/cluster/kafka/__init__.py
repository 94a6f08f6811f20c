"""The real-cluster adapter: ``ClusterAdmin`` over kafka-python.

This package is the only one that imports kafka-python.

Modules: ``settings`` (cluster.yaml -> kafka-python settings and the checked TLS context, no
kafka import), ``tls`` (which TLS failures are definitive, their one line, the probes that tell
a plaintext listener from a TLS one), ``bootstrap`` (the first connection, under a guard that
ends it at a definitive failure or its deadline), ``errors`` (every library exception
translated into the kgitops tree, retriable or not), ``admin`` (``KafkaAdmin``: batched
requests, routing, retries), ``sample`` (a bounded read of a topic's keys).

Every operation is one request per Kafka API for any number of topics (and one per broker only
where Kafka routes that way: broker configs and DescribeLogDirs), sent through kafka-python's
connection manager with protocol classes, so kgitops sees each item's own error code.
``describe()`` of N topics therefore costs a constant number of requests::

    Metadata (1) + DescribeCluster (1) + DescribeConfigs topics (1)
    + DescribeConfigs broker (1 per broker) + ListPartitionReassignments (1)
    + DescribeLogDirs (1 per broker, where supported)

Routing: CreateTopics, CreatePartitions, DeleteTopics, AlterPartitionReassignments,
ListPartitionReassignments and ElectLeaders go to the controller that Metadata names (on KRaft
any broker forwards them); NOT_CONTROLLER refreshes it and retries. Configs of topics go to any
broker; a broker's own configs to that broker.

Failures: every kafka-python exception is translated here by :func:`translate` into the
kgitops error tree (``ClusterUnreachable``, ``ClusterTimeout``, ``ClusterAuthError``,
``UnsupportedOperation``, ``ClusterRequestError`` with Kafka's error name). Transport errors and
retriable error codes are retried with exponential backoff until ``request_timeout_ms`` of the
cluster file has passed, so a broker that is down gives an error within that time, never a hang;
a definitive TLS failure (``tls``) is never retried.

Topic configs: only what is set on the topic itself counts (Kafka's DYNAMIC_TOPIC_CONFIG);
see :func:`topic_configs_from` for how that is decided on brokers that do not say so.
"""
