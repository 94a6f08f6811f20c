"""``kgitops get DIR groups|members GROUP|lags GROUP``: consumer groups as the
``kgitops-get/v1`` JSON and text tables (see ``views``). Pure.

Lag is Kafka's: the partition's end offset (ListOffsets latest) minus the group's committed
offset; a partition assigned to a member without a committed offset has no lag (``-``), as
``kafka-consumer-groups.sh --describe`` shows it. A group's ``totalLag`` and ``maxLag`` are
over the partitions with a lag.

``--topic GLOB`` (repeatable, the shell globs of the other ``get`` views) narrows each view to
the partitions of the matching topics: ``groups`` lists only the groups with a committed
offset or an assigned partition there, and their topics, total and max lag count only those
partitions; ``members`` lists only the members assigned one of them; ``lags`` only those
partitions, its totals over them. The filter is applied to what was read: it costs no
request.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kgitops.console.views import FORMAT, matches, table
from kgitops.errors import KgitopsError
from kgitops.groups import ConsumerGroup, GroupsState, Partition
from kgitops.safetext import safe_text

#: the group ids the cluster lists, asked only when needed (``find_group``)
Listed = Callable[[], Collection[str]]


def find_group(state: GroupsState, group_id: str, listed: Listed = tuple) -> ConsumerGroup:
    """The group, or a one-line KgitopsError when the cluster does not know it: Kafka answers
    DescribeGroups for any id, with state Dead (some brokers: Empty) and nothing in it.

    An Empty group without members or offsets is also what a group looks like between its
    last member leaving and the coordinator's clean-up, and ``get groups`` lists it (ListGroups
    does): ``listed`` (asked only then) gives the ids the cluster lists, and the group exists
    when it is among them, so ``get groups`` and ``delete-group`` agree."""
    g = state.groups.get(group_id)
    if g is not None and (g.members or g.offsets):
        return g
    if (
        g is None
        or g.state in ("Dead", "Unknown")
        or (g.state == "Empty" and group_id not in listed())
    ):
        raise KgitopsError(f"consumer group '{safe_text(group_id)}' does not exist")
    return g


def on_topics(g: ConsumerGroup, patterns: Sequence[str]) -> ConsumerGroup:
    """The group as it touches the topics matching ``patterns`` (all of it when none): its
    committed offsets and its members' assignments of those topics only (every member kept,
    with what is left of its assignment)."""
    if not patterns:
        return g
    return replace(
        g,
        offsets={tp: o for tp, o in g.offsets.items() if matches(tp[0], patterns)},
        members=tuple(
            replace(m, assignment=tuple(tp for tp in m.assignment if matches(tp[0], patterns)))
            for m in g.members
        ),
    )


def _partitions(g: ConsumerGroup) -> list[Partition]:
    return sorted(set(g.offsets) | {p for m in g.members for p in m.assignment})


def lag_rows(state: GroupsState, g: ConsumerGroup) -> list[dict[str, Any]]:
    rows = []
    owners = {p: m for m in g.members for p in m.assignment}
    for t, p in _partitions(g):
        committed = g.offsets.get((t, p))
        start, end = state.log_offsets.get((t, p), (None, None))
        lag = None if committed is None or end is None else max(end - committed, 0)
        member = owners.get((t, p))
        rows.append(
            {
                "topic": t,
                "partition": p,
                "committed": committed,
                "logStart": start,
                "end": end,
                "lag": lag,
                "member": member.member_id if member else None,
                "clientId": member.client_id if member else None,
                "host": member.host if member else None,
            }
        )
    return rows


def _totals(rows: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    lags = [r["lag"] for r in rows if r["lag"] is not None]
    return (sum(lags), max(lags)) if lags else (None, None)


def groups_view(state: GroupsState, patterns: Sequence[str] = ()) -> dict[str, Any]:
    rows = []
    for gid, whole in sorted(state.groups.items()):
        g = on_topics(whole, patterns)
        if patterns and not _partitions(g):
            continue
        total, worst = _totals(lag_rows(state, g))
        rows.append(
            {
                "group": gid,
                "state": g.state,
                "protocol": g.protocol,
                "members": len(whole.members),
                "topics": sorted({t for t, _ in _partitions(g)}),
                "totalLag": total,
                "maxLag": worst,
            }
        )
    return {"format": FORMAT, "view": "groups", "groups": rows}


def _one_group(
    view: str, state: GroupsState, group_id: str, patterns: Sequence[str], listed: Listed
) -> tuple[ConsumerGroup, dict[str, Any]]:
    """The group on the topics of ``patterns``, and the head of its ``view``."""
    g = on_topics(find_group(state, group_id, listed), patterns)
    return g, {"format": FORMAT, "view": view, "group": group_id, "state": g.state}


def members_view(
    state: GroupsState, group_id: str, patterns: Sequence[str] = (), listed: Listed = tuple
) -> dict[str, Any]:
    g, head = _one_group("members", state, group_id, patterns, listed)
    return {
        **head,
        "members": [
            {
                "member": m.member_id,
                "clientId": m.client_id,
                "host": m.host,
                "partitions": [{"topic": t, "partition": p} for t, p in m.assignment],
            }
            for m in sorted(g.members, key=lambda m: m.member_id)
            if m.assignment or not patterns
        ],
    }


def lags_view(
    state: GroupsState, group_id: str, patterns: Sequence[str] = (), listed: Listed = tuple
) -> dict[str, Any]:
    g, head = _one_group("lags", state, group_id, patterns, listed)
    rows = lag_rows(state, g)
    total, worst = _totals(rows)
    return {**head, "totalLag": total, "maxLag": worst, "partitions": rows}


def render_group_text(view: Mapping[str, Any]) -> list[str]:
    kind = view["view"]
    if kind == "groups":
        return table(
            ("group", "state", "protocol", "members", "topics", "total-lag", "max-lag"),
            (
                (
                    g["group"],
                    g["state"],
                    g["protocol"] or None,
                    g["members"],
                    g["topics"],
                    g["totalLag"],
                    g["maxLag"],
                )
                for g in view["groups"]
            ),
        )
    head = f"group {safe_text(view['group'])}: {safe_text(view['state'])}"
    if kind == "members":
        lines = [head + f", {len(view['members'])} member(s)"]
        lines += table(
            ("member", "client-id", "host", "partitions"),
            (
                (
                    m["member"],
                    m["clientId"] or None,
                    m["host"] or None,
                    ", ".join(f"{p['topic']}-{p['partition']}" for p in m["partitions"]) or None,
                )
                for m in view["members"]
            ),
        )
        return lines
    if kind == "lags":
        total = "-" if view["totalLag"] is None else view["totalLag"]
        worst = "-" if view["maxLag"] is None else view["maxLag"]
        lines = [head + f"; total lag {total}, max lag {worst}"]
        lines += table(
            ("topic", "partition", "committed", "end", "lag", "member", "client-id", "host"),
            (
                (
                    r["topic"],
                    r["partition"],
                    r["committed"],
                    r["end"],
                    r["lag"],
                    r["member"],
                    r["clientId"] or None,
                    r["host"] or None,
                )
                for r in view["partitions"]
            ),
        )
        return lines
    raise ValueError(f"unknown view {kind!r}")
