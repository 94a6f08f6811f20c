"""Consumer groups as Kafka clients see them: members and the partitions assigned to each,
committed offsets, and the log offsets lag is measured against.

``GroupsState`` is what ``ClusterState.groups`` holds (None: not read) and what the state file
and snapshots keep under ``"consumerGroups"``::

    {"groups": {"billing": {"state": "Stable", "protocolType": "consumer",
                            "protocol": "range",
                            "members": [{"memberId": "c-1-9f", "clientId": "c-1",
                                         "host": "/10.0.0.7",
                                         "assignment": {"orders": [0, 1]}}],
                            "offsets": {"orders": {"0": 41, "1": 7}}}},
     "logOffsets": {"orders": {"0": [0, 45], "1": [0, 7]}}}

``logOffsets`` is [log start, end] per partition (ListOffsets earliest / latest): the lag of a
partition is ``end - committed``. A group's ``state`` is Kafka's (``Stable``, ``Empty``,
``PreparingRebalance``, ``CompletingRebalance``, ``Dead``), or ``Unknown`` when the broker
did not say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Partition = tuple[str, int]


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str = ""
    host: str = ""
    assignment: tuple[Partition, ...] = ()


@dataclass(frozen=True)
class ConsumerGroup:
    group_id: str
    state: str = "Unknown"
    protocol_type: str = "consumer"
    protocol: str = ""
    members: tuple[GroupMember, ...] = ()
    offsets: Mapping[Partition, int] = field(default_factory=dict)  # committed

    def owner(self, partition: Partition) -> str | None:
        """The member the partition is assigned to, if any."""
        for m in self.members:
            if partition in m.assignment:
                return m.member_id
        return None


@dataclass(frozen=True)
class GroupsState:
    groups: Mapping[str, ConsumerGroup] = field(default_factory=dict)
    log_offsets: Mapping[Partition, tuple[int, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "groups": {
                g.group_id: {
                    "state": g.state,
                    "protocolType": g.protocol_type,
                    "protocol": g.protocol,
                    "members": [
                        {
                            "memberId": m.member_id,
                            "clientId": m.client_id,
                            "host": m.host,
                            "assignment": _by_topic(m.assignment),
                        }
                        for m in sorted(g.members, key=lambda m: m.member_id)
                    ],
                    "offsets": _nested(g.offsets),
                }
                for g in sorted(self.groups.values(), key=lambda g: g.group_id)
            },
            "logOffsets": {
                t: {str(p): list(v) for p, v in ps.items()}
                for t, ps in _nested_raw(self.log_offsets).items()
            },
        }

    @classmethod
    def from_json(cls, data: object) -> GroupsState:
        """ValueError (with the path) on a malformed value."""
        if not isinstance(data, dict):
            raise ValueError("consumerGroups: expected an object")
        groups: dict[str, ConsumerGroup] = {}
        for gid, g in _obj(data.get("groups", {}), "consumerGroups.groups").items():
            where = f"consumerGroups.groups.{gid}"
            g = _obj(g, where)
            members = []
            for i, m in enumerate(g.get("members", [])):
                m = _obj(m, f"{where}.members[{i}]")
                assignment = tuple(
                    (str(t), _int(p, f"{where}.members[{i}].assignment"))
                    for t, ps in _obj(m.get("assignment", {}), where).items()
                    for p in ps
                )
                members.append(
                    GroupMember(
                        _str(m.get("memberId"), f"{where}.members[{i}].memberId"),
                        _str(m.get("clientId", ""), where),
                        _str(m.get("host", ""), where),
                        assignment,
                    )
                )
            offsets = {
                (str(t), _int(p, where)): _int(o, f"{where}.offsets")
                for t, ps in _obj(g.get("offsets", {}), where).items()
                for p, o in _obj(ps, where).items()
            }
            groups[str(gid)] = ConsumerGroup(
                str(gid),
                _str(g.get("state", "Unknown"), where),
                _str(g.get("protocolType", "consumer"), where),
                _str(g.get("protocol", ""), where),
                tuple(members),
                offsets,
            )
        logs: dict[Partition, tuple[int, int]] = {}
        for t, ps in _obj(data.get("logOffsets", {}), "consumerGroups.logOffsets").items():
            for p, v in _obj(ps, "consumerGroups.logOffsets").items():
                if not (isinstance(v, list) and len(v) == 2):
                    raise ValueError(f"consumerGroups.logOffsets.{t}.{p}: expected [start, end]")
                logs[(str(t), _int(p, "logOffsets"))] = (
                    _int(v[0], "logOffsets"),
                    _int(v[1], "logOffsets"),
                )
        return cls(groups, logs)


def _by_topic(parts: tuple[Partition, ...]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(parts):
        out.setdefault(t, []).append(p)
    return out


def _nested_raw(values: Mapping[Partition, Any]) -> dict[str, dict[int, Any]]:
    out: dict[str, dict[int, Any]] = {}
    for (t, p), v in sorted(values.items()):
        out.setdefault(t, {})[p] = v
    return out


def _nested(values: Mapping[Partition, int]) -> dict[str, dict[str, int]]:
    return {t: {str(p): v for p, v in ps.items()} for t, ps in _nested_raw(values).items()}


def _obj(v: object, where: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"{where}: expected an object")
    return v


def _str(v: object, where: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{where}: expected a string")
    return v


def _int(v: object, where: str) -> int:
    if isinstance(v, bool):
        raise ValueError(f"{where}: expected an integer")
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.isdigit():
        return int(v)
    raise ValueError(f"{where}: expected an integer")
