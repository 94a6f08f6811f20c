"""Run a subcommand in this process, its output in files, keeping the error it raised.

``cli.main`` and the CI steps (``kgitops github plan-step``, ``apply-step``) share this
module's ``report``: how an error escaping a command becomes its stderr lines and its exit
code. The CI steps run ``validate``, ``plan``, ``check-plan`` and ``apply`` with ``invoke``
and decide from what it returns (the code, and the exception's class), never from the text
the command printed::

    ran = invoke(parser, ["plan", "topics/prod", "--detailed-exitcode"], "plan.md", "plan.err")
    isinstance(ran.error, ConnectionChanged)   # kgitops refused to connect
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import TextIO

from kgitops.errors import KgitopsError, printable, scrub_secrets


def report(exc: Exception, stream: TextIO) -> int:
    """Print ``exc`` as kgitops reports an error (one line per ``lines()``, secrets scrubbed,
    control characters escaped; an unexpected exception in one line, its traceback only with
    ``KGITOPS_DEBUG=1``) and return its exit code."""
    if isinstance(exc, KgitopsError):
        for line in exc.lines():
            print(printable(scrub_secrets(line)), file=stream)
        return exc.exit_code
    if isinstance(exc, MemoryError):
        print(
            "error: out of memory: the input is larger than this machine can hold "
            "(cluster.yaml limits bound topics and partitions; see docs/specs.md, Limits)",
            file=stream,
        )
        return 1
    if os.environ.get("KGITOPS_DEBUG"):
        traceback.print_exception(exc, file=stream)
    text = scrub_secrets(str(exc))  # never a credential read in this run
    print(
        f"internal error: {type(exc).__name__}: {text} "
        "(this is a bug in kgitops; set KGITOPS_DEBUG=1 for the traceback)",
        file=stream,
    )
    return 1


@dataclass(frozen=True)
class Ran:
    """What a subcommand run in-process ended with: its exit code, and the exception it
    raised (None when it returned ``code``)."""

    code: int
    error: Exception | None = None


def invoke(
    parser: argparse.ArgumentParser, argv: Sequence[str], out: str, err: str | None = None
) -> Ran:
    """Run ``kgitops ARGV`` in this process with its stdout written to the file ``out`` and
    its stderr to ``err`` (to ``out`` too when None, as ``>out 2>&1``); the files are made
    even when nothing is printed, as a shell redirection makes them."""
    with open(out, "w", encoding="utf-8", errors="backslashreplace") as stdout:
        if err is None:
            return _run(parser, argv, stdout, stdout)
        with open(err, "w", encoding="utf-8", errors="backslashreplace") as stderr:
            return _run(parser, argv, stdout, stderr)


def _run(
    parser: argparse.ArgumentParser, argv: Sequence[str], stdout: TextIO, stderr: TextIO
) -> Ran:
    with redirect_stdout(stdout), redirect_stderr(stderr):
        try:
            args = parser.parse_args(list(argv))
        except SystemExit as exc:  # a usage error, said on stderr by argparse
            return Ran(0 if exc.code == 0 else 1)
        try:  # under the caller's file size limit (`kgitops --max-file-size ... github ...`)
            code = int(args._run(args))
        except Exception as exc:  # every error: reported as cli.main reports it, and kept
            return Ran(report(exc, sys.stderr), exc)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return Ran(code)
