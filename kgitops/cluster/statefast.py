"""The fast path of reading a state file (``kgitops.cluster.snapshot.read_state``): msgspec
decodes it straight into typed records (``StateFile``: the types, the shape and sizes of at
least 0 are checked by the decoder, in C; msgspec against orjson and json:
benchmarks/snapshot_load.py), each topic's partitions become the columns of a
``model.PartitionTable`` (built with ``map``, no Python code per partition), and each
distinct replica list is checked (ids in range, no repeats) once and then shared, as is each
distinct (replicas, ISR, leader) of a topic not entirely in sync on its preferred leaders.
Anything it does not accept raises ``NotFast``: the caller then takes the slow path
(``statecheck.check_state``), which says what is wrong with line and column."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from operator import itemgetter
from typing import Annotated, Any

import msgspec

from kgitops.access import AccessState
from kgitops.groups import GroupsState
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionState,
    PartitionTable,
    Reassignment,
    TopicState,
    legal_rack,
    legal_topic_name,
)
from kgitops.names import INT32_MAX, STATE_FORMAT
from kgitops.versionrules import parse_version


class _Partition(
    msgspec.Struct, rename={"size_bytes": "sizeBytes"}, forbid_unknown_fields=True, gc=False
):
    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None = None
    leader: int | None = None
    size_bytes: Annotated[int, msgspec.Meta(ge=0)] | None = None  # checked in C


class _Topic(msgspec.Struct, forbid_unknown_fields=True):
    partitions: dict[int, _Partition]
    config: dict[str, str] | None = None


class StateFile(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """A state file as the fast path reads it: the topics typed (nearly all of the file),
    everything else as plain JSON for ``fast_load``. An unknown field anywhere sends the
    file to the slow path (the decoder would skip it unread: a number there that the
    standard path refuses, too long or infinite, would pass)."""

    format: Any = None
    topics: dict[str, _Topic] = {}
    brokers: Any = msgspec.UNSET
    cluster_id: Any = None
    controller_id: Any = None
    reassignments: Any = None
    broker_configs: Any = None
    broker_defaults: Any = None
    access: Any = msgspec.UNSET
    consumer_groups: Any = msgspec.UNSET
    simulation: Any = None  # the simulated cluster's clock (kgitops.cluster.simulated)


_INT_LIMIT = 10**4300  # the standard path refuses an integer of more digits (files.py)


def _plain(value: Any) -> bool:
    """Whether ``value`` (decoded as plain JSON) holds only numbers the standard path reads:
    no integer too long, no float that overflowed to infinity."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return -_INT_LIMIT < value < _INT_LIMIT
    return True


DECODER = msgspec.json.Decoder(StateFile)


def typed_load(typed: StateFile) -> ClusterState:
    """The ClusterState of a decoded ``StateFile``; NotFast (or ValueError from the access and group
    parts) for anything the slow path must explain."""
    untyped: tuple[Any, ...] = (typed.format, typed.brokers, typed.cluster_id, typed.controller_id)
    untyped += (typed.reassignments, typed.broker_configs, typed.broker_defaults)
    untyped += (typed.access, typed.consumer_groups, typed.simulation)
    if not all(_plain(v) for v in untyped):
        raise NotFast
    data: dict[str, Any] = {"format": typed.format, "topics": {}}
    for key, value in (
        ("brokers", typed.brokers),
        ("clusterId", typed.cluster_id),
        ("controllerId", typed.controller_id),
        ("reassignments", typed.reassignments),
        ("brokerConfigs", typed.broker_configs),
        ("brokerDefaults", typed.broker_defaults),
    ):
        if value is not msgspec.UNSET:
            data[key] = value
    try:
        state = fast_load(data, typed.topics)
    except (KeyError, TypeError, AttributeError):
        raise NotFast from None
    if typed.access is not msgspec.UNSET:
        state = replace(state, access=AccessState.from_json(typed.access))
    if typed.consumer_groups is not msgspec.UNSET:
        state = replace(state, groups=GroupsState.from_json(typed.consumer_groups))
    return state


def _typed_topics(
    raw_topics: dict[str, _Topic], tuples: dict[tuple[Any, ...], tuple[int, ...]]
) -> dict[str, TopicState]:
    """``fast_load``'s loop over topics for typed records: the decoder checked the types (and
    that no size is negative), so only the rules across values remain. Each topic becomes a
    ``PartitionTable`` whose columns are built in C (``map``), equal replica lists shared
    through ``tuples`` and each distinct one checked once. A topic whose every ISR equals its
    replicas and every leader is the preferred one is consistent by construction; any other
    has each distinct (replicas, ISR, leader) checked once. No Python code runs per partition."""
    share = tuples.setdefault
    combos: set[tuple[Any, ...]] = set()
    topics: dict[str, TopicState] = {}
    for name, t in raw_topics.items():
        if not legal_topic_name(name):
            raise NotFast
        parts = t.partitions
        found: tuple[Any, ...] = ()
        isr: Any = ()
        leaders: Any = ()
        sizes: Any = ()
        if parts:  # each row as a tuple of its fields, transposed: the four columns at once
            try:  # n distinct keys all in 0..n-1: the ids are 0..n-1
                found, isr, leaders, sizes = zip(
                    *map(_ROW, map(parts.__getitem__, range(len(parts)))), strict=True
                )
            except KeyError:
                raise NotFast from None
        replicas = list(map(share, found, found))
        isr, leaders, sizes = list(isr), list(leaders), list(sizes)
        settled = isr == replicas
        if settled:
            isr = replicas  # each ISR the replica tuple itself
            settled = leaders == list(map(_FIRST, replicas))
        else:
            isr = list(map(tuples.get, isr, isr))  # shared where it equals a replica list
        if not settled:
            combos.update(zip(replicas, isr, leaders, strict=True))
        table = PartitionTable(replicas, isr, leaders, sizes, settled=settled)
        topics[name] = TopicState(name=name, partitions=table, config=t.config or {})
    if not all(map(_replicas_ok, tuples)) or not all(map(_consistent, combos)):
        raise NotFast
    if any(leader is not None and leader < 0 for _, _, leader in combos):
        for topic in topics.values():  # Kafka's -1 (or any negative): no leader
            cols = topic.partitions
            assert isinstance(cols, PartitionTable)
            cols.leaders = [None if v is not None and v < 0 else v for v in cols.leaders]
    return topics


#: a row's fields as a tuple, in ``_Partition``'s order (replicas, isr, leader, size_bytes):
#: the order the columns are unpacked in (made in C; tests/cluster/test_state_fast_path.py)
_ROW = msgspec.structs.astuple
_FIRST = itemgetter(0)


def _replicas_ok(replicas: tuple[int, ...]) -> bool:
    """Not empty, no broker twice, every id a broker id (0..INT32_MAX)."""
    return (
        bool(replicas)
        and len(set(replicas)) == len(replicas)
        and 0 <= min(replicas) <= max(replicas) <= INT32_MAX
    )


def _consistent(combo: tuple[tuple[int, ...], tuple[int, ...] | None, int | None]) -> bool:
    """The ISR distinct and within the replicas; the leader one of them, or negative (none)."""
    replicas, isr, leader = combo
    if (
        isr is not None
        and isr is not replicas
        and (len(set(isr)) != len(isr) or not set(isr) <= set(replicas))
    ):
        return False
    return leader is None or leader < 0 or leader in replicas


#: PartitionState is built by setting its four slots directly (a third of the load time
#: goes to the frozen dataclass's __init__ otherwise); only while it has exactly these fields.
_SLOTS_KNOWN = tuple(f.name for f in fields(PartitionState)) == (
    "replicas",
    "isr",
    "leader",
    "size_bytes",
) and "__slots__" in vars(PartitionState)


class NotFast(Exception):
    """The fast path met something it will not accept; the checker says what."""


def fast_load(data: dict[str, Any], typed: dict[str, _Topic] | None = None) -> ClusterState:
    if data.get("format") != STATE_FORMAT:
        raise NotFast
    brokers = tuple(
        Broker(
            id=_id(b["id"]),
            rack=_rack(b.get("rack")),
            online=_bool(b.get("online", True)),
        )
        for b in data["brokers"]
    )
    if len({b.id for b in brokers}) != len(brokers):
        raise NotFast
    tuples: dict[tuple[Any, ...], tuple[int, ...]] = {}

    def ids(raw: object, allow_empty: bool = False) -> tuple[int, ...]:
        if type(raw) is not list:
            raise NotFast
        key = tuple(raw)
        for v in key:  # 1.0 and True hash as 1 does: types are checked on every list
            if type(v) is not int:
                raise NotFast
        got = tuples.get(key)
        if got is None:
            if len(set(key)) != len(key) or (key and not 0 <= min(key) <= max(key) <= INT32_MAX):
                raise NotFast
            tuples[key] = got = key
        if not got and not allow_empty:
            raise NotFast
        return got

    fast = _SLOTS_KNOWN
    new = object.__new__
    slot = vars(PartitionState)
    set_replicas = slot["replicas"].__set__
    set_isr = slot["isr"].__set__
    set_leader = slot["leader"].__set__
    set_size = slot["size_bytes"].__set__
    topics: dict[str, TopicState] = {}
    raw_topics = data.get("topics", {})
    if type(raw_topics) is not dict:
        raise NotFast
    checked: set[tuple[int, int]] = set()  # (id(replicas), id(isr)) pairs found consistent
    if typed is not None:
        topics = _typed_topics(typed, tuples)
    for name, t in raw_topics.items():
        if not legal_topic_name(name):
            raise NotFast
        parts_raw = t["partitions"]
        if type(parts_raw) is not dict:
            raise NotFast
        parts: dict[int, PartitionState] = {}
        # The loop below is ids() inlined twice: it runs once per partition.
        for pid, p in parts_raw.items():
            r = p["replicas"]
            if type(r) is not list:
                raise NotFast
            key = tuple(r)
            for v in key:
                if type(v) is not int:
                    raise NotFast
            replicas = tuples.get(key)
            if replicas is None:  # a new tuple: checked once (isr <= replicas, leader in them)
                if (
                    not key
                    or len(set(key)) != len(key)
                    or not 0 <= min(key) <= max(key) <= INT32_MAX
                ):
                    raise NotFast
                tuples[key] = replicas = key
            isr: tuple[int, ...] | None = None
            r = p.get("isr")
            if r is not None:
                if type(r) is not list:
                    raise NotFast
                key = tuple(r)
                for v in key:
                    if type(v) is not int:
                        raise NotFast
                isr = tuples.get(key)
                if isr is None:
                    if len(set(key)) != len(key):
                        raise NotFast
                    tuples[key] = isr = key
            if isr is not None and isr is not replicas and (id(replicas), id(isr)) not in checked:
                if not set(isr) <= set(replicas):
                    raise NotFast
                checked.add((id(replicas), id(isr)))
            leader = p.get("leader")
            size = p.get("sizeBytes")
            if leader is not None and (type(leader) is not int or leader < 0):
                _check_no_leader(leader)
                leader = None
            elif leader is not None and leader not in replicas:
                raise NotFast
            if size is not None and (type(size) is not int or size < 0):
                raise NotFast
            if fast:
                made = new(PartitionState)
                set_replicas(made, replicas)
                set_isr(made, isr)
                set_leader(made, leader)
                set_size(made, size)
                parts[int(pid)] = made
            else:
                parts[int(pid)] = PartitionState(replicas, isr, leader, size)
        if not _contiguous(parts):
            raise NotFast
        config = t.get("config") or {}
        if type(config) is not dict or not all(type(v) is str for v in config.values()):
            raise NotFast
        topics[name] = TopicState(name=name, partitions=parts, config=config)
    reassignments = _reassignments(data.get("reassignments") or {}, ids)
    broker_configs = {
        int(b): {str(k): _str(v) for k, v in c.items()}
        for b, c in (data.get("brokerConfigs") or {}).items()
    }
    broker_defaults = {str(k): _str(v) for k, v in (data.get("brokerDefaults") or {}).items()}
    controller = data.get("controllerId")
    cluster_id = data.get("clusterId")
    version = data.get("kafkaVersion")
    if version is not None:
        version = parse_version(_str(version))
        if version is None:
            raise NotFast
    return ClusterState(
        brokers=brokers,
        topics=topics,
        reassignments=reassignments,
        cluster_id=_opt_str(cluster_id),
        controller_id=None if controller is None else _id(controller),
        broker_configs=broker_configs,
        broker_defaults=broker_defaults,
        kafka_version=version,
    )


def _reassignments(
    raw: Any, ids: Callable[..., tuple[int, ...]]
) -> dict[str, dict[int, Reassignment]]:
    out: dict[str, dict[int, Reassignment]] = {}
    for topic, parts in raw.items():
        if not legal_topic_name(topic):
            raise NotFast
        out[str(topic)] = {
            int(p): Reassignment(
                adding=ids(r.get("adding", []), True),
                removing=ids(r.get("removing", []), True),
                target=None if r.get("target") is None else ids(r["target"]),
            )
            for p, r in parts.items()
        }
    return out


def _check_no_leader(v: object) -> None:
    """Kafka reports ``-1`` for a partition without a leader; anything else is wrong."""
    if type(v) is not int:
        raise NotFast
    return None


def _contiguous(parts: Mapping[int, PartitionState]) -> bool:
    return not parts or (min(parts) == 0 and max(parts) == len(parts) - 1)


def _int(v: object) -> int:
    if type(v) is not int:
        raise NotFast
    return v


def _id(v: object) -> int:
    """A broker id: Kafka's are int32, and never negative for a broker."""
    if type(v) is not int or not 0 <= v <= INT32_MAX:
        raise NotFast
    return v


def _str(v: object) -> str:
    if type(v) is not str:
        raise NotFast
    return v


def _opt_str(v: object) -> str | None:
    return None if v is None else _str(v)


def _rack(v: object) -> str | None:
    if v is None:
        return None
    if not legal_rack(v):
        raise NotFast
    return str(v)


def _bool(v: object) -> bool:
    if type(v) is not bool:
        raise NotFast
    return v
