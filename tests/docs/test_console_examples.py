"""Every ```console example in README.md and docs/ runs as written and prints what it shows.

A console block is a fenced block opened with ```console. Its ``$ `` lines are commands (a
line ending in ``\\`` continues on the next); the lines after a command, up to the next ``$``
line, are its expected output (stdout and stderr as a terminal shows them). Each block runs
in a fresh copy of the repository's ``topics/`` (with the demo state as committed, even after
the README's demo changed the working copy), from
a folder standing for the repository root, in-process through ``kgitops.cli.main``; so the
examples cost no broker and no network.

In the expected output:

- a line that is only ``...`` stands for any number of lines (none included);
- ``<...>`` inside a line stands for any text on that line (a time, a hash);
- a command shown with no output lines is run, but its output is not compared.

A command exits 0 unless its comment says otherwise: ``$ kgitops status topics/demo  # exit 2``.

An HTML comment on the line right before the fence marks a block:

- ``<!-- illustration: WHY -->``: it shows files the repository does not have; not run;
- ``<!-- not run: WHY -->``: it needs what this test does not start (a real Kafka, Java, Spark,
  the network, another program); not run;
- ``<!-- setup: CMD; CMD -->``: these kgitops commands run first, on the same copy, and must
  exit 0 (their output is not shown).

A block without a skip marker may only run ``kgitops`` commands.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kgitops.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"^<!--\s*(illustration|not run|setup):\s*(.*?)\s*-->$")
EXIT = re.compile(r"\bexit (\d+)\b")


@dataclass
class Command:
    argv: list[str]
    exit_code: int
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    marker: str | None
    reason: str
    text: list[str]

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def console_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        start = i
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        found = MARKER.match(lines[start - 1].strip()) if start else None
        marker, reason = (found.group(1), found.group(2)) if found else (None, "")
        blocks.append(Block(page, start + 1, marker, reason, lines[start + 1 : end]))
        i = end + 1
    return blocks


def commands(block: Block) -> list[Command]:
    """The block's commands with their expected output and exit code."""
    out: list[Command] = []
    text = list(block.text)
    while text:
        line = text.pop(0)
        if not line.startswith("$ "):
            assert out, f"{block.id}: output before the first `$ ` command: {line!r}"
            out[-1].expected.append(line.rstrip())
            continue
        command = line[2:]
        while command.endswith("\\") and text:
            command = command[:-1] + " " + text.pop(0).strip()
        comment = command.split(" #", 1)[1] if " #" in command else ""
        wanted = EXIT.search(comment)
        argv = shlex.split(command, comments=True)
        assert argv and argv[0] == "kgitops", (
            f"{block.id}: `{command}` is not a kgitops command: mark the block "
            "<!-- not run: WHY --> (or <!-- illustration: WHY -->)"
        )
        assert not {"&&", "||", "|", ";", ">", "<"} & set(argv), (
            f"{block.id}: `{command}` needs a shell; one kgitops command per `$ ` line"
        )
        out.append(Command(argv[1:], int(wanted.group(1)) if wanted else 0))
    for c in out:
        while c.expected and not c.expected[-1]:
            c.expected.pop()
    return out


def matches(expected: list[str], actual: str) -> bool:
    parts: list[str] = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = (re.escape(p) for p in line.split("<...>"))
            parts.append("[^\\n]*?".join(pieces) + r"[ \t]*\n")
    return re.fullmatch("".join(parts), actual) is not None


def run(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = main(argv)
    text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
    return code, text.rstrip("\n") + "\n" if text.strip() else ""


DEMO_STATE = "topics/demo/.state/demo.json"


def committed_demo_state() -> bytes:
    """The demo state as committed: running the README's demo rewrites the working copy."""
    try:
        shown = subprocess.run(
            ["git", "show", f"HEAD:{DEMO_STATE}"], cwd=ROOT, capture_output=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the file as it is
        return (ROOT / DEMO_STATE).read_bytes()
    return shown.stdout


ALL = [b for page in PAGES for b in console_blocks(page)]
RUN = [b for b in ALL if b.marker in (None, "setup")]


def test_the_pages_have_console_examples_and_the_readme_quick_start_runs() -> None:
    assert len(RUN) >= 5, [b.id for b in RUN]
    readme = [b for b in RUN if b.page.name == "README.md" and b.page.parent == ROOT]
    assert any(any("plan topics/demo" in t for t in b.text) for b in readme)


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.marker not in (None, "setup")], ids=lambda b: b.id
)
def test_every_skipped_example_says_why(block: Block) -> None:
    assert len(block.reason) >= 10, f"{block.id}: <!-- {block.marker}: ... --> needs a reason"


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_the_console_example_prints_what_the_page_shows(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(
        ROOT / "topics",
        tmp_path / "topics",
        ignore=shutil.ignore_patterns("*.json.lock", "*.apply.lock", ".kgitops"),
    )
    (tmp_path / DEMO_STATE).write_bytes(committed_demo_state())
    monkeypatch.chdir(tmp_path)
    for env in ("CI", "GITHUB_ACTIONS", "KGITOPS_DEBUG"):
        monkeypatch.delenv(env, raising=False)
    if block.marker == "setup":
        for step in block.reason.split(";"):
            argv = shlex.split(step)
            assert argv[0] == "kgitops", f"{block.id}: setup runs kgitops commands only"
            code, out = run(argv[1:])
            assert code == 0, f"{block.id}: setup `{step.strip()}` exited {code}:\n{out}"
    for c in commands(block):
        code, out = run(c.argv)
        shown = "kgitops " + shlex.join(c.argv)
        assert code == c.exit_code, (
            f"{block.id}: `{shown}` exited {code}, not {c.exit_code}:\n{out}"
        )
        if c.expected:
            assert matches(c.expected, out), (
                f"{block.id}: `{shown}` printed\n{out}\nwhere the page shows\n"
                + "\n".join(c.expected)
            )


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "...", "d"], "a\nb\nc\nd\n", True),
        (["a", "...", "b"], "a\nb\n", True),
        (["a", "b"], "a\nb\nc\n", False),
        (["took <...> s"], "took 1.5 s\n", True),
        (["took <...> s"], "took 1.5 s\nmore\n", False),
        (["x (y)"], "x (y)\n", True),
    ],
)
def test_the_output_match_rules(expected: list[str], actual: str, ok: bool) -> None:
    assert matches(expected, actual) is ok
