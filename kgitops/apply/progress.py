"""How apply tells a person (or a CI log) where it is.

A reassignment can run for hours, so apply reports as it goes. On a terminal one line is
redrawn in place; in a CI log, where ``\\r`` makes a mess, plain lines are printed, at most one
every ``every`` seconds and whenever a partition finishes::

    [##########----------]  50%  4/8 partitions  1.2 GiB/2.4 GiB  ETA 0:00:24
    reassign: 4/8 partitions done, 1.2 GiB of 2.4 GiB copied, ETA 0:00:24

``Progress`` is the protocol apply sees; ``for_stream`` picks the right one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TextIO

from kgitops.units import human_bytes, human_seconds


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where a reassignment stands. ``eta_seconds`` is None while nothing can be estimated."""

    partitions_done: int
    partitions_total: int
    bytes_done: int
    bytes_total: int
    in_flight: int
    elapsed_seconds: float
    eta_seconds: float | None


class Progress(Protocol):
    def message(self, text: str) -> None:
        """One line of news: a step started or finished."""
        ...

    def update(self, snap: Snapshot) -> None:
        """The reassignment advanced (or was polled)."""
        ...

    def finish(self) -> None:
        """The reassignment is over; a bar ends its line."""
        ...


def human_eta(seconds: float | None) -> str:
    """The time left, or ``?`` while apply cannot tell yet."""
    return "?" if seconds is None else human_seconds(seconds)


def describe(snap: Snapshot) -> str:
    return (
        f"reassign: {snap.partitions_done}/{snap.partitions_total} partitions done"
        f" ({snap.in_flight} in flight), {human_bytes(snap.bytes_done)} of "
        f"{human_bytes(snap.bytes_total)} copied, ETA {human_eta(snap.eta_seconds)}"
    )


class PlainProgress:
    """Lines for CI logs: every message, and a status line when a partition finishes or at
    most every ``every`` seconds of the clock given (wall time by default)."""

    def __init__(
        self, stream: TextIO, *, every: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream
        self.every = every
        self.clock = clock
        self._last_done = -1
        self._last_time: float | None = None

    def message(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def update(self, snap: Snapshot) -> None:
        now = self.clock()
        due = self._last_time is None or now - self._last_time >= self.every
        if snap.partitions_done != self._last_done or due:
            self._last_done = snap.partitions_done
            self._last_time = now
            print(describe(snap), file=self.stream, flush=True)

    def finish(self) -> None:
        pass


class BarProgress:
    """A bar redrawn in place on a terminal."""

    WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._drawn = False

    def _end_line(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False

    def message(self, text: str) -> None:
        self._end_line()
        print(text, file=self.stream, flush=True)

    def update(self, snap: Snapshot) -> None:
        if snap.bytes_total > 0:
            share = snap.bytes_done / snap.bytes_total
        else:
            share = snap.partitions_done / max(1, snap.partitions_total)
        filled = round(share * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        line = (
            f"[{bar}] {share:4.0%}  {snap.partitions_done}/{snap.partitions_total} partitions"
            f"  {human_bytes(snap.bytes_done)}/{human_bytes(snap.bytes_total)}"
            f"  ETA {human_eta(snap.eta_seconds)}"
        )
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        self._end_line()


class SilentProgress:
    """Reports nothing (library use, tests)."""

    def message(self, text: str) -> None:
        pass

    def update(self, snap: Snapshot) -> None:
        pass

    def finish(self) -> None:
        pass


def for_stream(stream: TextIO) -> Progress:
    """A bar on a terminal, plain lines otherwise (CI)."""
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return BarProgress(stream)
    return PlainProgress(stream)
