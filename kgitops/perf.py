"""Small performance helpers shared by the loaders and the planner.

``stage(name)`` marks a stage of a command for ``benchmarks/plan.py``: with
``KGITOPS_PROFILE_STAGES=FILE`` in the environment, the CPU seconds (user + system) of each
stage are added up and written to FILE as JSON when the process ends, e.g.
``{"start-up": 0.3, "state": 0.9, "specs": 0.4, "diff": 0.3, "render": 0.1, "write": 0.1}``
(``start-up``: the CPU the process had used when its first stage began: the interpreter, the
imports, the command line); without it a stage costs one dictionary look-up.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import time
from collections.abc import Iterator

_PROFILE = os.environ.get("KGITOPS_PROFILE_STAGES")
_STAGES: dict[str, float] = {}


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Add the process CPU time spent inside to stage ``name`` (only when profiling)."""
    if not _PROFILE:
        yield
        return
    start = time.process_time()
    if not _STAGES:  # the process's CPU before its first stage: interpreter, imports, parsing
        _STAGES["start-up"] = start
    try:
        yield
    finally:
        _STAGES[name] = _STAGES.get(name, 0.0) + time.process_time() - start


def _write_stages() -> None:  # pragma: no cover - runs at exit, read by the benchmark
    if _PROFILE:
        with open(_PROFILE, "w", encoding="utf-8") as f:
            json.dump(_STAGES, f)


if _PROFILE:
    atexit.register(_write_stages)


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


_ENDS_PROCESS = False


def command_ends_process() -> None:
    """Say that this process exits once its command returns (``kgitops`` run as a program,
    not ``main([...])`` called in-process): ``leave_to_exit`` may then skip freeing."""
    global _ENDS_PROCESS
    _ENDS_PROCESS = True


def leave_to_exit(value: object) -> None:
    """Never free ``value`` (a plan over a million partitions: its state, specs and plan):
    the process is about to exit, and taking millions of objects apart one by one costs a
    tenth of a second the operating system does at once. Nothing in it holds a file or a
    lock: flushing and ``atexit`` run as usual. Only when ``command_ends_process`` was
    called; otherwise nothing happens and the value is freed as usual.

    The value is held by a cycle that only the collector could free, and frozen
    (``gc.freeze``), so the collector never looks at it, at exit neither."""
    if not _ENDS_PROCESS:
        return
    holder: list[object] = [value]
    holder.append(holder)
    gc.freeze()
