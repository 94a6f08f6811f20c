"""The plan as markdown for a pull request comment, within GitHub's comment limit.

Reads the plan's JSON form, as every renderer does (``text.py``: text, JSON, Kafka
reassignment JSON; the shared pieces, such as an action's headline, are there): a summary
table, findings, deletions, warnings, the transfer and spread details, then one block per
topic until the budget runs out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kgitops.plan.actions import kind_named, kinds, subject
from kgitops.plan.kinds import ACCESS_KINDS
from kgitops.plan.mdescape import fence, html_text, md_code, md_text, visible
from kgitops.plan.spread import METRICS, summary
from kgitops.render.access import markdown_section
from kgitops.render.text import (
    GITHUB_COMMENT_LIMIT,
    duration,
    headline,
    no_changes,
    symbol,
    throttle_words,
    window_rows,
    window_words,
)
from kgitops.units import human_bytes


def render_markdown(data: Mapping[str, Any], *, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """A pull-request comment a reviewer reads top to bottom:

    1. what needs care: connection findings, deletions, warnings (each message once);
    2. a summary that fits one screen: a count per kind of change by what it counts (topics,
       ACLs, SCRAM users, quotas, brokers), and the data to move with the time it takes;
    3. ``#### Topic changes``: one collapsed ``<details>`` per topic, its summary line naming
       every change to it, its body a ``diff`` fence GitHub colours (``-`` before, ``+``
       after, ``@@`` a reason said once);
    4. ``#### Access changes``: the ACL table (five columns), SCRAM users and quotas;
    5. ``#### Details``, each collapsed: data to move per broker and rack, apply's windows,
       per broker before → after (a bar for each), measured key loads.

    Stays under ``limit`` characters (GitHub's comment limit) by leaving out whole topic
    blocks, and says how many it left out."""
    head = [f"### kgitops plan: {md_code(data.get('cluster'))}", ""]
    targets = data.get("targets")
    if targets:
        head += [
            "> [!IMPORTANT]",
            f"> **Partial plan**: only `--target` {', '.join(md_code(t) for t in targets)}; "
            "everything else in the specs is left out. `kgitops apply --plan` refuses it "
            "without `--allow-targeted`.",
            "",
        ]
    actions = data.get("actions", [])
    findings = data.get("findings") or []
    warnings = data.get("warnings", [])
    head += _md_findings(findings)
    head += _md_deletions(actions)
    head += _md_warnings(warnings)
    if not actions and not findings:
        head += [no_changes(len(data.get("warnings", [])), "above", "**"), ""]
    elif not actions:
        head += ["No topic changes; the connection settings change (above).", ""]
    topics = _by_topic(actions)
    if actions:
        head += _md_summary(actions, data.get("transfer"))
    if topics:
        head += ["#### Topic changes", ""]
    after = markdown_section(actions)
    details = [
        *_md_transfer_details(data.get("transfer")),
        *_md_spread(data.get("spread")),
        *_md_key_loads(warnings),
    ]
    if details:
        after += ["#### Details", "", *details]
    after += [
        f"<sub>state {md_code(str(data.get('stateFingerprint', ''))[:19])} · apply refuses this "
        "plan if the cluster changes first</sub>",
    ]
    text = "\n".join(head)
    tail = "\n".join(after)
    budget = limit - len(text) - len(tail) - 400
    kept: list[str] = []
    used = 0
    for block in _md_blocks(topics):  # lazily: a block past the budget is never rendered
        if used + len(block) + 1 > budget:
            break
        kept.append(block)
        used += len(block) + 1
    parts = [text, *kept]
    if len(kept) < len(topics):
        left = len(topics) - len(kept)
        parts.append(
            f"\n**{left} of {len(topics)} topic(s) left out** to stay under GitHub's "
            f"{limit:,}-character comment limit; run `kgitops plan` or read the JSON plan "
            "for the rest."
        )
    out = "\n".join(parts).rstrip("\n") + "\n\n" + tail + "\n"
    if len(out) > limit:  # only when the head alone is too long
        cut = out[: limit - 200]
        out = cut[: cut.rfind("\n")] + "\n\n**(truncated to GitHub's comment limit)**\n"
    return out


def _by_topic(actions: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The topic actions (access ones have their own section) grouped by subject, in the
    order of each subject's first action (apply's order)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for a in actions:
        if a["type"] not in ACCESS_KINDS:
            groups.setdefault(subject(a), []).append(a)
    return list(groups.values())


def _md_deletions(actions: Sequence[Mapping[str, Any]], shown: int = 20) -> list[str]:
    deleted = [a["topic"] for a in actions if a["type"] == "delete_topic"]
    if not deleted:
        return []
    names = ", ".join(md_code(t) for t in deleted[:shown])
    more = f" and {len(deleted) - shown} more" if len(deleted) > shown else ""
    return [
        "> [!CAUTION]",
        f"> This plan **deletes {len(deleted)} topic(s)** and their data: {names}{more}. "
        "`kgitops apply` refuses it without `--allow-delete`.",
        "",
    ]


def _md_summary(
    actions: Sequence[Mapping[str, Any]], transfer: Mapping[str, Any] | None
) -> list[str]:
    """A row per kind of action with what it counts (``7 ACLs``, ``2 SCRAM users``, ``4
    topics``), then the data to move and the time it takes."""
    counts: dict[str, dict[tuple[str, str], int]] = {}
    for a in actions:
        kind = kind_named(a["type"])
        if kind is not None:
            unit = kind.counted(a)
            per = counts.setdefault(kind.kind, {})
            per[unit] = per.get(unit, 0) + 1
    out = ["| | change | count |", "|---|---|---:|"]
    for k in kinds():
        if k.kind in counts:
            cell = ", ".join(
                f"{n} {one if n == 1 else many}" for (one, many), n in counts[k.kind].items()
            )
            out.append(f"| `{k.symbol}` | {k.kind} | {cell} |")
    out.append("")
    if transfer and transfer.get("totalBytes"):
        rate = transfer.get("throttleBytesPerSec")
        stored = transfer.get("clusterBytes")
        cross = transfer.get("crossRackBytes")
        out += [
            f"**Data to move:** {human_bytes(transfer['totalBytes'])}"
            + (f" of {human_bytes(stored)} stored" if stored else "")
            + (f" ({human_bytes(cross)} across racks)" if cross else "")
            + f", throttled at {throttle_words(rate)} per broker: about "
            f"{duration(transfer.get('estimatedSeconds'))}{window_words(transfer)}.",
            "",
        ]
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
    """One line per code and message: the topics a message applies to are listed on it,
    so a message repeated for twenty topics is read once."""
    if not warnings:
        return []
    out = ["> [!WARNING]"]
    by_code: dict[str, dict[str, list[str]]] = {}
    for w in warnings:
        topics = by_code.setdefault(w["code"], {}).setdefault(w["message"], [])
        if w.get("topic"):
            topics.append(w["topic"])
    for code in sorted(by_code):
        messages = list(by_code[code].items())
        for message, topics in messages[:per_code]:
            who = ", ".join(md_code(t) for t in topics[:per_code])
            if len(topics) > per_code:
                who += f" and {len(topics) - per_code} more"
            out.append(f"> **{md_text(code)}**{' ' + who if who else ''}: {md_text(message)}  ")
        if len(messages) > per_code:
            out.append(f"> **{md_text(code)}**: ... and {len(messages) - per_code} more  ")
    out.append("")
    return out


SPREAD_BAR = 12
"""Characters of the widest before/after bar in the per-broker table (in eighths)."""


def _md_spread(spread: Mapping[str, Any] | None, rows: int = 100) -> list[str]:
    """Per broker bytes, replicas and preferred leaders before → after, collapsed: one table,
    with a bar before and a bar after for the bytes (the replicas when no size is known) on
    one scale, so a broker that fills or empties shows at a glance. Every value is a number
    the plan computed; anything else in a hand-edited plan file counts as 0."""
    brokers = (spread or {}).get("brokers") or {}
    if not brokers:
        return []
    items = list(brokers.items())
    barred = "bytes" if any(any(_pair(v, "bytes")) for _, v in items) else "replicas"
    peak = max([1, *(n for _, v in items for n in _pair(v, barred))])
    was, now = summary(spread or {}, 0), summary(spread or {}, 1)
    out = [
        f"<details><summary>Per broker before → after: {barred} (with bars), replicas, "
        "preferred leaders</summary>",
        "",
        "| broker | bytes | before | after | replicas | preferred leaders |",
        "|---:|---:|---|---|---:|---:|",
    ]
    for b, v in items[:rows]:
        cells = []
        for m in METRICS:
            shown = human_bytes if m == "bytes" else str
            x, y = (shown(n) for n in _pair(v, m))
            cells.append(md_text(x if x == y else f"{x} → {y}"))
        before, after = (f"`{_bar(n, peak, SPREAD_BAR)}`" for n in _pair(v, barred))
        out.append(f"| {md_text(b)} | {cells[0]} | {before} | {after} | {cells[1]} | {cells[2]} |")
    if len(items) > rows:
        out.append(f"| ... {len(items) - rows} more broker(s) | | | | | |")
    out += [
        "",
        "Range over brokers, before → after: "
        + "; ".join(
            f"{'preferred leaders' if m == 'leaders' else m} {md_text(was[m])} → {md_text(now[m])}"
            for m in METRICS
            if m in now
        ),
        "</details>",
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
        a if isinstance(a, int) and not isinstance(a, bool) and a >= 0 else 0,
        b if isinstance(b, int) and not isinstance(b, bool) and b >= 0 else 0,
    )


def _md_transfer_details(transfer: Mapping[str, Any] | None, rows: int = 50) -> list[str]:
    """Where the data to move goes, collapsed: per broker in, out and the time at the
    throttle; per rack; apply's windows (the summary says the total and the ETA)."""
    if not transfer or not transfer.get("totalBytes"):
        return []
    rate = transfer.get("throttleBytesPerSec")
    brokers = transfer.get("brokers") or {}
    ordered = sorted(brokers.items(), key=lambda kv: -max(kv[1]["in"], kv[1]["out"]))
    racks = transfer.get("racks") or {}
    out: list[str] = []
    if ordered or racks:
        out += [
            "<details><summary>Data to move per broker"
            + (" and per rack" if racks else "")
            + "</summary>",
            "",
        ]
    if ordered:
        out += ["| broker | in | out | time at throttle |", "|---:|---:|---:|---:|"]
        for b, v in ordered[:rows]:
            secs = max(v["in"], v["out"]) / rate if rate else None
            out.append(
                f"| {md_text(b)} | {human_bytes(v['in'])} | {human_bytes(v['out'])} "
                f"| {duration(secs)} |"
            )
        if len(ordered) > rows:
            out.append(f"| ... {len(ordered) - rows} more broker(s) | | | |")
        out.append("")
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
    if out:
        out += ["</details>", ""]
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


def _md_blocks(topics: Sequence[Sequence[Mapping[str, Any]]]) -> Iterator[str]:
    """One ``<details>`` block per topic: the summary names each change (``~ shop.orders
    alter_config: 1 set, 0 removed · reassign: 6 partition(s), 14.0 GiB to copy``), the body
    is their ``diff``; a topic whose changes have no lines (a deletion) is one line."""
    for group in topics:
        marks = {symbol(a["type"]) for a in group}
        sym = "-" if "-" in marks else "+" if marks == {"+"} else "~"
        said = " · ".join(
            html_text(a["type"]) + (f": {html_text(h)}" if (h := headline(a)) else "")
            for a in group
        )
        line = f"<code>{sym}</code> <b>{html_text(subject(group[0]))}</b> {said}"
        body: list[str] = []
        for a in group:
            kind = kind_named(a["type"])
            lines = [visible(d) for d in (kind.diff(a) if kind is not None else [])]
            if lines and len(group) > 1 and not lines[0].startswith("@@"):
                lines.insert(0, f"@@ {visible(a['type'])} @@")
            body += lines
        if not body:
            yield f"<p>{line}</p>"
            continue
        yield (
            f"<details><summary>{line}</summary>\n\n{fence(chr(10).join(body), 'diff')}\n</details>"
        )


# ------------------------------------------------------------------- json, kafka
