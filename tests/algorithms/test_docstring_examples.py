"""The worked examples in the algorithm modules' docstrings are true."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import kgitops.assignment
import kgitops.consumers
import kgitops.partitioner
import kgitops.rebalance


@pytest.mark.parametrize(
    "module",
    [kgitops.assignment, kgitops.partitioner, kgitops.consumers, kgitops.rebalance],
    ids=lambda m: m.__name__,
)
def test_docstring_examples_hold(module: ModuleType) -> None:
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0
