"""The value types everything else passes around: specs (what git says) and state (what the
cluster says). All frozen; partition ids are ints here and strings only in JSON.

Desired side::

    ClusterSpec  one cluster.yaml     (bootstrap servers or simulated brokers, safety settings)
    TopicSpec    one Topic document   (partitions, RF, placement, config, marks for errors)

Live side::

    ClusterState  brokers, topics, in-flight reassignments (docs/simulated-cluster.md's state file)
    TopicState    partitions and the configs set on the topic itself (DYNAMIC_TOPIC_CONFIG)
    PartitionState replicas (first = preferred leader), isr, leader, sizeBytes
    TopicPartition (topic, partition): the key of one partition, printed ``topic-partition``
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, NamedTuple

from kgitops.access import AccessState, Acl
from kgitops.errors import Mark
from kgitops.groups import GroupsState
from kgitops.names import MIN_ISR
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion, effective_min_isr

Placement = Literal["rack-aware", "rack-unaware", "static"]
UnmanagedPolicy = Literal["ignore", "warn", "error"]
#: The topic kgitops keeps SCRAM passwordVersion records in on a real cluster, unless
#: cluster.yaml names another (``passwordVersionTopic``; kgitops/cluster/kafka/versions.py).
PASSWORD_VERSION_TOPIC = "_kgitops-password-versions"
#: The compacted topic of owner records (kgitops/plan/owners.py): what each folder with
#: ``owns:`` claims on the cluster, so another repository's overlapping claim is refused.
OWNER_TOPIC = "_kgitops-owners"
UnmanagedAclPolicy = Literal["ignore", "warn", "delete"]

EMPTY: Mapping[str, str] = MappingProxyType({})
NOWHERE = Mark("<memory>")


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class TopicPartition(NamedTuple):
    """One partition's key: ``TopicPartition("orders", 3)``, printed ``orders-3`` as Kafka's
    tools print it. A NamedTuple: immutable, ordered by (topic, partition), unpacks as
    ``topic, partition = tp``, and equal (same hash) to the plain ``(topic, partition)``
    tuple, so a mapping keyed by it answers either."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
_RACK_ID = re.compile(r"[a-zA-Z0-9._:/-]{1,255}")

#: What ``legal_topic_name`` accepts, for messages.
TOPIC_NAME_RULE = "1 to 249 ASCII letters, digits, '.', '_' and '-', not '.' or '..'"
#: What ``legal_rack`` accepts, for messages.
RACK_RULE = "1 to 255 ASCII letters, digits, '.', '_', '-', ':' and '/'"


def legal_topic_name(name: object) -> bool:
    """Kafka's rule for topic names (``Topic.validate``): a name from a state file, a lock or
    a live cluster is also a file name (``import``) and a word in a comment.

    >>> legal_topic_name("payments.orders"), legal_topic_name("../../../x")
    (True, False)
    """
    return (
        isinstance(name, str)
        and _TOPIC_NAME.fullmatch(name) is not None
        and name not in (".", "..")
    )


def legal_rack(rack: object) -> bool:
    """Rack ids kgitops accepts: what cloud zones and data-centre names use, nothing a shell
    or a renderer would read as syntax (``$(...)``, quotes, spaces, backticks).

    >>> legal_rack("us-east-1a"), legal_rack("$(curl evil)")
    (True, False)
    """
    return isinstance(rack, str) and _RACK_ID.fullmatch(rack) is not None


@dataclass(frozen=True, slots=True, order=True)
class Broker:
    """A broker as placement sees it. ``online`` is False for a failed broker."""

    id: int
    rack: str | None = None
    online: bool = True


# ---------------------------------------------------------------- desired side


@dataclass(frozen=True, slots=True)
class KeySample:
    """Where a sample of the topic's real message keys lives, for the key analysis."""

    sample: str
    column: str = "key"
    size_column: str | None = None


@dataclass(frozen=True)
class TopicSpec:
    """One ``kind: Topic`` document.

    ``config`` values are already normalised to the strings Kafka holds (``604800000`` and
    ``"604800000"`` are equal; booleans are ``"true"``/``"false"``). ``marks`` maps a field
    path (``"partitions"``, ``"config.retention.ms"``, ``"assignment.3"``) to its position.
    """

    name: str
    partitions: int
    replication_factor: int
    placement: Placement | None = None
    start_index: int | None = None
    assignment: tuple[tuple[int, ...], ...] | None = None
    config: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    delete: bool = False
    keys: KeySample | None = None
    mark: Mark = NOWHERE
    marks: Mapping[str, Mark] = field(default_factory=dict)
    #: Values cluster.yaml set: path -> ``defaults`` or ``profile NAME`` (else the topic's own).
    origins: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    profile: str | None = None  # the profile the topic selects
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY)  # labels:, as text
    expected_write_rate: int | None = None  # expectedWriteBytesPerSec: bytes/s, every partition

    def mark_of(self, path: str) -> Mark:
        """The position of a field, or of the document when the field has none."""
        return self.marks.get(path, self.mark)


@dataclass(frozen=True, slots=True)
class SaslSpec:
    mechanism: str  # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | OAUTHBEARER | AWS_MSK_IAM
    username_env: str = ""  # PLAIN, SCRAM
    password_env: str = ""  # PLAIN, SCRAM
    token_env: str | None = None  # OAUTHBEARER: the token in an environment variable
    token_command: tuple[str, ...] | None = None  # OAUTHBEARER: a command printing the token
    token_refresh_seconds: int = 300


@dataclass(frozen=True, slots=True)
class SslSpec:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password_env: str | None = None
    check_hostname: bool = True


@dataclass(frozen=True, slots=True)
class SecuritySpec:
    protocol: str = "PLAINTEXT"  # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    sasl: SaslSpec | None = None
    ssl: SslSpec | None = None
    allow_plaintext_password: bool = False  # SASL PLAIN over SASL_PLAINTEXT: a choice, said
    allow_cleartext_credentials: bool = False  # SCRAM credentials written without TLS: said

    @property
    def tls(self) -> bool:
        """Whether the connection is encrypted (SSL or SASL_SSL)."""
        return self.protocol in ("SSL", "SASL_SSL")


@dataclass(frozen=True, slots=True)
class ReassignmentSettings:
    throttle_bytes_per_sec: int | None = None
    max_concurrent_moves: int = 10
    timeout_seconds: float = 6 * 3600.0


@dataclass(frozen=True, slots=True)
class Limits:
    """cluster.yaml ``limits``: upper bounds that catch a typo (``partitions: 10000000``)
    before it costs minutes and gigabytes, or reaches the cluster. Raise them in cluster.yaml
    when a cluster really is that big."""

    partitions_per_topic: int = 10_000
    total_partitions: int = 1_000_000  # over every topic of the folder (what a plan manages)
    replication_factor: int = 10


@dataclass(frozen=True, slots=True)
class SimulatedSpec:
    """A file-backed simulated cluster. ``state_file`` is absolute once loaded."""

    state_file: str
    brokers: tuple[Broker, ...]
    auto_leader_rebalance: bool = True
    leader_imbalance_check_seconds: float = 300.0
    eligible_leader_replicas: bool = True
    kafka_version: KafkaVersion = DEFAULT_VERSION  # the cluster's kafkaVersion


@functools.lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts = ("." if c == "?" else ".*" if c == "*" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.S)


def glob_match(pattern: str, name: str) -> bool:
    """Whether ``name`` matches ``pattern``, where ``*`` is any run of characters (dots too)
    and ``?`` one character; everything else stands for itself.

    >>> glob_match("payments.*", "payments.orders"), glob_match("payments.*", "payments")
    (True, False)
    """
    return _glob_regex(pattern).fullmatch(name) is not None


def glob_covers_prefix(pattern: str, prefix: str) -> bool:
    """Whether every name starting with ``prefix`` matches ``pattern`` (a PREFIXED ACL's
    resource): true when the pattern ends in ``*`` and the rest matches a beginning of the
    prefix. Sound, never too generous: ``payments.*`` covers ``payments.o``, not ``pay``."""
    if not pattern.endswith("*"):
        return False
    head = pattern[:-1]
    return any(glob_match(head, prefix[:k]) for k in range(len(prefix) + 1))


def globs_overlap(a: str, b: str) -> bool:
    """Whether some name matches both globs (``team-*`` and ``*-orders`` do: ``team-orders``).

    >>> globs_overlap("payments.*", "shipping.*")
    False
    """

    @functools.cache
    def meet(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "*":
            return meet(i + 1, j) or (j < len(b) and meet(i, j + 1))
        if j < len(b) and b[j] == "*":
            return meet(i, j + 1) or (i < len(a) and meet(i + 1, j))
        if i == len(a) or j == len(b):
            return False
        return (a[i] == b[j] or "?" in (a[i], b[j])) and meet(i + 1, j + 1)

    return meet(0, 0)


def labels_of(value: object) -> dict[str, str]:
    """A document's ``labels:`` as text (``tier: 1`` is ``"1"``, ``pii: true`` ``"true"``)."""
    raw = value.get("labels") if isinstance(value, dict) else None
    if not isinstance(raw, dict):
        return {}
    return {
        str(k): ("true" if v else "false") if isinstance(v, bool) else str(v)
        for k, v in sorted(raw.items())
    }


#: The ``owns:`` kinds: (cluster.yaml key, what a name of it is called in a message).
OWNED_KINDS = (
    ("topics", "topic"),
    ("principals", "principal"),
    ("groups", "group"),
    ("transactionalIds", "transactional id"),
)
_RESOURCE_KIND = {"topic": "topics", "group": "groups", "transactional_id": "transactionalIds"}


@dataclass(frozen=True, slots=True)
class Owns:
    """What a cluster folder owns on its cluster (cluster.yaml ``owns:``): globs per kind.

    Without ``owns:`` a folder owns everything (``Owns()``), as before ownership existed.
    With it, a kind it does not list is owned by someone else: ``owns: {topics: [pay.*]}``
    owns no principal, so none of the cluster's ACLs, users or quotas is its business.
    What a folder does not own is invisible to it: never unmanaged, never deleted, never
    rebalanced (a drain of a broker still moves every replica off it). An ACL binding is the
    folder's when it owns the principal *and* the resource (a cluster resource: the principal)::

        owns:
          topics: ["payments.*"]
          principals: ["User:payments-*"]
          groups: ["payments-*"]
    """

    topics: tuple[str, ...] = ("*",)
    principals: tuple[str, ...] = ("*",)
    groups: tuple[str, ...] = ("*",)
    transactional_ids: tuple[str, ...] = ("*",)
    declared: bool = False  # cluster.yaml has owns:
    #: owns.owner: the name the folder's owner record is kept under on the cluster (None:
    #: derived from the repository and the folder, kgitops/commands/_owners.py)
    owner: str | None = None

    def patterns(self, kind: str) -> tuple[str, ...]:
        """The globs of one kind, by its cluster.yaml key (``topics``, ``transactionalIds``)."""
        return {
            "topics": self.topics,
            "principals": self.principals,
            "groups": self.groups,
            "transactionalIds": self.transactional_ids,
        }[kind]

    def owns(self, kind: str, name: str) -> bool:
        return any(glob_match(p, name) for p in self.patterns(kind))

    def topic(self, name: str) -> bool:
        return self.owns("topics", name)

    def principal(self, name: str) -> bool:
        return self.owns("principals", name)

    def resource(self, resource_type: str, name: str, pattern_type: str = "literal") -> bool:
        """A topic, group or transactional id by an ACL's name and pattern type (a literal
        ``*`` is every name); the cluster resource (cluster-wide rights) belongs only to a
        folder without ``owns:``, the one that owns everything."""
        kind = _RESOURCE_KIND.get(resource_type)
        if kind is None:
            return not self.declared
        if pattern_type == "prefixed" or name == "*":
            prefix = "" if name == "*" and pattern_type != "prefixed" else name
            return any(glob_covers_prefix(p, prefix) for p in self.patterns(kind))
        return self.owns(kind, name)

    def acl(self, acl: Acl) -> bool:
        """Whether the binding is this folder's: its principal and its resource are owned."""
        return self.principal(acl.principal) and self.resource(
            acl.resource_type, acl.name, acl.pattern_type
        )


#: A folder without ``owns:``: it owns every name.
OWNS_EVERYTHING = Owns()


@dataclass(frozen=True)
class ClusterSpec:
    """One ``kind: Cluster`` document (cluster.yaml). ``directory`` is the cluster folder."""

    name: str
    directory: str
    bootstrap_servers: tuple[str, ...] = ()
    security: SecuritySpec = SecuritySpec()
    reassignment: ReassignmentSettings = ReassignmentSettings()
    decommission: tuple[int, ...] = ()
    unmanaged_topics: UnmanagedPolicy = "warn"
    simulated: SimulatedSpec | None = None
    request_timeout_ms: int = 30_000
    access_probe_timeout_ms: int = 3_000  # accessProbeTimeoutMs: each access probe's deadline
    unmanaged_acls: UnmanagedAclPolicy = "warn"
    cluster_id: str | None = None  # clusterId: plan and apply refuse another cluster
    password_version_topic: str = PASSWORD_VERSION_TOPIC  # passwordVersionTopic
    limits: Limits = Limits()
    mark: Mark = NOWHERE
    marks: Mapping[str, Mark] = field(default_factory=dict)
    #: policies.names: (folder as written, its owners), for ``kgitops codeowners``
    folder_owners: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: retentionDropStep as written: a share (0.5) or a duration ("1d"); see spec.dropstep
    retention_drop_step: float | int | str = 0.5
    owns: Owns = OWNS_EVERYTHING  # cluster.yaml owns:
    #: kafkaVersion: the Kafka the cluster runs, (major, minor); its rules: versionrules.py
    kafka_version: KafkaVersion = DEFAULT_VERSION

    def mark_of(self, path: str) -> Mark:
        return self.marks.get(path, self.mark)

    @property
    def own_topics(self) -> frozenset[str]:
        """The topics kgitops itself keeps on this cluster (the passwordVersion records, the
        owner records): never a spec's, never unmanaged, never imported."""
        return frozenset({self.password_version_topic, OWNER_TOPIC})

    def own_topic_role(self, name: str) -> str:
        """What kgitops keeps in one of ``own_topics``, for a message about it."""
        if name == self.password_version_topic:
            return (
                "the topic kgitops keeps SCRAM passwordVersion records in (cluster.yaml "
                "passwordVersionTopic)"
            )
        return "the topic kgitops keeps its owner records in (docs/ownership.md)"


# ------------------------------------------------------------------- live side


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition as the cluster reports it. ``replicas[0]`` is the preferred leader."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None = None
    leader: int | None = None
    size_bytes: int | None = None


class PartitionTable(Mapping[int, PartitionState]):
    """A topic's partitions ``0..n-1`` held as columns: what ``read_state`` makes of a state
    file (kgitops/cluster/statefast.py). A state of a million partitions costs a second to
    build as PartitionState objects, and the planner reads most partitions only through
    their replica lists (``replica_lists``). A lookup builds the PartitionState, equal to the
    one a dict would hold; a table equals the dict of the same partitions.

    ``settled``: every partition's ISR is its replica tuple itself and its leader the
    preferred one (no election, nothing under-replicated: the planner skips the topic)."""

    __slots__ = ("isr", "leaders", "replicas", "settled", "sizes")

    def __init__(
        self,
        replicas: Sequence[tuple[int, ...]],
        isr: Sequence[tuple[int, ...] | None],
        leaders: Sequence[int | None],
        sizes: Sequence[int | None],
        *,
        settled: bool = False,
    ) -> None:
        self.replicas, self.isr, self.leaders, self.sizes = replicas, isr, leaders, sizes
        self.settled = settled

    def __getitem__(self, p: int) -> PartitionState:
        if not isinstance(p, int) or not 0 <= p < len(self.replicas):
            raise KeyError(p)
        return PartitionState(self.replicas[p], self.isr[p], self.leaders[p], self.sizes[p])

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.replicas)))

    def __len__(self) -> int:
        return len(self.replicas)

    def __contains__(self, p: object) -> bool:
        return isinstance(p, int) and 0 <= p < len(self.replicas)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def replica_lists(partitions: Mapping[int, PartitionState]) -> Sequence[tuple[int, ...]]:
    """The replica tuple of every partition, in the mapping's order: a PartitionTable's
    column as it is, without building a PartitionState per partition."""
    if isinstance(partitions, PartitionTable):
        return partitions.replicas
    return [ps.replicas for ps in partitions.values()]


PartitionRow = tuple[tuple[int, ...], tuple[int, ...] | None, int | None, int | None]


def partition_row(partitions: Mapping[int, PartitionState], p: int) -> PartitionRow | None:
    """Partition ``p``'s (replicas, isr, leader, size in bytes), None when there is none: a
    PartitionTable's columns, no PartitionState (a plan looks up each move several times)."""
    if isinstance(partitions, PartitionTable):
        if p not in partitions:
            return None
        return partitions.replicas[p], partitions.isr[p], partitions.leaders[p], partitions.sizes[p]
    ps = partitions.get(p)
    return None if ps is None else (ps.replicas, ps.isr, ps.leader, ps.size_bytes)


def partition_sizes(partitions: Mapping[int, PartitionState]) -> Sequence[int | None]:
    """Every partition's size in bytes (None: unknown), in order: a PartitionTable's column."""
    if isinstance(partitions, PartitionTable):
        return partitions.sizes
    return [ps.size_bytes for ps in partitions.values()]


def replicas_and_sizes(
    partitions: Mapping[int, PartitionState],
) -> Iterable[tuple[tuple[int, ...], int | None]]:
    """(replicas, size in bytes) of every partition, in the mapping's order: a
    PartitionTable's columns as they are, without a PartitionState per partition."""
    if isinstance(partitions, PartitionTable):
        return zip(partitions.replicas, partitions.sizes, strict=True)
    return [(ps.replicas, ps.size_bytes) for ps in partitions.values()]


@dataclass(frozen=True, slots=True)
class PartitionOffsets:
    """A partition's offsets as its leader knows them (the simulated cluster's; Kafka's admin
    API reports the high watermark only): the high watermark (what consumers can read up to),
    each replica's log end offset (LEO) in replica order, and the leader epoch."""

    high_watermark: int = 0
    log_end_offsets: tuple[tuple[int, int], ...] = ()  # (broker, LEO)
    leader_epoch: int = 0


NO_OFFSETS = PartitionOffsets()


@dataclass(frozen=True)
class TopicState:
    """A live topic: its partitions by id, and the configs set on the topic itself."""

    name: str
    partitions: Mapping[int, PartitionState]
    config: Mapping[str, str] = field(default_factory=lambda: EMPTY)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        p0 = self.partitions.get(0)
        return len(p0.replicas) if p0 is not None else 0


@dataclass(frozen=True, slots=True)
class Reassignment:
    """A reassignment in flight for one partition (Kafka's adding / removing replicas)."""

    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    target: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ClusterState:
    """Everything kgitops knows about a live cluster (docs/simulated-cluster.md's state file)."""

    brokers: tuple[Broker, ...]
    topics: Mapping[str, TopicState]
    reassignments: Mapping[str, Mapping[int, Reassignment]] = field(default_factory=dict)
    cluster_id: str | None = None
    controller_id: int | None = None
    broker_configs: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    broker_defaults: Mapping[str, str] = field(default_factory=dict)
    access: AccessState | None = None  # ACLs, SCRAM users, quotas; None: not read
    groups: GroupsState | None = None  # consumer groups and log offsets; None: not read
    network_bytes_per_sec: float | None = None  # a simulated cluster's modelled link; None: real
    # The topic config names the brokers know: every name Kafka's DescribeConfigs lists for
    # a topic (LogConfig's, which differ by version: 4.0 dropped message.format.version).
    # None: not known (no topic to ask about, a broker that lists only a topic's own configs).
    topic_config_names: frozenset[str] | None = None
    # The Kafka version whose rules apply (cluster.yaml kafkaVersion, or the simulated
    # cluster's); None: not known (an old state file): DEFAULT_VERSION's rules.
    kafka_version: KafkaVersion | None = None
    # Per topic and partition, the offsets (PartitionOffsets); None: not known (a real
    # cluster, a state file). A simulated cluster lists only partitions with any offset or
    # epoch above 0: a partition it leaves out has NO_OFFSETS (with LEO 0 on every replica).
    offsets: Mapping[str, Mapping[int, PartitionOffsets]] | None = None

    def offsets_of(self, topic: str, partition: int) -> PartitionOffsets | None:
        """The partition's offsets, or None when the cluster does not report them."""
        if self.offsets is None:
            return None
        found = self.offsets.get(topic, {}).get(partition)
        if found is not None:
            return found
        p = self.topics[topic].partitions[partition] if topic in self.topics else None
        return PartitionOffsets(0, tuple((b, 0) for b in p.replicas) if p else (), 0)

    @property
    def version(self) -> KafkaVersion:
        """The Kafka version whose rules apply (``versionrules.py``)."""
        return self.kafka_version or DEFAULT_VERSION

    def effective_min_isr(self, topic_config: Mapping[str, str], replicas: int) -> int:
        """The in-sync replicas an acks=all write to a partition of ``replicas`` replicas
        needs: ``min_insync_replicas``, capped at the replica count from Kafka 3.7
        (``versionrules.effective_min_isr``)."""
        return effective_min_isr(self.min_insync_replicas(topic_config), replicas, self.version)

    def min_insync_replicas(self, topic_config: Mapping[str, str]) -> int:
        """The ``min.insync.replicas`` a topic with ``topic_config`` really has: its own
        value, else the broker-level one from any source (a per-broker or cluster-wide
        dynamic value, server.properties, Kafka's default of 1; ``broker_defaults`` holds
        what the brokers report, ``broker_configs`` the per-broker dynamic values). Where
        brokers disagree the strictest (largest) counts: a partition led by that broker
        refuses acks=all writes below it."""
        own = _int_or_none(topic_config.get(MIN_ISR))
        if own is not None:
            return own
        values = [_int_or_none(self.broker_defaults.get(MIN_ISR))]
        values += [_int_or_none(c.get(MIN_ISR)) for c in self.broker_configs.values()]
        return max((v for v in values if v is not None), default=1)

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(sorted(b.id for b in self.brokers))

    @property
    def online_broker_ids(self) -> frozenset[int]:
        return frozenset(b.id for b in self.brokers if b.online)
