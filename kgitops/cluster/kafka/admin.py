"""``KafkaAdmin``: the ClusterAdmin port over kafka-python (see the package docstring)."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    CreatePartitionsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.cluster.kafka.access import AccessRequests
from kgitops.cluster.kafka.bootstrap import open_admin_client
from kgitops.cluster.kafka.errors import (
    UNKNOWN_TOPIC_OR_PARTITION,
    item_error,
    retriable_code,
)
from kgitops.cluster.kafka.groups import Groups
from kgitops.cluster.kafka.logtopic import LogTopic
from kgitops.cluster.kafka.owners import OWNER_TOPIC_ROLE, OwnerRecords
from kgitops.cluster.kafka.settings import client_config, secret_values, tls_advice
from kgitops.cluster.kafka.token import TokenSource
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.cluster.kafka.versions import (
    VERSION_TOPIC_ADVICE,
    VERSION_TOPIC_ROLE,
    PasswordVersions,
)
from kgitops.cluster.port import (
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    QuotaChange,
    Results,
    ScramUpsert,
)
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.groups import GroupsState, Partition
from kgitops.model import (
    OWNER_TOPIC,
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionState,
    Reassignment,
    TopicPartition,
    TopicState,
)
from kgitops.names import MIN_ISR, STATE_BROKER_CONFIGS, UNCLEAN
from kgitops.plan.owners import OwnerRecord

_Item = TypeVar("_Item")
_Key = TypeVar("_Key", bound=Hashable)


def _api(request: Any) -> str:
    """``CreateTopicsRequest(...)`` -> ``CreateTopics``: the API a request is of."""
    return type(request).__name__.removesuffix("Request")


def _itself(tp: TopicPartition) -> TopicPartition:
    return tp


# Kafka's ConfigResource types and ConfigSource ids (DescribeConfigs).
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_DYNAMIC_BROKER = 2
SOURCE_DEFAULT = 5
# Asked for the topic config names a cluster knows when no topic of the plan exists yet.
NAMES_PROBE_TOPIC = "__consumer_offsets"
OP_SET = 0
OP_DELETE = 1
OP_APPEND = 2
OP_SUBTRACT = 3
ELECTION_PREFERRED = 0
NOT_CONTROLLER = 41
INVALID_PARTITIONS = 37
ELECTION_NOT_NEEDED = 84


#: Broker-level configs a topic inherits when it does not set them, read from any source.
INHERITED = frozenset({MIN_ISR, UNCLEAN})
#: The per-broker dynamic configs kept in the state (and so in snapshots and plan JSON): the
#: throttle rates kgitops sets and the configs it reads. Any other (a listener's
#: sasl.jaas.config, a keystore location, a quota default) is not kgitops' and is dropped.
BROKER_KEYS = STATE_BROKER_CONFIGS | INHERITED


# ------------------------------------------------------------------ pure parsing


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


# ------------------------------------------------------------------ the adapter


class KafkaAdmin:
    """``ClusterAdmin`` for a real Kafka cluster (3.x/4.x, KRaft or ZooKeeper) or Tansu."""

    def __init__(self, spec: ClusterSpec, *, environ: Mapping[str, str] | None = None) -> None:
        self._spec = spec
        config = client_config(spec, environ)
        source = config.get("sasl_oauth_token_provider")
        self._token_source = source if isinstance(source, TokenSource) else None
        self._secrets = secret_values(config)
        self._timeout_ms = int(config["request_timeout_ms"])
        self._departed: set[int] = set()
        tls = tls_advice(spec)
        self._client, manager = open_admin_client(spec, config, tls, self._secrets)
        self._transport = Transport(
            manager,
            timeout_ms=self._timeout_ms,
            tls=tls,
            tls_context=config.get("ssl_context"),
            bootstrap=spec.bootstrap_servers,
            secrets=lambda: self._secrets,
            library=self._client,
        )
        self._groups = Groups(self._transport)
        log = TopicLog(spec, environ, timeout_ms=self._timeout_ms)

        def own_topic(name: str, role: str, advice: str = "") -> LogTopic:
            return LogTopic(
                self._transport,
                name,
                role=role,
                advice=advice,
                drained=spec.decommission,
                create_topics=lambda topics: self.create_topics(topics),
                log=log,
            )

        versions = own_topic(spec.password_version_topic, VERSION_TOPIC_ROLE, VERSION_TOPIC_ADVICE)
        self._access = AccessRequests(self._transport, spec, versions=PasswordVersions(versions))
        self._owners = OwnerRecords(own_topic(OWNER_TOPIC, OWNER_TOPIC_ROLE))
        self._closed = False

    @property
    def _secrets(self) -> tuple[str, ...]:
        """What every message is scrubbed of (OAUTHBEARER tokens too, as they refresh)."""
        token = getattr(self, "_token_source", None)
        return self._fixed_secrets + (token.seen if token is not None else ())

    @_secrets.setter
    def _secrets(self, value: tuple[str, ...]) -> None:
        self._fixed_secrets = tuple(value)

    # ---- the request primitive

    # ---- owner records: the ``owners.OwnerRecords`` component's

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        return self._owners.read_owners()

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        self._owners.record_owners(records)

    # ---- access: the ``access.AccessRequests`` component's (passwordVersion records too)

    def probe_access(self, apis: Collection[str]) -> None:
        self._access.probe_access(apis)

    def ready_scram_versions(self) -> None:
        self._access.versions.ready_scram_versions()

    def describe_acls(self) -> frozenset[Acl]:
        return self._access.describe_acls()

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        return self._access.create_acls(acls)

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        return self._access.delete_acls(acls)

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return self._access.describe_client_quotas()

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        return self._access.alter_client_quotas(changes)

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        return self._access.describe_scram_users()

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        return self._access.upsert_scram_users(upserts)

    # ---- consumer groups: the ``groups.Groups`` component's

    def list_group_ids(self) -> list[str]:
        return self._groups.list_group_ids()

    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        return self._groups.describe_groups(group_ids)

    def list_offsets(self, partitions: Iterable[Partition], spec: int) -> dict[Partition, int]:
        return self._groups.list_offsets(partitions, spec)

    def log_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, tuple[int, int]]:
        return self._groups.log_offsets(partitions)

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> PartitionResults:
        return self._groups.alter_group_offsets(group_id, offsets)

    def delete_groups(self, group_ids: Sequence[str]) -> Results:
        return self._groups.delete_groups(group_ids)

    # ---- sending: the transport's (``transport.Transport``)

    def _send(
        self, request: Any, node_id: int | None = None, *, timeout_ms: int | None = None
    ) -> Any:
        return self._transport.send(request, node_id, timeout_ms=timeout_ms)

    def _send_each(self, requests: Mapping[int, Any]) -> dict[int, Any]:
        return self._transport.send_each(requests)

    def supports(self, request_class: Any) -> bool:
        """Whether the broker advertises this API (ApiVersions, answered at connect)."""
        return self._transport.supports(request_class)

    def _require(self, request_class: Any) -> None:
        self._transport.require(request_class)

    # ---- reads

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
        sizes = self._sizes(sorted(live))
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
        if not self.supports(DescribeClusterRequest):
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
        resp = self._send(req)
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
        answers = self._send_each(requests)
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

    def _sizes(self, broker_ids: Sequence[int]) -> dict[tuple[str, int], int]:
        """Partition sizes from DescribeLogDirs, one request per broker sent at once; {} where
        the broker lacks the API. A broker that cannot answer leaves its sizes out.

        A partition's size is the largest any of its replicas reports (the leader's log is
        the one a new replica copies; a lagging follower reports less)."""
        if not self.supports(DescribeLogDirsRequest):
            return {}
        requests = {b: DescribeLogDirsRequest(topics=None) for b in broker_ids}
        out: dict[tuple[str, int], int] = {}
        for resp in self._send_each(requests).values():
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
        if not self.supports(ListPartitionReassignmentsRequest):
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

    # ---- writes

    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        """Create all topics in one CreateTopics request, each with its explicit assignment.

        On a one-broker cluster every replica list is that broker, so the partition count and
        RF say the same and are sent instead (Tansu ignores explicit assignments). Afterwards
        one Metadata request checks that each topic got exactly the assignment asked for; a
        difference is that topic's error (code ASSIGNMENT_MISMATCH).

        TOPIC_ALREADY_EXISTS can be the answer to this very request: a KRaft broker forwards
        CreateTopics to the controller with a request timeout of ``controller.socket.timeout.ms``
        and, when the controller takes longer (a big batch on a busy controller), sends it
        again; the second copy finds every topic the first created (``NodeToControllerChannel
        Manager.scala``: a timed-out request is a disconnect, put back first in the queue).
        So the topics are looked up just before (one Metadata request): one absent then and
        answered TOPIC_ALREADY_EXISTS, whose live assignment is the one asked for, is created;
        a topic that existed before stays TOPIC_ALREADY_EXISTS."""
        if not topics:
            return {}
        single = len(self._transport.live()) == 1
        absent = self._absent([nt.name for nt in topics])

        def build(nt: NewTopic) -> dict[str, Any]:
            assignment = dict(sorted(nt.assignment.items()))
            configs = dict(sorted(nt.config.items()))
            if single:
                rf = len(next(iter(assignment.values()))) if assignment else 0
                return {
                    "num_partitions": len(assignment),
                    "replication_factor": rf,
                    "configs": configs,
                }
            return {"assignments": {p: list(r) for p, r in assignment.items()}, "configs": configs}

        def call(subset: Sequence[NewTopic]) -> dict[str, tuple[int, str | None]]:
            wanted = {nt.name: build(nt) for nt in subset}
            resp = self._transport.controller_call(
                "CreateTopics",
                lambda: self._client.create_topics(
                    wanted, timeout_ms=self._timeout_ms, raise_errors=False
                ),
            )
            return {t["name"]: (t["error_code"], t["error_message"]) for t in resp["topics"]}

        results = self._transport.batched(
            "CreateTopics", topics, lambda nt: nt.name, call, done_on_retry=frozenset({36})
        )
        resent = {
            name
            for name, outcome in results.items()
            if name in absent
            and isinstance(outcome, ClusterRequestError)
            and outcome.code == "TOPIC_ALREADY_EXISTS"
        }
        expected = {
            nt.name: dict(nt.assignment)
            for nt in topics
            if results[nt.name] is None or nt.name in resent
        }
        for name, outcome in self._verify(expected, "created").items():
            if name not in resent or outcome is None:
                results[name] = outcome
        return results

    def _absent(self, names: Sequence[str]) -> set[str]:
        """Which of ``names`` the cluster says it does not know (UNKNOWN_TOPIC_OR_PARTITION in
        one Metadata request; any other answer, e.g. TOPIC_AUTHORIZATION_FAILED or a topic
        being deleted, is not proof that it is absent)."""
        md = self._transport.metadata(names)
        return {t.name for t in md.topics if t.error_code == UNKNOWN_TOPIC_OR_PARTITION}

    def _verify(self, expected: Mapping[str, Mapping[int, tuple[int, ...]]], what: str) -> Results:
        """Compare live assignments with the expected ones (one Metadata request, retried
        briefly while new topics propagate). Result: topic -> None or ASSIGNMENT_MISMATCH."""
        if not expected:
            return {}
        backoff = Backoff(min(self._timeout_ms / 1000, 10.0), cap=0.1)
        names = sorted(expected)
        while True:
            md = self._transport.metadata(names)
            live = {
                t.name: {p.partition_index: tuple(p.replica_nodes) for p in t.partitions}
                for t in md.topics
                if t.error_code == 0
            }
            pending = [
                n for n in names if n not in live or any(p not in live[n] for p in expected[n])
            ]
            if not pending or not backoff.wait():
                break
        out: dict[str, ClusterError | None] = {}
        for n in names:
            got = live.get(n, {})
            want = expected[n]
            wrong = {p: r for p, r in want.items() if got.get(p) != r}
            extra = sorted(set(got) - set(want)) if what == "created" else []
            if not wrong and not extra:
                out[n] = None
                continue
            parts = [
                f"partition {p}: asked {list(r)}, got {list(got[p]) if p in got else 'nothing'}"
                for p, r in sorted(wrong.items())[:3]
            ]
            if extra:
                parts.append(f"{len(extra)} partition(s) not asked for: {extra[:5]}")
            out[n] = ClusterRequestError(
                f"{n}: {what} with an assignment other than the one asked for ("
                + "; ".join(parts)
                + "); the broker may ignore explicit assignments",
                code="ASSIGNMENT_MISMATCH",
                item=n,
            )
        return out

    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results:
        """Add partitions to all topics in one CreatePartitions request, explicit assignments;
        then check (one Metadata request) that the new partitions got them."""
        if not additions:
            return {}
        self._require(CreatePartitionsRequest)

        def call(subset: Sequence[NewPartitions]) -> dict[str, tuple[int, str | None]]:
            wanted = {
                a.topic: {
                    "count": a.total,
                    "assignments": [list(r) for _, r in sorted(a.assignment.items())],
                }
                for a in subset
            }
            resent: list[bool] = []
            resp = self._transport.controller_call(
                "CreatePartitions",
                lambda: self._client.create_partitions(
                    wanted, timeout_ms=self._timeout_ms, raise_errors=False
                ),
                on_retry=lambda: resent.append(True),
            )
            # sent again after a lost answer: the first request may have added them (the
            # check against Metadata below decides)
            return {
                r.name: (
                    0 if resent and r.error_code == INVALID_PARTITIONS else r.error_code,
                    r.error_message,
                )
                for r in resp.results
            }

        results = self._transport.batched("CreatePartitions", additions, lambda a: a.topic, call)
        done = {a.topic: dict(a.assignment) for a in additions if results[a.topic] is None}
        results.update(self._verify(done, "partitions added"))
        return results

    def _alter_configs(
        self, resource_type: int, changes: Mapping[str, ConfigChange], node_id: int | None
    ) -> dict[str, ClusterError | None]:
        R = IncrementalAlterConfigsRequest.AlterConfigsResource
        A = R.AlterableConfig

        def call(names: Sequence[str]) -> dict[str, tuple[int, str | None]]:
            resources = [
                R(
                    resource_type=resource_type,
                    resource_name=name,
                    configs=[
                        A(name=k, config_operation=OP_SET, value=v)
                        for k, v in sorted(changes[name].set.items())
                    ]
                    + [
                        A(name=k, config_operation=OP_DELETE, value=None)
                        for k in sorted(changes[name].delete)
                    ]
                    + [
                        A(name=k, config_operation=OP_APPEND, value=v)
                        for k, v in sorted(changes[name].append.items())
                    ]
                    + [
                        A(name=k, config_operation=OP_SUBTRACT, value=v)
                        for k, v in sorted(changes[name].subtract.items())
                    ],
                )
                for name in names
            ]
            req = IncrementalAlterConfigsRequest(resources=resources, validate_only=False)
            resp = self._send(req, node_id)
            return {r.resource_name: (r.error_code, r.error_message) for r in resp.responses}

        return self._transport.batched("IncrementalAlterConfigs", sorted(changes), str, call)

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results:
        """SET and DELETE topic configs of all topics in one IncrementalAlterConfigs request."""
        if not changes:
            return {}
        self._require(IncrementalAlterConfigsRequest)
        return self._alter_configs(RESOURCE_TOPIC, changes, None)

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        """Dynamic broker configs; Kafka takes each broker's change only on that broker
        (ConfigAdminManager), so one request per broker, and a broker that cannot be reached
        (down, unknown) is that item's error, never the loss of the whole cluster."""
        if not changes:
            return {}
        self._require(IncrementalAlterConfigsRequest)
        out: dict[str, ClusterError | None] = {}
        for b, ch in sorted(changes.items()):
            try:
                answers = self._alter_configs(RESOURCE_BROKER, {str(b): ch}, b)
            except (ClusterUnreachable, ClusterTimeout) as exc:
                out[f"broker:{b}"] = ClusterRequestError(
                    f"broker {b}: {exc}", code="BROKER_NOT_AVAILABLE", item=f"broker:{b}"
                )
                continue
            for name, err in answers.items():
                out[f"broker:{name}"] = err
        return out

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        """Submit (or, with None, cancel) reassignments in one AlterPartitionReassignments."""
        if not targets:
            return {}
        self._require(AlterPartitionReassignmentsRequest)
        T = AlterPartitionReassignmentsRequest.ReassignableTopic

        def call(subset: Sequence[TopicPartition]) -> dict[TopicPartition, tuple[int, str | None]]:
            by_topic: dict[str, list[Any]] = {}
            for tp in subset:
                topic, pid = tp
                replicas = targets[tp]
                by_topic.setdefault(topic, []).append(
                    T.ReassignablePartition(
                        partition_index=pid, replicas=None if replicas is None else list(replicas)
                    )
                )
            req = AlterPartitionReassignmentsRequest(
                timeout_ms=self._timeout_ms,
                topics=[T(name=t, partitions=ps) for t, ps in by_topic.items()],
            )
            resp = self._transport.send_controller(req, lambda r: [r.error_code])
            if resp.error_code != 0:
                return {tp: (resp.error_code, resp.error_message) for tp in subset}
            return {
                TopicPartition(t.name, p.partition_index): (p.error_code, p.error_message)
                for t in resp.responses
                for p in t.partitions
            }

        wanted = sorted(TopicPartition(*tp) for tp in targets)
        return self._transport.batched("AlterPartitionReassignments", wanted, _itself, call)

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults:
        """Preferred-leader election for all partitions in one ElectLeaders request.
        ELECTION_NOT_NEEDED (the preferred replica already leads) counts as success."""
        wanted = sorted({TopicPartition(*tp) for tp in partitions})
        if not wanted:
            return {}
        self._require(ElectLeadersRequest)

        def call(subset: Sequence[TopicPartition]) -> dict[TopicPartition, tuple[int, str | None]]:
            by_topic: dict[str, list[int]] = {}
            for t, p in subset:
                by_topic.setdefault(t, []).append(p)
            resp = self._transport.controller_call(
                "ElectLeaders",
                lambda: self._client.elect_leaders(
                    ELECTION_PREFERRED, by_topic, timeout_ms=self._timeout_ms, raise_errors=False
                ),
            )
            if resp.error_code != 0:
                return {tp: (resp.error_code, None) for tp in subset}
            return {
                TopicPartition(r.topic, p.partition_id): (
                    0 if p.error_code == ELECTION_NOT_NEEDED else p.error_code,
                    p.error_message,
                )
                for r in resp.replica_election_results
                for p in r.partition_result
            }

        return self._transport.batched("ElectLeaders", wanted, _itself, call)

    def delete_topics(self, names: Sequence[str]) -> Results:
        """Delete all named topics in one DeleteTopics request."""
        if not names:
            return {}

        def call(subset: Sequence[str]) -> dict[str, tuple[int, str | None]]:
            resent: list[bool] = []
            resp = self._transport.controller_call(
                "DeleteTopics",
                lambda: self._client.delete_topics(
                    list(subset), timeout_ms=self._timeout_ms, raise_errors=False
                ),
                on_retry=lambda: resent.append(True),
            )
            # sent again after a lost answer: a topic the first request deleted is unknown now
            return {
                t["name"]: (
                    0
                    if resent and t["error_code"] == UNKNOWN_TOPIC_OR_PARTITION
                    else t["error_code"],
                    t.get("error_message"),
                )
                for t in resp["topics"]
            }

        return self._transport.batched(
            "DeleteTopics", list(dict.fromkeys(names)), str, call, done_on_retry=frozenset({3})
        )

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._client.close()
        except Exception as exc:  # closing must not turn a result into a failure
            logging.getLogger(__name__).debug("close failed: %s", exc)

    def __enter__(self) -> KafkaAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
