"""The key report as text (terminals) and markdown (pull-request comments). Both read the
kgitops-keys/v1 JSON, so they can never disagree with it. Bars are Unicode eighth blocks,
scaled to the busiest partition::

    | p | messages | share |                      |
    | 0 | 711      | 14.1% | ███████████████▏     |

A key is the data's, so anything (a backtick, ``|``, ``</details>``, ``@team``, HTML): in
markdown every value goes through the plan's escapers (``kgitops.plan.mdescape``: a key is a
code span nothing inside can close, shown as it is), in text control characters are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgitops.plan.mdescape import md_code, md_text, visible

_EIGHTHS = " ▏▎▍▌▋▊▉"
BAR_WIDTH = 24
MAX_BAR_ROWS = 64


def bar(value: float, peak: float, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` cells for ``value`` against ``peak``; eighths for the last cell.
    ``bar(1, 2, 4) == "██"``."""
    if peak <= 0 or value <= 0:
        return ""
    eighths = round(value / peak * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


KEY_SHOWN = 200


def _key_label(item: Mapping[str, Any]) -> str:
    """The key as text (``repr`` when not printable), or ``0x`` and its bytes in hex."""
    if "key" in item:
        text = str(item["key"])
        return repr(text) if not text.isprintable() or text == "" else text
    return "0x" + str(item["keyHex"])


def _counts(report: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    return sorted(((int(n), v) for n, v in report["partitionCounts"].items()))


def _header(report: Mapping[str, Any]) -> list[str]:
    parts = [
        f"{report['messages']:,} messages",
        f"{report['nullKeys']:,} with a null key",
        f"{report['distinctKeys']:,} distinct keys",
    ]
    return [", ".join(parts)]


def _bars(messages: Sequence[int], total: int) -> list[tuple[int, int, str, str]]:
    peak = max(messages) if messages else 0
    return [
        (p, m, _pct(m / total) if total else "0.0%", bar(m, peak)) for p, m in enumerate(messages)
    ]


def render_text(report: Mapping[str, Any]) -> str:
    """The report for a terminal."""
    out = [f"Key analysis of {visible(report.get('input', 'the sample'))}", *_header(report), ""]
    out.append(f"{'partitions':>10}  {'max/mean':>8}  {'cv':>6}  {'empty':>5}")
    for n, entry in _counts(report):
        out.append(
            f"{n:>10}  {entry['maxOverMean']:>8.3f}  {entry['coefficientOfVariation']:>6.3f}"
            f"  {entry['emptyPartitions']:>5}"
        )
    if report["moves"]:
        out.append("")
        for move in report["moves"]:
            out.append(
                f"{move['from']} -> {move['to']} partitions: {_pct(move['keyShare'])} of keys "
                f"and {_pct(move['messageShare'])} of messages change partition"
            )
    if report["hotKeys"]:
        out.append("")
        out.append("hot keys:")
        for item in report["hotKeys"]:
            where = " ".join(f"p{n}={p}" for n, p in item["partitions"].items())
            out.append(
                f"  {visible(_key_label(item), KEY_SHOWN)}  {item['messages']:,} "
                f"({_pct(item['share'])})  {where}"
            )
    for n, entry in _counts(report):
        msgs = entry["messages"]
        if len(msgs) > MAX_BAR_ROWS:
            continue
        out.append("")
        out.append(f"{n} partitions:")
        total = sum(msgs)
        for p, m, share, b in _bars(msgs, total):
            out.append(f"  {p:>4} {m:>12,} {share:>6} {b}")
        out.extend(_placement_text(entry))
    for note in report.get("notes", []):
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def _placement_text(entry: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    placement = entry.get("placement")
    if placement:
        out.append(f"  brokers ({placement['source']} assignment): leader / all replicas")
        for b in placement["brokers"]:
            rack = f" ({visible(b['rack'])})" if b.get("rack") else ""
            out.append(
                f"    broker {b['id']}{rack}: {b['leaderMessages']:,} / {b['replicaMessages']:,}"
            )
    consumers = entry.get("consumers")
    if consumers:
        for strategy in ("range", "roundrobin"):
            rows = consumers[strategy]["assignment"]
            loads = ", ".join(f"{visible(r['member'])}={r['messages']:,}" for r in rows)
            out.append(f"  consumers ({strategy}): {loads}")
    return out


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report for a pull-request comment: summary table, moves, hot keys, and one
    collapsible bar chart per partition count."""
    out = ["### Key analysis", "", *_header(report), ""]
    out.append("| partitions | max/mean | cv | empty partitions |")
    out.append("| ---: | ---: | ---: | ---: |")
    for n, entry in _counts(report):
        out.append(
            f"| {n} | {entry['maxOverMean']:.3f} | {entry['coefficientOfVariation']:.3f} "
            f"| {entry['emptyPartitions']} |"
        )
    if report["moves"]:
        out += ["", "| change | keys that move | messages that move |", "| --- | ---: | ---: |"]
        for move in report["moves"]:
            out.append(
                f"| {move['from']} → {move['to']} | **{_pct(move['keyShare'])}** "
                f"| **{_pct(move['messageShare'])}** |"
            )
        out.append("")
        out.append("A key whose partition changes loses its ordering across the change.")
    if report["hotKeys"]:
        out += ["", "| hot key | messages | share |", "| --- | ---: | ---: |"]
        for item in report["hotKeys"]:
            label = md_code(_key_label(item), KEY_SHOWN)
            out.append(f"| {label} | {item['messages']:,} | {_pct(item['share'])} |")
    for n, entry in _counts(report):
        msgs = entry["messages"]
        if len(msgs) > MAX_BAR_ROWS:
            continue
        total = sum(msgs)
        out += ["", f"<details><summary>{n} partitions: load per partition</summary>", ""]
        out += ["| p | messages | share | |", "| ---: | ---: | ---: | --- |"]
        for p, m, share, b in _bars(msgs, total):
            out.append(f"| {p} | {m:,} | {share} | `{b or ' '}` |")
        placement = entry.get("placement")
        if placement:
            out += [
                "",
                "| broker | rack | leader messages | replica messages |",
                "| ---: | --- | ---: | ---: |",
            ]
            for b in placement["brokers"]:
                out.append(
                    f"| {md_text(b['id'])} | {md_text(b.get('rack') or '')} "
                    f"| {b['leaderMessages']:,} | {b['replicaMessages']:,} |"
                )
        consumers = entry.get("consumers")
        if consumers:
            out += [
                "",
                "| consumer | range: messages | round-robin: messages |",
                "| --- | ---: | ---: |",
            ]
            ranged = consumers["range"]["assignment"]
            robin = consumers["roundrobin"]["assignment"]
            for a, b in zip(ranged, robin, strict=True):
                out.append(f"| {md_text(a['member'])} | {a['messages']:,} | {b['messages']:,} |")
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def render_load_change(report: Mapping[str, Any], before: int, after: int) -> str:
    """Markdown for a plan: the load per partition before and after a change of count, side
    by side with bars on one scale, and the share that moves. Empty when the report lacks
    either count. For the planner's markdown, under a KEY_REMAP warning."""
    counts = report.get("partitionCounts", {})
    if str(before) not in counts or str(after) not in counts:
        return ""
    old = list(counts[str(before)]["messages"])
    new = list(counts[str(after)]["messages"])
    if max(len(old), len(new)) > MAX_BAR_ROWS:
        return ""
    peak = max([*old, *new, 0])
    out = [
        f"| p | {before} partitions | | {after} partitions | |",
        "| ---: | ---: | --- | ---: | --- |",
    ]
    for p in range(max(len(old), len(new))):
        a = f"{old[p]:,} | `{bar(old[p], peak, 16) or ' '}`" if p < len(old) else " | "
        b = f"{new[p]:,} | `{bar(new[p], peak, 16) or ' '}`" if p < len(new) else " | "
        out.append(f"| {p} | {a} | {b} |")
    for move in report.get("moves", []):
        if move["from"] == before and move["to"] == after:
            out.append("")
            out.append(
                f"{_pct(move['keyShare'])} of keys and {_pct(move['messageShare'])} of messages "
                f"change partition (max/mean {counts[str(before)]['maxOverMean']:.2f} → "
                f"{counts[str(after)]['maxOverMean']:.2f})."
            )
    return "\n".join(out) + "\n"
