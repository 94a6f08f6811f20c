"""Small performance helpers shared by the loaders and the planner."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic containers are built.

    A state of a million partitions, or a plan over it, creates millions of small tuples and
    dataclasses that are never cyclic garbage; the collector's repeated passes over the young
    objects would otherwise cost from a fifth to two thirds of the time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
