"""The single exit path: every error becomes an exit code and a line, never a traceback."""

from __future__ import annotations

import argparse
import types

import pytest

from kgitops import cli
from kgitops.errors import (
    ActionOutcome,
    ClusterUnreachable,
    Diagnostic,
    Mark,
    PartialApply,
    SpecError,
    Status,
)


def _fake_command(run: object) -> types.ModuleType:
    module = types.ModuleType("kgitops.commands.fake")
    module.NAME = "fake"  # type: ignore[attr-defined]
    module.HELP = "a test command"  # type: ignore[attr-defined]
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]
    module.run = run  # type: ignore[attr-defined]
    return module


@pytest.fixture
def with_command(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def install(run: object) -> None:
        monkeypatch.setattr(cli, "_command_modules", lambda: [_fake_command(run)])

    return install


def test_a_kgitops_error_prints_its_lines_and_returns_its_code(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    def run(args: argparse.Namespace) -> int:
        raise ClusterUnreachable("cannot reach kafka-1:9092: connection refused")

    with_command(run)
    assert cli.main(["fake"]) == 1
    err = capsys.readouterr().err
    assert err == "error: cannot reach kafka-1:9092: connection refused\n"


def test_spec_errors_print_every_diagnostic_sorted_by_position(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    diags = [
        Diagnostic(Mark("b.yaml", 3, 1), "error", "second file"),
        Diagnostic(Mark("a.yaml", 9, 5), "warning", "later line"),
        Diagnostic(Mark("a.yaml", 2, 7), "error", "first"),
    ]

    def run(args: argparse.Namespace) -> int:
        raise SpecError(diags)

    with_command(run)
    assert cli.main(["fake"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "a.yaml:2:7: error: first",
        "a.yaml:9:5: warning: later line",
        "b.yaml:3:1: error: second file",
    ]


def test_a_partial_apply_exits_3_and_says_what_was_and_was_not_done(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    def run(args: argparse.Namespace) -> int:
        raise PartialApply(
            "apply finished partly",
            [
                ActionOutcome("+ create_topic a", Status.DONE),
                ActionOutcome("~ reassign b", Status.FAILED, "x", ("partition 0: y",)),
            ],
        )

    with_command(run)
    assert cli.main(["fake"]) == 3
    err = capsys.readouterr().err
    assert "  done: + create_topic a" in err
    assert "  NOT done: ~ reassign b (failed: x)\n      partition 0: y\n" in err


def test_an_unexpected_exception_is_one_line_not_a_traceback(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    def run(args: argparse.Namespace) -> int:
        raise KeyError("boom")

    with_command(run)
    assert cli.main(["fake"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("internal error: KeyError")


def test_ctrl_c_exits_130(with_command) -> None:  # type: ignore[no-untyped-def]
    def run(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    with_command(run)
    assert cli.main(["fake"]) == 130


def test_a_usage_error_exits_1_and_help_exits_0(with_command) -> None:  # type: ignore[no-untyped-def]
    with_command(lambda args: 0)
    assert cli.main(["no-such-command"]) == 1
    assert cli.main(["--help"]) == 0
    assert cli.main(["--max-file-size", "5MB"]) == 1  # options but no command


def test_a_bare_kgitops_prints_the_help_on_stdout_and_exits_0(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: kgitops") and "plan" in out and "validate" in out
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["plna", "topics/demo"], "error: unknown command 'plna' (did you mean 'plan'?)"),
        (["valdiate"], "error: unknown command 'valdiate' (did you mean 'validate'?)"),
        (
            ["--max-file-size", "5MB", "aply"],
            "error: unknown command 'aply' (did you mean 'apply'?)",
        ),
        (
            ["--max-file-size=5MB", "snapshto"],
            "error: unknown command 'snapshto' (did you mean 'snapshot'?)",
        ),
        (["xyzzy"], "error: unknown command 'xyzzy'"),
    ],
)
def test_a_mistyped_command_is_one_line_naming_the_closest_command(argv, line, capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{line}; `kgitops --help` lists the commands\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["local", "upp"], "error: unknown command 'upp' of `kgitops local` (did you mean 'up'?)"),
        (
            ["get", "topics/demo", "topcis", "--format", "json"],
            "error: unknown command 'topcis' of `kgitops get` (did you mean 'topics'?)",
        ),
        (
            ["github", "comit"],
            "error: unknown command 'comit' of `kgitops github` (did you mean 'comment'?)",
        ),
        (["--max-file", "5MB", "plna"], "error: unknown command 'plna' (did you mean 'plan'?)"),
    ],
)
def test_a_mistyped_nested_command_names_its_parent_and_the_closest_one(argv, line, capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(argv) == 1
    where = "kgitops" + "".join(f" {w}" for w in argv[:1] if w in ("local", "get", "github"))
    assert capsys.readouterr().err == f"{line}; `{where} --help` lists the commands\n"


def test_a_view_named_like_the_folder_before_it_is_not_taken_for_a_command() -> None:
    """``get DIR VIEW``: the first word after ``get`` is the folder, whatever its name."""
    from kgitops.commands._complete import tree

    root = tree(cli.build_parser())
    assert cli.unknown_command(["get", "topcis", "topics"], root) is None
    assert cli.unknown_command(["plan", "topics/demo", "--", "plna"], root) is None


def test_a_choice_no_shell_can_complete_breaks_only_the_completion(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--mode", choices=["a b", "c"])

    module = _fake_command(lambda args: 0)
    module.add_arguments = add  # type: ignore[attr-defined]
    from kgitops.commands import completion

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "_command_modules", lambda: [module, completion])
        assert cli.main(["fake", "--mode", "a b"]) == 0
        assert cli.main(["completion", "bash"]) == 1
    assert "cannot complete 'a b': not a plain word" in capsys.readouterr().err


def test_a_known_command_with_a_bad_flag_keeps_argparse_usage_message(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["plan", "--bogus", "x"]) == 1
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_every_real_subcommand_module_has_the_command_interface() -> None:
    modules = cli._command_modules()
    names = [m.NAME for m in modules]
    assert len(names) == len(set(names))
    for m in modules:
        assert isinstance(m.HELP, str) and m.HELP
        assert callable(m.add_arguments) and callable(m.run)


def test_the_last_guard_never_prints_a_secret_read_in_this_run(with_command, capsys) -> None:  # type: ignore[no-untyped-def]
    from kgitops.errors import ClusterError, remember_secrets

    remember_secrets(["hunter2-pass"])

    def run(args: argparse.Namespace) -> int:
        raise ValueError("login alice-user:hunter2-pass refused")

    with_command(run)
    assert cli.main(["fake"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error: ValueError: login alice-user:*** refused")
    assert "hunter2" not in err

    def run_known(args: argparse.Namespace) -> int:
        raise ClusterError("broker said: password hunter2-pass unknown")

    with_command(run_known)
    assert cli.main(["fake"]) == 1
    assert "hunter2" not in capsys.readouterr().err
