"""Messages read by ``kgitops tail``: the value an adapter returns, and how it is printed.
Pure.

A key or value that is UTF-8 text is shown as text (escaped by ``safe_text``: control
characters, bidi overrides and backslashes cannot act on the terminal); anything else is
binary, shown as ``0x`` + hex; a null key or value is ``null``. Text output cuts long keys and
values (``--width``); ``--format json`` prints one object per line, complete, with each key,
value and header value as ``{"text": ...}`` or ``{"base64": ...}`` so a pipe gets the exact
bytes back::

    >>> shown(b"\\xff\\x00", 40)
    '0xff00'
    >>> shown("caf\\u00e9\\n".encode(), 40)
    '"café\\\\n"'
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from kgitops.records import Message
from kgitops.safetext import safe_cut

FORMAT = "kgitops-tail/v1"


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def shown(data: bytes | None, width: int) -> str:
    """A key or value in one safe cell: ``null``, ``"text"`` or ``0x…`` hex, cut to
    ``width`` characters (``...`` marks a cut)."""
    if data is None:
        return "null"
    text = _text(data)
    if text is not None:  # only the characters that can show are escaped (a 10 MB value)
        inner, cut = safe_cut(text[: width + 1], max(width - 2, 0))
        if cut or len(text) > width + 1:
            inner, cut = safe_cut(text[:width], max(width - 5, 0))
            cut = True
        return f'"{inner}"' + ("..." if cut else "")
    hexed = "0x" + data[: width // 2 + 1].hex()
    return hexed if len(hexed) <= width else hexed[: max(width - 3, 0)] + "..."


def _encoded(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return None
    text = _text(data)
    if text is not None:
        return {"text": text}
    return {"base64": base64.b64encode(data).decode("ascii")}


def _when(ms: int | None) -> str | None:
    if ms is None:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return None


def message_json(m: Message) -> dict[str, Any]:
    """One line of ``tail --format json``."""
    return {
        "format": FORMAT,
        "topic": m.topic,
        "partition": m.partition,
        "offset": m.offset,
        "timestamp": _when(m.timestamp_ms),
        "timestampMs": m.timestamp_ms,
        "timestampType": m.timestamp_type,
        "size": m.size,
        "key": _encoded(m.key),
        "value": _encoded(m.value),
        "headers": [{"key": k, "value": _encoded(v)} for k, v in m.headers],
    }


HEADER = ("partition", "offset", "timestamp", "size", "key", "value")
_NUMBERS = (True, True, False, True, False, False)  # right-aligned


def _cells(m: Message, width: int) -> tuple[str, ...]:
    return (
        str(m.partition),
        str(m.offset),
        (_when(m.timestamp_ms) or "-").replace("+00:00", "Z"),  # digits only
        str(m.size),
        shown(m.key, min(width, 40)),
        shown(m.value, width),
    )


def message_lines(messages: Sequence[Message], width: int) -> list[str]:
    """The text of ``tail``: one aligned row per message."""
    from kgitops.console.views import table

    return table(HEADER, (_cells(m, width) for m in messages), escaped=True)


class FollowedRows:
    """The text of ``tail --follow``: rows printed as messages come, under one header printed
    with the first of them; each column as wide as its widest cell so far (the backlog is
    aligned as one table; a wider cell later widens the rows after it)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.widths = [len(h) for h in HEADER]
        self.started = False

    def lines(self, messages: Sequence[Message]) -> list[str]:
        rows = [_cells(m, self.width) for m in messages]
        for r in rows:
            self.widths = [max(w, len(c)) for w, c in zip(self.widths, r, strict=True)]
        out = []
        if rows and not self.started:
            out.append(self._line([h.upper() for h in HEADER]))
            self.started = True
        return out + [self._line(r) for r in rows]

    def _line(self, cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if right else c.ljust(w)
            for c, w, right in zip(cells, self.widths, _NUMBERS, strict=True)
        ).rstrip()
