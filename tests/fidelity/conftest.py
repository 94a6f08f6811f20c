"""Shared helpers for the fidelity tests: each test there follows one rule of Kafka's own
source (named in its docstring) and checks it on the simulated cluster and, where the rule is
about what is sent, on the kafka-python adapter driven by a recording fake transport."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker

BROKERS = [Broker(1, "az1"), Broker(2, "az2"), Broker(3, "az3"), Broker(4, "az1"), Broker(5, "az2")]


@pytest.fixture
def sim(tmp_path: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(tmp_path / "state.json"), BROKERS)


def make(sim: SimulatedCluster, name: str, assignment: dict[int, tuple[int, ...]]) -> None:
    assert sim.create_topics([NewTopic(name, assignment)]) == {name: None}
