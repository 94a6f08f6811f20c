"""The one port through which kgitops reads and changes a cluster.

Three adapters implement it: ``kafka.KafkaAdmin`` (kafka-python, real clusters and the local
broker), ``simulated.SimulatedCluster`` (file-backed, multi-broker, Kafka's rules) and, for
tests, anything else with the same shape. Apply, status, snapshot and import see only this.

Batched by design: every write takes all its items at once and returns a per-item result, so
an adapter sends one request per API (and per broker where Kafka requires it), never one per
topic, and apply can report exactly which items failed. A result maps the item (a topic name,
a ``TopicPartition``, or ``"broker:<id>"``) to None on success or the ClusterError that item got.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kgitops.access import (
    ACCESS_PARTS,
    READ_APIS,
    AccessState,
    Acl,
    QuotaEntity,
    ScramCredential,
)
from kgitops.errors import ClusterAuthError, ClusterError
from kgitops.groups import GroupsState
from kgitops.model import ClusterState, TopicPartition
from kgitops.plan.owners import OwnerRecord

Results = Mapping[str, ClusterError | None]
PartitionResults = Mapping[TopicPartition, ClusterError | None]

# Every request this process has sent to a broker, by API (``CreateTopics``, ``Metadata``):
# an adapter that talks to brokers counts each one as it hands it to the wire, retries and
# per-broker copies included (the client library's own connection set-up, ApiVersions and
# SASL, aside). The simulated cluster sends none. Apply's summary reports what a run sent.
_SENT: Counter[str] = Counter()


def count_sent(api: str) -> None:
    """One more request of ``api`` sent to a broker."""
    _SENT[api] += 1


def sent_requests() -> Counter[str]:
    """The requests sent so far, by API (a copy: subtract an earlier one for a run's)."""
    return Counter(_SENT)


@dataclass(frozen=True)
class NewTopic:
    """A topic to create with an explicit assignment (partition id -> replicas)."""

    name: str
    assignment: Mapping[int, tuple[int, ...]]
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewPartitions:
    """Partitions to add: ``total`` is the new count; assignment covers the new ids only."""

    topic: str
    total: int
    assignment: Mapping[int, tuple[int, ...]]


@dataclass(frozen=True)
class ConfigChange:
    """An incremental config change (IncrementalAlterConfigs): SET these, DELETE those,
    APPEND to / SUBTRACT from list configs (ops 2 and 3: ``{"key": "0:1,0:2"}`` adds or
    takes out those items without reading the value first, so two writers cannot undo each
    other's items; Kafka leaves ``""`` when a SUBTRACT takes out the last item)."""

    set: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    append: Mapping[str, str] = field(default_factory=dict)
    subtract: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class QuotaChange:
    """AlterClientQuotas for one entity: SET these keys, REMOVE those (Kafka's key names)."""

    set: Mapping[str, float] = field(default_factory=dict)
    delete: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False)
class ScramUpsert:
    """AlterUserScramCredentials upsertion: the salt and salted password (RFC 5802 Hi()), never
    the password. ``repr`` hides both, so no log line can carry them."""

    name: str
    mechanism: str
    iterations: int
    salt: bytes
    salted_password: bytes
    password_version: int | None = None

    @property
    def key(self) -> str:
        return f"{self.name} {self.mechanism}"

    def __repr__(self) -> str:
        return f"ScramUpsert({self.key}, iterations={self.iterations})"


@runtime_checkable
class ClusterAdmin(Protocol):
    """What kgitops needs from a cluster. See the module docstring for the result shape."""

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        """Brokers with racks and liveness, topics (all, or only those named) with partitions,
        replicas, ISR, leaders, sizes where known, configs set on the topic itself
        (DYNAMIC_TOPIC_CONFIG only), and reassignments in flight."""
        ...

    def create_topics(self, topics: Sequence[NewTopic]) -> Results: ...

    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results: ...

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results: ...

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        """Dynamic per-broker configs, e.g. leader/follower.replication.throttled.rate."""
        ...

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        """Submit reassignments; a None target cancels the one in flight for that partition."""
        ...

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        """In-flight reassignments: topic -> partition -> (replicas, adding, removing)."""
        ...

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults: ...

    def delete_topics(self, names: Sequence[str]) -> Results: ...

    # ------------------------------------------------------------ access (ACLs, quotas, SCRAM)

    def probe_access(self, apis: Collection[str]) -> None:
        """Raise ``AccessUnsupported`` (one line, naming the API) unless the cluster serves
        each of these access APIs (Kafka's names: ``CreateAcls``, ...): listed in its
        ApiVersions answer, and a small probe that changes nothing (an empty CreateAcls, a
        one-user DescribeUserScramCredentials) answered well-formed within
        accessProbeTimeoutMs (3 s by default; requestTimeoutMs when shorter). Each API is
        probed at most once per adapter. Plan probes the reads it needs, apply also the
        writes of its plan, before any change."""
        ...

    def ready_scram_versions(self) -> None:
        """Apply's preflight before it writes SCRAM credentials: where the adapter records
        each credential's passwordVersion outside Kafka's credential (a real cluster: the
        passwordVersion topic), that record can be written now: the topic exists (created
        when missing), is kgitops-shaped, has a leader, and the principal may read and
        write it. Else ClusterError, one line (apply adds "nothing was changed"). The
        simulated cluster keeps versions in its state file: nothing to check."""
        ...

    def describe_acls(self) -> frozenset[Acl]:
        """Every ACL binding: one DescribeAcls with the match-any filter."""
        ...

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        """One CreateAcls; result keys are ``Acl.key``."""
        ...

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        """One DeleteAcls with one exact filter per binding; result keys are ``Acl.key``."""
        ...

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        """Every entity's quotas (one DescribeClientQuotas, no filter components)."""
        ...

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        """One AlterClientQuotas; result keys are ``QuotaEntity.key``."""
        ...

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        """(user, mechanism) -> credential (mechanism and iterations; Kafka never returns
        the salt or keys)."""
        ...

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        """One AlterUserScramCredentials; result keys are ``ScramUpsert.key``."""
        ...

    # ------------------------------------------------------------ owner records

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        """Every owner's record (kgitops/plan/owners.py): the last one written for each
        owner, released ones left out; empty when none was ever written. A real cluster
        keeps them in the compacted topic ``model.OWNER_TOPIC`` (its absence: no record),
        the simulated cluster in its state file."""
        ...

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        """Write these owners' records, in one go (None releases that owner: a tombstone);
        a real cluster creates the topic on the first write. ClusterError when they were
        not written."""
        ...

    # ------------------------------------------------------------ consumer groups (console)

    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        """Consumer groups (every one ListGroups lists, or those named) with state, members,
        their assignments and committed offsets, and [log start, end] of every partition a
        group committed or is assigned: ListGroups, FindCoordinator, then per coordinator
        one DescribeGroups and one OffsetFetch, then ListOffsets per leader broker."""
        ...

    def list_offsets(
        self, partitions: Iterable[tuple[str, int]], spec: int
    ) -> Mapping[tuple[str, int], int]:
        """ListOffsets at ``spec``: -2 the log start, -1 the end, else a timestamp (ms): the
        first offset at or after it (the end when there is none)."""
        ...

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> PartitionResults:
        """Commit ``offsets`` for a group with no members (OffsetCommit as an admin)."""
        ...

    def delete_groups(self, group_ids: Sequence[str]) -> Results:
        """DeleteGroups: a group with members is that item's error (NON_EMPTY_GROUP)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Let time pass while waiting for the cluster (real: time.sleep; simulated: the
        simulated clock advances and replicas catch up)."""
        ...

    def close(self) -> None: ...


def refused(exc: ClusterError) -> bool:
    """Whether ``exc`` is the cluster refusing the principal (an ACL), not a failure."""
    return isinstance(exc, ClusterAuthError) or getattr(exc, "code", None) in (
        "TOPIC_AUTHORIZATION_FAILED",
        "CLUSTER_AUTHORIZATION_FAILED",
    )


def describe_access(admin: ClusterAdmin, parts: Collection[str] = ACCESS_PARTS) -> AccessState:
    """The ``parts`` of the cluster's access (``acls``, ``users``, ``quotas``), one request
    each after the probe of each read (``probe_access``); a part not asked for is empty."""
    admin.probe_access([READ_APIS[p] for p in ACCESS_PARTS if p in parts])
    return AccessState(
        acls=admin.describe_acls() if "acls" in parts else frozenset(),
        users=dict(admin.describe_scram_users()) if "users" in parts else {},
        quotas=(
            {e: dict(v) for e, v in admin.describe_client_quotas().items()}
            if "quotas" in parts
            else {}
        ),
    )
