"""Plan renderers: text for a terminal, JSON, Kafka reassignment; markdown for a pull request
is ``markdown.py``, which shares the pieces here (``headline``, ``window_rows``, ...).

Every renderer reads the plan's JSON form (``Plan.to_json()`` or a saved plan file), never the
objects, so the formats cannot disagree about what a plan says::

    + create_topic payments.orders  12 partitions, RF 3, rack-aware, start index 2
    ~ alter_config payments.events
        ~ retention.ms: 1000 -> 2000
    - delete_topic old  12 partitions, 3.4 GiB  (apply needs --allow-delete)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from kgitops.plan.actions import kind_named, kinds, subject
from kgitops.plan.mdescape import visible
from kgitops.plan.spread import text_lines
from kgitops.units import human_bytes, human_rate, human_seconds

GITHUB_COMMENT_LIMIT = 65_536
TEXT_PARTITIONS_SHOWN = 12

_COLOURS = {"+": "32", "~": "33", "-": "31", "!": "1;33", "dim": "2", "bold": "1"}


def symbol(kind: str) -> str:
    found = kind_named(kind)
    return found.symbol if found is not None else "?"


def duration(seconds: float | None) -> str:
    return "unthrottled" if seconds is None else human_seconds(seconds)


def throttle_words(rate: int | None) -> str:
    return "no throttle" if not rate else human_rate(rate)


def headline(action: Mapping[str, Any]) -> str:
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
        sym = symbol(a["type"])
        label = paint(sym, f"{sym} {a['type']}")
        lines.append(f"{label} {visible(subject(a))}  {visible(headline(a))}")
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
        f"{throttle_words(transfer.get('throttleBytesPerSec'))} per broker, about "
        f"{duration(transfer.get('estimatedSeconds'))}"
        + window_words(transfer)
        + (
            f" ({human_bytes(transfer['crossRackBytes'])} across racks)"
            if transfer.get("crossRackBytes") is not None
            else ""
        )
    )


def window_words(transfer: Mapping[str, Any]) -> str:
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
