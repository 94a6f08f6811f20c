"""Faults during a reassignment on the simulated cluster: a broker fails, the timeout passes,
Ctrl-C. Each ends with every throttle removed, an honest report, exit 3 (or 1), and a
re-plan that completes the rest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_apply_simulated import Folder, topic

from kgitops.cluster.simulated import SimulatedCluster
from kgitops.names import THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS


def no_throttles_left(demo: Folder, *, except_offline: bool = False) -> None:
    """The simulated cluster's state file holds no throttle config (``except_offline``: but
    on a broker that is down, which Kafka lets no one change until it is back)."""
    state = demo.state()
    offline = {str(b["id"]) for b in state["brokers"] if b.get("online") is False}
    rates = {b: c for b, c in state.get("brokerConfigs", {}).items() if c}
    assert not (set(rates) - offline if except_offline else rates), rates
    for t in state["topics"].values():
        assert not set(t.get("config", {})) & {THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS}
    assert not state.get("reassignments"), "no move may be left in flight"


def hook_sleep(monkeypatch: pytest.MonkeyPatch, hook: Callable[[SimulatedCluster], None]) -> None:
    real = SimulatedCluster.sleep

    def sleep(self: SimulatedCluster, seconds: float) -> None:
        real(self, seconds)
        hook(self)

    monkeypatch.setattr(SimulatedCluster, "sleep", sleep)


def test_a_broker_failing_mid_reassignment(
    rf_raise: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = rf_raise
    moves = demo.plan_json()["actions"][0]["moves"]
    victim = moves["0"]["to"][-1]  # the broker partition 0 is being copied to

    def fail(cluster: SimulatedCluster) -> None:
        if cluster.state.clock >= 5 and cluster.state.brokers[victim].online:
            cluster.fail_broker(victim)

    hook_sleep(monkeypatch, fail)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err
    assert f"broker(s) [{victim}] went offline during the move; cancelled" in err
    assert "NOT done: ~ reassign orders" in err
    no_throttles_left(demo, except_offline=True)
    replicas = demo.replicas("orders")
    for p, m in moves.items():
        got = list(replicas[int(p)])
        assert got in (m["from"], m["to"]), "every partition is on its old or its new replicas"
        if victim in m["to"] and got == m["to"]:
            pytest.fail(f"partition {p} cannot have completed onto offline broker {victim}")

    monkeypatch.undo()
    SimulatedCluster.open(str(demo.state_file), []).restore_broker(victim)
    again = demo.plan_json()["actions"]
    left = {p for p, m in moves.items() if list(replicas[int(p)]) == m["from"]}
    assert [a["type"] for a in again] == ["reassign", "remove_throttles"]
    assert set(again[0]["moves"]) == left
    assert again[1]["broker"] == victim  # its rates could not be taken off while it was down
    demo.apply()
    no_throttles_left(demo)


def test_a_timeout_cancels_the_moves_in_flight(rf_raise: Folder) -> None:
    demo = rf_raise
    text = (
        (demo.dir / "cluster.yaml")
        .read_text()
        .replace("maxConcurrentMoves: 4}", "maxConcurrentMoves: 4, timeoutSeconds: 60}")
    )
    (demo.dir / "cluster.yaml").write_text(text)
    # the plan's ETA (30 s at the throttle) fits the timeout, but producers write faster than
    # the throttle copies (25 MB/s per partition against 10 MB/s): no move can catch up
    SimulatedCluster.open(str(demo.state_file), []).set_produce_rate("orders", 200_000_000)
    before = demo.replicas("orders")
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err  # nothing finishes, but moves were submitted: not exit 1
    assert "timed out after 1m" in err
    no_throttles_left(demo)
    assert demo.replicas("orders") == before
    assert demo.plan_json()["actions"][0]["type"] == "reassign"


def test_ctrl_c_during_the_wait(rf_raise: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = rf_raise

    def interrupt(cluster: SimulatedCluster) -> None:
        if cluster.state.clock >= 25:  # the first window (4 moves, ~20 s) has finished
            raise KeyboardInterrupt

    hook_sleep(monkeypatch, interrupt)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err
    assert "apply was interrupted (Ctrl-C)" in err
    assert "interrupted (Ctrl-C); cancelled" in err
    no_throttles_left(demo)
    monkeypatch.undo()
    again = demo.plan_json()["actions"]
    assert [a["type"] for a in again] == ["reassign"]
    assert 0 < len(again[0]["moves"]) < 8
    demo.apply()


def test_no_wait_leaves_moves_running_and_a_later_apply_finishes_them(rf_raise: Folder) -> None:
    demo = rf_raise
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 3, out + err  # 4 of 8 submitted, the rest wait for a later apply
    assert "run `kgitops apply` again" in out + err
    state = demo.state()
    assert len(state["reassignments"]["orders"]) == 4
    assert any(state["brokerConfigs"].values()), "the throttles stay while moves run"
    demo.apply()


def test_after_no_wait_an_apply_with_no_changes_waits_for_the_moves_and_removes_throttles(
    tmp_path: Path,
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 100_000_000)
    demo.topics(topic("orders", 4, 3))
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 0, out + err
    assert (
        "running: ~ reassign orders (in flight: 4 partition(s) moving)\n    partition 0 moving to"
        in out
    )
    assert len(demo.state()["reassignments"]["orders"]) == 4
    code, out, err = demo.cli("plan", "--detailed-exitcode")
    assert code == 0, "moves in flight to their targets are not changes"
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    assert "done: ~ reassign orders (moves in flight from an earlier apply)" in out
    no_throttles_left(demo)


def _no_wait_drain_of_consumer_offsets(tmp_path: Path) -> tuple[Folder, str]:
    """A folder of one topic applied, a ``__consumer_offsets`` of two 100 MB partitions on
    broker 1, then ``apply --no-wait`` of broker 1's drain: the folder and apply's output."""
    from kgitops.cluster.port import NewTopic

    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    sim.create_topics(
        [NewTopic("__consumer_offsets", {0: (1, 2), 1: (2, 3)}, {"cleanup.policy": "compact"})]
    )
    demo.set_sizes("__consumer_offsets", 100_000_000)
    demo.cluster(decommission=[1])
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 0, out + err
    return demo, out


def test_a_no_wait_drain_of_consumer_offsets_leaves_throttles_the_next_apply_removes(
    tmp_path: Path,
) -> None:
    """A drain moves ``__consumer_offsets`` throttled like any move; after a ``--no-wait``
    drain whose moves have finished, the throttle left on it is apply's own leftover: the next
    plan removes exactly that, and the topic's other configs are as the brokers set them."""
    demo, out = _no_wait_drain_of_consumer_offsets(tmp_path)
    assert "~ reassign __consumer_offsets" in out
    code, out, err = demo.cli("simulate", "advance", "1h")
    assert code == 0, out + err
    offsets = demo.state()["topics"]["__consumer_offsets"]
    assert set(offsets["config"]) & {THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS}
    plan = demo.plan_json()
    kinds = {(a["type"], a.get("topic", "")) for a in plan["actions"]}
    assert ("remove_throttles", "__consumer_offsets") in kinds
    assert {k for k, t in kinds if t == "__consumer_offsets"} == {"remove_throttles"}
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    no_throttles_left(demo)
    assert demo.state()["topics"]["__consumer_offsets"]["config"] == {"cleanup.policy": "compact"}
    assert all(1 not in p["replicas"] for p in offsets["partitions"].values())


def test_an_apply_waits_for_the_consumer_offsets_moves_a_no_wait_drain_left_running(
    tmp_path: Path,
) -> None:
    """No digest names ``__consumer_offsets`` (it is no topic of the folder's), so a later
    apply's plan leaves its moves in flight out (REASSIGNMENT_IN_FLIGHT); the apply still waits
    for those kgitops started, as for the folder's own topics, and removes their throttles
    (seen on Kafka 4.1.2: an apply exited 0 with a drain's move of the topic still running and
    its throttle entries still set)."""
    demo, out = _no_wait_drain_of_consumer_offsets(tmp_path)
    assert demo.state().get("reassignments", {}).get("__consumer_offsets"), "left running"
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    assert "~ reassign __consumer_offsets (moves in flight from an earlier apply)" in out, out
    no_throttles_left(demo)
    offsets = demo.state()["topics"]["__consumer_offsets"]
    assert all(1 not in p["replicas"] for p in offsets["partitions"].values())
    assert offsets["config"] == {"cleanup.policy": "compact"}


def test_at_the_timeout_an_earlier_applys_moves_are_left_running_not_cancelled(
    tmp_path: Path,
) -> None:
    """The moves a ``--no-wait`` apply left running are not this apply's: its timeout does
    not throw their copying away (the time gate, which counts only the plan's own moves, could
    not have warned). They are left running with their throttles, the apply says so and exits
    3, and the next apply waits for them as before."""
    demo, _ = _no_wait_drain_of_consumer_offsets(tmp_path)
    flying = demo.state()["reassignments"]["__consumer_offsets"]
    code, out, err = demo.cli("apply", "--yes", "--timeout", "1s", "--poll-interval", "1")
    assert code == 3, out + err
    assert "left running, still throttled" in out + err, out + err
    assert "cancelled" not in out + err, out + err
    state = demo.state()
    assert state["reassignments"]["__consumer_offsets"] == flying
    offsets = state["topics"]["__consumer_offsets"]
    assert {THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS} <= set(offsets["config"])
    assert any(state.get("brokerConfigs", {}).values()), "the throttle rates stay"
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    no_throttles_left(demo)
    parts = demo.state()["topics"]["__consumer_offsets"]["partitions"]
    assert all(1 not in p["replicas"] for p in parts.values())


@pytest.mark.parametrize("moved", ["__consumer_offsets", "payments"])
def test_an_apply_with_no_changes_waits_for_a_drains_moves_outside_the_folder(
    tmp_path: Path, moved: str
) -> None:
    """The drained broker holds replicas only of a topic no file of the folder names (Kafka's
    ``__consumer_offsets``, or a topic not in git): after a ``--no-wait`` drain the plan has
    no changes, and ``apply`` still waits for the moves kgitops started and removes their
    throttles."""
    from kgitops.cluster.port import NewTopic

    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 2))
    demo.apply()
    held = {b for r in demo.replicas("orders").values() for b in r}
    drained = min(b for b in range(1, 7) if b not in held)
    others = sorted(b for b in range(1, 7) if b != drained)
    sim = SimulatedCluster.open(str(demo.state_file), [])
    sim.create_topics([NewTopic(moved, {0: (drained, others[0]), 1: (others[1], drained)}, {})])
    demo.set_sizes(moved, 100_000_000)
    demo.cluster(decommission=[drained])
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 0, out + err
    assert demo.state().get("reassignments", {}).get(moved), "left running"
    code, out, err = demo.cli("plan", "--detailed-exitcode")
    assert code == 0, "moves in flight to their targets are no change: " + out + err
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    assert f"~ reassign {moved} (moves in flight from an earlier apply)" in out, out
    no_throttles_left(demo)
    parts = demo.state()["topics"][moved]["partitions"]
    assert all(drained not in p["replicas"] for p in parts.values())


def test_at_the_timeout_the_plans_own_moves_are_cancelled_an_earlier_applys_left_running(
    tmp_path: Path,
) -> None:
    """Both kinds at one timeout: the plan's own move is cancelled and its throttle entries go,
    the move a ``--no-wait`` apply left running keeps running with its entries and the rates of
    its brokers; nothing says the throttles were removed. The throttle record says an apply
    left moves running (not one that never finished), so once the move ends the next plan's
    ``~ remove_throttles`` says so."""
    demo, _ = _no_wait_drain_of_consumer_offsets(tmp_path)
    demo.set_sizes("__consumer_offsets", 2_000_000_000)  # 200 s at the throttle
    demo.set_sizes("orders", 100_000_000)
    SimulatedCluster.open(str(demo.state_file), []).set_produce_rate("orders", 200_000_000)
    flying = demo.state()["reassignments"]["__consumer_offsets"]
    demo.topics(topic("orders", 1, 3))  # orders-0 [4, 2] -> [4, 2, 3]: never catches up
    code, out, err = demo.cli("apply", "--yes", "--timeout", "20s", "--poll-interval", "1")
    assert code == 3, out + err
    assert "partition 0: timed out after 20s; cancelled, back to [4, 2]" in err, err
    assert "timed out after 20s; moving since an earlier apply, so left running" in err, err
    assert "replication throttles removed" not in out + err
    state = demo.state()
    assert state["reassignments"] == {"__consumer_offsets": flying}
    assert demo.replicas("orders") == {0: (4, 2)}
    offsets = state["topics"]["__consumer_offsets"]["config"]
    assert offsets[THROTTLE_LEADER_REPLICAS] == "0:1,0:2"
    assert offsets[THROTTLE_FOLLOWER_REPLICAS] == "0:3"
    orders = state["topics"]["orders"]["config"]
    assert "0:3" not in orders.get(THROTTLE_FOLLOWER_REPLICAS, ""), "the cancelled move's go"
    rated = {b for b, c in state["brokerConfigs"].items() if c}
    assert rated == {"1", "2", "3"}, "the kept move's brokers keep their rates, broker 4 not"
    record = json.loads(Path(str(demo.state_file) + ".apply-throttles.json").read_text())
    assert record["state"] == "left-running"
    assert record["brokers"] == [1, 2, 3]
    assert record["topics"]["__consumer_offsets"] == offsets_entries(offsets)
    code, out, err = demo.cli("simulate", "advance", "1h")
    assert code == 0, out + err
    demo.topics(topic("orders", 1, 2))
    code, out, err = demo.cli("plan")
    assert "~ remove_throttles __consumer_offsets" in out, out
    assert "that left moves running" in out and "did not finish" not in out, out
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    no_throttles_left(demo)
    assert not Path(str(demo.state_file) + ".apply-throttles.json").exists()


def offsets_entries(config: dict[str, str]) -> dict[str, str]:
    return {k: config[k] for k in (THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS)}


@pytest.mark.parametrize("before_the_run", [0, 30])
def test_at_the_timeout_with_a_move_left_running_the_throttles_of_one_that_ended_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before_the_run: int
) -> None:
    """A ``--no-wait`` drain left two moves running; the short one ends during the next
    apply's wait, or (``before_the_run``) after its plan was made (which kept its throttles, as
    it was still in flight) and before the apply read the moves in flight. That apply removes
    its throttles, keys and all (docs/apply.md) -- also when at its timeout it leaves the
    other, longer move running, whose entries and rates stay."""
    from kgitops.apply.reassign import Reassigner
    from kgitops.cluster.port import NewTopic

    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    sim.create_topics([NewTopic("__consumer_offsets", {0: (1, 2)}, {"cleanup.policy": "compact"})])
    demo.set_sizes("__consumer_offsets", 2_000_000_000)  # 200 s at the throttle
    demo.set_sizes("orders", 50_000_000)  # 5 s
    demo.cluster(decommission=[1])
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 0, out + err
    assert set(demo.state()["reassignments"]) == {"orders", "__consumer_offsets"}
    real = Reassigner._start

    def start(self: Reassigner, *args: object) -> None:
        for _ in range(before_the_run):  # orders' move ends after the plan, before the run
            self.admin.sleep(1)
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Reassigner, "_start", start)
    code, out, err = demo.cli("apply", "--yes", "--timeout", "20s", "--poll-interval", "1")
    assert code == 3, out + err
    assert "so left running, still throttled" in err, err
    state = demo.state()
    assert set(state["reassignments"]) == {"__consumer_offsets"}
    assert demo.replicas("orders") == {0: (4, 2)}
    assert not set(state["topics"]["orders"]["config"]) & {
        THROTTLE_LEADER_REPLICAS,
        THROTTLE_FOLLOWER_REPLICAS,
    }, state["topics"]["orders"]["config"]
    assert {b for b, c in state["brokerConfigs"].items() if c} == {"1", "2", "3"}
    monkeypatch.undo()
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    no_throttles_left(demo)
