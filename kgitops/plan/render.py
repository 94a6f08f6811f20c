"""Plan renderers: text for a terminal, markdown for a pull request, JSON, Kafka reassignment.

Every renderer reads the plan's JSON form (``Plan.to_json()`` or a saved plan file), never the
objects, so the formats cannot disagree about what a plan says::

    + create_topic payments.orders  12 partitions, RF 3, rack-aware, start index 2
    ~ alter_config payments.events
        ~ retention.ms: 1000 -> 2000
    - delete_topic old  12 partitions, 3.4 GiB  (apply needs --allow-delete)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kgitops.plan.access_actions import ACCESS_KINDS
from kgitops.plan.access_render import markdown_section
from kgitops.plan.actions import kind_named, kinds, subject
from kgitops.plan.mdescape import fence, html_text, md_code, md_text, visible
from kgitops.plan.spread import METRICS, summary, text_lines
from kgitops.units import human_bytes, human_seconds

GITHUB_COMMENT_LIMIT = 65_536
TEXT_PARTITIONS_SHOWN = 12

_COLOURS = {"+": "32", "~": "33", "-": "31", "!": "1;33", "dim": "2", "bold": "1"}


def _symbol(kind: str) -> str:
    found = kind_named(kind)
    return found.symbol if found is not None else "?"


def _duration(seconds: float | None) -> str:
    return "unthrottled" if seconds is None else human_seconds(seconds)


def _rate(rate: int | None) -> str:
    return "no throttle" if not rate else f"{human_bytes(rate)}/s"


def _headline(action: Mapping[str, Any]) -> str:
    """One line after ``<symbol> <type> <topic>``."""
    kind = kind_named(action["type"])
    return kind.headline(action) if kind is not None else ""


def _details(action: Mapping[str, Any], limit: int | None) -> list[str]:
    """The lines under an action: config changes, assignments, moves with reasons."""
    kind = kind_named(action["type"])
    if kind is None:
        return []
    changes, rows = kind.details(action)
    if limit is not None and len(rows) > limit:
        rows = [*rows[:limit], f"... {len(rows) - limit} more partition(s) (see --format json)"]
    return [visible(line) for line in changes + rows]


# --------------------------------------------------------------------------- text


def render_text(data: Mapping[str, Any], *, colour: bool = False, limit: int | None = None) -> str:
    """The terminal form: ``+ ~ -`` per action, indented details, warnings, a summary line."""

    def paint(code: str, text: str) -> str:
        return f"\x1b[{_COLOURS[code]}m{text}\x1b[0m" if colour else text

    shown = TEXT_PARTITIONS_SHOWN if limit is None else limit
    lines = [
        paint(
            "bold",
            f"kgitops plan for cluster {visible(data.get('cluster'))} "
            f"(state {str(data.get('stateFingerprint', ''))[:19]})",
        ),
        "",
    ]
    findings = data.get("findings") or []
    for f in findings:
        lines.append(paint("-", f"!! {visible(f['code'])}") + f" {visible(f['message'])}")
    if findings:
        lines += [
            "   cluster.yaml changes how kgitops connects: review it as closely as the actions",
            "",
        ]
    for w in data.get("warnings", []):
        who = f"{visible(w['topic'])}: " if w.get("topic") else ""
        lines.append(paint("!", f"! {visible(w['code'])}") + f" {who}{visible(w['message'])}")
    if data.get("warnings"):
        lines.append("")
    actions = data.get("actions", [])
    for a in actions:
        sym = _symbol(a["type"])
        label = paint(sym, f"{sym} {a['type']}")
        lines.append(f"{label} {visible(subject(a))}  {visible(_headline(a))}")
        lines += [paint("dim", f"    {d}") for d in _details(a, shown)]
    transfer = data.get("transfer")
    if transfer and transfer.get("totalBytes"):
        lines += ["", _transfer_line(transfer)]
        lines += [
            paint("dim", f"    window {w}  at {start}: {n} move(s), {size}, {lasts}")
            if start
            else paint("dim", f"    {w} window(s)")
            for w, start, n, size, lasts in window_rows(transfer)
        ]
    spread = data.get("spread")
    if spread:
        lines += ["", *(visible(line) for line in text_lines(spread))]
    if actions:
        lines += ["", "Plan: " + _summary_words(data.get("summary", {})) + "."]
    elif findings:
        lines.append(f"No topic changes, but {len(findings)} connection change(s) (above).")
    else:
        lines.append("No changes. The cluster matches the specs.")
    return "\n".join(lines) + "\n"


def _summary_words(summary: Mapping[str, int]) -> str:
    return ", ".join(f"{summary[k.kind]} {k.verb}" for k in kinds() if summary.get(k.kind))


def _transfer_line(transfer: Mapping[str, Any]) -> str:
    return (
        f"Data to copy: {human_bytes(transfer['totalBytes'])} at "
        f"{_rate(transfer.get('throttleBytesPerSec'))} per broker, about "
        f"{_duration(transfer.get('estimatedSeconds'))}"
        + _window_words(transfer)
        + (
            f" ({human_bytes(transfer['crossRackBytes'])} across racks)"
            if transfer.get("crossRackBytes") is not None
            else ""
        )
    )


def _window_words(transfer: Mapping[str, Any]) -> str:
    """`` in 3 window(s) of up to 4 moves`` when the plan carries apply's schedule."""
    count, most = transfer.get("windowCount"), transfer.get("maxConcurrentMoves")
    if not count or not most:
        return ""
    return f" in {count} window(s) of up to {most} moves"


WINDOW_ROWS = 12


def window_rows(transfer: Mapping[str, Any], rows: int = WINDOW_ROWS) -> list[tuple[str, ...]]:
    """(window, start, moves, bytes, duration) per window of apply's schedule, as text."""
    out: list[tuple[str, ...]] = []
    windows = transfer.get("windows") or []
    for i, w in enumerate(windows[:rows], start=1):
        out.append(
            (
                str(i),
                human_seconds(w["startSeconds"]),
                str(w["moves"]),
                human_bytes(w["bytes"]),
                human_seconds(w["seconds"]),
            )
        )
    left = int(transfer.get("windowCount") or len(windows)) - len(out)
    if left > 0:
        out.append((f"... {left} more", "", "", "", ""))
    return out


# ----------------------------------------------------------------------- markdown


def render_markdown(data: Mapping[str, Any], *, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """A pull-request comment: warnings first, the summary table, data to move per broker,
    then one ``<details>`` block per topic. Stays under ``limit`` characters (GitHub's
    comment limit) by leaving out whole detail blocks, and says what it left out."""
    head = [f"### kgitops plan: {md_code(data.get('cluster'))}", ""]
    actions = data.get("actions", [])
    findings = data.get("findings") or []
    head += _md_findings(findings)
    if not actions and not findings:
        head += ["**No changes.** The cluster matches the specs.", ""]
    elif not actions:
        head += ["No topic changes; the connection settings change (above).", ""]
    deleted = [a["topic"] for a in actions if a["type"] == "delete_topic"]
    if deleted:
        names = ", ".join(md_code(t) for t in deleted[:20])
        more = f" and {len(deleted) - 20} more" if len(deleted) > 20 else ""
        head += [
            "> [!CAUTION]",
            f"> This plan **deletes {len(deleted)} topic(s)** and their data: {names}{more}. "
            "`kgitops apply` refuses it without `--allow-delete`.",
            "",
        ]
    head += _md_warnings(data.get("warnings", []))
    if actions:
        head += ["| | action | topics |", "|---|---|---:|"]
        summary = data.get("summary", {})
        for k in kinds():
            if summary.get(k.kind):
                head.append(f"| `{k.symbol}` | {k.kind} | {summary[k.kind]} |")
        head.append("")
        head += _md_transfer(data.get("transfer"))
        head += _md_spread(data.get("spread"))
    head += _md_key_loads(data.get("warnings", []))
    head += markdown_section(actions)
    footer = [
        "",
        f"<sub>state {md_code(str(data.get('stateFingerprint', ''))[:19])} · apply refuses this "
        "plan if the cluster changes first</sub>",
    ]
    text = "\n".join(head)
    shown = [a for a in actions if a["type"] not in ACCESS_KINDS]
    tail = "\n".join(footer)
    budget = limit - len(text) - len(tail) - 400
    kept: list[str] = []
    used = 0
    for block in _md_blocks(shown):  # lazily: a block past the budget is never rendered
        if used + len(block) + 1 > budget:
            break
        kept.append(block)
        used += len(block) + 1
    parts = [text, *kept]
    if len(kept) < len(shown):
        left = len(shown) - len(kept)
        parts.append(
            f"\n**{left} of {len(shown)} action(s) left out** to stay under GitHub's "
            f"{limit:,}-character comment limit; run `kgitops plan` or read the JSON plan "
            "for the rest."
        )
    out = "\n".join(parts) + "\n" + tail + "\n"
    if len(out) > limit:  # only when the head alone is too long
        cut = out[: limit - 200]
        out = cut[: cut.rfind("\n")] + "\n\n**(truncated to GitHub's comment limit)**\n"
    return out


def _md_findings(findings: Sequence[Mapping[str, Any]], shown: int = 40) -> list[str]:
    """CONNECTION_CHANGED first, in a caution block: where kgitops connects at merge."""
    if not findings:
        return []
    out = [
        "> [!CAUTION]",
        "> **CONNECTION_CHANGED**: this change makes kgitops connect differently (other hosts, "
        "security, credential variables or TLS files). The check fails unless it is "
        "explicitly allowed.",
        ">",
    ]
    for f in findings[:shown]:
        data = f.get("data") or {}
        if "field" in data and data.get("field") != "cluster.yaml":
            was, now = data.get("from"), data.get("to")
            out.append(
                f"> - {md_code(data['field'])}: "
                f"{'(unset)' if was is None else md_code(was)} → "
                f"{'(unset)' if now is None else md_code(now)}"
            )
        else:
            out.append(f"> - {md_text(f.get('message', ''))}")
    if len(findings) > shown:
        out.append(f"> - ... and {len(findings) - shown} more")
    out.append("")
    return out


def _md_warnings(warnings: Sequence[Mapping[str, Any]], per_code: int = 10) -> list[str]:
    if not warnings:
        return []
    out = ["> [!WARNING]"]
    by_code: dict[str, list[Mapping[str, Any]]] = {}
    for w in warnings:
        by_code.setdefault(w["code"], []).append(w)
    for code in sorted(by_code):
        items = by_code[code]
        for w in items[:per_code]:
            who = f" {md_code(w['topic'])}" if w.get("topic") else ""
            out.append(f"> **{md_text(code)}**{who}: {md_text(w['message'])}  ")
        if len(items) > per_code:
            out.append(f"> **{md_text(code)}**: ... and {len(items) - per_code} more topic(s)  ")
    out.append("")
    return out


MERMAID_BROKERS = 60


def _md_spread(spread: Mapping[str, Any] | None, rows: int = 100) -> list[str]:
    """Per broker bytes, replicas and leaders before -> after: a table, and a mermaid bar
    chart per figure (bars after, a line before) that GitHub draws. Every value is a number
    the plan computed; labels are broker ids, kept to digits."""
    brokers = (spread or {}).get("brokers") or {}
    if not brokers:
        return []
    was, now = summary(spread or {}, 0), summary(spread or {}, 1)
    out = [
        "**Per broker, before → after**: "
        + "; ".join(f"{m} {md_text(was[m])} → {md_text(now[m])}" for m in METRICS if m in now),
        "",
        "| broker | bytes | replicas | leaders |",
        "|---:|---:|---:|---:|",
    ]
    items = list(brokers.items())
    for b, v in items[:rows]:
        cells = []
        for m in METRICS:
            shown = human_bytes if m == "bytes" else str
            x, y = (shown(n) for n in _pair(v, m))
            cells.append(md_text(x if x == y else f"{x} → {y}"))
        out.append(f"| {md_text(b)} | {' | '.join(cells)} |")
    if len(items) > rows:
        out.append(f"| ... {len(items) - rows} more broker(s) | | | |")
    out.append("")
    if len(items) <= MERMAID_BROKERS:
        labels = ", ".join(f'"{_digits(b)}"' for b, _ in items)
        for m in METRICS:
            scale, unit = (1 << 30, "GiB") if m == "bytes" else (1, m)
            before = ", ".join(_number(_pair(v, m)[0] / scale) for _, v in items)
            after = ", ".join(_number(_pair(v, m)[1] / scale) for _, v in items)
            out += [
                "```mermaid",
                "xychart-beta",
                f'    title "{m.capitalize()} per broker: bars after, line before"',
                f"    x-axis [{labels}]",
                f'    y-axis "{unit}"',
                f"    bar [{after}]",
                f"    line [{before}]",
                "```",
                "",
            ]
    return out


def _pair(figures: object, metric: str) -> tuple[int, int]:
    """A [before, after] pair from a plan file as two integers (0 for anything else: a
    hand-edited plan must not break or smuggle anything into the comment)."""
    value = figures.get(metric) if isinstance(figures, Mapping) else None
    if not isinstance(value, list) or len(value) != 2:
        return 0, 0
    a, b = value
    return (
        a if isinstance(a, int) and not isinstance(a, bool) else 0,
        b if isinstance(b, int) and not isinstance(b, bool) else 0,
    )


def _digits(text: object) -> str:
    """A broker id for a mermaid label: digits only (ids are integers; anything else is
    dropped rather than allowed to end the label or the chart)."""
    return "".join(c for c in str(text) if c.isdigit()) or "?"


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value == value else "0"


def _md_transfer(transfer: Mapping[str, Any] | None, rows: int = 50) -> list[str]:
    if not transfer or not transfer.get("totalBytes"):
        return []
    rate = transfer.get("throttleBytesPerSec")
    out = [
        f"**Data to move:** {human_bytes(transfer['totalBytes'])}"
        + (
            f" of {human_bytes(transfer['clusterBytes'])} stored"
            if transfer.get("clusterBytes")
            else ""
        )
        + f", throttled at {_rate(rate)} per broker: about "
        f"{_duration(transfer.get('estimatedSeconds'))}{_window_words(transfer)}.",
        "",
    ]
    windows = window_rows(transfer)
    if windows:
        out += [
            "<details><summary>Apply's windows (the ETA is their schedule)</summary>",
            "",
            "| window | starts at | moves | bytes | lasts |",
            "|---:|---:|---:|---:|---:|",
            *(f"| {' | '.join(row)} |" for row in windows),
            "</details>",
            "",
        ]
    out += [
        "| broker | in | out | time at throttle |",
        "|---:|---:|---:|---:|",
    ]
    brokers = transfer.get("brokers", {})
    ordered = sorted(brokers.items(), key=lambda kv: -max(kv[1]["in"], kv[1]["out"]))
    for b, v in ordered[:rows]:
        secs = max(v["in"], v["out"]) / rate if rate else None
        out.append(
            f"| {md_text(b)} | {human_bytes(v['in'])} | {human_bytes(v['out'])} "
            f"| {_duration(secs)} |"
        )
    if len(ordered) > rows:
        out.append(f"| ... {len(ordered) - rows} more broker(s) | | | |")
    out.append("")
    racks = transfer.get("racks") or {}
    if racks:
        cross = transfer.get("crossRackBytes")
        out += [
            f"Per rack ({human_bytes(cross)} of it crosses racks):"
            if cross is not None
            else "Per rack:",
            "",
            "| rack | in | out |",
            "|---|---:|---:|",
        ]
        for r, v in sorted(racks.items()):
            out.append(f"| {md_text(r)} | {human_bytes(v['in'])} | {human_bytes(v['out'])} |")
        out.append("")
    return out


KEY_LOAD_ROWS = 64


def _md_key_loads(warnings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per-partition load before and after, for KEY_REMAP warnings that carry the measured
    figures of the key analysis (``loadBefore`` / ``loadAfter``: messages per partition)."""
    out: list[str] = []
    for w in warnings:
        data = w.get("data") or {}
        before, after = data.get("loadBefore"), data.get("loadAfter")
        if w.get("code") != "KEY_REMAP" or not before or not after:
            continue
        rows = max(len(before), len(after))
        if rows > KEY_LOAD_ROWS:
            continue
        peak = max([*before, *after, 1])
        out += [
            f"<details><summary>Key load per partition of <b>{html_text(w['topic'])}</b>: "
            f"{len(before)} → {len(after)} partitions</summary>",
            "",
            f"| p | {len(before)} partitions | | {len(after)} partitions | |",
            "| ---: | ---: | --- | ---: | --- |",
        ]
        for p in range(rows):
            a = f"{before[p]:,} | `{_bar(before[p], peak)}`" if p < len(before) else " | "
            b = f"{after[p]:,} | `{_bar(after[p], peak)}`" if p < len(after) else " | "
            out.append(f"| {p} | {a} | {b} |")
        if "keyShare" in data and "messageShare" in data:
            out += [
                "",
                f"{float(data['keyShare']):.1%} of keys and {float(data['messageShare']):.1%} "
                "of messages change partition.",
            ]
        out += ["</details>", ""]
    return out


def _bar(value: int, peak: int, width: int = 16) -> str:
    """A bar of ``width`` characters at most, in eighths, on the scale of ``peak``."""
    eighths = round(value * width * 8 / peak) if peak else 0
    full, rest = divmod(eighths, 8)
    return "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest]) or "·"


def _md_blocks(actions: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """One ``<details>`` block per action (access actions have their own section)."""
    for a in actions:
        if a["type"] in ACCESS_KINDS:  # shown in the "Access changes" section
            continue
        sym = _symbol(a["type"])
        body = "\n".join(_details(a, None)) or "(nothing more)"
        yield (
            f"<details><summary><code>{sym} {html_text(a['type'])}</code> "
            f"<b>{html_text(subject(a))}</b> {html_text(_headline(a))}</summary>\n\n"
            f"{fence(body, 'diff')}\n</details>"
        )


# ------------------------------------------------------------------- json, kafka


def render_json(
    data: Mapping[str, Any], shared: dict[str, tuple[object, str]] | None = None
) -> str:
    """The plan JSON, one top-level field per line and one action or warning per line: easy to
    read and diff, and written by the C encoder (``indent`` would fall back to the pure-Python
    one, six times slower on a plan of a million partitions).

    ``shared``: the fields already written by an earlier call, reused where a field is the
    same object (``plan --out`` writes the plan twice, to the file and to stdout)."""
    lines = []
    for key, value in data.items():
        done = shared.get(key) if shared is not None else None
        if done is not None and done[0] is value:
            lines.append(done[1])
            continue
        head = f" {json.dumps(key)}: "
        if isinstance(value, list) and value:
            items = ",\n".join(f"  {json.dumps(v, separators=(', ', ': '))}" for v in value)
            line = f"{head}[\n{items}\n ]"
        else:
            line = head + json.dumps(value, separators=(", ", ": "))
        if shared is not None:
            shared[key] = (value, line)
        lines.append(line)
    return "{\n" + ",\n".join(lines) + "\n}\n"


def reassignment_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's moves as ``kafka-reassign-partitions.sh --execute`` reads them."""
    partitions = []
    for a in data.get("actions", []):
        if a["type"] != "reassign":
            continue
        for p, m in sorted(a["moves"].items(), key=lambda kv: int(kv[0])):
            partitions.append(
                {
                    "topic": a["topic"],
                    "partition": int(p),
                    "replicas": list(m["to"]),
                    "log_dirs": ["any"] * len(m["to"]),
                }
            )
    return {"version": 1, "partitions": partitions}


def render_reassignment(data: Mapping[str, Any]) -> str:
    return json.dumps(reassignment_json(data), indent=2) + "\n"
