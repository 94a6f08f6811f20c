"""Values that would break a renderer cannot speak for the bot in a pull-request comment.

The comment is parsed as GitHub does (CommonMark with tables, raw HTML allowed) and the HTML
checked: a hostile value never closes a code fence or a ``<details>``, never makes a heading,
an image, a link, or a team @mention.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from kgitops.cli import main
from kgitops.errors import GitHubError
from kgitops.integrations.github.body import compose_body
from kgitops.model import Broker
from kgitops.plan.mdescape import fence, html_text, md_code, md_text
from kgitops.plan.value import AlterConfig, CreateTopic, Plan, PlanWarning
from kgitops.render.markdown import render_markdown
from kgitops.render.text import render_text
from tests.helpers import cluster_folder

HOSTILE = "x\n```\n</details>\n\n# Owned by @acme/admins ![img](http://x/p.png) [a](http://x) `"
TICKS = "````` a ```` b"


def html_of(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)
        self._code += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.tags.append("/" + tag)
        self._code -= tag in ("code", "pre")

    def handle_comment(self, data: str) -> None:
        self.text.append("\x00")  # a comment splits text nodes, as GitHub's mention filter sees

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


def parsed(markdown: str) -> _Tags:
    p = _Tags()
    p.feed(html_of(markdown))
    return p


def hostile_plan() -> Plan:
    return Plan(
        cluster="prod",
        state_fingerprint="sha256:" + "0" * 64,
        actions=(
            CreateTopic(
                "orders",
                partitions=1,
                replication_factor=1,
                assignment={0: (1,)},
                config={"message.format.version": HOSTILE},
            ),
            AlterConfig(
                "events",
                set={"message.format.version": TICKS},
                previous={"message.format.version": HOSTILE},
            ),
        ),
        warnings=(PlanWarning("events", "UNDER_REPLICATED", HOSTILE),),
        extra={
            "transfer": {"brokers": {}, "totalBytes": 1, "racks": {HOSTILE: {"in": 1, "out": 0}}}
        },
    )


SECTIONS = {"Topic changes", "Access changes", "Details"}


def _h4_texts(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown)
    return [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == "h4"
    ]


def assert_harmless(markdown: str, details: int) -> None:
    p = parsed(markdown)
    assert "img" not in p.tags and "a" not in p.tags
    assert not any(t in p.tags for t in ("h1", "h2", "h5", "h6"))
    assert p.tags.count("h3") <= 1
    assert set(_h4_texts(markdown)) <= SECTIONS, "a heading the renderer did not write"
    assert p.tags.count("details") == p.tags.count("/details") == details
    assert not re.search(r"@[A-Za-z0-9]", "".join(p.text)), "an @mention outside code"


def test_a_hostile_config_value_stays_inside_its_fence_and_details() -> None:
    md = render_markdown(hostile_plan().to_json())
    assert_harmless(md, details=3)  # a block per topic, and the per-rack data to move
    # the value is shown, on one line, inside the block of its topic
    assert "x\\x0a```\\x0a</details>" in md


def test_the_comment_body_keeps_a_hostile_plan_harmless_when_cut_to_the_limit() -> None:
    md = render_markdown(hostile_plan().to_json())
    body = compose_body(md * 40, "plan-prod", limit=4000)
    assert body.truncated
    p = parsed(body.text)
    assert "img" not in p.tags and "h1" not in p.tags
    assert not re.search(r"@[A-Za-z0-9]", "".join(p.text))


def test_the_artifact_link_must_be_a_plain_https_url() -> None:
    with pytest.raises(GitHubError, match="artifact URL"):
        compose_body("y\n" * 40_000, "plan", artifact_url="https://x/a) ![i](http://e/p.png")
    body = compose_body(
        "y\n" * 40_000, "plan", artifact_url="https://github.com/a/b/actions/runs/1"
    )
    assert parsed(body.text).tags.count("a") == 1


@pytest.mark.parametrize("value", [HOSTILE, TICKS, "@acme/admins", "a|b", "`", ""])
def test_each_escaper_holds_its_value_in_place(value: str) -> None:
    for rendered in (
        f"| a |\n|---|\n| {md_text(value)} |\n",
        f"| a |\n|---|\n| {md_code(value)} |\n",
        f"<table><tr><td><summary>{html_text(value)}</summary></td></tr></table>\n",
    ):
        p = parsed(rendered)
        assert "img" not in p.tags and "a" not in p.tags and "h1" not in p.tags
        assert p.tags.count("td") == 1
        assert not re.search(r"@[A-Za-z0-9]", "".join(p.text))
    block = parsed(f"<details><summary>s</summary>\n\n{fence(value)}\n</details>\n")
    assert block.tags.count("pre") == 1 and block.tags.count("/details") == 1


def test_the_terminal_plan_shows_control_characters_instead_of_sending_them() -> None:
    data = hostile_plan().to_json()
    data["actions"][1]["previous"]["message.format.version"] = "\x1b[2J\x1b]0;pwned\x07"
    out = render_text(data)
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out


def test_a_config_value_with_a_newline_or_control_character_is_a_validation_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = (
        "apiVersion: kgitops/v1\nkind: Topic\nname: a\npartitions: 1\nreplicationFactor: 1\n"
        'config:\n  message.format.version: "3.0\\n```\\n</details>"\n'
        "---\napiVersion: kgitops/v1\nkind: Topic\nname: b\npartitions: 1\nreplicationFactor: 1\n"
        'config:\n  message.format.version: "3.0\\u202e"\n'
    )
    cluster_folder(
        tmp_path, "t", brokers=[Broker(0)], state_file="s.json", files={"t.yaml": topics}
    )
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr()
    text = err.out + err.err
    assert re.search(
        r"t\.yaml:7:27: error: message\.format\.version: the value holds the control "
        r"character U\+000A",
        text,
    ), text
    assert (
        "t.yaml:15:27: error: message.format.version: the value holds the control character U+202E"
        in text
    )


KEY = "a`b``|c</details>\n# Owned by @acme/admins <img src=x> ![i](http://x/p.png) \\"


def hostile_key_report() -> dict[str, object]:
    from kgitops.analytics.report import HotKey, LoadRow, Placement, ReportInput, build_report
    from kgitops.model import Broker

    rows = tuple(LoadRow(n, p, keys=1, messages=10 + p, bytes=10) for n in (2, 4) for p in range(n))
    placement = Placement({p: (0, 1) for p in range(4)}, (Broker(0, "a"), Broker(1, "b")))
    report = build_report(
        ReportInput(
            counts=(2, 4),
            base=2,
            rows=rows,
            hot=(HotKey(KEY.encode(), 11, 10, {2: 1, 4: 1}),),
            placements={4: placement},
            consumers=2,
        )
    )
    entry = report["partitionCounts"]["4"]  # a report is JSON: any field may be edited
    entry["placement"]["brokers"][0]["rack"] = HOSTILE
    entry["consumers"]["range"]["assignment"][0]["member"] = "c|`0` @acme/admins </details>"
    return report


def test_analyze_keys_markdown_keeps_a_hostile_key_rack_and_member_in_their_cells() -> None:
    from kgitops.analytics.render import render_markdown as keys_markdown
    from kgitops.analytics.render import render_text as keys_text

    md = keys_markdown(hostile_key_report())
    assert_harmless(md, details=2)
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(md)
    rows: list[int] = []
    for t in tokens:
        if t.type == "tr_open":
            rows.append(0)
        elif t.type in ("th_open", "td_open"):
            rows[-1] += 1
    tables = [t for t in tokens if t.type == "table_open"]
    assert len(tables) == 8  # summary, moves, hot keys; per count: bars, consumers (brokers)
    assert sorted(set(rows)) == [3, 4], "a value split or joined a table cell"
    # the key is shown as it is (repr: it holds a newline), in one code span
    html = html_of(md)
    assert f"<code>{escape(repr(KEY))}</code>" in html
    text = keys_text(hostile_key_report())
    assert "\n# Owned" not in text and "\\n# Owned" in text


def escape(text: str) -> str:
    import html

    return html.escape(text, quote=False)
