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

import msgspec

from kgitops.plan.access_render import markdown_section
from kgitops.plan.actions import kind_named, kinds, subject
from kgitops.plan.kinds import ACCESS_KINDS
from kgitops.plan.mdescape import fence, html_text, md_code, md_text, visible
from kgitops.plan.spread import METRICS, summary, text_lines
from kgitops.units import human_bytes, human_rate, human_seconds

GITHUB_COMMENT_LIMIT = 65_536
TEXT_PARTITIONS_SHOWN = 12

_COLOURS = {"+": "32", "~": "33", "-": "31", "!": "1;33", "dim": "2", "bold": "1"}


def _symbol(kind: str) -> str:
    found = kind_named(kind)
    return found.symbol if found is not None else "?"


def _duration(seconds: float | None) -> str:
    return "unthrottled" if seconds is None else human_seconds(seconds)


def _rate(rate: int | None) -> str:
    return "no throttle" if not rate else human_rate(rate)


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
    targets = data.get("targets")
    if targets:
        lines += [
            paint("!", "Partial plan")
            + f": only --target {', '.join(visible(t) for t in targets)}; everything else in "
            "the specs is left out (apply --plan needs --allow-targeted)",
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
        lines.append(no_changes(len(data.get("warnings", [])), "above"))
    return "\n".join(lines) + "\n"


def no_changes(warnings: int, where: str, bold: str = "") -> str:
    """The closing line of a plan with no action: "the cluster matches the specs" only when
    nothing was found either; a warning (UNMANAGED_ACLS: ACLs not in git, say) means it does
    not, and no apply resolves it. ``bold``: the markdown for the first words."""
    if not warnings:
        return f"{bold}No changes.{bold} The cluster matches the specs."
    them, it = ("the warning", "it") if warnings == 1 else (f"the {warnings} warnings", "them")
    return (
        f"{bold}No changes to apply{bold}, but see {them} {where}: applying does not resolve {it}."
    )


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
    """`` in 3 window(s) of up to 4 moves in flight, each submitted as earlier moves finish``
    when the plan carries apply's schedule: apply submits a window at the poll that sees moves
    finish, so a window may start before the one above it ends (``window_rows``)."""
    count, most = transfer.get("windowCount"), transfer.get("maxConcurrentMoves")
    if not count or not most:
        return ""
    return (
        f" in {count} window(s) of up to {most} moves in flight,"
        " each submitted as earlier moves finish"
    )


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
            + f", throttled at {_rate(rate)} per broker: about "
            f"{_duration(transfer.get('estimatedSeconds'))}{_window_words(transfer)}.",
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
                f"| {_duration(secs)} |"
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
        marks = {_symbol(a["type"]) for a in group}
        sym = "-" if "-" in marks else "+" if marks == {"+"} else "~"
        said = " · ".join(
            html_text(a["type"]) + (f": {html_text(h)}" if (h := _headline(a)) else "")
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
            items = ",\n".join(f"  {_dumps_item(v)}" for v in value)
            line = f"{head}[\n{items}\n ]"
        else:
            line = head + _dumps(value)
        if shared is not None:
            shared[key] = (value, line)
        lines.append(line)
    return "{\n" + ",\n".join(lines) + "\n}\n"


#: json.dumps(value, separators=(", ", ": ")) without the check for circular references
#: (plan data is a tree; the check costs a dictionary entry per container)
_dumps = json.JSONEncoder(separators=(", ", ": "), check_circular=False).encode

_SLOT = "\x00kgitops:assignment\x00"  # no spec or state text holds NUL around this
_SLOT_TEXT = _dumps(_SLOT)
_NUMERIC = b'0123456789-[]{}", :'


def _dumps_item(item: object) -> str:
    """``_dumps(item)``, the ``assignment`` of an action encoded by msgspec (ten times faster
    than the standard encoder on a million replica lists), when that gives the same text:
    its output holds only digits, brackets, quotes, commas, colons and spaces (so no float,
    no escape, nothing the two encoders write differently), and the slot it goes into
    appears once. Anything else is encoded by ``_dumps`` as a whole."""
    if type(item) is not dict or type(item.get("assignment")) is not dict:
        return _dumps(item)
    try:
        fast = msgspec.json.format(msgspec.json.encode(item["assignment"]), indent=0)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return _dumps(item)
    if fast.translate(None, _NUMERIC):
        return _dumps(item)
    line = _dumps({**item, "assignment": _SLOT})
    if line.count(_SLOT_TEXT) != 1:
        return _dumps(item)
    return line.replace(_SLOT_TEXT, fast.decode("ascii"))


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
