"""The worked examples in the algorithm modules' (and the get views') docstrings are true."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import kgitops.console.views
import kgitops.placement.assignment
import kgitops.placement.consumers
import kgitops.placement.partitioner
import kgitops.placement.rebalance
import kgitops.plan.isrlag
import kgitops.safetext
import kgitops.versionrules


@pytest.mark.parametrize(
    "module",
    [
        kgitops.placement.assignment,
        kgitops.placement.partitioner,
        kgitops.placement.consumers,
        kgitops.placement.rebalance,
        kgitops.console.views,
        kgitops.plan.isrlag,
        kgitops.safetext,
        kgitops.versionrules,
    ],
    ids=lambda m: m.__name__,
)
def test_docstring_examples_hold(module: ModuleType) -> None:
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0
