"""`kgitops completion bash|zsh|fish`: the scripts load in their shell and complete commands,
nested commands, options and choices, all read from the parser (a new flag needs nothing)."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
from pathlib import Path

import pytest

from kgitops import cli

CASES = [
    (["pl"], ["plan"]),
    (["va"], ["validate"]),
    (["plan", "topics/demo", "--fo"], ["--format"]),
    (["plan", "topics/demo", "--format", ""], ["json", "markdown", "text"]),
    (["plan", "topics/demo", "--format", "j"], ["json"]),
    (["local", "st"], ["start-broker", "status", "stop-broker"]),
    (
        ["get", "topics/demo", ""],
        ["balance", "brokers", "config", "groups", "lags", "members", "partitions", "topics"],
    ),
    (["get", "topics/demo", "topics", "--for"], ["--format"]),
    (["--max-file-size", "5MB", "ini"], ["init"]),
    (["completion", ""], ["bash", "fish", "zsh"]),
    (["partition", "--format", ""], ["json", "text"]),
]


def script(shell: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["completion", shell]) == 0
    return out.getvalue()


def bash_complete(tmp_path: Path, words: list[str]) -> list[str]:
    (tmp_path / "k.bash").write_text(script("bash"))
    line = " ".join(f"'{w}'" for w in ["kgitops", *words])
    program = (
        f"source {tmp_path / 'k.bash'}\n"
        f"COMP_WORDS=({line}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
        "_kgitops; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [w for w in done.stdout.split("\n") if w]


@pytest.mark.parametrize(("words", "expected"), CASES)
def test_bash_completes_commands_options_and_choices(
    tmp_path: Path, words: list[str], expected: list[str]
) -> None:
    assert bash_complete(tmp_path, words) == expected


def test_bash_completes_every_command_and_leaves_paths_to_the_shell(tmp_path: Path) -> None:
    names = sorted(m.NAME for m in cli._command_modules())
    assert bash_complete(tmp_path, [""]) == names
    assert bash_complete(tmp_path, ["plan", ""]) == []  # the folder: bash's file completion
    assert bash_complete(tmp_path, ["plan", "--out", ""]) == []  # a file name
    assert (
        bash_complete(tmp_path, ["get", "topics", "topics", ""]) == []
    )  # DIR 'topics', view 'topics'
    registered = script("bash").splitlines()[-1]
    assert registered == "complete -o bashdefault -o default -F _kgitops kgitops"


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
@pytest.mark.parametrize(("words", "expected"), CASES)
def test_zsh_completes_the_same(tmp_path: Path, words: list[str], expected: list[str]) -> None:
    """zsh's own compadd filters by the prefix typed: the stub prints what it is given, and
    the test filters as zsh does."""
    (tmp_path / "k.zsh").write_text(script("zsh"))
    quoted = " ".join(f"'{w}'" for w in ["kgitops", *words])
    program = (
        "compdef() { :; }\n"
        'compadd() { [ "$1" = -- ] && shift; print -rl -- "$@"; }\n'
        "_files() { print -r -- '<files>'; }\n"
        f"source {tmp_path / 'k.zsh'}\n"
        f"words=({quoted}); CURRENT=${{#words}}\n"
        "_kgitops\n"
    )
    done = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    offered = [w for w in done.stdout.split("\n") if w and w.startswith(words[-1])]
    assert sorted(offered) == expected


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
@pytest.mark.parametrize(
    ("words", "expected"), [c for c in CASES if c[0][0] != "get" and "--max-file-size" not in c[0]]
)
def test_fish_completes_the_same(tmp_path: Path, words: list[str], expected: list[str]) -> None:
    (tmp_path / "k.fish").write_text(script("fish"))
    line = " ".join(["kgitops", *words])
    program = (
        f"source {tmp_path / 'k.fish'}\n"
        f"complete -C '{line}' | string replace -r '\\t.*' ''; or true\n"
    )
    done = subprocess.run(
        ["fish", "--no-config", "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert sorted(w for w in done.stdout.split("\n") if w) == expected


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["completion", "tcsh"]) == 1
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err
