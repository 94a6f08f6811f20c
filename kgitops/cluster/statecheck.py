"""The slow, thorough pass over a state file that the fast loader in ``snapshot.py`` refused:
it walks the whole document and says every thing that is wrong, with its JSON path::

    topics.t.partitions.0.replicas: a broker id appears more than once
    brokers[2].id: expected an integer broker id
"""

from __future__ import annotations

FORMAT = "kgitops-state/v1"


def check_state(data: object) -> list[str]:
    """Every problem in parsed state JSON, in document order (empty: nothing wrong)."""
    return _Checker().check(data)


def _is_int(v: object) -> bool:
    return type(v) is int


class _Checker:
    """The slow pass: walks the whole document and says what is wrong, with JSON paths."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def bad(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}" if where else what)

    def check(self, data: object) -> list[str]:
        if not isinstance(data, dict):
            self.bad("", "expected a JSON object with format 'kgitops-state/v1'")
            return self.problems
        if data.get("format") != FORMAT:
            self.bad("format", f"expected {FORMAT!r}, found {data.get('format')!r}")
        self.check_brokers(data.get("brokers"))
        topics = data.get("topics", {})
        if not isinstance(topics, dict):
            self.bad("topics", "expected an object of topic name -> topic")
        else:
            for name, t in topics.items():
                self.check_topic(f"topics.{name}", t)
        self.check_reassignments(data.get("reassignments") or {})
        bc = data.get("brokerConfigs") or {}
        if not isinstance(bc, dict):
            self.bad("brokerConfigs", "expected an object of broker id -> configs")
        else:
            for b, c in bc.items():
                if not _int_key(b):
                    self.bad(f"brokerConfigs.{b}", "broker ids must be integer strings")
                self.check_config(f"brokerConfigs.{b}", c)
        for key in ("clusterId",):
            if data.get(key) is not None and not isinstance(data[key], str):
                self.bad(key, "expected a string")
        if data.get("controllerId") is not None and not _is_int(data["controllerId"]):
            self.bad("controllerId", "expected an integer broker id")
        return self.problems

    def check_brokers(self, brokers: object) -> None:
        if not isinstance(brokers, list):
            self.bad("brokers", "expected a list of {id, rack}")
            return
        seen: set[int] = set()
        for i, b in enumerate(brokers):
            where = f"brokers[{i}]"
            if not isinstance(b, dict):
                self.bad(where, "expected an object {id, rack}")
                continue
            if not _is_int(b.get("id")):
                self.bad(f"{where}.id", "expected an integer broker id")
            elif b["id"] in seen:
                self.bad(f"{where}.id", f"broker {b['id']} is listed twice")
            else:
                seen.add(b["id"])
            if b.get("rack") is not None and not isinstance(b["rack"], str):
                self.bad(f"{where}.rack", "expected a string or null")
            if "online" in b and not isinstance(b["online"], bool):
                self.bad(f"{where}.online", "expected true or false")

    def check_ids(self, where: str, raw: object, allow_empty: bool = False) -> None:
        if not isinstance(raw, list) or not all(_is_int(b) for b in raw):
            self.bad(where, "expected a list of integer broker ids")
        elif not raw and not allow_empty:
            self.bad(where, "expected at least one broker id")
        elif len(set(raw)) != len(raw):
            self.bad(where, "a broker id appears more than once")

    def check_topic(self, where: str, t: object) -> None:
        if not isinstance(t, dict):
            self.bad(where, "expected an object with partitions and config")
            return
        parts = t.get("partitions")
        if not isinstance(parts, dict):
            self.bad(f"{where}.partitions", "expected an object of partition id -> partition")
        else:
            ids: list[int] = []
            for pid, p in parts.items():
                pw = f"{where}.partitions.{pid}"
                if not _int_key(pid):
                    self.bad(pw, "partition ids must be non-negative integer strings")
                else:
                    ids.append(int(pid))
                self.check_partition(pw, p)
            if ids and sorted(ids) != list(range(len(ids))):
                self.bad(f"{where}.partitions", "partition ids must run 0, 1, ... without gaps")
        self.check_config(f"{where}.config", t.get("config") or {})

    def check_partition(self, where: str, p: object) -> None:
        if not isinstance(p, dict):
            self.bad(where, "expected an object {replicas, isr, leader, sizeBytes}")
            return
        if "replicas" not in p:
            self.bad(where, "missing replicas")
        else:
            self.check_ids(f"{where}.replicas", p["replicas"])
        if p.get("isr") is not None:
            self.check_ids(f"{where}.isr", p["isr"], allow_empty=True)
        if p.get("leader") is not None and not _is_int(p["leader"]):
            self.bad(f"{where}.leader", "expected an integer broker id or null")
        size = p.get("sizeBytes")
        if size is not None and (not _is_int(size) or size < 0):
            self.bad(f"{where}.sizeBytes", "expected a non-negative integer")

    def check_config(self, where: str, c: object) -> None:
        if not isinstance(c, dict):
            self.bad(where, "expected an object of config name -> string value")
            return
        for k, v in c.items():
            if not isinstance(v, str):
                self.bad(f"{where}.{k}", f"config values are strings as Kafka holds them: {v!r}")

    def check_reassignments(self, raw: object) -> None:
        if not isinstance(raw, dict):
            self.bad("reassignments", "expected an object of topic -> partition -> move")
            return
        for topic, parts in raw.items():
            if not isinstance(parts, dict):
                self.bad(f"reassignments.{topic}", "expected an object of partition id -> move")
                continue
            for pid, r in parts.items():
                where = f"reassignments.{topic}.{pid}"
                if not _int_key(pid):
                    self.bad(where, "partition ids must be non-negative integer strings")
                if not isinstance(r, dict):
                    self.bad(where, "expected an object {adding, removing}")
                    continue
                self.check_ids(f"{where}.adding", r.get("adding", []), allow_empty=True)
                self.check_ids(f"{where}.removing", r.get("removing", []), allow_empty=True)
                if r.get("target") is not None:
                    self.check_ids(f"{where}.target", r["target"])


def _int_key(key: str) -> bool:
    return key.isdigit() and key.isascii()
