"""What the KRaft controller refuses, with its error codes and messages. Pure.

The simulated cluster checks every request item with these, so a plan that a real Kafka
would refuse is refused in the simulation too, in the same words::

    INVALID_TOPIC_EXCEPTION     Topic name "a b" is illegal, it contains a character other
                                than ASCII alphanumerics, '.', '_' and '-'
    INVALID_REPLICA_ASSIGNMENT  The manual partition assignment includes broker 9, but no
                                such broker is registered.
    INVALID_CONFIG              Unknown topic config name: retention.mss

Sources: ``Topic.validate`` (names), ``ReplicationControlManager``
(``validateManualPartitionAssignment``, createTopics, createPartitions) and
``ConfigurationControlManager`` (configs) of Kafka 3.x/4.x.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kgitops.errors import ClusterRequestError
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_LEADER_RATE,
    THROTTLED_REPLICAS_CONFIGS,
)
from kgitops.spec import config_table, topic_configs
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion

_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")

#: Per-broker dynamic configs the simulation accepts (Kafka has more; these are what matter).
BROKER_CONFIGS = frozenset(
    {
        THROTTLE_LEADER_RATE,
        THROTTLE_FOLLOWER_RATE,
        "replica.alter.log.dirs.io.max.bytes.per.second",
        "log.cleaner.threads",
        "num.replica.fetchers",
        "background.threads",
    }
)

#: Topic configs of Kafka's LIST type: the only ones APPEND and SUBTRACT may change.
LIST_CONFIGS = frozenset(n for n, c in config_table.CONFIGS.items() if c.type == "list")

UNKNOWN = "This server does not host this topic-partition."


def error(code: str, message: str, item: str) -> ClusterRequestError:
    """One refused item: ``item: CODE: message``, with ``code`` and ``item`` set."""
    return ClusterRequestError(f"{item}: {code}: {message}", code=code, item=item)


def unknown(item: str) -> ClusterRequestError:
    """A topic or partition the cluster does not have."""
    return error("UNKNOWN_TOPIC_OR_PARTITION", UNKNOWN, item)


def topic_name_error(name: str) -> str | None:
    """Kafka's ``Topic.validate`` message for an illegal name, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > 249:
        return f"Topic name is illegal, it can't be longer than 249 characters, topic name: {name}"
    if not _LEGAL_TOPIC.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'"
        )
    return None


def collision(name: str, existing: Collection[str]) -> str | None:
    """The existing topic ``name`` collides with ('.' and '_' are the same in metric names)."""
    folded = name.replace(".", "_")
    return next((t for t in sorted(existing) if t.replace(".", "_") == folded), None)


def assignment_error(
    replicas: Sequence[int], registered: Collection[int], rf: int | None
) -> str | None:
    """KRaft's ``validateManualPartitionAssignment`` message, or None."""
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    previous = None
    for b in sorted(replicas):
        if b not in registered:
            return (
                f"The manual partition assignment includes broker {b}, but no such "
                "broker is registered."
            )
        if b == previous:
            return f"The manual partition assignment includes the broker {b} more than once."
        previous = b
    if rf is not None and len(replicas) != rf:
        return (
            f"The manual partition assignment includes a partition with {len(replicas)} "
            "replica(s), but this is not consistent with previous partitions, which have "
            f"{rf} replica(s)."
        )
    return None


def topic_config_error(key: str, value: str, version: KafkaVersion = DEFAULT_VERSION) -> str | None:
    """INVALID_CONFIG's message for setting a topic config, or None (kgitops.spec.topic_configs;
    ``version``: the Kafka whose bounds apply)."""
    if key in THROTTLED_REPLICAS_CONFIGS:
        return throttle_list_error(key, value)
    if key not in config_table.CONFIGS:
        return f"Unknown topic config name: {key}"
    _, problem = topic_configs.check_config(key, value, units=False, version=version)
    return f"Invalid value {value} for configuration {key}: {problem}" if problem else None


def topic_config_delete_error(key: str) -> str | None:
    """INVALID_CONFIG's message for deleting a topic config, or None."""
    return None if key in config_table.CONFIGS else f"Unknown topic config name: {key}"


def broker_config_error(key: str, value: str | None) -> str | None:
    """INVALID_CONFIG's message for a per-broker dynamic config (None value: a delete)."""
    if key not in BROKER_CONFIGS:
        return f"Unknown or read-only broker config: {key}"
    if value is not None and not (value.isascii() and value.isdigit()):
        return f"Invalid value {value} for configuration {key}: Not a number of type LONG"
    return None


def _items(value: str) -> list[str]:
    return [i.strip() for i in value.split(",") if i.strip()]


def list_op_error(key: str) -> str | None:
    """APPEND and SUBTRACT are for list configs only (ConfigAdminManager.scala)."""
    if key in LIST_CONFIGS:
        return None
    return f"Config value append is not allowed for config key: {key}"


def duplicate_keys_error(change: Any) -> str | None:
    """One request may name a config key once (ConfigAdminManager: duplicate config keys)."""
    keys = [*change.set, *change.delete, *change.append, *change.subtract]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    return f"Error due to duplicate config keys: {', '.join(dupes)}" if dupes else None


def appended(config: Mapping[str, str], append: Mapping[str, str]) -> dict[str, str]:
    """APPEND as Kafka does it: the old list plus the items it does not hold yet."""
    out = {}
    for key, value in append.items():
        old = _items(config.get(key, ""))
        out[key] = ",".join(old + [i for i in _items(value) if i not in old])
    return out


def subtracted(config: Mapping[str, str], subtract: Mapping[str, str]) -> dict[str, str]:
    """SUBTRACT as Kafka does it: the old list without those items (``""`` when none is
    left: the key stays, empty)."""
    out = {}
    for key, value in subtract.items():
        gone = set(_items(value))
        out[key] = ",".join(i for i in _items(config.get(key, "")) if i not in gone)
    return out


def throttle_list_error(key: str, value: str) -> str | None:
    """A throttled-replicas list is ``*`` or ``partition:broker,...`` (Kafka's validator)."""
    text = value.strip()
    if text in ("", "*"):
        return None
    for item in text.split(","):
        pid, _, broker = item.strip().partition(":")
        if not (pid.isdigit() and broker.isdigit()):
            return (
                f"Invalid value {value} for configuration {key}: must be the literal '*' or "
                "a list of replicas in the format [partitionId]:[brokerId],..."
            )
    return None
