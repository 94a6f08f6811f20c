"""A saved plan that removes leftover throttle rates from several brokers is applied, not
refused: ``apply --plan`` compared actions by kind and topic, and every broker's
``remove_throttles`` has topic "" (found on Kafka 4.1.2, where another run had left rates on
four brokers; tests/realkafka/test_saved_plan_throttles.py)."""

from __future__ import annotations

import json
from pathlib import Path

from test_apply_simulated import Folder, topic
from test_fault_suite import throttles_in

from kgitops.cluster.port import ConfigChange
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.plan.throttles import RATE_KEYS


def test_a_saved_plan_removing_rates_of_two_brokers_is_applied(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 2, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    rate = ConfigChange(set=dict.fromkeys(RATE_KEYS, "1000"))
    assert sim.alter_broker_configs({1: rate, 2: rate}) == {"broker:1": None, "broker:2": None}
    sim.close()
    out = tmp_path / "plan.json"
    code, _, err = demo.cli("plan", "--format", "json", "--out", str(out))
    assert code == 0, err
    removals = [
        a for a in json.loads(out.read_text())["actions"] if a["type"] == "remove_throttles"
    ]
    assert sorted(a["broker"] for a in removals) == [1, 2]
    code, stdout, err = demo.cli_plain("apply", "--plan", str(out), "--yes")
    assert code == 0, stdout + err
    assert throttles_in(demo.state()) == []
