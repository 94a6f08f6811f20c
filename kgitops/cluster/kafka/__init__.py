"""The real-cluster adapter: ``ClusterAdmin`` over kafka-python.

This package is the only one that imports kafka-python.

Modules: ``settings`` (cluster.yaml -> kafka-python settings and the checked TLS context, no
kafka import), ``tls`` (which TLS failures are definitive, their one line, the probes that tell
a plaintext listener from a TLS one), ``bootstrap`` (the first connection, under a guard that
ends it at a definitive failure or its deadline; the connection manager kgitops builds and
counts requests with), ``errors`` (every library exception translated into the kgitops tree,
retriable or not), ``transport`` (``Transport``: sending, deadlines, the one retry policy
``Backoff``, the error mapping, the controller), ``admin`` (``KafkaAdmin``: the port's
operations over the transport), ``sample`` (a bounded read of a topic's keys), ``logtopic``
(kgitops' own topics, the passwordVersion and owner records: found, created, checked and
waited for alike), ``topiclog`` (their records, read with ``KafkaConsumer`` and written with
``KafkaProducer``).

Every operation is one request per Kafka API for any number of topics (and one per broker only
where Kafka routes that way: broker configs and DescribeLogDirs), so kgitops sees each item's
own error code. Where kafka-python's public ``KafkaAdminClient`` has the call and keeps each
item's error code and message, kgitops calls it: CreateTopics (explicit assignments),
CreatePartitions (explicit assignments), DeleteTopics, ElectLeaders, DescribeCluster,
ListPartitionReassignments, and the Metadata that finds kgitops' own topics
(``describe_topics``). The others are protocol requests kgitops builds: what the library
lacks (client quotas, the access probes, the consumer-group requests as kgitops reads them),
DescribeConfigs (kgitops reads each entry's source itself; and the library's drops each
resource's error code, which the shape check of kgitops' own topics needs), and what the
library answers without the item's code or message or without per-broker isolation
(IncrementalAlterConfigs: a text per resource; AlterPartitionReassignments: no message;
DescribeLogDirs: one broker after another, one failure fails all; the ACL and SCRAM writes:
which item failed is lost). ``describe()`` of N topics costs a constant number of
requests::

    Metadata (1) + DescribeCluster (1) + DescribeConfigs topics (1)
    + DescribeConfigs broker (1 per broker) + ListPartitionReassignments (1)
    + DescribeLogDirs (1 per broker, where supported)
    + Metadata (1, once per adapter: KafkaAdminClient's own lookup of the controller)

Routing: CreateTopics, CreatePartitions, DeleteTopics, AlterPartitionReassignments,
ListPartitionReassignments and ElectLeaders go to the controller that Metadata names (on KRaft
any broker forwards them); NOT_CONTROLLER refreshes it and retries; a controller that cannot
be reached is forgotten (by kgitops and by KafkaAdminClient) and asked of Metadata again.
Configs of topics go to any broker; a broker's own configs to that broker.

Failures: every kafka-python exception is translated by the transport (``errors.translate``)
into the kgitops error tree (``ClusterUnreachable``, ``ClusterTimeout``, ``ClusterAuthError``,
``UnsupportedOperation``, ``ClusterRequestError`` with Kafka's error name). Transport errors and
retriable error codes are retried with exponential backoff until ``request_timeout_ms`` of the
cluster file has passed, so a broker that is down gives an error within that time, never a hang;
a definitive TLS failure (``tls``) is never retried.

Topic configs: only what is set on the topic itself counts (Kafka's DYNAMIC_TOPIC_CONFIG);
see :func:`topic_configs_from` for how that is decided on brokers that do not say so.
"""
