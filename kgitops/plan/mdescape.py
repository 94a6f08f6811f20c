"""Escaping for text that lands in a GitHub comment: every value a plan interpolates.

A pull-request comment is posted under the bot's name, so a value that breaks out of its
place (a config value holding a code fence and ``</details>``, a broker's error text holding
``@acme/admins`` or ``![x](https://evil/pixel)``) would speak for kgitops. Every value is
escaped for the context it lands in::

    md_text("@acme/admins ![x](http://e)")  -> '@<!-- -->acme/admins \\!\\[x\\]\\(http://e\\)'
    md_code("a`b")                           -> '``a`b``'
    html_text("</details>")                  -> '&lt;/details&gt;'
    fence("x\\n````\\ny")                      -> a fence of five backticks around the body

Control characters (newlines included) never pass: ``visible`` shows them as ``\\xNN``.
"""

from __future__ import annotations

import html
import re

_INVISIBLE = frozenset(
    [0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
_CONTROL_RE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)
_MD_SPECIAL = re.compile(r"([\\`*\[\]!|>])")
_MENTION = "@<!-- -->"
_BREAK = "<!-- -->"  # invisible, and enough to stop GitHub's autolinks and references
_AUTOLINK = re.compile(r"(:(?=//)|\bwww(?=\.)|#(?=\d)|\bGH-(?=\d))", re.I)


def _shown(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0 or code in _INVISIBLE:
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


def visible(text: object, limit: int | None = None) -> str:
    """``text`` on one line with control and direction characters shown as escapes, cut to
    ``limit`` characters (with ``...``) when given."""
    s = str(text)
    if _CONTROL_RE.search(s) is not None:
        s = _CONTROL_RE.sub(lambda m: _shown(m.group()), s)
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 3)] + "..."
    return s


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character (a newline too) or a direction override."""
    return visible(text) != text


def md_text(text: object, limit: int | None = None) -> str:
    """Plain markdown text: no markup, link, image, HTML, table cell break, @mention,
    autolink (``https://``, ``www.``) or issue reference (``#12``, ``owner/repo#12``,
    ``GH-12``): GitHub links those in text on its own, so a name could point reviewers
    anywhere or ping another repository's issue."""
    s = visible(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _AUTOLINK.sub(lambda m: m.group(1) + _BREAK, s)
    return s.replace("@", _MENTION)


def md_code(text: object, limit: int | None = None) -> str:
    """An inline code span that ``text`` cannot close: the delimiter is longer than any run
    of backticks inside. ``|`` is escaped so the span is safe in a table cell too."""
    s = visible(text, limit).replace("|", "\\|")
    runs = [len(r) for r in re.findall(r"`+", s)]
    tick = "`" * (max(runs, default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{tick}{pad}{s}{pad}{tick}"


def html_text(text: object, limit: int | None = None) -> str:
    """Text inside raw HTML (``<summary>``, ``<b>``): entities, and no @mention."""
    return html.escape(visible(text, limit), quote=True).replace("@", _MENTION)


def fence_for(body: str, char: str = "`") -> str:
    """A code fence longer than any run of ``char`` in ``body`` (at least three)."""
    if char * 3 not in body:
        return char * 3
    runs = [len(r) for r in re.findall(re.escape(char) + "+", body)]
    return char * max(3, max(runs, default=0) + 1)


def fence(body: str, info: str = "") -> str:
    """``body`` in a fenced code block nothing inside can close."""
    f = fence_for(body)
    return f"{f}{info}\n{body}\n{f}"
