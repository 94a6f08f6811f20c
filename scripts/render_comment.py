"""The pull-request comment as a reviewer sees it: a PNG drawn by headless Chromium.

Renders a plan's markdown comment (``kgitops.render.text.render_markdown``) to HTML with
markdown-it (CommonMark, tables, raw HTML: what GitHub accepts), styles it like a GitHub
comment (760 px wide, GitHub's alerts, ``diff`` lines coloured), measures its height in
Chromium and takes a screenshot of the whole comment, every ``<details>`` closed as GitHub
first shows it (the PNG opens one topic's diff and the per-broker bars). Prints the comment's
size in characters and its height in pixels::

    python3 scripts/render_comment.py                      # docs/images/pr-comment.png
    python3 scripts/render_comment.py --plan PLAN.json --out /tmp/c.png
    python3 scripts/render_comment.py --markdown old.md --out /tmp/old.png --open none \\
        --mermaid node_modules/mermaid/dist/mermaid.min.js  # draw mermaid charts too

The default plan is the golden case ``tests/golden/review-comment/plan.json`` (a drain with
data, config changes, a new and a deleted topic, SCRAM users, a quota, ACLs and warnings),
which ``tests/planner/test_golden.py`` keeps current; run this script again when the
renderer changes, and commit the PNG with it. Needs Debian's ``chromium`` (``apt-get
install chromium``) and ``markdown-it-py`` (the dev extra); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgitops.render.markdown import render_markdown  # noqa: E402

PLAN = ROOT / "tests" / "golden" / "review-comment" / "plan.json"
OUT = ROOT / "docs" / "images" / "pr-comment.png"
DEFAULT_OPEN = ["<b>shop.orders</b>", "Per broker before"]
"""What the docs' PNG opens: one topic's ``diff`` and the per-broker bars."""
WIDTH = 760
"""GitHub's comment body on a 1280 px wide window: the conversation column less its gutter."""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
]

CSS = """
body { margin: 0; background: #fff; }
.comment { box-sizing: border-box; width: %(width)dpx; padding: 16px; color: #1f2328;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", "Liberation Sans", "DejaVu Sans",
  Helvetica, Arial, sans-serif; word-wrap: break-word; }
h3 { font-size: 1.25em; margin: 24px 0 16px; font-weight: 600; }
h4 { font-size: 1em; margin: 24px 0 16px; font-weight: 600; }
.comment > :first-child { margin-top: 0; }
p, blockquote, ul, table, pre, details { margin: 0 0 16px; }
code { font: 85%% "DejaVu Sans Mono", ui-monospace, monospace; background: #eff1f3;
  padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; font-size: 85%%;
  line-height: 1.45; overflow: auto; }
pre code { background: none; padding: 0; font-size: 100%%; }
table { display: block; width: max-content; max-width: 100%%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; }
th, td { padding: 6px 13px; border: 1px solid #d1d9e0; }
th { font-weight: 600; }
tr:nth-child(2n) { background: #f6f8fa; }
details summary { cursor: pointer; display: list-item; }
blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
.alert { padding: 8px 16px; border-left: .25em solid; margin: 0 0 16px; }
.alert > .title { font-weight: 500; margin: 0 0 4px; }
.alert p:last-child { margin-bottom: 0; }
.alert-warning { border-color: #9a6700; } .alert-warning > .title { color: #9a6700; }
.alert-caution { border-color: #d1242f; } .alert-caution > .title { color: #d1242f; }
.alert-note { border-color: #0969da; } .alert-note > .title { color: #0969da; }
.d-add { color: #116329; background: #f0fff4; display: inline-block; width: 100%%; }
.d-del { color: #82071e; background: #ffebe9; display: inline-block; width: 100%%; }
.d-hunk { color: #8250df; }
sub { font-size: 75%%; }
"""

MERMAID = """
<script src="file://%(src)s"></script>
<script>
for (const el of document.querySelectorAll('code.language-mermaid')) {
  const div = document.createElement('div'); div.className = 'mermaid';
  div.textContent = el.textContent; el.parentElement.replaceWith(div);
}
mermaid.initialize({startOnLoad: false});
</script>
"""

MEASURE = """
<script>
(async () => {
  if (window.mermaid) { await mermaid.run({querySelector: '.mermaid'}); }
  const h = document.querySelector('.comment').getBoundingClientRect().height;
  document.title = 'height=' + Math.ceil(h);
})();
</script>
"""


def comment_html(markdown: str) -> str:
    """The comment's HTML as GitHub draws it: alerts for ``> [!WARNING]`` and the like, and
    the lines of a ``diff`` fence coloured by their first character."""
    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)

    def alert(m: re.Match[str]) -> str:
        kind = m.group(1).lower()
        return f'<div class="alert alert-{kind}"><p class="title">{m.group(1).title()}</p><p>'

    body = re.sub(r"<blockquote>\s*<p>\[!(WARNING|CAUTION|NOTE)\]\s*", alert, body)
    body = re.sub(r"(<div class=\"alert[^>]*>.*?)</blockquote>", r"\1</div>", body, flags=re.S)

    def diff(m: re.Match[str]) -> str:
        lines = []
        for line in m.group(1).split("\n"):
            cls = {"+": "d-add", "-": "d-del"}.get(line[:1], "")
            cls = "d-hunk" if line.startswith("@@") else cls
            lines.append(f'<span class="{cls}">{line}</span>' if cls else line)
        return '<code class="language-diff">' + "\n".join(lines) + "</code>"

    return re.sub(r'<code class="language-diff">(.*?)</code>', diff, body, flags=re.S)


def page(markdown: str, *, mermaid: Path | None, opened: Sequence[str] = ()) -> str:
    """The HTML page; the ``<details>`` whose summary holds one of ``opened`` are open."""
    body = comment_html(markdown)

    def unfold(m: re.Match[str]) -> str:
        hit = any(text in m.group(1) for text in opened)
        return ("<details open>" if hit else "<details>") + m.group(1)

    body = re.sub(r"<details>(<summary>.*?</summary>)", unfold, body)
    scripts = (MERMAID % {"src": mermaid} if mermaid else "") + MEASURE
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS % {'width': WIDTH}}"
        f"</style></head><body><div class='comment'>{body}</div>"
        f"{scripts}</body></html>"
    )


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        sys.exit("render_comment: Chromium not found (apt-get install chromium)")
    return found


def _run(args: list[str], profile: str) -> str:
    done = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"render_comment: chromium failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def height_of(markdown: str, *, mermaid: Path | None = None, opened: Sequence[str] = ()) -> int:
    """The rendered comment's height in CSS pixels (every ``<details>`` closed but
    ``opened``)."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp, "comment.html")
        f.write_text(page(markdown, mermaid=mermaid, opened=opened))
        dom = _run(
            [
                "--virtual-time-budget=10000",
                f"--window-size={WIDTH},2000",
                "--dump-dom",
                f.as_uri(),
            ],
            str(Path(tmp, "profile")),
        )
    found = re.search(r"<title>height=(\d+)</title>", dom)
    if found is None:
        sys.exit("render_comment: the page did not report its height")
    return int(found.group(1))


def screenshot(
    markdown: str, out: Path, *, mermaid: Path | None = None, opened: Sequence[str] = ()
) -> int:
    """A PNG of the whole comment at ``out``; returns its height."""
    height = height_of(markdown, mermaid=mermaid, opened=opened)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp, "comment.html")
        f.write_text(page(markdown, mermaid=mermaid, opened=opened))
        out.parent.mkdir(parents=True, exist_ok=True)
        _run(
            [
                "--virtual-time-budget=10000",
                f"--window-size={WIDTH},{height}",
                f"--screenshot={out.resolve()}",
                f.as_uri(),
            ],
            str(Path(tmp, "profile")),
        )
    return height


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--plan", type=Path, default=PLAN, help="a plan JSON (default: %(default)s)"
    )
    source.add_argument("--markdown", type=Path, help="a comment already rendered")
    parser.add_argument("--out", type=Path, default=OUT, help="the PNG (default: %(default)s)")
    parser.add_argument("--mermaid", type=Path, help="mermaid.min.js, to draw mermaid charts")
    parser.add_argument(
        "--open",
        action="append",
        default=None,
        metavar="TEXT",
        help="open the <details> whose summary holds TEXT in the PNG (repeatable; default: "
        "a topic's diff and the per-broker bars of the review plan; 'none' opens nothing)",
    )
    args = parser.parse_args()
    opened = [t for t in (args.open or DEFAULT_OPEN) if t != "none"]
    if args.markdown is not None:
        markdown = args.markdown.read_text()
    else:
        markdown = render_markdown(json.loads(args.plan.read_text()))
    closed = height_of(markdown, mermaid=args.mermaid)
    height = screenshot(markdown, args.out, mermaid=args.mermaid, opened=opened)
    print(
        f"{len(markdown):,} characters; {closed:,} px high with every <details> closed; "
        f"{args.out}: {height:,} px"
    )


if __name__ == "__main__":
    main()
