"""Output that goes on until it is stopped (``tail --follow``): SIGTERM and SIGHUP as the
normal end, whole lines flushed as they come, and a pipe whose reader left noticed even when
nothing is being written. Ctrl-C is left alone: it stays KeyboardInterrupt, exit 130, as for
every command (cli.py)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from kgitops.apply.signals import handled

STOPPING = ("SIGTERM", "SIGHUP")


class Stop(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the end of a follow (a KeyboardInterrupt, so no library's
    ``except Exception`` can swallow it)."""


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``Stop`` (once; later ones are ignored);
    SIGINT keeps raising KeyboardInterrupt (Ctrl-C: exit 130)."""
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not fired:
            fired.append(signum)
            raise Stop

    wanted = [s for s in (getattr(signal, n, None) for n in STOPPING) if s is not None]
    with handled(wanted, handler):
        yield


def reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (``| head -n 5`` ended): the write end
    of such a pipe polls as an error. Checked on every batch, so a quiet topic cannot keep
    ``tail -f | head`` waiting forever (as GNU ``tail -f`` checks)."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, 0)  # errors and hang-ups are always reported
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        return False


def write_lines(lines: list[str]) -> None:
    """Whole lines, flushed; a signal arriving meanwhile (SIGTERM, SIGHUP, Ctrl-C) waits
    until they are out, so a reader never gets half a line."""
    names = ("SIGINT", *STOPPING)
    blocked = {s for s in (getattr(signal, n, None) for n in names) if s is not None}
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is not None:
        mask(signal.SIG_BLOCK, blocked)
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left mid-write: what is buffered goes nowhere,
        with contextlib.suppress(OSError, ValueError):  # not into an error at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise
    finally:
        if mask is not None:
            mask(signal.SIG_UNBLOCK, blocked)
