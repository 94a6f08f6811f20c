"""Reading a Kafka cluster's state for ``KafkaAdmin.describe``: Metadata, DescribeConfigs
(topics and each broker), DescribeLogDirs, DescribeCluster and the reassignments in flight,
read into one ``ClusterState``; the parsing of those answers is pure (module functions).
``KafkaAdmin`` holds one ``Describe`` over its transport and hands ``describe`` and
``list_reassignments`` on to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import kafka.errors as kerr
from kafka.protocol.admin import (
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    ListPartitionReassignmentsRequest,
)

from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION, item_error, retriable_code
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.model import (
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionState,
    Reassignment,
    TopicState,
)
from kgitops.names import MIN_ISR, STATE_BROKER_CONFIGS, UNCLEAN

# Kafka's ConfigResource types and ConfigSource ids (DescribeConfigs).
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_DYNAMIC_BROKER = 2
SOURCE_DEFAULT = 5
# Asked for the topic config names a cluster knows when no topic of the plan exists yet.
NAMES_PROBE_TOPIC = "__consumer_offsets"


#: Broker-level configs a topic inherits when it does not set them, read from any source.
INHERITED = frozenset({MIN_ISR, UNCLEAN})
#: The per-broker dynamic configs kept in the state (and so in snapshots and plan JSON): the
#: throttle rates kgitops sets and the configs it reads. Any other (a listener's
#: sasl.jaas.config, a keystore location, a quota default) is not kgitops' and is dropped.
BROKER_KEYS = STATE_BROKER_CONFIGS | INHERITED


def strictest(values: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """One broker-level value per inherited config from what each broker reported: the
    largest ``min.insync.replicas``, and unclean election only if every broker allows it."""
    out: dict[str, str] = {}
    numbers = [int(v) for v in values.get(MIN_ISR, ()) if v.strip().isdigit()]
    if numbers:
        out[MIN_ISR] = str(max(numbers))
    flags = [v.strip().lower() for v in values.get(UNCLEAN, ())]
    if flags:
        out[UNCLEAN] = "true" if all(f == "true" for f in flags) else "false"
    return out


def topic_configs_from(entries: Sequence[Any], *, enumerating: bool) -> dict[str, str]:
    """The configs set on the topic itself, from one DescribeConfigs result.

    Real Kafka lists *every* topic config with its source; only DYNAMIC_TOPIC_CONFIG ones were
    set on the topic (defaults, static and broker-level values are not). Some Kafka-protocol
    brokers (Tansu) list only what the topic carries and mark it DEFAULT_CONFIG. Which kind of
    broker answered is decided per response by :func:`response_enumerates`; for a broker that
    lists only the topic's own configs, every entry it lists is one set on the topic.
    Sensitive entries (value withheld) are skipped: they cannot be compared.
    """
    out: dict[str, str] = {}
    for e in entries:
        if e.value is None:
            continue
        if enumerating and e.config_source != SOURCE_DYNAMIC_TOPIC:
            continue
        out[e.name] = e.value
    return out


def partitions_from(topics: Iterable[Any]) -> dict[str, dict[int, PartitionState]]:
    """Every topic of a Metadata response with its partitions' replicas, ISR and leader.

    Kafka's internal topics (``__consumer_offsets``, ``__transaction_state``,
    ``__share_group_state``; ``is_internal`` in the response) are kept like any other: their
    replicas sit on the brokers too, so a drain must move them and ``status`` must see them
    (docs/planning.md, "Internal topics"). The KRaft metadata log ``__cluster_metadata`` is no
    topic of the TopicsImage Metadata is answered from (KRaftMetadataCache.getAllTopics), so
    it never appears here. A topic named in the request that is absent
    (UNKNOWN_TOPIC_OR_PARTITION) is left out; any other topic error is raised."""
    out: dict[str, dict[int, PartitionState]] = {}
    for t in topics:
        if t.error_code == UNKNOWN_TOPIC_OR_PARTITION or not t.name:
            continue
        if t.error_code != 0:
            err = item_error("Metadata", t.name, t.error_code, None)
            assert err is not None
            raise err
        out[t.name] = {
            p.partition_index: PartitionState(
                replicas=tuple(p.replica_nodes),
                isr=tuple(p.isr_nodes),
                leader=p.leader_id if p.leader_id >= 0 else None,
            )
            for p in t.partitions
        }
    return out


def response_enumerates(results: Iterable[Any]) -> bool:
    """True when a DescribeConfigs response lists every config with its source (real Kafka).

    Asked with ``include_synonyms``, Kafka marks each topic config with where its value comes
    from and, for configs that have a broker counterpart, lists that synonym (every topic has
    ``cleanup.policy`` with synonym ``log.cleanup.policy``), and a topic override carries
    source DYNAMIC_TOPIC_CONFIG. A broker that lists only what each topic carries, all as
    DEFAULT_CONFIG with no synonyms (Tansu), shows neither: then its list *is* the topic's own.
    """
    for result in results:
        for e in result.configs:
            if e.config_source != SOURCE_DEFAULT or e.synonyms:
                return True
    return False


# ------------------------------------------------------------------ the reads


class Describe:
    """The reads of the ClusterAdmin port (``describe``, ``list_reassignments``) over the
    adapter's ``Transport`` and kafka-python's admin client (``KafkaAdmin`` hands each call
    on). ``departed``: the brokers the last describe found gone between its requests."""

    def __init__(self, transport: Transport, client: Any, spec: ClusterSpec, timeout_ms: int):
        self._transport = transport
        self._client = client
        self._spec = spec
        self._timeout_ms = timeout_ms
        self._departed: set[int] = set()

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        wanted = None if topics is None else sorted(set(topics))
        md = self._settled_metadata(wanted)
        live = {b.node_id: b.rack for b in md.brokers}
        states = partitions_from(md.topics)
        names = sorted(states)
        probe = self._any_topic() if not names and wanted else None
        configs, config_names = self._topic_configs(names, probe)
        broker_configs, broker_defaults = self._broker_config_reads(sorted(live))
        for b in self._departed:
            live.pop(b, None)
        sizes = self._sizes(sorted(live), None if wanted is None else states)
        reassignments = self._reassignments(set(names))
        registered = self._registered_brokers()
        known = set(live) | set(registered)
        for parts in states.values():
            for p in parts.values():
                known.update(p.replicas)
        brokers = tuple(
            Broker(
                id=b,
                rack=live[b] if b in live else registered.get(b, (None, True))[0],
                online=b in live and not registered.get(b, (None, False))[1],
            )
            for b in sorted(known)
        )
        topic_states = {
            name: TopicState(
                name=name,
                partitions={
                    pid: PartitionState(
                        replicas=p.replicas,
                        isr=p.isr,
                        leader=p.leader,
                        size_bytes=sizes.get((name, pid)),
                    )
                    for pid, p in sorted(states[name].items())
                },
                config=configs.get(name, {}),
            )
            for name in names
        }
        return ClusterState(
            brokers=brokers,
            topics=topic_states,
            reassignments=reassignments,
            cluster_id=md.cluster_id,
            controller_id=self._transport.controller,
            broker_configs=broker_configs,
            broker_defaults=broker_defaults,
            topic_config_names=config_names,
            kafka_version=self._spec.kafka_version,  # cluster.yaml's: no API reports it
        )

    def _settled_metadata(self, topics: Sequence[str] | None) -> Any:
        """Metadata, asked again (with backoff, a few seconds at most) while some topic is in
        a passing state, e.g. LEADER_NOT_AVAILABLE right after it was created."""
        backoff = Backoff(min(self._timeout_ms / 1000, 5.0), cap=1.0)
        while True:
            md = self._transport.metadata(topics)
            passing = [t for t in md.topics if retriable_code(t.error_code)]
            if not passing or not backoff.wait():
                return md

    def _registered_brokers(self) -> dict[int, tuple[str | None, bool]]:
        """Every registered broker with its rack and whether it is fenced (DescribeCluster).

        Metadata lists only brokers that are up; Kafka 4's DescribeCluster also lists fenced
        ones, so a broker that is down keeps its rack (rack-aware placement needs it). On
        older brokers, or where DescribeCluster is missing or refused: {} (a broker that is
        down is then known only from the replicas it holds, without a rack)."""
        if not self._transport.supports(DescribeClusterRequest):
            return {}
        try:
            cluster = self._transport.call("DescribeCluster", self._client.describe_cluster)
        except (ClusterRequestError, ClusterAuthError, UnsupportedOperation):
            return {}
        return {
            b["broker_id"]: (b.get("rack"), bool(b.get("is_fenced", False)))
            for b in cluster["brokers"]
        }

    def _any_topic(self) -> str | None:
        """One topic of the cluster (``__consumer_offsets`` where it exists), or None on an
        empty cluster: one Metadata request for every topic."""
        found = sorted(
            t.name for t in self._transport.metadata(None).topics if t.name and not t.error_code
        )
        if NAMES_PROBE_TOPIC in found:
            return NAMES_PROBE_TOPIC
        return found[0] if found else None

    def _topic_configs(
        self, names: Sequence[str], probe: str | None = None
    ) -> tuple[dict[str, dict[str, str]], frozenset[str] | None]:
        """(the configs set on each topic; the topic config names the brokers know, or None).

        Kafka lists every topic config it knows for any topic, so one answer says which
        names this cluster's version accepts (4.0 dropped ``message.format.version``...;
        LogConfig.java). ``probe``, a topic not in ``names``, is asked in the same request
        for that list alone (its configs, or its error, are otherwise ignored): a plan whose
        topics are all new still learns the names, at the cost of one Metadata request
        (:meth:`_any_topic`)."""
        if not names and probe is None:
            return {}, None
        asked = [*names, probe] if probe else list(names)
        R = DescribeConfigsRequest
        req = R(
            resources=[
                R.DescribeConfigsResource(
                    resource_type=RESOURCE_TOPIC, resource_name=n, configuration_keys=None
                )
                for n in asked
            ],
            include_synonyms=True,
        )
        resp = self._transport.send(req)
        enumerating = response_enumerates(resp.results)
        out: dict[str, dict[str, str]] = {}
        known: set[str] = set()
        for r in resp.results:
            if enumerating and r.error_code == 0:
                known.update(e.name for e in r.configs)
            if r.resource_name == probe or r.error_code == 3:
                continue
            if r.error_code != 0:
                err = item_error("DescribeConfigs", r.resource_name, r.error_code, r.error_message)
                assert err is not None
                raise err
            out[r.resource_name] = topic_configs_from(r.configs, enumerating=enumerating)
        return out, frozenset(known) if known else None

    def _broker_configs(self, broker_ids: Sequence[int]) -> dict[int, dict[str, str]]:
        """Per broker, the dynamic configs set on that broker (e.g. throttle rates)."""
        return self._broker_config_reads(broker_ids)[0]

    def _broker_config_reads(
        self, broker_ids: Sequence[int]
    ) -> tuple[dict[int, dict[str, str]], dict[str, str]]:
        """(per broker, the dynamic configs set on that broker; the broker-level values
        topics inherit, from any source). Kafka answers a broker's configs only on that
        broker: one request each, sent at once. A broker that cannot answer is left out
        rather than failing the whole describe.

        The request names no keys, so Kafka lists every broker config with its effective
        value and source (the protocol request is sent as is: no client-side filter of
        non-dynamic sources). ``min.insync.replicas`` from server.properties
        (STATIC_BROKER_CONFIG), a cluster-wide dynamic default or Kafka's own default is
        what a topic without its own value gets; brokers that disagree: the strictest."""
        R = DescribeConfigsRequest
        requests = {
            b: R(
                resources=[
                    R.DescribeConfigsResource(
                        resource_type=RESOURCE_BROKER, resource_name=str(b), configuration_keys=None
                    )
                ],
                include_synonyms=False,
            )
            for b in broker_ids
        }
        out: dict[int, dict[str, str]] = {}
        inherited: dict[str, list[str]] = {}
        answers = self._transport.send_each(requests)
        unreachable = [b for b, r in answers.items() if isinstance(r, ClusterUnreachable)]
        self._departed = self._gone(unreachable) if unreachable else set()
        for b, resp in answers.items():
            if b in self._departed:
                continue
            if isinstance(resp, ClusterError):
                raise type(resp)(
                    f"could not read the configs of broker {b} (its throttle rates are "
                    f"unknown): {resp}"
                )
            enumerating = response_enumerates(resp.results)
            got: dict[str, str] = {}
            for r in resp.results:
                if r.error_code != 0:
                    err = item_error(
                        "DescribeConfigs", f"broker {b}", r.error_code, r.error_message
                    )
                    assert err is not None
                    raise err
                for e in r.configs:
                    if e.value is None:
                        continue
                    if e.name in INHERITED and enumerating:
                        inherited.setdefault(e.name, []).append(e.value)
                    if enumerating and e.config_source != SOURCE_DYNAMIC_BROKER:
                        continue
                    if e.name in BROKER_KEYS:
                        got[e.name] = e.value
            if got:
                out[b] = got
        return out, strictest(inherited)

    def _gone(self, brokers: Sequence[int]) -> set[int]:
        """Of ``brokers`` (live in the Metadata just read, unreachable since), those Metadata
        no longer lists: they died in between, and Kafka has fenced them (after
        ``broker.session.timeout.ms``; ``_send_each`` retries a refused connection until the
        request timeout, longer than that by default). They count as down, as if the first
        Metadata had not listed them; their throttle rates are read once they are back (a
        broker's dynamic configs are answered only by that broker: ``ConfigHelper``)."""
        listed = {b.node_id for b in self._transport.metadata([]).brokers}
        return {b for b in brokers if b not in listed}

    def _sizes(
        self, broker_ids: Sequence[int], only: Mapping[str, Mapping[int, object]] | None = None
    ) -> dict[tuple[str, int], int]:
        """Partition sizes from DescribeLogDirs, one request per broker sent at once; {} where
        the broker lacks the API. A broker that cannot answer leaves its sizes out.

        ``only`` (the partitions of the topics a ``describe(topics)`` asked for): the request
        names them, so a broker lists those replicas, not every one it holds -- on a cluster of
        thousands of topics the whole listing took 0.15-0.5 s per broker (7 s on one short of
        heap), and apply's
        poll of a few moving topics reads it every interval (DescribeLogDirsRequest.json:
        a null Topics asks for all of them). None: every partition.

        A partition's size is the largest any of its replicas reports (the leader's log is
        the one a new replica copies; a lagging follower reports less)."""
        if not self._transport.supports(DescribeLogDirsRequest):
            return {}
        if only is not None and not only:
            return {}
        topics = (
            None
            if only is None
            else [
                DescribeLogDirsRequest.DescribableLogDirTopic(topic=t, partitions=sorted(parts))
                for t, parts in sorted(only.items())
            ]
        )
        requests = {b: DescribeLogDirsRequest(topics=topics) for b in broker_ids}
        out: dict[tuple[str, int], int] = {}
        for resp in self._transport.send_each(requests).values():
            if isinstance(resp, ClusterError):
                continue
            for d in resp.results:
                if d.error_code != 0:
                    continue
                for t in d.topics:
                    for p in t.partitions:
                        if p.is_future_key:
                            continue
                        key = (t.name, p.partition_index)
                        out[key] = max(out.get(key, 0), p.partition_size)
        return out

    def _reassignments(self, names: set[str]) -> dict[str, dict[int, Reassignment]]:
        out: dict[str, dict[int, Reassignment]] = {}
        for topic, parts in self.list_reassignments().items():
            if topic not in names:
                continue
            out[topic] = {
                pid: Reassignment(
                    adding=adding,
                    removing=removing,
                    target=tuple(r for r in replicas if r not in removing),
                )
                for pid, (replicas, adding, removing) in parts.items()
            }
        return out

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        """Reassignments in flight (partitions with replicas being added or removed)."""
        if not self._transport.supports(ListPartitionReassignmentsRequest):
            return {}

        def listing() -> Any:
            # the library raises the response's top-level error: a final one is the answer
            try:
                return self._client.list_partition_reassignments(timeout_ms=self._timeout_ms)
            except kerr.BrokerResponseError as exc:
                if exc.retriable:
                    raise
                return exc

        listed = self._transport.controller_call("ListPartitionReassignments", listing)
        if isinstance(listed, kerr.BrokerResponseError):
            err = item_error("ListPartitionReassignments", "cluster", listed.errno, None)
            assert err is not None
            raise err
        out: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = {}
        for tp, p in sorted(listed.items()):
            if not p["adding_replicas"] and not p["removing_replicas"]:
                continue  # Tansu lists every partition; only moving ones are in flight
            out.setdefault(tp.topic, {})[tp.partition] = (
                tuple(p["replicas"]),
                tuple(p["adding_replicas"]),
                tuple(p["removing_replicas"]),
            )
        return out
