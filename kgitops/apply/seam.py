"""The public seam between apply's run (``kgitops.apply.run``) and a step module that runs
some kinds of the plan (``kgitops.apply.access``): the step asks for its actions, reports a
failure, and sends one batched port call; the run keeps the outcomes.

``send`` is shared: the run (which derives from ``RunSeam``) inherits it. A step module
imports this protocol, never the run itself, so the run may import the step::

    run.py  ->  access.py  ->  seam.py  <-  run.py (its _Run implements RunSeam)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from kgitops.apply.recorder import Recorder
from kgitops.cluster.port import Results
from kgitops.plan.actions import Action

T = TypeVar("T")


class RunSeam(Protocol):
    """What a step drives of a run of apply (see the module docstring)."""

    admin: Recorder

    def indexed(self, kind: type[Action]) -> list[tuple[int, Any]]:
        """The plan's actions of ``kind`` still to run, with their index; those after a lost
        cluster or on a topic whose earlier action failed get their outcome instead."""
        ...

    def fail(self, i: int, error: object, items: Sequence[str] = ()) -> None:
        """Action ``i`` failed (in doubt when ``error`` is a timeout)."""
        ...

    def batch(self, what: str, items: list[tuple[int, Any]], call: Callable[[], Results]) -> None:
        """One port call for ``items``; its per-item results (by each action's ``topic``,
        its subject) become their outcomes."""
        ...

    def send(
        self,
        kind: type[Action],
        what: str,
        call: Callable[[T], Results],
        request: Callable[[list[Any]], T],
    ) -> None:
        """``batch`` for the plan's actions of ``kind`` still to run (``indexed``): one
        ``call`` with the ``request`` made of them."""
        items = self.indexed(kind)
        self.batch(what, items, lambda: call(request([a for _, a in items])))
