"""One contract for every adapter of the cluster port (kgitops/cluster/port.py): the same tests
run against the simulated cluster, the kafka-python adapter on the local Tansu broker and on a
real Apache Kafka cluster (4 brokers, racks; tests/conftest.py ``kafka_cluster``), and the
in-memory fake apply's tests use (tests/apply/apply_fakes.py), so they cannot drift.

Tansu is one broker without CreatePartitions, AlterPartitionReassignments or ElectLeaders:
the tests of those calls run on the adapters that have them (``needs``), and the Tansu test
file checks that the kafka-python adapter names the missing API instead.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from kgitops.access import ACCESS_APIS
from kgitops.cluster.port import ClusterAdmin, ConfigChange, NewPartitions, NewTopic
from kgitops.errors import AccessUnsupported, ClusterRequestError
from kgitops.model import Broker, ClusterSpec, Owns, TopicPartition
from kgitops.plan.owners import OwnerRecord
from tests.apply.apply_fakes import FakeCluster
from tests.helpers import kafka_admin

BROKERS = [Broker(1, "a"), Broker(2, "b"), Broker(3, "c")]
# Calls the Tansu broker lacks, or answers unlike Kafka: IncrementalAlterConfigs of a topic it
# does not have succeeds there (Kafka: UNKNOWN_TOPIC_OR_PARTITION); it describes ACLs (none)
# but answers CreateAcls with a body that does not decode, and lacks DeleteAcls and the
# client-quota APIs (tests/access/test_kafka_access_tansu.py).
MULTI_BROKER = frozenset(
    {"create_partitions", "reassign", "elect", "unknown-topic-config", "acls", "quotas"}
)
_names = itertools.count()
T = TypeVar("T")


@dataclass
class Adapter:
    admin: ClusterAdmin
    prefix: str
    can: frozenset[str]
    real: bool = False  # Apache Kafka: shared by the session, its internal topics real

    def topic(self, name: str) -> str:
        return f"{self.prefix}{name}"

    @property
    def ids(self) -> list[int]:
        return sorted(b.id for b in self.admin.describe([]).brokers)


@pytest.fixture(
    params=[
        "simulated",
        "fake",
        pytest.param("kafka", marks=pytest.mark.broker),  # the local Tansu broker
        pytest.param("apache-kafka", marks=pytest.mark.kafka),
    ]
)
def port(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Adapter]:
    prefix = f"c{next(_names)}-"
    if request.param == "simulated":
        from kgitops.cluster.simulated import SimulatedCluster

        sim = SimulatedCluster.open(str(tmp_path / "state.json"), BROKERS)
        yield Adapter(sim, prefix, MULTI_BROKER | {"groups"})
        sim.close()
    elif request.param == "fake":
        yield Adapter(FakeCluster(brokers=list(BROKERS)), prefix, MULTI_BROKER)
    elif request.param == "apache-kafka":
        admin = kafka_admin(request.getfixturevalue("kafka_cluster").bootstrap)
        yield Adapter(
            admin,
            f"{request.getfixturevalue('topic_prefix')}{prefix}",
            MULTI_BROKER | {"groups"},
            real=True,
        )
        admin.close()
    else:
        admin = kafka_admin(request.getfixturevalue("local_broker"), timeout_ms=3000, name="local")
        yield Adapter(
            admin, f"{request.getfixturevalue('topic_prefix')}{prefix}", frozenset({"groups"})
        )
        admin.close()


def needs(port: Adapter, call: str) -> None:
    if call not in port.can:
        pytest.skip(f"the adapter's broker has no {call} (see tests/cluster/test_kafka_tansu.py)")


def eventually(
    port: Adapter, read: Callable[[], T], ok: Callable[[T], bool], seconds: float = 15.0
) -> T:
    """``read()`` once ``ok`` holds for it (at most ``seconds``; the last answer otherwise).
    Kafka's brokers apply the metadata log asynchronously (KRaft: each broker's
    MetadataLoader), so a Metadata, DescribeAcls or DescribeClientQuotas answer right after
    the controller accepted a change may still show the old state for a moment, and a new
    topic may be unknown to a group coordinator; the simulated cluster and the fake answer
    at once."""
    value = read()
    deadline = time.monotonic() + seconds
    while not ok(value) and time.monotonic() < deadline:
        port.admin.sleep(0.2)
        value = read()
    return value


def code(err: object) -> str | None:
    assert isinstance(err, ClusterRequestError), err
    return err.code


# --------------------------------------------------------------------- reads


def test_every_adapter_is_a_cluster_port(port: Adapter) -> None:
    assert isinstance(port.admin, ClusterAdmin)


def test_describe_of_no_topics_gives_the_brokers_and_skips_absent_topics(port: Adapter) -> None:
    state = port.admin.describe([port.topic("absent")])
    assert state.topics == {}
    assert state.brokers and all(b.online for b in state.brokers)


def test_nothing_is_reported_in_flight_when_nothing_moves(port: Adapter) -> None:
    assert port.admin.list_reassignments() == {}


def test_a_cluster_without_acls_describes_none(port: Adapter) -> None:
    # a real cluster is shared by the session: its other tests' ACLs are not this test's
    assert {
        a for a in port.admin.describe_acls() if not port.real or a.name.startswith(port.prefix)
    } == set()


def test_the_access_apis_the_adapter_serves_pass_their_probe(port: Adapter) -> None:
    port.admin.probe_access(["DescribeAcls", "AlterUserScramCredentials"])  # Tansu has these
    if "acls" in port.can and "quotas" in port.can:
        port.admin.probe_access(ACCESS_APIS)
    else:
        with pytest.raises(AccessUnsupported):
            port.admin.probe_access(["DescribeClientQuotas"])


# -------------------------------------------------------------------- topics


def test_create_places_each_topic_as_asked_and_reports_only_the_configs_set(
    port: Adapter,
) -> None:
    b = port.ids[0]
    a, c = port.topic("a"), port.topic("c")
    results = port.admin.create_topics(
        [NewTopic(a, {0: (b,), 1: (b,)}, {"retention.ms": "1000"}), NewTopic(c, {0: (b,)})]
    )
    assert results == {a: None, c: None}
    # a broker may know the new topic from the metadata log before its configs (each part of
    # the answer is read from the broker's own image): wait for both
    state = eventually(
        port,
        lambda: port.admin.describe([a, c]),
        lambda s: len(s.topics) == 2 and bool(s.topics[a].config),
    )
    assert {p: ps.replicas for p, ps in state.topics[a].partitions.items()} == {0: (b,), 1: (b,)}
    assert state.topics[a].config == {"retention.ms": "1000"}
    assert state.topics[c].config == {}
    assert state.topics[a].partitions[0].leader == b
    assert state.topics[a].partitions[0].isr == (b,)


def test_creating_an_existing_topic_is_that_topics_error_only(port: Adapter) -> None:
    b = port.ids[0]
    old, new = port.topic("old"), port.topic("new")
    assert port.admin.create_topics([NewTopic(old, {0: (b,)})]) == {old: None}
    results = port.admin.create_topics([NewTopic(old, {0: (b,)}), NewTopic(new, {0: (b,)})])
    assert code(results[old]) == "TOPIC_ALREADY_EXISTS"
    assert results[new] is None


def test_config_changes_touch_only_what_they_name(port: Adapter) -> None:
    b = port.ids[0]
    a, c = port.topic("a"), port.topic("c")
    port.admin.create_topics(
        [
            NewTopic(a, {0: (b,)}, {"retention.ms": "1000", "segment.bytes": "1048576"}),
            NewTopic(c, {0: (b,)}),
        ]
    )
    results = port.admin.alter_topic_configs(
        {
            a: ConfigChange(set={"cleanup.policy": "compact"}, delete=("retention.ms",)),
            c: ConfigChange(set={"retention.ms": "5000"}),
        }
    )
    assert results == {a: None, c: None}
    state = eventually(
        port,
        lambda: port.admin.describe([a, c]),
        lambda s: "retention.ms" not in s.topics[a].config and bool(s.topics[c].config),
    )
    assert state.topics[a].config == {"cleanup.policy": "compact", "segment.bytes": "1048576"}
    assert state.topics[c].config == {"retention.ms": "5000"}


def test_a_config_change_for_an_unknown_topic_is_that_topics_error(port: Adapter) -> None:
    needs(port, "unknown-topic-config")
    b = port.ids[0]
    real, ghost = port.topic("real"), port.topic("ghost")
    port.admin.create_topics([NewTopic(real, {0: (b,)})])
    results = port.admin.alter_topic_configs(
        {
            ghost: ConfigChange(set={"retention.ms": "1"}),
            real: ConfigChange(set={"retention.ms": "2"}),
        }
    )
    assert code(results[ghost]) == "UNKNOWN_TOPIC_OR_PARTITION"
    assert results[real] is None
    assert set(port.admin.describe([real, ghost]).topics) == {real}


def test_delete_removes_topics_and_reports_unknown_ones(port: Adapter) -> None:
    b = port.ids[0]
    x, ghost = port.topic("x"), port.topic("ghost")
    port.admin.create_topics([NewTopic(x, {0: (b,)})])
    results = port.admin.delete_topics([x, ghost])
    assert results[x] is None
    assert code(results[ghost]) == "UNKNOWN_TOPIC_OR_PARTITION"
    assert eventually(port, lambda: port.admin.describe([x]).topics, {}.__eq__) == {}


def test_broker_configs_are_set_and_removed_per_broker(port: Adapter) -> None:
    b = port.ids[0]
    rate = {"leader.replication.throttled.rate": "1000000"}
    assert port.admin.alter_broker_configs({b: ConfigChange(set=rate)}) == {f"broker:{b}": None}
    assert port.admin.alter_broker_configs({b: ConfigChange(delete=tuple(rate))}) == {
        f"broker:{b}": None
    }


# ------------------------------------------------------- multi-broker calls


def test_added_partitions_get_the_replicas_asked_for(port: Adapter) -> None:
    needs(port, "create_partitions")
    t = port.topic("grow")
    port.admin.create_topics([NewTopic(t, {0: (1, 2)})])
    assert port.admin.create_partitions([NewPartitions(t, 3, {1: (2, 3), 2: (3, 1)})]) == {t: None}
    want = {0: (1, 2), 1: (2, 3), 2: (3, 1)}
    layout = eventually(
        port,
        lambda: {p: ps.replicas for p, ps in port.admin.describe([t]).topics[t].partitions.items()},
        want.__eq__,
    )
    assert layout == want


def test_a_reassignment_is_in_flight_until_done_then_the_target_holds(port: Adapter) -> None:
    needs(port, "reassign")
    t = port.topic("move")
    port.admin.create_topics([NewTopic(t, {0: (1, 2)})])
    results = port.admin.alter_reassignments({TopicPartition(t, 0): (3, 2)})
    assert results == {TopicPartition(t, 0): None}
    assert set(port.admin.list_reassignments().get(t, {})) <= {0}
    for _ in range(100):
        if not port.admin.list_reassignments():
            break
        port.admin.sleep(1.0)
    assert port.admin.list_reassignments() == {}
    replicas = eventually(
        port, lambda: port.admin.describe([t]).topics[t].partitions[0].replicas, (3, 2).__eq__
    )
    assert replicas == (3, 2)


OFFSETS = "__consumer_offsets"


@pytest.fixture
def offsets(port: Adapter) -> Iterator[str]:
    """Kafka's ``__consumer_offsets``, made by hand (Tansu and the simulation do not make it
    when a group commits; Kafka does), removed afterwards: the shared broker keeps no trace.
    On Apache Kafka the real one, made by a group's first commit and never deleted (its group
    coordinator lives in it)."""
    if port.real:
        t = port.topic("offsets-maker")
        port.admin.create_topics([NewTopic(t, {0: (port.ids[0],)})])
        assert port.admin.alter_group_offsets(port.topic("g"), {TopicPartition(t, 0): 0}) == {
            TopicPartition(t, 0): None
        }
        yield OFFSETS
        return
    b = port.ids[0]
    assert port.admin.create_topics(
        [NewTopic(OFFSETS, {0: (b,), 1: (b,)}, {"cleanup.policy": "compact"})]
    ) == {OFFSETS: None}
    try:
        yield OFFSETS
    finally:
        port.admin.delete_topics([OFFSETS])


def test_internal_topics_are_described_like_any_other(port: Adapter, offsets: str) -> None:
    if port.real:  # offsets.topic.num.partitions=5, replication factor 3 (localcluster.py)
        for state in (port.admin.describe(), port.admin.describe([offsets])):
            topic = state.topics[offsets]
            assert sorted(topic.partitions) == [0, 1, 2, 3, 4]
            assert all(len(set(s.replicas)) == 3 for s in topic.partitions.values())
            assert topic.config["cleanup.policy"] == "compact"
        return
    b = port.ids[0]
    for state in (port.admin.describe(), port.admin.describe([offsets])):
        topic = state.topics[offsets]
        assert {p: s.replicas for p, s in topic.partitions.items()} == {0: (b,), 1: (b,)}
        assert topic.config == {"cleanup.policy": "compact"}


def test_an_internal_topic_is_reassigned_like_any_other(port: Adapter, offsets: str) -> None:
    """ReplicationControlManager.java alterPartitionReassignment looks the topic up by name
    and checks nothing about it being internal: kafka-reassign-partitions.sh moves
    ``__consumer_offsets`` as kgitops' drain does."""
    needs(port, "reassign")
    target: tuple[int, ...] = (3,)
    if port.real:  # the session's cluster keeps its coordinator: same RF, one broker swapped
        now = port.admin.describe([offsets]).topics[offsets].partitions[0].replicas
        spare = next(b for b in port.ids if b not in now)
        target = (spare, *now[1:])
    assert port.admin.alter_reassignments({TopicPartition(offsets, 0): target}) == {
        TopicPartition(offsets, 0): None
    }
    for _ in range(100):
        if not port.admin.list_reassignments():
            break
        port.admin.sleep(1.0)
    replicas = eventually(
        port,
        lambda: port.admin.describe([offsets]).topics[offsets].partitions[0].replicas,
        target.__eq__,
    )
    assert replicas == target


def test_cancelling_when_nothing_moves_is_that_partitions_error(port: Adapter) -> None:
    needs(port, "reassign")
    t = port.topic("still")
    port.admin.create_topics([NewTopic(t, {0: (1, 2)})])
    results = port.admin.alter_reassignments({TopicPartition(t, 0): None})
    assert code(results[TopicPartition(t, 0)]) == "NO_REASSIGNMENT_IN_PROGRESS"


def test_a_reassignment_of_an_unknown_partition_is_that_partitions_error(port: Adapter) -> None:
    needs(port, "reassign")
    t = port.topic("small")
    port.admin.create_topics([NewTopic(t, {0: (1, 2)})])
    results = port.admin.alter_reassignments(
        {TopicPartition(t, 5): (1, 2), TopicPartition(port.topic("ghost"), 0): (1, 2)}
    )
    assert code(results[TopicPartition(t, 5)]) == "UNKNOWN_TOPIC_OR_PARTITION"
    assert code(results[TopicPartition(port.topic("ghost"), 0)]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_electing_the_preferred_leader_of_a_healthy_partition_succeeds(port: Adapter) -> None:
    needs(port, "elect")
    t = port.topic("lead")
    port.admin.create_topics([NewTopic(t, {0: (2, 1)})])
    assert port.admin.elect_preferred_leaders([TopicPartition(t, 0)]) == {
        TopicPartition(t, 0): None
    }
    leader = eventually(
        port, lambda: port.admin.describe([t]).topics[t].partitions[0].leader, (2).__eq__
    )
    assert leader == 2


# --------------------------------------------------------------- access


def test_acls_are_created_described_and_deleted_by_key(port: Adapter) -> None:
    needs(port, "acls")
    from kgitops.access import Acl

    read = Acl("User:alice", "topic", port.topic("orders"), "literal", "read")
    write = Acl("User:bob", "topic", port.topic("orders"), "prefixed", "write")
    assert port.admin.create_acls([read, write]) == {read.key: None, write.key: None}
    assert {read, write} <= eventually(port, port.admin.describe_acls, {read, write}.issubset)
    assert port.admin.delete_acls([read]) == {read.key: None}
    acls = eventually(port, port.admin.describe_acls, lambda acls: read not in acls)
    assert read not in acls and write in acls


def test_quotas_are_set_and_removed_per_entity(port: Adapter) -> None:
    needs(port, "quotas")
    from kgitops.access import QuotaEntity
    from kgitops.cluster.port import QuotaChange

    who = QuotaEntity(user=port.topic("svc"))
    change = QuotaChange(set={"producer_byte_rate": 1024.0})
    assert port.admin.alter_client_quotas({who: change}) == {who.key: None}
    quotas = eventually(port, port.admin.describe_client_quotas, lambda quotas: who in quotas)
    assert quotas[who] == {"producer_byte_rate": 1024.0}
    removed = QuotaChange(delete=("producer_byte_rate",))
    assert port.admin.alter_client_quotas({who: removed}) == {who.key: None}
    assert who not in eventually(
        port, port.admin.describe_client_quotas, lambda quotas: who not in quotas
    )


# ------------------------------------------------------------ consumer groups (the console)


def test_an_admin_commit_to_a_new_group_is_read_back_with_its_log_offsets(
    port: Adapter,
) -> None:
    needs(port, "groups")
    b = port.ids[0]
    t, g = port.topic("grp"), port.topic("group")
    assert port.admin.create_topics([NewTopic(t, {0: (b,), 1: (b,)})]) == {t: None}
    offsets = {TopicPartition(t, 0): 0, TopicPartition(t, 1): 0}
    committed = eventually(
        port, lambda: port.admin.alter_group_offsets(g, offsets), dict.fromkeys(offsets).__eq__
    )
    assert committed == dict.fromkeys(offsets)
    state = port.admin.describe_groups([g])
    group = state.groups[g]
    assert (group.members, dict(group.offsets)) == ((), {(t, 0): 0, (t, 1): 0})
    assert dict(state.log_offsets) == {(t, 0): (0, 0), (t, 1): (0, 0)}
    assert g in port.admin.describe_groups().groups
    assert port.admin.list_offsets([(t, 0), (t, 1)], -1) == {(t, 0): 0, (t, 1): 0}


def test_a_group_never_seen_has_no_member_and_no_offset(port: Adapter) -> None:
    needs(port, "groups")
    g = port.topic("never")
    group = port.admin.describe_groups([g]).groups[g]
    assert (group.members, dict(group.offsets)) == ((), {})
    assert group.state in ("Dead", "Empty")


def test_a_deleted_group_keeps_no_offsets(port: Adapter) -> None:
    needs(port, "groups")
    b = port.ids[0]
    t, g = port.topic("gdel"), port.topic("gdel")
    assert port.admin.create_topics([NewTopic(t, {0: (b,)})]) == {t: None}
    assert port.admin.alter_group_offsets(g, {TopicPartition(t, 0): 0}) == {
        TopicPartition(t, 0): None
    }
    assert port.admin.delete_groups([g]) == {g: None}
    assert dict(port.admin.describe_groups([g]).groups[g].offsets) == {}


# --------------------------------------------------------------- owner records


def _claim(*topics: str, source: str = "repo topics/x") -> OwnerRecord:
    owns = Owns(topics=topics, principals=(), groups=(), transactional_ids=(), declared=True)
    return OwnerRecord(owns, source)


def test_owner_records_are_written_read_back_last_one_winning_and_released(
    port: Adapter,
) -> None:
    """The records of other owners (the shared cluster's other tests) are left alone; the
    last record of an owner counts; None releases it."""
    a, b = port.topic("owner-a"), port.topic("owner-b")
    first, second = _claim(f"{a}.*"), _claim(f"{a}.x", f"{a}.y", source="elsewhere")
    port.admin.record_owners({a: first, b: _claim(f"{b}.*")})
    port.admin.record_owners({a: second})
    got = port.admin.read_owners()
    assert got[a] == second and got[b] == _claim(f"{b}.*")
    port.admin.record_owners({b: None})
    got = port.admin.read_owners()
    assert b not in got and got[a] == second
    port.admin.record_owners({a: None})
    assert a not in port.admin.read_owners()


def test_the_owner_topic_is_compacted_and_not_an_unmanaged_topic(port: Adapter) -> None:
    if not port.real:
        pytest.skip("only a real cluster keeps the records in a topic")
    from kgitops.model import OWNER_TOPIC
    from kgitops.names import is_internal_topic

    a = port.topic("owner-c")
    port.admin.record_owners({a: _claim(f"{a}.*")})
    state = port.admin.describe([OWNER_TOPIC])
    topic = state.topics[OWNER_TOPIC]
    assert topic.partition_count == 1
    assert topic.config.get("cleanup.policy") == "compact"
    assert is_internal_topic(OWNER_TOPIC, ClusterSpec(name="x", directory=".").own_topics)
    port.admin.record_owners({a: None})
