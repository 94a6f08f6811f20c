"""SIGTERM and SIGHUP stop an apply the way Ctrl-C does.

CI cancels a job with SIGTERM, ``timeout`` sends SIGTERM, Kubernetes SIGTERM then SIGKILL
after the grace period, a closed terminal SIGHUP. Each becomes ``Interrupted`` (a
``KeyboardInterrupt``), so apply runs the one documented path (docs/apply.md): moves in
flight (every move whose submit may have been sent) are cancelled, the throttles removed and
the cluster read back, the report printed, exit 3 (130 when no change had been sent yet).
A second signal while that clean-up runs is ignored (said on stderr) so the
clean-up is not cut short; SIGKILL cannot be caught -- then the next plan cleans up
(``~ remove_throttles``).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s is not None
)


class Interrupted(KeyboardInterrupt):
    """A signal asked apply to stop; ``why`` names it (``interrupted (SIGTERM)``)."""

    def __init__(self, name: str = "Ctrl-C") -> None:
        self.why = f"interrupted ({name})"
        super().__init__(self.why)


def why(exc: BaseException) -> str:
    """``interrupted (SIGTERM)`` for a signal, ``interrupted (Ctrl-C)`` for Ctrl-C."""
    return exc.why if isinstance(exc, Interrupted) else "interrupted (Ctrl-C)"


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` once; later ones
    are ignored until the block ends (the clean-up of the first must finish)."""
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if fired:
            print(
                f"{signal.Signals(signum).name}: still cancelling moves and removing throttles; "
                "wait for the report",
                file=sys.stderr,
                flush=True,
            )
            return
        fired.append(signum)
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        raise Interrupted(name)

    with handled(SIGNALS, handler):
        yield


@contextmanager
def handled(
    signals: Iterable[int], handler: Callable[[int, FrameType | None], None]
) -> Iterator[None]:
    """Within the block, ``handler`` handles ``signals``; the previous handlers come back
    after it. Off the main thread (where signals cannot be handled) the block just runs."""
    try:
        previous = {s: signal.signal(s, handler) for s in signals}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
