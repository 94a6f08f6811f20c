"""The pull-request comment reads top to bottom: checked on its rendered structure.

Every golden case's plan, rendered, is parsed with markdown-it as GitHub parses a comment
(CommonMark, tables, raw HTML) and held to the order a reviewer reads in: the title, what
needs care (alerts), the summary, ``Topic changes``, ``Access changes``, ``Details``; tables
whose rows have the header's cells and few enough columns to fit; ``<details>`` blocks that
open and close; ``diff`` fences whose every line GitHub colours. The richest case,
``review-comment``, is checked in depth, and once more with every name in it made hostile:
the structure must not move.
"""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kgitops.render.markdown import render_markdown

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.json").is_file())
SECTIONS = ["Topic changes", "Access changes", "Details"]
MAX_COLUMNS = 6
"""The widest table a 760 px comment holds without a scroll bar (cells of short values)."""
HTML_TAGS = {"details", "summary", "code", "b", "p", "sub", "strong", "em"}
"""The raw HTML the renderer writes; anything else in the comment came from a value."""

_MD = MarkdownIt("commonmark", {"html": True}).enable("table")


class _Html(HTMLParser):
    """Tags in order, and whether every one closed in the order it opened."""

    VOID = frozenset({"br", "hr", "img", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []
        self.stack: list[str] = []
        self.broken: list[str] = []
        self.summaries: list[str] = []
        self.text: list[str] = []  # outside code: where GitHub links mentions
        self._summary: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.opened.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag == "summary":
            self._summary = []

    def handle_startendtag(self, tag: str, attrs: object) -> None:
        self.opened.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.broken.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag == "summary" and self._summary is not None:
            self.summaries.append("".join(self._summary))
            self._summary = None

    def handle_comment(self, data: str) -> None:
        self.text.append("\x00")  # a comment splits a text node, as GitHub's filter sees

    def handle_data(self, data: str) -> None:
        if self._summary is not None:
            self._summary.append(data)
        if "code" not in self.stack and "pre" not in self.stack:
            self.text.append(data)


def _tokens(markdown: str) -> list[Token]:
    return _MD.parse(markdown)


def _headings(tokens: list[Token]) -> list[tuple[str, str]]:
    return [
        (t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"
    ]


def _cells(line: str) -> int:
    """Cells of a table row as written: ``|`` not escaped (a value's ``|`` is ``\\|``)."""
    return len(re.split(r"(?<!\\)\|", line.strip().strip("|")))


def _tables(markdown: str, tokens: list[Token]) -> list[list[str]]:
    lines = markdown.split("\n")
    out = []
    for t in tokens:
        if t.type == "table_open" and t.map is not None:
            start, end = t.map
            out.append(lines[start:end])
    return out


def _html(markdown: str) -> _Html:
    parser = _Html()
    parser.feed(_MD.render(markdown))
    parser.close()
    return parser


def check_structure(markdown: str) -> dict[str, Any]:
    """Assert what every comment keeps; return what was found, for the cases to compare."""
    tokens = _tokens(markdown)
    heads = _headings(tokens)
    assert heads[0][0] == "h3" and heads[0][1].startswith("kgitops plan: ")
    assert [tag for tag, _ in heads[1:]] == ["h4"] * (len(heads) - 1)
    sections = [text for _, text in heads[1:]]
    assert sections == [s for s in SECTIONS if s in sections], sections

    # alerts come before the summary table, the summary before the topics
    kinds = [t.type for t in tokens if t.level == 0 and t.type.endswith("_open")]
    first_table = kinds.index("table_open") if "table_open" in kinds else len(kinds)
    quotes = [i for i, k in enumerate(kinds) if k == "blockquote_open"]
    assert all(i < first_table for i in quotes), "an alert after the summary"
    if "Topic changes" in sections and "table_open" in kinds:
        heading_at = next(
            i for i, t in enumerate(tokens) if t.type == "inline" and t.content == "Topic changes"
        )
        table_at = next(i for i, t in enumerate(tokens) if t.type == "table_open")
        assert table_at < heading_at, "the summary comes after the topic changes"

    tables = _tables(markdown, tokens)
    for rows in tables:
        head = _cells(rows[0])
        assert head <= MAX_COLUMNS, rows[0]
        for row in rows[2:]:
            assert _cells(row) == head, (rows[0], row)

    for t in tokens:
        if t.type == "fence":
            assert t.info != "mermaid", "a chart repeating a table"
            if t.info == "diff":
                for line in t.content.rstrip("\n").split("\n"):
                    assert line[:1] in ("+", "-") or line.startswith("@@"), line

    html = _html(markdown)
    assert not html.broken and not html.stack, (html.broken, html.stack)
    raw = {t for t in html.opened if t not in _MD_TAGS}
    assert raw <= HTML_TAGS, raw
    assert html.opened.count("details") == html.opened.count("summary")
    return {
        "sections": sections,
        "tables": [(_cells(rows[0]), len(rows) - 2) for rows in tables],
        "details": html.opened.count("details"),
        "summaries": html.summaries,
    }


_MD_TAGS = {
    "h3", "h4", "p", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "ul", "li",
    "pre", "code", "strong", "em", "br", "div", "span",
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_every_golden_comment_keeps_the_reading_order_and_shapes(name: str) -> None:
    check_structure(render_markdown(json.loads((GOLDEN / name / "plan.json").read_text())))


def _review() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "review-comment" / "plan.json").read_text())
    return data


def test_the_review_comment_reads_warnings_summary_topics_access_details() -> None:
    md = render_markdown(_review())
    found = check_structure(md)
    assert found["sections"] == SECTIONS
    # summary: a row per kind, counted by what it counts
    summary = md[md.index("| | change | count |") : md.index("#### Topic changes")]
    assert "| `+` | create_acl | 7 ACLs |" in summary
    assert "| `-` | delete_acl | 1 ACL |" in summary
    assert "| `+` | upsert_user | 2 SCRAM users |" in summary
    assert "| `~` | alter_quota | 1 quota |" in summary
    assert "| `~` | reassign | 4 topics |" in summary
    assert "**Data to move:** 41.9 GiB of 215.7 GiB stored" in summary
    assert "about 14m 0s in 14 window(s)" in summary
    # warnings, the deletion among them, before the summary
    assert md.index("> [!CAUTION]") < md.index("> [!WARNING]") < md.index("| | change |")
    # one block per topic, its changes named in the summary line; the deletion is one line
    topics = [s for s in found["summaries"] if not s[0].isupper()]
    assert [s.split()[1] for s in topics] == [
        "shop.returns", "payments.transactions", "shop.orders", "payments.refunds",
        "shop.clicks",
    ]  # fmt: skip
    assert "alter_config: 2 set, 0 removed · add_partitions: partitions 12 -> 24 · reassign" in (
        " ".join(topics)
    )
    assert "<p><code>-</code> <b>legacy.events</b> delete_topic" in md
    # details, collapsed, after the access changes: no chart, one per-broker table with bars
    details = [s for s in found["summaries"] if s[0].isupper()]
    assert details == [
        "Data to move per broker and per rack",
        "Apply's windows (the ETA is their schedule)",
        "Per broker before → after: bytes (with bars), replicas, preferred leaders",
    ]
    assert found["tables"][0] == (3, 9)  # the summary
    assert (5, 8) in found["tables"]  # the ACLs: five columns, eight bindings
    # a reason is said once per topic, in a hunk header, not on each of its partitions
    assert md.count("broker 5 is drained") == 4  # three topics, and shop.clicks' RF change
    for t in _tokens(md):
        if t.info == "diff":
            hunks = [ln for ln in t.content.split("\n") if ln.startswith("@@")]
            assert len(hunks) == len(set(hunks))
            assert not any("drained" in ln for ln in t.content.split("\n") if ln[:1] in "+-")


HOSTILE = "x|y`</details><b>@acme/admins ![i](http://e/p.png) #12\n```"


def _hostile(data: dict[str, Any]) -> dict[str, Any]:
    """Every topic, principal, source, rack and warning text of the plan made hostile."""
    out = copy.deepcopy(data)
    for a in out["actions"]:
        a["topic"] = a["topic"] + HOSTILE
        if "acl" in a:
            a["acl"]["principal"] += HOSTILE
            a["acl"]["name"] += HOSTILE
            a["source"] = HOSTILE
        for m in a.get("moves", {}).values():
            m["reason"] += HOSTILE
    for w in out["warnings"]:
        w["message"] += HOSTILE
        if w.get("topic"):
            w["topic"] += HOSTILE
    out["transfer"]["racks"] = {r + HOSTILE: v for r, v in out["transfer"]["racks"].items()}
    return out


def test_hostile_names_change_no_part_of_the_comments_structure() -> None:
    plain = check_structure(render_markdown(_review()))
    md = render_markdown(_hostile(_review()))
    hostile = check_structure(md)
    assert hostile["sections"] == plain["sections"]
    assert hostile["tables"] == plain["tables"]
    assert hostile["details"] == plain["details"]
    html = _MD.render(md)
    assert "<img" not in html and "<a " not in html
    assert not re.search(r"@[A-Za-z0-9]", "".join(_html(md).text)), "an @mention outside code"
    assert "#12\\x0a```" in md  # a newline in a value shows as \x0a: it ends no fence or line
