"""The simulated cluster's consumer groups and log offsets, with Kafka's rules:

- a group's members are assigned partitions by the range assignor (Kafka's default,
  ``placement/consumers.py``); a group with members is ``Stable``, one with only committed
  offsets ``Empty``; a group it has never heard of is ``Dead`` with no members, as
  DescribeGroups answers (``GroupCoordinator.handleDescribeGroup``);
- an admin OffsetCommit (generation -1, no member id) to a group with members is refused
  with ``UNKNOWN_MEMBER_ID``, and DeleteGroups with ``NON_EMPTY_GROUP``
  (``GroupMetadataManager`` / ``GroupCoordinator.handleDeleteGroups``); deleting a group
  Kafka does not know is ``GROUP_ID_NOT_FOUND``;
- the end offset of each partition is its high watermark, which the simulated cluster
  keeps (``partition_sim.Part``: one record per ``RECORD_BYTES``, 1 KiB, of what its leader
  appends as ``simulate produce`` writes); the log start stays at 0 (nothing is deleted by
  retention).
  ``times`` keeps (clock, end offset) after each advance, so an offset can be looked up by
  time (ListOffsets with a timestamp: the first offset written at or after it).
- deleting a topic removes the groups' committed offsets for it (Kafka's
  ``GroupMetadataManager.cleanupGroupMetadata``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgitops.cluster import controller as kraft
from kgitops.cluster.port import PartitionResults, Results
from kgitops.errors import ClusterError
from kgitops.groups import ConsumerGroup, GroupMember, GroupsState, Partition
from kgitops.model import TopicPartition
from kgitops.placement.consumers import assign_range

EARLIEST = -2
LATEST = -1


class GroupStore:
    def __init__(self, state: GroupsState | None, times: object = None) -> None:
        state = state or GroupsState()
        self.groups: dict[str, ConsumerGroup] = dict(state.groups)
        self.logs: dict[Partition, tuple[int, int]] = dict(state.log_offsets)
        self.subscriptions: dict[str, dict[str, tuple[str, ...]]] = {
            g.group_id: {
                m.member_id: tuple(sorted({t for t, _ in m.assignment})) for m in g.members
            }
            for g in state.groups.values()
        }
        self.times: list[tuple[float, dict[Partition, int]]] = []
        if isinstance(times, list):
            for entry in times:
                try:
                    clock, ends = entry
                    self.times.append(
                        (float(clock), {(str(t), int(p)): int(o) for t, p, o in ends})
                    )
                except (TypeError, ValueError):
                    continue

    def times_json(self) -> list[Any]:
        return [
            [clock, [[t, p, o] for (t, p), o in sorted(ends.items())]]
            for clock, ends in self.times[-100:]
        ]

    # ---------------------------------------------------------------- reading

    def _log(self, key: Partition) -> tuple[int, int]:
        return self.logs.get(key, (0, 0))

    def state(self, partitions: Mapping[str, int]) -> GroupsState | None:
        """What the state file keeps (None when there is nothing: no group, no record)."""
        logs = {k: v for k, v in self.logs.items() if 0 <= k[1] < partitions.get(k[0], 0)}
        if not self.groups and not any(v != (0, 0) for v in logs.values()):
            return None
        return GroupsState(dict(self.groups), logs)

    def describe(
        self, group_ids: Iterable[str] | None, partitions: Mapping[str, int]
    ) -> GroupsState:
        ids = sorted(self.groups) if group_ids is None else sorted(set(group_ids))
        groups = {g: self.groups.get(g) or ConsumerGroup(g, "Dead", "", "") for g in ids}
        wanted = {p for g in groups.values() for p in g.offsets} | {
            p for g in groups.values() for m in g.members for p in m.assignment
        }
        logs = {k: self._log(k) for k in wanted if k[0] in partitions}
        return GroupsState(groups, logs)

    def offsets(self, parts: Iterable[Partition], spec: int) -> dict[Partition, int]:
        out: dict[Partition, int] = {}
        for key in parts:
            start, end = self._log(key)
            if spec == EARLIEST:
                out[key] = start
            elif spec == LATEST:
                out[key] = end
            else:
                out[key] = self._at(key, spec / 1000, end)
        return out

    def _at(self, key: Partition, when: float, end: int) -> int:
        """The first offset written at or after ``when``: the end offset of the last
        checkpoint before it (records after that were written later); the end if none."""
        before = 0
        for clock, ends in self.times:
            if clock >= when:
                return before
            before = ends.get(key, before)
        return end

    # ---------------------------------------------------------------- changes

    def checkpoint(self, clock: float) -> None:
        """Remember every partition's end offset at ``clock`` (after an advance), so that an
        offset can be found by time; the last 100 are enough."""
        if self.logs:
            self.times = [*self.times[-99:], (clock, {k: v[1] for k, v in self.logs.items()})]

    def join(
        self, group: str, member: str, topics: Sequence[str], partitions: Mapping[str, int]
    ) -> None:
        self.subscriptions.setdefault(group, {})[member] = tuple(sorted(set(topics)))
        self._rebalance(group, partitions)

    def leave(self, group: str, member: str, partitions: Mapping[str, int]) -> None:
        members = self.subscriptions.get(group, {})
        if member not in members:
            raise ClusterError(f"group {group!r} has no member {member!r}")
        del members[member]
        self._rebalance(group, partitions)

    def commit_as_member(self, group: str, offsets: Mapping[Partition, int]) -> None:
        g = self.groups.get(group) or ConsumerGroup(group, "Empty", "consumer", "range")
        self.groups[group] = _with(g, offsets={**g.offsets, **offsets})

    def _rebalance(self, group: str, partitions: Mapping[str, int]) -> None:
        members = self.subscriptions.get(group, {})
        g = self.groups.get(group) or ConsumerGroup(group, "Empty", "consumer", "range")
        assigned = assign_range({m: list(ts) for m, ts in members.items()}, dict(partitions))
        self.groups[group] = _with(
            g,
            state="Stable" if members else "Empty",
            protocol="range" if members else g.protocol,
            members=tuple(
                GroupMember(m, m.split("-")[0], "/127.0.0.1", tuple(sorted(assigned.get(m, []))))
                for m in sorted(members)
            ),
        )

    def alter_offsets(
        self, group: str, offsets: Mapping[TopicPartition, int], partitions: Mapping[str, int]
    ) -> PartitionResults:
        g = self.groups.get(group)
        if g is not None and g.members:
            msg = (
                "The coordinator is not aware of this member (the group has active members: "
                "an admin commit is refused)."
            )
            return {tp: kraft.error("UNKNOWN_MEMBER_ID", msg, str(tp)) for tp in offsets}
        out: dict[TopicPartition, ClusterError | None] = {}
        ok: dict[Partition, int] = {}
        for tp, o in offsets.items():
            if not 0 <= tp.partition < partitions.get(tp.topic, 0):
                out[tp] = kraft.unknown(str(tp))
            else:
                ok[(tp.topic, tp.partition)] = o
                out[tp] = None
        if ok:
            g = g or ConsumerGroup(group, "Empty", "consumer", "")
            self.groups[group] = _with(g, state="Empty", offsets={**g.offsets, **ok})
        return out

    def delete(self, group_ids: Sequence[str]) -> Results:
        out: dict[str, ClusterError | None] = {}
        for gid in group_ids:
            g = self.groups.get(gid)
            if g is None:
                out[gid] = kraft.error(
                    "GROUP_ID_NOT_FOUND", "The group id does not exist.", f"group {gid}"
                )
            elif g.members:
                out[gid] = kraft.error("NON_EMPTY_GROUP", "The group is not empty.", f"group {gid}")
            else:
                del self.groups[gid]
                self.subscriptions.pop(gid, None)
                out[gid] = None
        return out

    def forget_topic(self, topic: str) -> None:
        self.logs = {k: v for k, v in self.logs.items() if k[0] != topic}
        for gid, g in list(self.groups.items()):
            kept = {k: v for k, v in g.offsets.items() if k[0] != topic}
            if kept == g.offsets:
                continue
            if not kept and not g.members:  # Empty and nothing left: Kafka drops the group
                del self.groups[gid]
                self.subscriptions.pop(gid, None)
            else:
                self.groups[gid] = _with(g, offsets=kept)


def _with(g: ConsumerGroup, **changes: Any) -> ConsumerGroup:
    from dataclasses import replace

    return replace(g, **changes)
