"""The cluster state JSON (``kgitops-state/v1``) <-> ``model.ClusterState``, both ways, exactly.

This is what ``kgitops snapshot --out`` writes, what ``plan --state`` reads, and what a
simulated cluster keeps on disk. The shape (docs/simulated-cluster.md, "The state file")::

    {"format": "kgitops-state/v1", "clusterId": "abc", "kafkaVersion": "4.1",
     "brokers": [{"id": 1, "rack": "az1"}, {"id": 2, "rack": "az2", "online": false}],
     "topics": {"t": {"partitions": {"0": {"replicas": [1, 2], "isr": [1], "leader": 1,
                                           "sizeBytes": 1048576}},
                      "config": {"retention.ms": "604800000"}}},
     "reassignments": {"t": {"0": {"adding": [3], "removing": [1]}}}}

Partition ids are string keys; ``kafkaVersion`` (the rules that apply; absent: 4.1's),
``isr``, ``leader`` (``null`` or ``-1``: no leader),
``sizeBytes`` and ``reassignments`` may be absent; unknown fields are ignored, so a file may
carry more (the simulated cluster keeps its clock there). Written output is sorted (brokers
by id, topics by name, partitions numerically, configs by name), so the same state always
gives the same bytes and a snapshot diffs cleanly in git.

Speed: a state of 1,000,000 partitions loads in about a second. ``read_state`` decodes the
file with msgspec straight into typed records (``_File``: the types and the shape are checked
by the decoder, in C; msgspec against orjson and json: benchmarks/snapshot_load.py); replica
lists repeat (a cluster of n brokers has at most a few n^2 distinct ones), so each distinct
list is checked (ids in range, no repeats, ISR within the replicas) once and then shared.
Anything the fast path does not accept takes the slower path that reports every problem with
its line, column and JSON path (the standard decoder, then ``statecheck.check_state``), so
the errors do not depend on the decoder.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import Any

import msgspec

from kgitops.access import AccessState
from kgitops.cluster.statecheck import check_state, problem_lines
from kgitops.errors import FileRefused, StateFileError
from kgitops.files import decode_utf8, loads_json, nesting_problem, read_bytes, write_atomic
from kgitops.groups import GroupsState
from kgitops.model import (
    Broker,
    ClusterState,
    PartitionState,
    Reassignment,
    TopicState,
    legal_rack,
    legal_topic_name,
)
from kgitops.names import INT32_MAX, STATE_FORMAT
from kgitops.perf import paused_gc, stage
from kgitops.versionrules import parse_version, show_version

# ------------------------------------------------------------------------- writing


def _partition_json(p: PartitionState) -> dict[str, Any]:
    out: dict[str, Any] = {"replicas": list(p.replicas)}
    if p.isr is not None:
        out["isr"] = list(p.isr)
        out["leader"] = p.leader
    elif p.leader is not None:
        out["leader"] = p.leader
    if p.size_bytes is not None:
        out["sizeBytes"] = p.size_bytes
    return out


def _reassignment_json(r: Reassignment) -> dict[str, Any]:
    out: dict[str, Any] = {"adding": list(r.adding), "removing": list(r.removing)}
    if r.target is not None:
        out["target"] = list(r.target)
    return out


def state_to_json(state: ClusterState) -> dict[str, Any]:
    """The JSON form of ``state``, sorted so equal states give equal output.

    A partition whose ISR is known writes its leader too (``null`` when it has none: an
    offline partition); a broker writes ``online`` only when it is offline.
    """
    brokers: list[dict[str, Any]] = []
    for b in sorted(state.brokers, key=lambda b: b.id):
        entry: dict[str, Any] = {"id": b.id, "rack": b.rack}
        if not b.online:
            entry["online"] = False
        brokers.append(entry)
    topics: dict[str, Any] = {}
    for name in sorted(state.topics):
        t = state.topics[name]
        topics[name] = {
            "partitions": {str(p): _partition_json(ps) for p, ps in sorted(t.partitions.items())},
            "config": dict(sorted(t.config.items())),
        }
    out: dict[str, Any] = {"format": STATE_FORMAT, "clusterId": state.cluster_id}
    if state.controller_id is not None:
        out["controllerId"] = state.controller_id
    if state.kafka_version is not None:
        out["kafkaVersion"] = show_version(state.kafka_version)
    out["brokers"] = brokers
    out["topics"] = topics
    out["reassignments"] = {
        topic: {str(p): _reassignment_json(r) for p, r in sorted(parts.items())}
        for topic, parts in sorted(state.reassignments.items())
        if parts
    }
    if any(state.broker_configs.values()):
        out["brokerConfigs"] = {
            str(b): dict(sorted(c.items())) for b, c in sorted(state.broker_configs.items()) if c
        }
    if state.broker_defaults:
        out["brokerDefaults"] = dict(sorted(state.broker_defaults.items()))
    if state.access is not None:
        out["access"] = state.access.to_json()
    if state.groups is not None:
        out["consumerGroups"] = state.groups.to_json()
    return out


def dumps_state(state: ClusterState, extra: Mapping[str, Any] | None = None) -> str:
    """The file text for ``state``: one line per partition (readable, diffs well in git,
    3x smaller than ``indent=2``), sorted; the same JSON as ``state_to_json``."""
    data = state_to_json(replace(state, topics={}))
    if extra:
        for k, v in extra.items():
            data.setdefault(k, v)
    lines = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if key == "topics" and state.topics:
            lines.append('  "topics": {')
            _topic_lines(state, lines)
            lines.append(f"  }}{comma}")
        else:
            text = json.dumps(value, indent=2, sort_keys=isinstance(value, Mapping))
            lines.append(f"  {json.dumps(key)}: {text.replace(chr(10), chr(10) + '  ')}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _topic_lines(state: ClusterState, lines: list[str]) -> None:
    # Formatted by hand, as json.dumps would (", " and ": "): a call of json.dumps per
    # partition costs more than the rest of the write. Replica lists repeat: each distinct
    # one is formatted once.
    shown: dict[tuple[int, ...], str] = {}

    def ids(t: tuple[int, ...]) -> str:
        text = shown.get(t)
        if text is None:
            text = shown[t] = "[" + ", ".join(map(str, t)) + "]"
        return text

    names = sorted(state.topics)
    for j, name in enumerate(names):
        topic = state.topics[name]
        lines.append(f"    {json.dumps(name)}: {{")
        lines.append(f'      "config": {json.dumps(dict(topic.config), sort_keys=True)},')
        lines.append('      "partitions": {')
        last = len(topic.partitions) - 1
        for k, pid in enumerate(sorted(topic.partitions)):
            p = topic.partitions[pid]
            text = f'        "{pid}": {{"replicas": {ids(p.replicas)}'
            if p.isr is not None:
                leader = "null" if p.leader is None else str(p.leader)
                text += f', "isr": {ids(p.isr)}, "leader": {leader}'
            elif p.leader is not None:
                text += f', "leader": {p.leader}'
            if p.size_bytes is not None:
                text += f', "sizeBytes": {p.size_bytes}'
            lines.append(text + ("}," if k < last else "}"))
        lines.append("      }")
        lines.append("    }," if j < len(names) - 1 else "    }")


def write_state(
    path: str,
    state: ClusterState,
    extra: Mapping[str, Any] | None = None,
    *,
    root: str | None = None,
    make_dirs: bool = False,
) -> None:
    """Write ``state`` (plus ``extra`` top-level fields) to ``path`` atomically, never
    through a symlink (``kgitops.files.write_atomic``: ``root`` and ``make_dirs`` as there)."""
    try:
        with paused_gc():
            text = dumps_state(state, extra)
        write_atomic(path, text, root=root, make_dirs=make_dirs)
    except OSError as exc:
        raise StateFileError(
            path, [f"cannot write the state file: {exc.strerror or exc}"]
        ) from None


# ------------------------------------------------------------------------- reading


def read_state_file(path: str) -> tuple[str, dict[str, Any]]:
    """The text and parsed JSON object of a state file; one ``path:line:col`` line for a file
    that is not a regular file, too big, binary, not UTF-8 (a BOM is fine), nested too deep
    or not JSON."""
    return _parsed(_state_bytes(path), path)


def _state_bytes(path: str) -> bytes:
    try:
        return read_bytes(path)
    except FileNotFoundError:
        raise StateFileError(path, ["no such state file"]) from None
    except OSError as exc:
        raise StateFileError(path, [f"cannot read the state file: {exc.strerror or exc}"]) from None
    except FileRefused as exc:
        raise StateFileError(path, [str(exc)]) from None


def _parsed(raw: bytes, path: str) -> tuple[str, dict[str, Any]]:
    try:
        text = decode_utf8(raw, path)
        with paused_gc():
            data = loads_json(text, path, check_depth=False)  # checked before any shape error
    except FileRefused as exc:
        raise StateFileError(path, [str(exc)]) from None
    if not isinstance(data, dict):
        raise StateFileError(
            path, [f"{path}:1:1: error: expected a JSON object with format {STATE_FORMAT!r}"]
        )
    return text, data


def read_state(path: str) -> ClusterState:
    """Load a state file; StateFileError naming the file, line and column on bad input."""
    with paused_gc():  # one pause: re-enabled between the two steps, the collector would
        # walk the millions of objects the parse just made before the load begins
        with stage("state: decode"):
            raw = _state_bytes(path)
            try:
                typed: _File | None = _DECODER.decode(raw)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                typed = None  # the slow path says what is wrong
        if typed is not None:
            del raw  # the file's bytes are not needed once decoded
            with stage("state: load"):
                try:
                    state = _typed_load(typed)
                except (_Bad, ValueError):
                    pass
                else:
                    return state
            raw = _state_bytes(path)
        with stage("state: decode"):
            text, data = _parsed(raw, path)
        with stage("state: load"):
            return state_from_json(data, source=path, text=text)


def state_from_json(data: object, source: str = "<state>", text: str | None = None) -> ClusterState:
    """The ClusterState for parsed state JSON; StateFileError listing every problem, with
    line and column when the file's ``text`` is given."""
    if isinstance(data, dict):
        try:
            with paused_gc():
                state = _fast_load(data)
        except (_Bad, KeyError, TypeError, ValueError, AttributeError):
            pass
        else:
            try:
                if "access" in data:
                    state = replace(state, access=AccessState.from_json(data["access"]))
                if "consumerGroups" in data:
                    state = replace(state, groups=GroupsState.from_json(data["consumerGroups"]))
            except ValueError as exc:
                raise StateFileError(source, [str(exc)]) from None
            return state
    if text is not None and (too_deep := nesting_problem(text, source)) is not None:
        raise StateFileError(source, [str(too_deep)])
    with paused_gc():
        problems = check_state(data)
        if not problems:  # pragma: no cover - the two passes disagree: a bug, say so plainly
            problems = [((), "the state file could not be read (unexpected shape)")]
        lines = problem_lines(problems, source, text)
    raise StateFileError(source, lines)


class _Partition(
    msgspec.Struct, rename={"size_bytes": "sizeBytes"}, forbid_unknown_fields=True, gc=False
):
    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None = None
    leader: int | None = None
    size_bytes: int | None = None


class _Topic(msgspec.Struct, forbid_unknown_fields=True):
    partitions: dict[int, _Partition]
    config: dict[str, str] | None = None


class _File(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """A state file as the fast path reads it: the topics typed (nearly all of the file),
    everything else as plain JSON for ``_fast_load``. An unknown field anywhere sends the
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


_DECODER = msgspec.json.Decoder(_File)


def _typed_load(typed: _File) -> ClusterState:
    """The ClusterState of a decoded ``_File``; _Bad (or ValueError from the access and group
    parts) for anything the slow path must explain."""
    untyped: tuple[Any, ...] = (typed.format, typed.brokers, typed.cluster_id, typed.controller_id)
    untyped += (typed.reassignments, typed.broker_configs, typed.broker_defaults)
    untyped += (typed.access, typed.consumer_groups, typed.simulation)
    if not all(_plain(v) for v in untyped):
        raise _Bad
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
        state = _fast_load(data, typed.topics)
    except (KeyError, TypeError, AttributeError):
        raise _Bad from None
    if typed.access is not msgspec.UNSET:
        state = replace(state, access=AccessState.from_json(typed.access))
    if typed.consumer_groups is not msgspec.UNSET:
        state = replace(state, groups=GroupsState.from_json(typed.consumer_groups))
    return state


class _Built:
    """PartitionState's layout, mutable: each partition is built as one and then becomes a
    PartitionState (``__class__`` assigned; the same slots, so the same memory layout). Two
    times faster than setting the frozen class's slots through their descriptors, which is
    a fifth of loading a state of a million partitions."""

    __slots__ = ("replicas", "isr", "leader", "size_bytes")  # noqa: RUF023 - PartitionState's order
    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None
    leader: int | None
    size_bytes: int | None


def _can_build() -> bool:
    if not _SLOTS_KNOWN:
        return False  # pragma: no cover - PartitionState changed: the slower way
    try:
        probe = _Built()
        probe.__class__ = PartitionState  # type: ignore[assignment]
    except TypeError:  # pragma: no cover - another layout
        return False
    return True


def _typed_topics(
    raw_topics: dict[str, _Topic], tuples: dict[tuple[Any, ...], tuple[int, ...]]
) -> dict[str, TopicState]:
    """``_fast_load``'s loop over topics for typed records: the decoder checked the types,
    so only the rules across values remain, each distinct replica list checked once."""
    checked: set[tuple[int, int]] = set()
    built = _CAN_BUILD
    target = PartitionState
    topics: dict[str, TopicState] = {}
    for name, t in raw_topics.items():
        if not legal_topic_name(name):
            raise _Bad
        parts: dict[int, PartitionState] = {}
        for pid, p in t.partitions.items():
            key = p.replicas
            replicas = tuples.get(key)
            if replicas is None:
                if (
                    not key
                    or len(set(key)) != len(key)
                    or not 0 <= min(key) <= max(key) <= INT32_MAX
                ):
                    raise _Bad
                tuples[key] = replicas = key
            isr = p.isr
            if isr is not None:
                key = isr
                isr = tuples.get(key)
                if isr is None:
                    if len(set(key)) != len(key):
                        raise _Bad
                    tuples[key] = isr = key
                if isr is not replicas and (id(replicas), id(isr)) not in checked:
                    if not set(isr) <= set(replicas):
                        raise _Bad
                    checked.add((id(replicas), id(isr)))
            leader = p.leader
            if leader is not None:
                if leader < 0:
                    leader = None
                elif leader not in replicas:
                    raise _Bad
            size = p.size_bytes
            if size is not None and size < 0:
                raise _Bad
            if built:
                made = _Built()
                made.replicas = replicas
                made.isr = isr
                made.leader = leader
                made.size_bytes = size
                made.__class__ = target  # type: ignore[assignment]
                parts[pid] = made  # type: ignore[assignment]
            else:  # pragma: no cover - PartitionState changed
                parts[pid] = PartitionState(replicas, isr, leader, size)
        if not _contiguous(parts):
            raise _Bad
        topics[name] = TopicState(name=name, partitions=parts, config=t.config or {})
    return topics


#: PartitionState is built by setting its four slots directly (a third of the load time
#: goes to the frozen dataclass's __init__ otherwise); only while it has exactly these fields.
_SLOTS_KNOWN = tuple(f.name for f in fields(PartitionState)) == (
    "replicas",
    "isr",
    "leader",
    "size_bytes",
) and "__slots__" in vars(PartitionState)


_CAN_BUILD = _can_build()


class _Bad(Exception):
    """The fast path met something it will not accept; the checker says what."""


def _fast_load(data: dict[str, Any], typed: dict[str, _Topic] | None = None) -> ClusterState:
    if data.get("format") != STATE_FORMAT:
        raise _Bad
    brokers = tuple(
        Broker(
            id=_id(b["id"]),
            rack=_rack(b.get("rack")),
            online=_bool(b.get("online", True)),
        )
        for b in data["brokers"]
    )
    if len({b.id for b in brokers}) != len(brokers):
        raise _Bad
    tuples: dict[tuple[Any, ...], tuple[int, ...]] = {}

    def ids(raw: object, allow_empty: bool = False) -> tuple[int, ...]:
        if type(raw) is not list:
            raise _Bad
        key = tuple(raw)
        for v in key:  # 1.0 and True hash as 1 does: types are checked on every list
            if type(v) is not int:
                raise _Bad
        got = tuples.get(key)
        if got is None:
            if len(set(key)) != len(key) or (key and not 0 <= min(key) <= max(key) <= INT32_MAX):
                raise _Bad
            tuples[key] = got = key
        if not got and not allow_empty:
            raise _Bad
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
        raise _Bad
    checked: set[tuple[int, int]] = set()  # (id(replicas), id(isr)) pairs found consistent
    if typed is not None:
        topics = _typed_topics(typed, tuples)
    for name, t in raw_topics.items():
        if not legal_topic_name(name):
            raise _Bad
        parts_raw = t["partitions"]
        if type(parts_raw) is not dict:
            raise _Bad
        parts: dict[int, PartitionState] = {}
        # The loop below is ids() inlined twice: it runs once per partition.
        for pid, p in parts_raw.items():
            r = p["replicas"]
            if type(r) is not list:
                raise _Bad
            key = tuple(r)
            for v in key:
                if type(v) is not int:
                    raise _Bad
            replicas = tuples.get(key)
            if replicas is None:  # a new tuple: checked once (isr <= replicas, leader in them)
                if (
                    not key
                    or len(set(key)) != len(key)
                    or not 0 <= min(key) <= max(key) <= INT32_MAX
                ):
                    raise _Bad
                tuples[key] = replicas = key
            isr: tuple[int, ...] | None = None
            r = p.get("isr")
            if r is not None:
                if type(r) is not list:
                    raise _Bad
                key = tuple(r)
                for v in key:
                    if type(v) is not int:
                        raise _Bad
                isr = tuples.get(key)
                if isr is None:
                    if len(set(key)) != len(key):
                        raise _Bad
                    tuples[key] = isr = key
            if isr is not None and isr is not replicas and (id(replicas), id(isr)) not in checked:
                if not set(isr) <= set(replicas):
                    raise _Bad
                checked.add((id(replicas), id(isr)))
            leader = p.get("leader")
            size = p.get("sizeBytes")
            if leader is not None and (type(leader) is not int or leader < 0):
                _check_no_leader(leader)
                leader = None
            elif leader is not None and leader not in replicas:
                raise _Bad
            if size is not None and (type(size) is not int or size < 0):
                raise _Bad
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
            raise _Bad
        config = t.get("config") or {}
        if type(config) is not dict or not all(type(v) is str for v in config.values()):
            raise _Bad
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
            raise _Bad
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
            raise _Bad
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
        raise _Bad
    return None


def _contiguous(parts: Mapping[int, PartitionState]) -> bool:
    return not parts or (min(parts) == 0 and max(parts) == len(parts) - 1)


def _int(v: object) -> int:
    if type(v) is not int:
        raise _Bad
    return v


def _id(v: object) -> int:
    """A broker id: Kafka's are int32, and never negative for a broker."""
    if type(v) is not int or not 0 <= v <= INT32_MAX:
        raise _Bad
    return v


def _str(v: object) -> str:
    if type(v) is not str:
        raise _Bad
    return v


def _opt_str(v: object) -> str | None:
    return None if v is None else _str(v)


def _rack(v: object) -> str | None:
    if v is None:
        return None
    if not legal_rack(v):
        raise _Bad
    return str(v)


def _bool(v: object) -> bool:
    if type(v) is not bool:
        raise _Bad
    return v
