"""The command line: parse, dispatch to one ``commands/<name>.py``, and own the single exit path.

Every subcommand module defines::

    NAME = "plan"                       # the subcommand
    HELP = "one line for --help"
    def add_arguments(parser) -> None   # its flags (nested subcommands allowed)
    def run(args) -> int                # the exit code; raise KgitopsError for failures

(``args._parser`` is the whole parser, which ``completion`` reads.)

Only this module turns errors into exit codes and output (through ``commands._invoke.report``,
which the CI steps share for the commands they run in-process): a ``KgitopsError`` prints its
``lines()`` to stderr and returns its ``exit_code`` (1, or 3 for a partial apply); a usage
error returns 1 (a mistyped command in one line with the closest name: ``kgitops plna`` ->
``error: unknown command 'plna' (did you mean 'plan'?)``); a bare ``kgitops`` prints the help
and returns 0; Ctrl-C returns 130; anything else is an internal error, printed in one line
(a traceback only with ``KGITOPS_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

from kgitops import __version__
from kgitops.commands._complete import Node, tree
from kgitops.commands._invoke import report
from kgitops.errors import printable


def _command_modules() -> list[ModuleType]:
    import kgitops.commands as pkg

    modules = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"kgitops.commands.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            modules.append(module)
    return modules


def _size(text: str) -> int:
    from kgitops.units import parse_size

    try:
        value = parse_size(text)
    except (ValueError, OverflowError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte: {text!r}")
    return value


def _common() -> argparse.ArgumentParser:
    """Options every subcommand takes (before or after its name)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--max-file-size",
        type=_size,
        default=argparse.SUPPRESS,
        metavar="SIZE",
        help="refuse to read a file bigger than this (default 10MB; e.g. 200MB for a big snapshot)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="kgitops",
        description="Kafka topics as code: validate, plan and apply topic changes from git.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"kgitops {__version__}")
    parser.set_defaults(_parser=parser)  # the whole tree, for `completion` to read
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP, parents=[common])
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _takes_value(node: Node, word: str) -> bool:
    """Whether option ``word`` of ``node`` consumes the next word (argparse also takes a
    unique prefix of a long option: ``--max-file 5MB``)."""
    if "=" in word:
        return False
    if word in node.options:
        return word in node.valued
    matches = [o for o in node.options if word.startswith("--") and o.startswith(word)]
    return len(matches) == 1 and matches[0] in node.valued


def unknown_command(argv: Sequence[str], root: Node) -> str | None:
    """One line for a (nested) command word that names no command, with the closest name when
    one is close (difflib, as the spec checks suggest config names); None when every command
    word is known. The walk is the completion scripts': option values and the positionals
    before a nested command (``get DIR VIEW``) are skipped."""
    node, seen = root, 0
    words = iter(argv)
    for word in words:
        if word == "--":
            return None
        if word.startswith("-") and word != "-":
            if _takes_value(node, word):
                next(words, None)
            continue
        if node.commands and seen >= node.positionals_before:
            if word in node.commands:
                node, seen = node.commands[word], 0
                continue
            close = difflib.get_close_matches(word, sorted(node.commands), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = " ".join(("kgitops", *node.path))
            of = f" of `{where}`" if node.path else ""
            return f"error: unknown command {word!r}{of}{hint}; `{where} --help` lists the commands"
        seen += 1
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run kgitops; return the exit code (0 ok, 2 changes with --detailed-exitcode,
    1 invalid input or failure, 3 partial apply)."""
    parser = build_parser()
    from kgitops.files import DEFAULT_MAX_FILE_SIZE, file_size_limit

    words = sys.argv[1:] if argv is None else list(argv)
    if argv is None:  # run as a program: the process ends with the command
        from kgitops.perf import command_ends_process

        command_ends_process()
    try:  # parsing too: a flag's converter is code, and the last guard covers it
        if not words:  # a bare `kgitops` asks what there is: the help, and nothing failed
            parser.print_help()
            return 0
        unknown = unknown_command(words, tree(parser))
        if unknown is not None:
            print(printable(unknown), file=sys.stderr)
            return 1
        try:
            args = parser.parse_args(words)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2 -> 1)
            code = exc.code if isinstance(exc.code, int) else 1
            return 0 if code == 0 else 1
        run = getattr(args, "_run", None)
        if run is None:
            parser.print_help(sys.stderr)
            return 1
        with file_size_limit(getattr(args, "max_file_size", DEFAULT_MAX_FILE_SIZE)):
            code = run(args)
        return int(code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # KgitopsError, and the last guard: no traceback for a user
        return report(exc, sys.stderr)
