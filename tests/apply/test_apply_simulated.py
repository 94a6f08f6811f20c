"""apply end to end on the simulated cluster (6 brokers, 3 racks), through the CLI: each change
is followed by a plan with no changes, each move checked against the minimal movement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.names import THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS
from kgitops.placement.assignment import assign_added_partitions, assign_replicas
from tests.helpers import cluster_folder, run_cli

BROKERS = [Broker(i, f"az{(i - 1) % 3 + 1}") for i in range(1, 7)]
RACK = {b.id: b.rack for b in BROKERS}


class Folder:
    def __init__(self, root: Path) -> None:
        self.dir = root / "demo"
        self.dir.mkdir()
        self.state_file = self.dir / ".state" / "demo.json"
        self.cluster()

    def cluster(self, decommission: list[int] | None = None, extra: str = "") -> None:
        extra = (
            "reassignment: {throttleBytesPerSec: 10000000, maxConcurrentMoves: 4}\n"
            + (f"decommission: {decommission}\n" if decommission else "")
            + extra
        )
        cluster_folder(self.dir, brokers=BROKERS, extra=extra)

    def topics(self, *docs: dict[str, Any]) -> None:
        text = []
        for d in docs:
            lines = ["apiVersion: kgitops/v1", "kind: Topic"]
            for k, v in d.items():
                if isinstance(v, dict):
                    lines.append(f"{k}:")
                    lines += [f'  {ck}: "{cv}"' for ck, cv in v.items()]
                else:
                    lines.append(f"{k}: {json.dumps(v)}")
            text.append("\n".join(lines) + "\n")
        (self.dir / "topics.yaml").write_text("---\n".join(text))

    def cli(self, *argv: str) -> tuple[int, str, str]:
        """``kgitops COMMAND DIR ARGS...`` for this folder."""
        return self.cli_plain(argv[0], str(self.dir), *argv[1:])

    def cli_plain(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def plan_json(self) -> dict[str, Any]:
        code, out, err = self.cli("plan", "--format", "json")
        assert code == 0, err
        return json.loads(out)  # type: ignore[no-any-return]

    def apply(self, *flags: str) -> None:
        code, out, err = self.cli("apply", "--yes", *flags)
        assert code == 0, out + err
        code, out, err = self.cli("plan", "--detailed-exitcode")
        assert code == 0, f"a plan after apply must show no changes:\n{out}{err}"
        state = self.state()
        assert not any(state.get("brokerConfigs", {}).values()), "throttle rates left behind"
        for t in state["topics"].values():
            assert not set(t.get("config", {})) & {
                THROTTLE_LEADER_REPLICAS,
                THROTTLE_FOLLOWER_REPLICAS,
            }

    def state(self) -> dict[str, Any]:
        return json.loads(self.state_file.read_text())  # type: ignore[no-any-return]

    def replicas(self, topic: str) -> dict[int, tuple[int, ...]]:
        parts = self.state()["topics"][topic]["partitions"]
        return {int(p): tuple(v["replicas"]) for p, v in parts.items()}

    def set_sizes(self, topic: str, size: int) -> None:
        data = self.state()
        for part in data["topics"][topic]["partitions"].values():
            part["sizeBytes"] = size
        self.state_file.write_text(json.dumps(data))


def racks(replicas: tuple[int, ...]) -> set[str | None]:
    return {RACK[b] for b in replicas}


@pytest.fixture
def demo(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


def topic(name: str, partitions: int, rf: int, **more: Any) -> dict[str, Any]:
    return {"name": name, "partitions": partitions, "replicationFactor": rf, **more}


def test_create_rack_aware_topics_lands_kafkas_assignment(demo: Folder) -> None:
    demo.topics(topic("orders", 6, 3, config={"retention.ms": "1000"}), topic("users", 4, 2))
    plan = demo.plan_json()
    demo.apply()
    for action in plan["actions"]:
        expected = assign_replicas(
            BROKERS,
            action["partitions"],
            action["replicationFactor"],
            start_index=action["startIndex"],
            rack_aware=True,
        )
        assert demo.replicas(action["topic"]) == expected
        assert all(len(racks(r)) == len(r) for r in expected.values())
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "1000"}


def test_expand_keeps_existing_partitions_in_place(demo: Folder) -> None:
    demo.topics(topic("orders", 6, 3))
    demo.apply()
    before = demo.replicas("orders")
    demo.topics(topic("orders", 10, 3))
    demo.apply()
    after = demo.replicas("orders")
    assert {p: after[p] for p in before} == before
    assert after == {**before, **assign_added_partitions(BROKERS, before, 10)}


def test_raise_rf_adds_one_replica_per_partition_and_keeps_the_rest(demo: Folder) -> None:
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    demo.set_sizes("orders", 50_000_000)
    before = demo.replicas("orders")
    demo.topics(topic("orders", 6, 3))
    demo.apply()
    after = demo.replicas("orders")
    for p, old in before.items():
        assert after[p][: len(old)] == old, "existing replicas and the leader stay"
        assert len(set(after[p]) - set(old)) == 1
        assert len(racks(after[p])) == 3


def test_drain_a_broker_moves_only_its_replicas_one_for_one(
    demo: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo.topics(topic("orders", 12, 3), topic("users", 6, 2))
    demo.apply()
    demo.set_sizes("orders", 20_000_000)
    before = {t: demo.replicas(t) for t in ("orders", "users")}
    demo.cluster(decommission=[6])
    in_flight: list[int] = []
    real_sleep = SimulatedCluster.sleep

    def sleep(self: SimulatedCluster, seconds: float) -> None:
        in_flight.append(sum(len(p) for p in self.list_reassignments().values()))
        real_sleep(self, seconds)

    monkeypatch.setattr(SimulatedCluster, "sleep", sleep)
    demo.apply()
    assert 0 < max(in_flight) <= 4, "at most maxConcurrentMoves partitions move at once"
    for t, parts in before.items():
        after = demo.replicas(t)
        for p, old in parts.items():
            new = after[p]
            assert 6 not in new
            if 6 not in old:
                assert new == old, f"{t}-{p} did not hold broker 6 and must not move"
            else:
                assert set(old) - set(new) == {6} and len(set(new) - set(old)) == 1
                assert len(racks(new)) >= len(racks(old))


def test_change_configs_sets_and_removes_exactly(demo: Folder) -> None:
    demo.topics(topic("orders", 3, 3, config={"retention.ms": "1000", "cleanup.policy": "compact"}))
    demo.apply()
    demo.topics(topic("orders", 3, 3, config={"retention.ms": "2000"}))
    demo.apply()
    assert demo.state()["topics"]["orders"]["config"] == {"retention.ms": "2000"}


def test_a_live_config_kgitops_does_not_know_survives_every_apply(demo: Folder) -> None:
    """A vendor's config (or a newer Kafka's) on the topic: no spec can name it, so apply
    leaves it; a known config not in git is still removed."""
    demo.topics(topic("orders", 3, 3, config={"retention.ms": "1000"}))
    demo.apply()
    data = demo.state()
    data["topics"]["orders"]["config"].update(
        {"confluent.placement.constraints": "{}", "segment.ms": "5000"}
    )
    demo.state_file.write_text(json.dumps(data))
    demo.apply()
    demo.apply()
    assert demo.state()["topics"]["orders"]["config"] == {
        "confluent.placement.constraints": "{}",
        "retention.ms": "1000",
    }


def test_delete_needs_permission_and_removes_only_what_the_plan_names(demo: Folder) -> None:
    demo.topics(topic("orders", 3, 3), topic("old", 3, 3))
    demo.apply()
    demo.topics(topic("orders", 3, 3), topic("old", 3, 3, delete=True))
    code, _, err = demo.cli("apply", "--yes")
    assert code == 1 and "--allow-delete" in err
    assert "old" in demo.state()["topics"]
    demo.apply("--allow-delete")
    assert set(demo.state()["topics"]) == {"orders"}


def test_dry_run_lists_throttles_moves_and_removal_and_changes_nothing(demo: Folder) -> None:
    demo.topics(topic("orders", 2, 2))
    demo.apply()
    demo.set_sizes("orders", 1000)
    demo.topics(topic("orders", 2, 3))
    before = demo.state()
    code, out, err = demo.cli("apply", "--dry-run")
    assert code == 0, err
    kinds = [
        " ".join(line.split(" ", 2)[:2]) if line.startswith("Incremental") else line.split()[0]
        for line in out.splitlines()[:-1]
    ]
    assert kinds == [
        "IncrementalAlterConfigs topics",  # APPEND the window's entries
        "IncrementalAlterConfigs brokers",  # the rates
        "AlterPartitionReassignments",
        "IncrementalAlterConfigs topics",  # SUBTRACT them as the window completes
        "IncrementalAlterConfigs brokers",  # the rates go
        "IncrementalAlterConfigs topics",  # the keys SUBTRACT left empty go
    ]
    assert demo.state() == before


def test_the_summary_names_the_change_requests_a_simulated_cluster_received(
    demo: Folder,
) -> None:
    demo.topics(topic("orders", 6, 3), topic("users", 4, 2))
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    # no broker, no wire: the simulated cluster took one CreateTopics, and the summary says
    # so without claiming admin requests were sent
    assert out.splitlines()[-1] == (
        "apply: 2 of 2 action(s) done; 1 change request(s): 1 CreateTopics"
    )
    assert set(demo.state()["topics"]) == {"orders", "users"}
