"""The apply tests' shared folder: ``rf_raise``, the simulated demo cluster of
test_apply_simulated with a replication raise planned and not applied yet."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_apply_simulated import Folder, topic


@pytest.fixture
def rf_raise(tmp_path: Path) -> Folder:
    """orders: 8 partitions of 100 MB, RF 2 -> 3 pending (10 MB/s, 4 moves at a time)."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 8, 2))
    demo.apply()
    demo.set_sizes("orders", 100_000_000)
    demo.topics(topic("orders", 8, 3))
    return demo
