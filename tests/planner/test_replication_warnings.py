"""RF_ONE and MIN_ISR_EQUALS_RF: validate and plan say the same thing, from one function
(kgitops/spec/durability.py), and neither says RF_ONE on a one-broker cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
from planner_builders import brokers, live, specs, topic

from kgitops.model import Broker, ClusterState
from kgitops.plan.diff import compute_plan
from kgitops.spec.load import load_specs
from tests.helpers import cluster_folder


def _validate(tmp_path: Path, rf: int, config: str, known: tuple[Broker, ...]) -> list[str]:
    t = f"apiVersion: kgitops/v1\nkind: Topic\nname: t\npartitions: 1\nreplicationFactor: {rf}\n"
    cluster_folder(tmp_path, "test", bootstrap="kafka:9092", files={"t.yaml": t + config})
    found = load_specs(str(tmp_path), brokers=known)
    assert not found.errors, [str(d) for d in found.errors]
    return [d.message for d in found.diagnostics if d.severity == "warning"]


def _plan(rf: int, config: dict[str, str], known: tuple[Broker, ...]) -> list[str]:
    state = ClusterState(brokers=known, topics={"t": live("t", {0: tuple(range(rf))}, config)})
    plan, _ = compute_plan(specs(topic("t", 1, rf, config=config)), state, None)
    return [w.message for w in plan.warnings]


@pytest.mark.parametrize(
    ("n_brokers", "rf", "config"),
    [(1, 1, {}), (3, 1, {}), (3, 3, {"min.insync.replicas": "3"}), (3, 2, {})],
)
def test_validate_and_plan_give_the_same_replication_warnings(
    tmp_path: Path, n_brokers: int, rf: int, config: dict[str, str]
) -> None:
    known = brokers(n_brokers)
    text = "".join(f"config:\n  {k}: {v}\n" for k, v in config.items())
    assert _validate(tmp_path, rf, text, known) == _plan(rf, config, known)


def test_a_one_broker_cluster_gets_no_rf_one_warning_from_either(tmp_path: Path) -> None:
    assert _validate(tmp_path, 1, "", brokers(1)) == []
    assert _plan(1, {}, brokers(1)) == []


def test_replication_factor_one_on_three_brokers_is_a_warning_in_both(tmp_path: Path) -> None:
    (message,) = _plan(1, {}, brokers(3))
    assert message.startswith("replicationFactor 1: the topic has one copy")
    assert _validate(tmp_path, 1, "", brokers(3)) == [message]
