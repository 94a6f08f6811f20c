"""The topic writes of the ClusterAdmin port over kafka-python: CreateTopics,
CreatePartitions (each checked against Metadata after), IncrementalAlterConfigs (topics, and
each broker on that broker), AlterPartitionReassignments, ElectLeaders and DeleteTopics,
batched and retried by the adapter's ``Transport``. ``KafkaAdmin`` holds one ``TopicWrites``
and hands each write on to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    CreatePartitionsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)

from kgitops.cluster.kafka.describe import RESOURCE_BROKER, RESOURCE_TOPIC
from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.cluster.port import (
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    Results,
)
from kgitops.errors import ClusterError, ClusterRequestError, ClusterTimeout, ClusterUnreachable
from kgitops.model import TopicPartition

# IncrementalAlterConfigs operations, ElectLeaders' election type, error codes.
OP_SET = 0
OP_DELETE = 1
OP_APPEND = 2
OP_SUBTRACT = 3
ELECTION_PREFERRED = 0
INVALID_PARTITIONS = 37
ELECTION_NOT_NEEDED = 84


def _itself(tp: TopicPartition) -> TopicPartition:
    return tp


class TopicWrites:
    """The topic and broker-config writes of the ClusterAdmin port, over the adapter's
    ``Transport`` and kafka-python's admin client (``KafkaAdmin`` hands each call on)."""

    def __init__(self, transport: Transport, client: Any, timeout_ms: int) -> None:
        self._transport = transport
        self._client = client
        self._timeout_ms = timeout_ms

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
        self._transport.require(CreatePartitionsRequest)

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
            resp = self._transport.send(req, node_id)
            return {r.resource_name: (r.error_code, r.error_message) for r in resp.responses}

        return self._transport.batched("IncrementalAlterConfigs", sorted(changes), str, call)

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results:
        """SET and DELETE topic configs of all topics in one IncrementalAlterConfigs request."""
        if not changes:
            return {}
        self._transport.require(IncrementalAlterConfigsRequest)
        return self._alter_configs(RESOURCE_TOPIC, changes, None)

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        """Dynamic broker configs; Kafka takes each broker's change only on that broker
        (ConfigAdminManager), so one request per broker, and a broker that cannot be reached
        (down, unknown) is that item's error, never the loss of the whole cluster."""
        if not changes:
            return {}
        self._transport.require(IncrementalAlterConfigsRequest)
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
        self._transport.require(AlterPartitionReassignmentsRequest)
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
        self._transport.require(ElectLeadersRequest)

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
