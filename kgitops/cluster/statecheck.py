"""The slow, thorough pass over a state file that the fast loader in ``snapshot.py`` refused:
it walks the whole document and reports every problem, with its position when the file's
text is at hand, else its JSON path::

    snap.json:12:26: error: topics.t.partitions.0.replicas: a broker id appears more than once
    snap.json: error: brokers[2].id: expected an integer broker id

Positions are found by walking the text along the paths of the problems only; every other
value is skipped by the C JSON decoder, so locating stays fast in a 100 MB file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from contextlib import suppress

from kgitops.model import RACK_RULE, TOPIC_NAME_RULE, legal_rack, legal_topic_name
from kgitops.names import INT32_MAX, STATE_FORMAT
from kgitops.versionrules import parse_version

Path = tuple[str | int, ...]
Problem = tuple[Path, str]


def check_state(data: object) -> list[Problem]:
    """Every problem in parsed state JSON, in document order (empty: nothing wrong)."""
    return _Checker().check(data)


def show_path(path: Path) -> str:
    """``("brokers", 2, "id")`` -> ``brokers[2].id``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def problem_lines(problems: Sequence[Problem], source: str, text: str | None = None) -> list[str]:
    """``source[:line:col]: error: path: message`` for each problem."""
    where = locate(text, [p for p, _ in problems]) if text is not None else {}
    lines = []
    for path, message in problems:
        shown = show_path(path)
        what = f"{shown}: {message}" if shown else message
        pos = where.get(path)
        lines.append(
            f"{source}:{pos[0]}:{pos[1]}: error: {what}" if pos else f"{source}: error: {what}"
        )
    return lines


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def locate(text: str, paths: Iterable[Path]) -> dict[Path, tuple[int, int]]:
    """(line, column) of the value at each path, or of its deepest ancestor in the text."""
    wanted = set(paths)
    prefixes = {p[:i] for p in wanted for i in range(len(p))}
    found: dict[Path, int] = {}

    def ws(i: int) -> int:
        m = _WS.match(text, i)
        return m.end() if m else i

    def walk(i: int, path: Path) -> int:
        i = ws(i)
        found[path] = i
        if path not in prefixes or i >= len(text) or text[i] not in "{[":
            return _DECODER.raw_decode(text, i)[1]
        if text[i] == "{":
            i = ws(i + 1)
            while i < len(text) and text[i] != "}":
                key, i = _DECODER.raw_decode(text, i)
                i = ws(i) + 1  # the ':'
                i = ws(walk(i, (*path, str(key))))
                if text[i] == ",":
                    i = ws(i + 1)
            return i + 1
        i = ws(i + 1)
        index = 0
        while i < len(text) and text[i] != "]":
            i = ws(walk(i, (*path, index)))
            index += 1
            if text[i] == ",":
                i = ws(i + 1)
        return i + 1

    with suppress(ValueError, IndexError):  # the text is valid JSON; stop quietly if not
        walk(0, ())
    out: dict[Path, tuple[int, int]] = {}
    for path in wanted:
        probe = path
        while probe not in found and probe:
            probe = probe[:-1]
        if probe in found:
            i = found[probe]
            out[path] = (text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i))
    return out


def _is_int(v: object) -> bool:
    return type(v) is int


"""Kafka's broker ids are int32 (``node.id``, and every id in a metadata response)."""
_ID_WORDS = f"a broker id (an integer 0..{INT32_MAX})"


def _is_id(v: object) -> bool:
    return type(v) is int and 0 <= v <= INT32_MAX


def _int_key(key: str) -> bool:
    return key.isdigit() and key.isascii() and int(key) <= INT32_MAX


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def bad(self, path: Path, what: str) -> None:
        self.problems.append((path, what))

    def check(self, data: object) -> list[Problem]:
        if not isinstance(data, dict):
            self.bad((), f"expected a JSON object with format {STATE_FORMAT!r}")
            return self.problems
        if data.get("format") != STATE_FORMAT:
            self.bad(("format",), f"expected {STATE_FORMAT!r}, found {data.get('format')!r}")
        if data.get("clusterId") is not None and not isinstance(data["clusterId"], str):
            self.bad(("clusterId",), "expected a string")
        if data.get("controllerId") is not None and not _is_id(data["controllerId"]):
            self.bad(("controllerId",), f"expected {_ID_WORDS}")
        version = data.get("kafkaVersion")
        if version is not None and (not isinstance(version, str) or parse_version(version) is None):
            self.bad(("kafkaVersion",), 'expected a Kafka version such as "4.1" or "3.7.2"')
        self.check_brokers(data.get("brokers"))
        topics = data.get("topics", {})
        if not isinstance(topics, dict):
            self.bad(("topics",), "expected an object of topic name -> topic")
        else:
            for name, t in topics.items():
                if not legal_topic_name(name):
                    self.bad(("topics", name), f"an illegal topic name (Kafka: {TOPIC_NAME_RULE})")
                self.check_topic(("topics", name), t)
        self.check_reassignments(data.get("reassignments") or {})
        bc = data.get("brokerConfigs") or {}
        if not isinstance(bc, dict):
            self.bad(("brokerConfigs",), "expected an object of broker id -> configs")
        else:
            for b, c in bc.items():
                if not _int_key(b):
                    self.bad(("brokerConfigs", b), "broker ids must be integer strings")
                self.check_config(("brokerConfigs", b), c)
        self.check_config(("brokerDefaults",), data.get("brokerDefaults") or {})
        return self.problems

    def check_brokers(self, brokers: object) -> None:
        if not isinstance(brokers, list):
            self.bad(("brokers",), "expected a list of {id, rack}")
            return
        seen: set[int] = set()
        for i, b in enumerate(brokers):
            where: Path = ("brokers", i)
            if not isinstance(b, dict):
                self.bad(where, "expected an object {id, rack}")
                continue
            if not _is_id(b.get("id")):
                self.bad((*where, "id"), f"expected {_ID_WORDS}")
            elif b["id"] in seen:
                self.bad((*where, "id"), f"broker {b['id']} is listed twice")
            else:
                seen.add(b["id"])
            if b.get("rack") is not None and not isinstance(b["rack"], str):
                self.bad((*where, "rack"), "expected a string or null")
            elif b.get("rack") is not None and not legal_rack(b["rack"]):
                self.bad((*where, "rack"), f"an illegal rack id (allowed: {RACK_RULE})")
            if "online" in b and not isinstance(b["online"], bool):
                self.bad((*where, "online"), "expected true or false")

    def check_ids(self, where: Path, raw: object, allow_empty: bool = False) -> None:
        if not isinstance(raw, list) or not all(_is_id(b) for b in raw):
            self.bad(where, f"expected a list of broker ids (integers 0..{INT32_MAX})")
        elif not raw and not allow_empty:
            self.bad(where, "expected at least one broker id")
        elif len(set(raw)) != len(raw):
            self.bad(where, "a broker id appears more than once")

    def check_topic(self, where: Path, t: object) -> None:
        if not isinstance(t, dict):
            self.bad(where, "expected an object with partitions and config")
            return
        parts = t.get("partitions")
        if not isinstance(parts, dict):
            self.bad((*where, "partitions"), "expected an object of partition id -> partition")
        else:
            ids: list[int] = []
            for pid, p in parts.items():
                pw: Path = (*where, "partitions", pid)
                if not _int_key(pid):
                    self.bad(pw, "partition ids must be non-negative integer strings")
                else:
                    ids.append(int(pid))
                self.check_partition(pw, p)
            if ids and sorted(ids) != list(range(len(ids))):
                self.bad((*where, "partitions"), "partition ids must run 0, 1, ... without gaps")
        self.check_config((*where, "config"), t.get("config") or {})

    def check_partition(self, where: Path, p: object) -> None:
        if not isinstance(p, dict):
            self.bad(where, "expected an object {replicas, isr, leader, sizeBytes}")
            return
        if "replicas" not in p:
            self.bad(where, "missing replicas")
        else:
            self.check_ids((*where, "replicas"), p["replicas"])
        if p.get("isr") is not None:
            self.check_ids((*where, "isr"), p["isr"], allow_empty=True)
        leader = p.get("leader")
        if leader is not None and not (_is_int(leader) and leader <= INT32_MAX):
            self.bad((*where, "leader"), f"expected {_ID_WORDS}, -1 or null")
        replicas = p.get("replicas")
        if isinstance(replicas, list) and all(_is_id(b) for b in replicas):
            if isinstance(leader, int) and leader >= 0 and leader not in replicas:
                self.bad((*where, "leader"), f"leader {leader} is not one of the replicas")
            isr = p.get("isr")
            if isinstance(isr, list) and all(_is_id(b) for b in isr):
                stray = sorted(set(isr) - set(replicas))
                if stray:
                    shown = ", ".join(map(str, stray))
                    self.bad((*where, "isr"), f"in-sync broker(s) {shown} are not replicas")
        size = p.get("sizeBytes")
        if size is not None and (not _is_int(size) or size < 0):
            self.bad((*where, "sizeBytes"), "expected a non-negative integer")

    def check_config(self, where: Path, c: object) -> None:
        if not isinstance(c, dict):
            self.bad(where, "expected an object of config name -> string value")
            return
        for k, v in c.items():
            if not isinstance(v, str):
                self.bad((*where, k), f"config values are strings as Kafka holds them: {v!r}")

    def check_reassignments(self, raw: object) -> None:
        if not isinstance(raw, dict):
            self.bad(("reassignments",), "expected an object of topic -> partition -> move")
            return
        for topic, parts in raw.items():
            if not legal_topic_name(topic):
                self.bad(
                    ("reassignments", topic), f"an illegal topic name (Kafka: {TOPIC_NAME_RULE})"
                )
            if not isinstance(parts, dict):
                self.bad(("reassignments", topic), "expected an object of partition id -> move")
                continue
            for pid, r in parts.items():
                where: Path = ("reassignments", topic, pid)
                if not _int_key(pid):
                    self.bad(where, "partition ids must be non-negative integer strings")
                if not isinstance(r, dict):
                    self.bad(where, "expected an object {adding, removing}")
                    continue
                self.check_ids((*where, "adding"), r.get("adding", []), allow_empty=True)
                self.check_ids((*where, "removing"), r.get("removing", []), allow_empty=True)
                if r.get("target") is not None:
                    self.check_ids((*where, "target"), r["target"])
