"""The simulated controller's topic requests: create topics and partitions, alter topic and
broker configs, reassign, elect preferred leaders, delete topics. Each is validated item by
item as the KRaft controller validates it (checks and messages: ``controller.py``) and
changes the in-memory state (``state_sim.SimState``); each returns every item's result.
``simulated.py`` serves them under the file lock and writes the state after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from kgitops.cluster import clock_sim as clock
from kgitops.cluster import controller as kraft
from kgitops.cluster import partition_sim as partition
from kgitops.cluster.port import (
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    Results,
)
from kgitops.cluster.state_sim import SimState
from kgitops.errors import ClusterError, ClusterRequestError
from kgitops.model import TopicPartition
from kgitops.names import KAFKA_METADATA_TOPIC


def _new_parts(
    s: SimState, assignment: Mapping[int, tuple[int, ...]], first: int, rf: int | None, item: str
) -> list[partition.Part] | ClusterRequestError:
    parts: list[partition.Part] = []
    online = s.online
    for pid in range(first, first + len(assignment)):
        if pid not in assignment:
            return kraft.error(
                "INVALID_REPLICA_ASSIGNMENT",
                "partitions should be a consecutive 0-based integer sequence"
                if first == 0
                else f"the new partitions should be {first}..{first + len(assignment) - 1}",
                item,
            )
        replicas = list(assignment[pid])
        problem = kraft.assignment_error(replicas, s.brokers, rf)
        if problem:
            return kraft.error("INVALID_REPLICA_ASSIGNMENT", problem, item)
        rf = len(replicas)
        isr = [b for b in replicas if b in online]
        if not isr:
            return kraft.error(
                "INVALID_REPLICA_ASSIGNMENT",
                f"All brokers specified in the manual partition assignment for partition "
                f"{pid} are fenced or in controlled shutdown.",
                item,
            )
        parts.append(partition.Part(replicas=replicas, isr=isr, leader=isr[0], version=s.version))
    return parts


def create_topics(s: SimState, topics: Sequence[NewTopic]) -> Results:
    results: dict[str, ClusterError | None] = {}
    counts: dict[str, int] = {}
    for t in topics:
        counts[t.name] = counts.get(t.name, 0) + 1
    for t in topics:
        results[t.name] = _create(s, t, counts[t.name])
    s.refresh()
    return results


def _create(s: SimState, t: NewTopic, count: int) -> ClusterRequestError | None:
    name = t.name
    if count > 1:
        return kraft.error("INVALID_REQUEST", "Duplicate topic in request.", name)
    problem = kraft.topic_name_error(name)
    if problem:
        return kraft.error("INVALID_TOPIC_EXCEPTION", problem, name)
    if name == KAFKA_METADATA_TOPIC:  # ControllerApis.scala createTopics
        return kraft.error(
            "INVALID_REQUEST", f"Creation of internal topic {name} is prohibited.", name
        )
    if name in s.topics:
        return kraft.error("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists.", name)
    other = kraft.collision(name, s.topics)
    if other is not None:
        return kraft.error(
            "INVALID_TOPIC_EXCEPTION",
            f"Topic '{name}' collides with existing topic: {other}",
            name,
        )
    if not t.assignment:
        return kraft.error(
            "INVALID_PARTITIONS",
            "Number of partitions was set to an invalid non-positive value.",
            name,
        )
    parts = _new_parts(s, t.assignment, 0, None, name)
    if isinstance(parts, ClusterRequestError):
        return parts
    for key, value in t.config.items():
        problem = kraft.topic_config_error(key, value, s.version)
        if problem:
            return kraft.error("INVALID_CONFIG", problem, name)
    s.topics[name] = partition.Topic(parts, dict(t.config))
    return None


def create_partitions(s: SimState, additions: Sequence[NewPartitions]) -> Results:
    results: dict[str, ClusterError | None] = {}
    for a in additions:
        results[a.topic] = _add(s, a)
    return results


def _add(s: SimState, a: NewPartitions) -> ClusterRequestError | None:
    if a.topic not in s.topics:
        return kraft.unknown(a.topic)
    parts, _ = s.topics[a.topic]
    count = len(parts)
    if a.total == count:
        return kraft.error(
            "INVALID_PARTITIONS", f"Topic already has {count} partition(s).", a.topic
        )
    if a.total < count:
        return kraft.error(
            "INVALID_PARTITIONS",
            f"The topic {a.topic} currently has {count} partition(s); {a.total} would not "
            "be an increase.",
            a.topic,
        )
    if len(a.assignment) != a.total - count:
        return kraft.error(
            "INVALID_REPLICA_ASSIGNMENT",
            f"Attempted to add {a.total - count} additional partition(s), but only "
            f"{len(a.assignment)} assignment(s) were specified.",
            a.topic,
        )
    new = _new_parts(s, a.assignment, count, len(parts[0].replicas), a.topic)
    if isinstance(new, ClusterRequestError):
        return new
    parts.extend(new)
    return None


def alter_topic_configs(s: SimState, changes: Mapping[str, ConfigChange]) -> Results:
    results: dict[str, ClusterError | None] = {}
    for name, change in changes.items():
        if name not in s.topics:
            results[name] = kraft.unknown(name)
            continue
        config = s.topics[name].config
        sets = dict(change.set)
        problem = kraft.duplicate_keys_error(change)
        for k in [*change.append, *change.subtract]:
            if problem is None:
                problem = kraft.list_op_error(k)
        if problem is None:
            sets.update(kraft.appended(config, change.append))
            sets.update(kraft.subtracted(config, change.subtract))
            version = s.version
            problem = next(
                (p for k, v in sets.items() if (p := kraft.topic_config_error(k, v, version))),
                None,
            )
        if problem is None:
            problem = next(
                (p for k in change.delete if (p := kraft.topic_config_delete_error(k))), None
            )
        if problem is not None:
            results[name] = kraft.error("INVALID_CONFIG", problem, name)
            continue
        config.update(sets)
        for k in change.delete:
            config.pop(k, None)
        results[name] = None
    s.refresh()
    clock.elect_unclean(s)
    return results


def alter_broker_configs(s: SimState, changes: Mapping[int, ConfigChange]) -> Results:
    results: dict[str, ClusterError | None] = {}
    for bid, change in changes.items():
        item = f"broker:{bid}"
        if bid not in s.brokers:
            results[item] = kraft.error(
                "BROKER_NOT_AVAILABLE", f"Broker {bid} is not registered.", item
            )
            continue
        if not s.brokers[bid].online:
            # a broker's dynamic config is changed on that broker (ConfigAdminManager):
            # a client cannot reach a broker that is down
            results[item] = kraft.error(
                "BROKER_NOT_AVAILABLE",
                f"Broker {bid} is offline: its configs can only be changed on it.",
                item,
            )
            continue
        problem = next(
            (
                p
                for k, v in [*change.set.items(), *((k, None) for k in change.delete)]
                if (p := kraft.broker_config_error(k, v))
            ),
            None,
        )
        if problem is not None:
            results[item] = kraft.error("INVALID_CONFIG", problem, item)
            continue
        config = s.broker_configs.setdefault(bid, {})
        config.update(change.set)
        for k in change.delete:
            config.pop(k, None)
        results[item] = None
    return results


def _each_partition(
    s: SimState,
    keys: Iterable[tuple[str, int]],
    act: Callable[[TopicPartition, partition.Part], ClusterError | None],
) -> PartitionResults:
    """``act`` on each partition ``keys`` names, in order: its result, or
    UNKNOWN_TOPIC_OR_PARTITION where the cluster has no such partition."""
    results: dict[TopicPartition, ClusterError | None] = {}
    for name, pid in keys:
        key = TopicPartition(name, pid)
        parts = s.topics[name].parts if name in s.topics else []
        results[key] = act(key, parts[pid]) if 0 <= pid < len(parts) else kraft.unknown(str(key))
    return results


def alter_reassignments(
    s: SimState, targets: Mapping[TopicPartition, tuple[int, ...] | None]
) -> PartitionResults:
    online = s.online

    def one(key: TopicPartition, part: partition.Part) -> ClusterError | None:
        item, target = str(key), targets[key]
        if target is None:
            if not part.reassigning:
                return kraft.error(
                    "NO_REASSIGNMENT_IN_PROGRESS",
                    f"No ongoing reassignment for partition {item}.",
                    item,
                )
            config = s.topics[key.topic].config
            if partition.revert_needs_unclean(part) and not s.unclean_allowed(config):
                return kraft.error(
                    "INVALID_REPLICA_ASSIGNMENT",
                    f"Unable to revert partition assignment for {key.topic}:{key.partition} "
                    "because it would require an unclean leader election.",
                    item,
                )
            partition.revert(part, online)
            return None
        problem = kraft.assignment_error(target, s.brokers, None)
        if problem:
            return kraft.error("INVALID_REPLICA_ASSIGNMENT", problem, item)
        partition.reassign(part, target, online)
        return None

    return _each_partition(s, targets, one)


def elect_preferred_leaders(s: SimState, partitions: Iterable[TopicPartition]) -> PartitionResults:
    online = s.online

    def one(key: TopicPartition, part: partition.Part) -> ClusterError | None:
        preferred = part.replicas[0]
        if part.leader == preferred:
            return None
        if preferred in part.isr and preferred in online:
            part.leader = preferred
            return None
        return kraft.error(
            "PREFERRED_LEADER_NOT_AVAILABLE",
            f"Failed to elect leader for partition {key} under strategy PreferredElection",
            str(key),
        )

    return _each_partition(s, partitions, one)


def delete_topics(s: SimState, names: Sequence[str]) -> Results:
    results: dict[str, ClusterError | None] = {}
    for name in names:
        s.groups.forget_topic(name)
        if s.topics.pop(name, None) is None and name not in results:
            results[name] = kraft.unknown(name)
        else:
            results[name] = None
    return results
