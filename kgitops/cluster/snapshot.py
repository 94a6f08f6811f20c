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
file with msgspec straight into typed records (``kgitops.cluster.statefast``, the fast path:
the types and the shape are checked by the decoder, in C; msgspec against orjson and json:
benchmarks/snapshot_load.py), and each topic's partitions into a ``model.PartitionTable`` of
columns, not a PartitionState object per partition; replica lists repeat (a cluster of n
brokers has at most a few n^2 distinct ones), so each distinct list is checked (ids in range,
no repeats, ISR within the replicas) once and then shared.
Anything the fast path does not accept takes the slower path that reports every problem with
its line, column and JSON path (the standard decoder, then ``statecheck.check_state``), so
the errors do not depend on the decoder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import msgspec

from kgitops.access import AccessState
from kgitops.cluster.statecheck import check_state, problem_lines
from kgitops.cluster.statefast import DECODER, NotFast, StateFile, fast_load, typed_load
from kgitops.errors import FileRefused, StateFileError
from kgitops.files import read_bytes, write_atomic
from kgitops.groups import GroupsState
from kgitops.jsontext import decode_utf8, loads_json, nesting_problem
from kgitops.model import (
    ClusterState,
    PartitionState,
    PartitionTable,
    Reassignment,
)
from kgitops.names import STATE_FORMAT
from kgitops.perf import paused_gc, stage
from kgitops.versionrules import show_version

# ------------------------------------------------------------------------- writing


def _partition_json(
    replicas: tuple[int, ...], isr: tuple[int, ...] | None, leader: int | None, size: int | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"replicas": list(replicas)}
    if isr is not None:
        out["isr"] = list(isr)
        out["leader"] = leader
    elif leader is not None:
        out["leader"] = leader
    if size is not None:
        out["sizeBytes"] = size
    return out


def _partitions_json(parts: Mapping[int, PartitionState]) -> dict[str, Any]:
    """The partitions by id; a PartitionTable's (ids 0..n-1, in order) from its columns,
    without a PartitionState per partition."""
    if isinstance(parts, PartitionTable):
        columns = zip(parts.replicas, parts.isr, parts.leaders, parts.sizes, strict=True)
        return {str(p): _partition_json(*fields) for p, fields in enumerate(columns)}
    return {
        str(p): _partition_json(ps.replicas, ps.isr, ps.leader, ps.size_bytes)
        for p, ps in sorted(parts.items())
    }


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
            "partitions": _partitions_json(t.partitions),
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


#: json.dumps(value, separators=(", ", ": ")): the one-line form a plan file holds
_ONE_LINE = json.JSONEncoder(separators=(", ", ": "), check_circular=False).encode


def state_json_line(state: ClusterState) -> str:
    """``state_to_json(state)`` as ``json.dumps(..., separators=(", ", ": "))`` writes it
    (the ``recordedState`` of ``plan --out``), the same text, with the topics written by hand
    from the partitions' columns: the JSON form of a million partitions is a million dicts
    (0.4 GB, a second to build and another to encode), and replica lists repeat."""
    data = state_to_json(replace(state, topics={}))
    keys = list(data)
    at = keys.index("topics")
    head = _ONE_LINE({k: data[k] for k in keys[:at]})
    tail = _ONE_LINE({k: data[k] for k in keys[at + 1 :]})
    ids = _ids_text()
    topics = []
    for name in sorted(state.topics):
        t = state.topics[name]
        parts = _partition_texts(t.partitions, ids)
        config = _ONE_LINE(dict(sorted(t.config.items())))
        topics.append(
            f'{json.dumps(name)}: {{"partitions": {{{", ".join(parts)}}}, "config": {config}}}'
        )
    body = f'"topics": {{{", ".join(topics)}}}'
    return (
        (head[:-1] + ", " if head != "{}" else "{")
        + body
        + (", " + tail[1:] if tail != "{}" else "}")
    )


def _ids_text() -> Callable[[tuple[int, ...]], str]:
    """A formatter of replica (or ISR) lists as ``json.dumps`` writes them (``[1, 2, 3]``),
    each distinct list formatted once: replica lists repeat across partitions."""
    shown: dict[tuple[int, ...], str] = {}

    def ids(t: tuple[int, ...]) -> str:
        text = shown.get(t)
        if text is None:
            text = shown[t] = "[" + ", ".join(map(str, t)) + "]"
        return text

    return ids


def _partition_texts(
    parts: Mapping[int, PartitionState], ids: Callable[[tuple[int, ...]], str]
) -> list[str]:
    """Each partition, by id, as ``json.dumps`` writes it with ", " and ": " (a call of
    ``json.dumps`` per partition costs more than the rest of a state's writing):
    ``"0": {"replicas": [1, 2], "isr": [1, 2], "leader": 1, "sizeBytes": 5}``."""
    texts = []
    for p, replicas, isr, leader, size in _partition_rows(parts):
        text = f'"{p}": {{"replicas": {ids(replicas)}'
        if isr is not None:
            text += f', "isr": {ids(isr)}, "leader": {"null" if leader is None else leader}'
        elif leader is not None:
            text += f', "leader": {leader}'
        if size is not None:
            text += f', "sizeBytes": {size}'
        texts.append(text + "}")
    return texts


def _partition_rows(
    parts: Mapping[int, PartitionState],
) -> Iterator[tuple[int, tuple[int, ...], tuple[int, ...] | None, int | None, int | None]]:
    """(id, replicas, isr, leader, size) of every partition, by id."""
    if isinstance(parts, PartitionTable):
        columns = zip(parts.replicas, parts.isr, parts.leaders, parts.sizes, strict=True)
        for p, (replicas, isr, leader, size) in enumerate(columns):
            yield p, replicas, isr, leader, size
    else:
        for p, ps in sorted(parts.items()):
            yield p, ps.replicas, ps.isr, ps.leader, ps.size_bytes


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
    # Formatted by hand, as json.dumps would (", " and ": "): _partition_texts
    ids = _ids_text()
    names = sorted(state.topics)
    for j, name in enumerate(names):
        topic = state.topics[name]
        lines.append(f"    {json.dumps(name)}: {{")
        lines.append(f'      "config": {json.dumps(dict(topic.config), sort_keys=True)},')
        lines.append('      "partitions": {')
        texts = _partition_texts(topic.partitions, ids)
        last = len(texts) - 1
        for k, text in enumerate(texts):
            lines.append("        " + text + ("," if k < last else ""))
        lines.append("      }")
        lines.append("    }," if j < len(names) - 1 else "    }")


def write_state(
    path: str,
    state: ClusterState,
    extra: Mapping[str, Any] | None = None,
    *,
    root: str | None = None,
) -> None:
    """Write ``state`` (plus ``extra`` top-level fields) to ``path`` atomically, never
    through a symlink, into a folder that exists (``kgitops.files.write_atomic``: ``root``
    as there)."""
    try:
        with paused_gc():
            text = dumps_state(state, extra)
        write_atomic(path, text, root=root)
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
                typed: StateFile | None = DECODER.decode(raw)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                typed = None  # the slow path says what is wrong
        if typed is not None:
            del raw  # the file's bytes are not needed once decoded
            with stage("state: load"):
                try:
                    state = typed_load(typed)
                except (NotFast, ValueError):
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
                state = fast_load(data)
        except (NotFast, KeyError, TypeError, ValueError, AttributeError):
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
