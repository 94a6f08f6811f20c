"""``LogTopic``: a topic of kgitops' own that holds records, made ready before they are read or
written. The passwordVersion topic (versions.py) and the owner records' topic (owners.py) are
both one, so both are found, created, checked and waited for alike::

    describe   KafkaAdminClient.describe_topics (one Metadata): the topic's error code,
               partition 0's leader, its partition count and what the principal may do on it
    create     when missing and about to be written: the live brokers
               (KafkaAdminClient.describe_cluster, fenced ones left out as Metadata leaves
               them out), version_records.topic_layout (the drained brokers left out), the
               adapter's create_topics (an explicit assignment, then checked)
    shape      an existing topic that is not kgitops' (version_records.shape_problems) is
               refused in one line, once per adapter and purpose (read, write); its configs
               with a DescribeConfigs kgitops builds (``_shape_configs`` says why)
    leader     partition 0's, waited for until requestTimeoutMs

``ready(create=False, writing=False)`` is None when the topic does not exist (no records, not
an error); else a ``Ready`` (the leader, the operations Metadata reported, whether this call
created the topic).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from kgitops.cluster.kafka.errors import UNKNOWN_TOPIC_OR_PARTITION, item_error, retriable_code
from kgitops.cluster.kafka.topiclog import TopicLog
from kgitops.cluster.kafka.transport import Backoff, Transport
from kgitops.cluster.kafka.version_records import (
    Raw,
    Undecoded,
    build_describe_configs,
    read_describe_configs,
    shape_problems,
    topic_layout,
)
from kgitops.cluster.port import NewTopic, Results
from kgitops.errors import ClusterError, ClusterRequestError
from kgitops.model import Broker

#: How often the topic is asked again while it has no leader or answers a retriable error
#: (the transport's ``Backoff`` with this cap: a leader is usually there in a moment).
POLL_SECONDS = 0.1
#: CreateTopics answers that still leave a topic to use: another apply created it first, or
#: it was created elsewhere than asked (a broker ignoring explicit assignments).
CREATED_ANYWAY = ("TOPIC_ALREADY_EXISTS", "ASSIGNMENT_MISMATCH")


@dataclass(frozen=True)
class Described:
    """The topic as one Metadata answer shows it: ``code`` its error code
    (UNKNOWN_TOPIC_OR_PARTITION: it does not exist), partition 0's ``leader``, its partition
    count, and the ``operations`` the principal may perform on it (Kafka's AclOperation
    names, ``READ``, ``WRITE``, ``DESCRIBE``...; None when the broker does not report them)."""

    code: int
    leader: int | None = None
    partitions: int = 0
    operations: frozenset[str] | None = None


@dataclass(frozen=True)
class Ready:
    """A topic with a leader: the leader, the operations Metadata last reported, and whether
    this call created it (False when it existed, or another apply created it first)."""

    leader: int
    operations: frozenset[str] | None
    created: bool


class LogTopic:
    """One topic of kgitops' own: ``name``, what it is (``role``, as a refusal names it,
    with ``advice`` after), the brokers it is never placed on (``drained``: cluster.yaml
    ``decommission``), the adapter's ``create_topics`` and the ``log`` its records are read
    and written through (topiclog.py)."""

    def __init__(
        self,
        transport: Transport,
        name: str,
        *,
        role: str,
        advice: str = "",
        drained: Collection[int] = (),
        create_topics: Callable[[Sequence[NewTopic]], Results],
        log: TopicLog,
    ) -> None:
        self.name = name
        self._transport = transport
        self._role = role
        self._advice = advice
        self._drained = tuple(drained)
        self._create_topics = create_topics
        self._log = log
        self._shaped: set[bool] = set()  # the purposes (writing or not) already checked

    # ---- the records (topiclog.py)

    def read(self, max_bytes: int) -> tuple[list[Raw], list[Undecoded]]:
        return self._log.read(self.name, max_bytes)

    def write(self, records: list[tuple[bytes, bytes | None]]) -> list[ClusterError | None]:
        return self._log.write(self.name, records)

    # ---- the topic

    def describe(self) -> Described:
        """One Metadata request (``KafkaAdminClient.describe_topics``, which asks for the
        principal's operations on the topic too)."""
        library = self._transport.library
        topics = self._transport.call("Metadata", library.describe_topics, [self.name])
        for t in topics:
            if t.get("name") != self.name:
                continue
            granted = t.get("authorized_operations")
            operations = None if granted is None else frozenset(str(op) for op in granted)
            if t.get("error_code"):
                return Described(int(t["error_code"]), operations=operations)
            parts = t.get("partitions") or []
            leader = next((int(p["leader_id"]) for p in parts if p["partition_index"] == 0), -1)
            return Described(0, leader if leader >= 0 else None, len(parts), operations)
        return Described(UNKNOWN_TOPIC_OR_PARTITION)

    def ready(self, *, create: bool, writing: bool) -> Ready | None:
        """The topic with its partition's leader, waiting for one until the deadline; None
        when it does not exist and ``create`` is False (else it is created). An existing
        topic that is not kgitops' is refused (``writing``: the checks before a write too):
        its records are never read nor written."""
        backoff = Backoff(self._transport.timeout_ms / 1000, cap=POLL_SECONDS)
        asked = created = False
        while True:
            now = self.describe()
            if now.code == UNKNOWN_TOPIC_OR_PARTITION and not asked:
                if not create:
                    return None
                created = self._create()
                asked = True
                continue
            if now.code not in (0, UNKNOWN_TOPIC_OR_PARTITION) and not retriable_code(now.code):
                err = item_error("Metadata", self.name, now.code, None)
                raise err if err is not None else ClusterError(f"{self.name}: error {now.code}")
            if now.code == 0 and now.partitions and not asked:  # one made here is kgitops' own
                self._check_shape(now.partitions, writing=writing)
            if now.code == 0 and now.leader is not None:
                return Ready(now.leader, now.operations, created)
            if not backoff.wait():
                raise ClusterRequestError(
                    f"{self.name}: the partition has no leader",
                    code="LEADER_NOT_AVAILABLE",
                    item=self.name,
                )

    def _create(self) -> bool:
        """Create the topic (version_records.topic_layout); True when this call made it."""
        replicas, configs = topic_layout(self._live_brokers(), self._drained)
        err = self._create_topics([NewTopic(self.name, {0: replicas}, configs)])[self.name]
        code = getattr(err, "code", "")
        if err is not None and code not in CREATED_ANYWAY:
            raise err
        return code != "TOPIC_ALREADY_EXISTS"

    def _live_brokers(self) -> list[Broker]:
        """The brokers a new topic may be placed on (``KafkaAdminClient.describe_cluster``:
        Kafka 4 lists fenced brokers too, marked; older brokers, Metadata's live ones)."""
        library = self._transport.library
        cluster = self._transport.call("DescribeCluster", library.describe_cluster)
        return [
            Broker(int(b["broker_id"]), b.get("rack") or None)
            for b in cluster["brokers"]
            if not b.get("is_fenced", False)
        ]

    def _check_shape(self, partitions: int, *, writing: bool) -> None:
        """ClusterError when the existing topic is not kgitops' (``shape_problems``); its
        configs are asked once per adapter and purpose."""
        if writing in self._shaped and partitions == 1:
            return
        problems = shape_problems(partitions, self._shape_configs(), writing=writing)
        if problems:
            raise ClusterError(
                f"topic {self.name} exists and is not kgitops' {self._role} "
                f"({'; '.join(problems)}); kgitops neither reads nor writes it{self._advice}"
            )
        self._shaped.add(writing)

    def _shape_configs(self) -> dict[str, str]:
        """The topic's effective configs that say whether it is kgitops'. A DescribeConfigs
        built here, not ``KafkaAdminClient.describe_configs``: kafka-python 3.0 drops each
        resource's error code (``_describe_configs_process_responses``), so a principal
        refused DescribeConfigs, or a topic deleted meanwhile, would read as a topic without
        configs, which ``shape_problems`` lets pass; here that error is the refusal."""
        request = build_describe_configs(self.name)
        return read_describe_configs(self._transport.send(request), self.name)
