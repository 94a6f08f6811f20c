"""Consumer groups over the raw Kafka protocol (``KafkaAdmin``'s half of the group port):
ListGroups, FindCoordinator, DescribeGroups, OffsetFetch, ListOffsets, OffsetCommit and
DeleteGroups, each batched (one request per coordinator or leader broker, whatever the
number of topics and partitions).

kafka-python 3.0.12's ``KafkaAdminClient.describe_consumer_groups`` fails to decode some
brokers' replies, so the DescribeGroups request is sent raw and a member's assignment (the
consumer protocol's Assignment bytes) is decoded here; an assignment the broker returns empty
(the local broker does) leaves the member owning nothing, as a Kafka client would see it.

A group of Kafka 4's consumer protocol (KIP-848: clients with ``group.protocol=consumer``)
is not a classic group: DescribeGroups answers it GROUP_ID_NOT_FOUND ("Group g is not a
classic group."), so such groups are asked again with ConsumerGroupDescribe (API 69, built
from Kafka's own schema: kafka-python 3.0 has no class for it), which gives the state, each
member's client id, host and assigned partitions. Their committed offsets come from the same
OffsetFetch as a classic group's.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import kafka.errors as kerr
from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import ListOffsetsRequest, OffsetCommitRequest, OffsetFetchRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest

from kgitops.cluster.kafka import protocol as _schemas
from kgitops.cluster.kafka.errors import item_error, retriable_code
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.cluster.port import PartitionResults, Results
from kgitops.errors import ClusterError, ClusterRequestError
from kgitops.groups import ConsumerGroup, GroupMember, GroupsState, Partition
from kgitops.model import TopicPartition


class ConsumerGroupDescribeRequest(ApiMessage, load_json=_schemas):  # type: ignore[misc,call-arg]
    """KIP-848's describe (Kafka 4.0+), from Kafka's ConsumerGroupDescribeRequest.json."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_schemas):  # type: ignore[misc,call-arg]
    """Its answer, from Kafka's ConsumerGroupDescribeResponse.json."""


EARLIEST = -2
GROUP_ID_NOT_FOUND = kerr.GroupIdNotFoundError.errno
_COORDINATOR_MOVED = frozenset(
    e.errno
    for e in (
        kerr.NotCoordinatorError,
        kerr.CoordinatorLoadInProgressError,
        kerr.CoordinatorNotAvailableError,
    )
)
LATEST = -1


def decode_assignment(data: bytes | None) -> tuple[Partition, ...]:
    """The consumer protocol's Assignment: int16 version, [string topic, [int32 partition]],
    bytes user data. Empty or malformed bytes: no partitions (never an exception)."""
    if not data:
        return ()
    out: list[Partition] = []
    try:
        pos = 2
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(max(n, 0)):
            (size,) = struct.unpack_from(">h", data, pos)
            pos += 2
            topic = data[pos : pos + size].decode("utf-8")
            pos += size
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(max(count, 0)):
                (p,) = struct.unpack_from(">i", data, pos)
                pos += 4
                out.append((topic, p))
    except (struct.error, UnicodeDecodeError):
        return tuple(sorted(out))
    return tuple(sorted(out))


class Groups:
    """The consumer-group operations of the ClusterAdmin port, over the adapter's
    ``Transport`` (``KafkaAdmin`` hands each call on)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _coordinators(self, group_ids: Sequence[str]) -> dict[str, int]:
        """One FindCoordinator for every group (KIP-699 batching). A retriable answer is asked
        again until the request timeout: on a real Kafka the first group's lookup creates
        ``__consumer_offsets`` and answers COORDINATOR_NOT_AVAILABLE until its partitions
        have leaders (GroupCoordinatorService; Tansu and the simulation answer at once)."""
        self._transport.require(FindCoordinatorRequest)
        backoff = Backoff(self._transport.timeout_ms / 1000, cap=1.0)
        while True:
            resp = self._transport.send(
                FindCoordinatorRequest(
                    key=group_ids[0], key_type=0, coordinator_keys=list(group_ids)
                )
            )
            out: dict[str, int] = {}
            waiting = False
            for c in resp.coordinators:
                if retriable_code(c.error_code) and backoff.allows():
                    waiting = True
                    continue
                err = item_error("FindCoordinator", f"group {c.key}", c.error_code, c.error_message)
                if err is not None:
                    raise err
                out[c.key] = c.node_id
            if not waiting:
                return out
            backoff.wait()

    def _by_node(self, group_ids: Sequence[str]) -> dict[int, list[str]]:
        nodes: dict[int, list[str]] = {}
        for g, node in self._coordinators(group_ids).items():
            nodes.setdefault(node, []).append(g)
        return nodes

    @staticmethod
    def _answer(resp: Any) -> Any:
        if isinstance(resp, ClusterError):
            raise resp
        return resp

    def list_group_ids(self) -> list[str]:
        """Every group ListGroups lists (one request; a cluster of several brokers answers
        for the groups each coordinates, so it goes to every broker at once)."""
        self._transport.require(ListGroupsRequest)
        md = self._transport.send(MetadataRequest(topics=[], allow_auto_topic_creation=False))
        requests = {
            b.node_id: ListGroupsRequest(states_filter=[], types_filter=[]) for b in md.brokers
        }
        ids: set[str] = set()
        for resp in self._transport.send_each(requests).values():
            resp = self._answer(resp)
            err = item_error("ListGroups", "groups", resp.error_code, None)
            if err is not None:
                raise err
            ids.update(g.group_id for g in resp.groups if g.protocol_type in ("consumer", ""))
        return sorted(ids)

    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        ids = self.list_group_ids() if group_ids is None else sorted(set(group_ids))
        if not ids:
            return GroupsState()
        self._transport.require(DescribeGroupsRequest)
        self._transport.require(OffsetFetchRequest)
        nodes = self._by_node(ids)
        described = self._transport.send_each(
            {
                n: DescribeGroupsRequest(groups=gs, include_authorized_operations=False)
                for n, gs in nodes.items()
            }
        )
        G = OffsetFetchRequest.OffsetFetchRequestGroup
        fetched = self._transport.send_each(
            {
                n: OffsetFetchRequest(
                    group_id=gs[0],
                    topics=None,
                    groups=[G(group_id=g, topics=None) for g in gs],
                    require_stable=False,
                )
                for n, gs in nodes.items()
            }
        )
        offsets: dict[str, dict[Partition, int]] = {g: {} for g in ids}
        for resp in fetched.values():
            for grp in self._answer(resp).groups:
                if grp.error_code == GROUP_ID_NOT_FOUND:
                    continue  # no such group: no offsets
                err = item_error("OffsetFetch", f"group {grp.group_id}", grp.error_code, None)
                if err is not None:
                    raise err
                for t in grp.topics:
                    for p in t.partitions:
                        if p.error_code == 0 and p.committed_offset >= 0:
                            offsets[grp.group_id][(t.name, p.partition_index)] = p.committed_offset
        groups: dict[str, ConsumerGroup] = {}
        not_classic: list[str] = []
        for resp in described.values():
            for g in self._answer(resp).groups:
                if g.error_code == GROUP_ID_NOT_FOUND:
                    # Kafka 4's DescribeGroups v6 names a group it never saw (or deleted)
                    # GROUP_ID_NOT_FOUND; before, it answered state Dead: the same group.
                    # A consumer-protocol group gets the same answer (module doc).
                    groups[g.group_id] = ConsumerGroup(
                        g.group_id, "Dead", "", "", (), offsets.get(g.group_id, {})
                    )
                    not_classic.append(g.group_id)
                    continue
                groups[g.group_id] = _described(
                    "DescribeGroups",
                    g,
                    g.protocol_type or "",
                    g.protocol_data or "",
                    lambda m: decode_assignment(m.member_assignment),
                    offsets,
                )
        if not_classic and self._transport.supports(ConsumerGroupDescribeRequest):
            groups.update(self._consumer_groups(not_classic, offsets))
        wanted = {p for g in groups.values() for p in g.offsets} | {
            p for g in groups.values() for m in g.members for p in m.assignment
        }
        return GroupsState(groups, self.log_offsets(wanted))

    def _consumer_groups(
        self, group_ids: Sequence[str], offsets: Mapping[str, Mapping[Partition, int]]
    ) -> dict[str, ConsumerGroup]:
        """The consumer-protocol groups among ``group_ids`` (module doc), one
        ConsumerGroupDescribe per coordinator; a group it does not know either stays out."""
        answers = self._transport.send_each(
            {
                n: ConsumerGroupDescribeRequest(group_ids=gs, include_authorized_operations=False)
                for n, gs in self._by_node(group_ids).items()
            }
        )
        out: dict[str, ConsumerGroup] = {}
        for resp in answers.values():
            for g in self._answer(resp).groups:
                if g.error_code == GROUP_ID_NOT_FOUND:
                    continue  # neither kind: the Dead group above
                out[g.group_id] = _described(
                    "ConsumerGroupDescribe",
                    g,
                    "consumer",
                    g.assignor_name or "",
                    lambda m: tuple(
                        sorted(
                            (t.topic_name, p)
                            for t in m.assignment.topic_partitions
                            for p in t.partitions
                        )
                    ),
                    offsets,
                )
        return out

    def _leaders(self, topics: Sequence[str]) -> dict[Partition, int]:
        T = MetadataRequest.MetadataRequestTopic
        md = self._transport.send(
            MetadataRequest(topics=[T(name=t) for t in topics], allow_auto_topic_creation=False)
        )
        return {
            (t.name, p.partition_index): p.leader_id
            for t in md.topics
            if t.error_code == 0
            for p in t.partitions
            if p.leader_id is not None and p.leader_id >= 0
        }

    def list_offsets(self, partitions: Iterable[Partition], spec: int) -> dict[Partition, int]:
        """ListOffsets at ``spec`` (-2 earliest, -1 latest, else a timestamp in ms: the first
        offset at or after it, or the end when none is), one request per leader broker."""
        return self._list_offsets(sorted(set(partitions)), spec, None)

    def _list_offsets(
        self, wanted: Sequence[Partition], spec: int, leaders: Mapping[Partition, int] | None
    ) -> dict[Partition, int]:
        if not wanted:
            return {}
        self._transport.require(ListOffsetsRequest)
        if leaders is None:
            leaders = self._leaders(sorted({t for t, _ in wanted}))
        by_leader: dict[int, dict[str, list[int]]] = {}
        for t, p in wanted:
            if (t, p) in leaders:
                by_leader.setdefault(leaders[(t, p)], {}).setdefault(t, []).append(p)
        T = ListOffsetsRequest.ListOffsetsTopic
        P = T.ListOffsetsPartition
        requests = {
            b: ListOffsetsRequest(
                replica_id=-1,
                isolation_level=0,
                topics=[
                    T(name=t, partitions=[P(partition_index=p, timestamp=spec) for p in ps])
                    for t, ps in sorted(topics.items())
                ],
            )
            for b, topics in by_leader.items()
        }
        out: dict[Partition, int] = {}
        for resp in self._transport.send_each(requests).values():
            for t in self._answer(resp).topics:
                for p in t.partitions:
                    err = item_error(
                        "ListOffsets", f"{t.name}-{p.partition_index}", p.error_code, None
                    )
                    if err is not None:
                        raise err
                    out[(t.name, p.partition_index)] = p.offset
        if spec >= 0:  # no record at or after the time: the end, as Kafka's tools do
            missing = [k for k in wanted if k in out and out[k] < 0]
            if missing:
                out.update(self._list_offsets(missing, LATEST, leaders))
        return out

    def log_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, tuple[int, int]]:
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        leaders = self._leaders(sorted({t for t, _ in wanted}))
        start = self._list_offsets(wanted, EARLIEST, leaders)
        end = self._list_offsets(wanted, LATEST, leaders)
        return {k: (start[k], end[k]) for k in sorted(start) if k in end}

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> PartitionResults:
        """One OffsetCommit to the group's coordinator, as an admin does it (generation -1,
        no member id): Kafka refuses it while the group has members."""
        if not offsets:
            return {}
        self._transport.require(OffsetCommitRequest)
        (node,) = self._coordinators([group_id]).values()
        by_topic: dict[str, list[tuple[int, int]]] = {}
        for tp, o in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append((tp.partition, o))
        T = OffsetCommitRequest.OffsetCommitRequestTopic
        P = T.OffsetCommitRequestPartition
        req = OffsetCommitRequest(
            group_id=group_id,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                T(
                    name=t,
                    partitions=[
                        P(partition_index=p, committed_offset=o, committed_metadata=None)
                        for p, o in ps
                    ],
                )
                for t, ps in by_topic.items()
            ],
        )
        # a coordinator that moved or is still loading (a real Kafka right after it made
        # __consumer_offsets: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) is looked up and
        # asked again until the request timeout; Tansu and the simulation answer at once
        backoff = Backoff(self._transport.timeout_ms / 1000, cap=1.0)
        while True:
            resp = self._transport.send(req, node)
            codes = [p.error_code for t in resp.topics for p in t.partitions]
            moved = bool(codes) and all(c in _COORDINATOR_MOVED for c in codes)
            if not moved or not backoff.wait():
                break
            (node,) = self._coordinators([group_id]).values()
        out: dict[TopicPartition, ClusterError | None] = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                out[tp] = item_error("OffsetCommit", str(tp), p.error_code, None)
        for tp in offsets:
            out.setdefault(tp, ClusterRequestError(f"{tp}: the broker did not answer"))
        return out

    def delete_groups(self, group_ids: Sequence[str]) -> Results:
        """DeleteGroups, one request per coordinator."""
        if not group_ids:
            return {}
        self._transport.require(DeleteGroupsRequest)
        nodes = self._by_node(list(group_ids))
        out: dict[str, ClusterError | None] = {}
        sent = self._transport.send_each(
            {n: DeleteGroupsRequest(groups_names=gs) for n, gs in nodes.items()}
        )
        for resp in sent.values():
            for r in self._answer(resp).results:
                out[r.group_id] = item_error(
                    "DeleteGroups", f"group {r.group_id}", r.error_code, None
                )
        return out


def _described(
    api: str,
    g: Any,
    protocol_type: str,
    protocol: str,
    assignment: Callable[[Any], tuple[Partition, ...]],
    offsets: Mapping[str, Mapping[Partition, int]],
) -> ConsumerGroup:
    """One group of a DescribeGroups or ConsumerGroupDescribe answer (its error raised), its
    members sorted by id; ``assignment`` reads a member's partitions, which the two APIs
    carry differently."""
    err = item_error(api, f"group {g.group_id}", g.error_code, None)
    if err is not None:
        raise err
    members = tuple(
        GroupMember(m.member_id, m.client_id or "", m.client_host or "", assignment(m))
        for m in g.members
    )
    return ConsumerGroup(
        g.group_id,
        g.group_state or "Unknown",
        protocol_type,
        protocol,
        tuple(sorted(members, key=lambda m: m.member_id)),
        offsets.get(g.group_id, {}),
    )
