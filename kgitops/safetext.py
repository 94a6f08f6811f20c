"""Text from a cluster, a file or a command line made safe to print on one terminal line:
``safe_text`` for a name in a message or a cell of a table, ``safe_cut`` for a cell cut to a
width. A topic name, config value or record key cannot move the cursor, clear the screen or
forge a line::

    >>> safe_text("a\\x1b[2Jb\\n")
    'a\\\\x1b[2Jb\\\\n'
    >>> safe_text("orders\\u202eexe", 12)  # cut between two escapes, never inside one
    'orders...'

(``errors.printable`` is the rule for error lines and workflow logs: ``\\x0a`` for a
newline, a backslash kept.)"""

from __future__ import annotations

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def safe_text(text: str, limit: int | None = None) -> str:
    """``text`` printable on one terminal line: control, format and other non-printable
    characters escaped (``\\n``, ``\\x1b``, ``\\u202e``), a backslash doubled so an escape
    cannot be forged, and at most ``limit`` characters (then ``...``, never inside an
    escape)."""
    shown, cut = safe_cut(text, None if limit is None else max(limit - 3, 0))
    return shown + "..." if cut else shown


def safe_cut(text: str, limit: int | None) -> tuple[str, bool]:
    """``text`` escaped as ``safe_text`` does, cut to at most ``limit`` characters between
    two escapes; and whether it was cut."""
    out: list[str] = []
    used = 0
    for ch in text:
        if ch in _ESCAPES:
            piece = _ESCAPES[ch]
        elif ch.isprintable():
            piece = ch
        elif ord(ch) < 0x100:
            piece = f"\\x{ord(ch):02x}"
        elif ord(ch) < 0x10000:
            piece = f"\\u{ord(ch):04x}"
        else:
            piece = f"\\U{ord(ch):08x}"
        if limit is not None and used + len(piece) > limit:
            return "".join(out), True
        out.append(piece)
        used += len(piece)
    return "".join(out), False
