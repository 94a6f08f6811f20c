"""The fault suite of issue 13: an operator's worst moments on the simulated cluster, each
ending with the simulated cluster's state file read back -- no throttle left, no move left in
flight, ``status`` HEALTHY only when it is true -- and a re-plan that converges.

kill -9 and SIGTERM are sent to a real ``kgitops apply`` process at the worst moment: a
driver stops the process from inside the simulated cluster's clock, after the first window
of moves is in flight with its throttles set (deterministic: no wall-clock race).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_apply_simulated import Folder, topic

import kgitops
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.names import THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS
from kgitops.plan.throttles import RATE_KEYS

ROOT = str(Path(kgitops.__file__).resolve().parent.parent)

DRIVER = """
import os, signal, sys
from kgitops import cli
from kgitops.cluster.simulated import SimulatedCluster

sig, method, at = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
real = getattr(SimulatedCluster, method)

def hooked(self, *args, **kwargs):
    if method != "sleep" or self.state.clock >= at:
        os.kill(os.getpid(), sig)
    return real(self, *args, **kwargs)

setattr(SimulatedCluster, method, hooked)
sys.exit(cli.main(sys.argv[4:]))
"""


def throttles_in(state: dict[str, Any]) -> list[str]:
    """Every throttle config in a state file, as ``where: key``."""
    found = [
        f"broker {b}: {k}"
        for b, c in state.get("brokerConfigs", {}).items()
        for k in c
        if k in RATE_KEYS
    ]
    found += [
        f"topic {n}: {k}"
        for n, t in state["topics"].items()
        for k in t.get("config", {})
        if k in (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
    ]
    return found


def converged(demo: Folder) -> None:
    """The cluster is what git says: plan empty, no throttle, no move, status HEALTHY."""
    code, out, err = demo.cli("plan", "--detailed-exitcode")
    assert code == 0, out + err
    state = demo.state()
    assert throttles_in(state) == []
    assert not state.get("reassignments")
    code, out, _ = demo.cli("status")
    assert code == 0 and "HEALTHY" in out, out


def run_killed(
    demo: Folder, sig: int, when: str, at_clock: float, *argv: str
) -> subprocess.CompletedProcess[str]:
    """``kgitops ARGV`` in a process that gets ``sig`` when it calls the simulated
    cluster's ``when`` (for ``sleep``: once the simulated clock reaches ``at_clock``)."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(int(sig)), when, str(at_clock), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_readme_flow_no_wait_then_advance_then_apply_leaves_no_throttle(
    rf_raise: Folder,
) -> None:
    demo = rf_raise
    demo.cli("apply", "--yes", "--no-wait")
    assert throttles_in(demo.state()), "the moves run throttled"
    code, _, err = demo.cli("simulate", "advance", "10m")
    assert code == 0, err
    # the moves are done, their throttles are not: status says so, the plan removes them
    assert not demo.state().get("reassignments")
    code, out, _ = demo.cli("status")
    assert code == 2 and "Replication throttles left" in out, out
    removals = [a for a in demo.plan_json()["actions"] if a["type"] == "remove_throttles"]
    assert removals and all(
        "set by `kgitops apply --no-wait` (pid" in a["reason"] for a in removals
    ), removals
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    assert "done: ~ remove_throttles" in out
    assert throttles_in(demo.state()) == []
    converged(demo)
    assert not Path(str(demo.state_file) + ".apply-throttles.json").exists()


def test_a_plan_after_no_wait_keeps_the_throttles_of_the_moves_still_running(
    rf_raise: Folder,
) -> None:
    demo = rf_raise
    demo.cli("apply", "--yes", "--no-wait")
    flying = demo.state()["reassignments"]["orders"]
    actions = demo.plan_json()["actions"]
    assert [a["type"] for a in actions] == ["reassign"]  # the other 4; no throttle is stale
    assert set(actions[0]["moves"]).isdisjoint(flying)


def test_kill_9_mid_apply_then_plan_and_apply_converge(rf_raise: Folder) -> None:
    demo = rf_raise
    done = run_killed(demo, signal.SIGKILL, "sleep", 5, "apply", str(demo.dir), "--yes")
    assert done.returncode == -signal.SIGKILL
    state = demo.state()
    assert state["reassignments"]["orders"], "killed with moves in flight"
    assert throttles_in(state), "and their throttles set: nobody could take them off"
    code, out, _ = demo.cli("status")
    assert code == 2, out  # under-replicated while moving, throttles: not healthy
    record = json.loads(Path(str(demo.state_file) + ".apply-throttles.json").read_text())
    assert record["state"] == "running" and record["brokers"], "written before the throttles"
    code, _, err = demo.cli("simulate", "advance", "10m")  # the killed run's moves finish
    assert code == 0, err
    removals = [a for a in demo.plan_json()["actions"] if a["type"] == "remove_throttles"]
    assert removals and all(
        "set by a `kgitops apply` that did not finish (pid" in a["reason"] for a in removals
    ), removals
    code, out, err = demo.cli("apply", "--yes")  # removes them, does the rest
    assert code == 0, out + err
    converged(demo)
    assert all(len(r) == 3 for r in demo.replicas("orders").values())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_mid_apply_cancel_remove_throttles_and_report(
    rf_raise: Folder, sig: signal.Signals
) -> None:
    demo = rf_raise
    before = demo.replicas("orders")
    done = run_killed(demo, sig, "sleep", 25, "apply", str(demo.dir), "--yes")
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"apply was interrupted ({sig.name})" in done.stderr
    assert f"interrupted ({sig.name}); cancelled" in done.stderr
    assert "NOT done: ~ reassign orders" in done.stderr
    state = demo.state()
    assert throttles_in(state) == []
    assert not state.get("reassignments"), "every move in flight was cancelled"
    after = demo.replicas("orders")
    moved = [p for p in after if after[p] != before[p]]
    assert 0 < len(moved) < 8, "the first window finished, the rest did not"
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    converged(demo)


def test_sigterm_before_anything_changed_exits_130_and_changes_nothing(rf_raise: Folder) -> None:
    demo = rf_raise
    before = demo.state()
    done = run_killed(
        demo, signal.SIGTERM, "alter_topic_configs", 0, "apply", str(demo.dir), "--yes"
    )
    assert done.returncode == 130, done.stdout + done.stderr
    assert "apply was interrupted (SIGTERM)" in done.stderr
    after = demo.state()
    assert throttles_in(after) == [] and not after.get("reassignments")
    assert after["topics"] == before["topics"]


def unmanaged_on_broker_2(tmp_path: Path, policy: str) -> Folder:
    """orders (in git) and legacy (not in git, RF 1, all on broker 2); then decommission 2."""
    demo = Folder(tmp_path)
    demo.cluster(extra=f"unmanagedTopics: {policy}\n")
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    sim.create_topics([NewTopic("legacy", {0: (2,), 1: (2,)})])
    sim.set_size("legacy", 5_000_000)
    demo.cluster(decommission=[2], extra=f"unmanagedTopics: {policy}\n")
    return demo


def test_a_drain_moves_unmanaged_replicas_too(tmp_path: Path) -> None:
    demo = unmanaged_on_broker_2(tmp_path, "warn")
    plan = demo.plan_json()
    legacy = [a for a in plan["actions"] if a["type"] == "reassign" and a["topic"] == "legacy"]
    assert len(legacy) == 1
    assert all("not in git" in m["reason"] for m in legacy[0]["moves"].values())
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    state = demo.state()
    on_2 = [
        f"{n}-{p}"
        for n, t in state["topics"].items()
        for p, ps in t["partitions"].items()
        if 2 in ps["replicas"]
    ]
    assert on_2 == []
    assert throttles_in(state) == []
    code, out, _ = demo.cli("status")
    assert code == 0, out
    code, _, err = demo.cli("simulate", "fail-broker", "2")
    assert code == 0, err
    code, out, _ = demo.cli("status")
    assert "offline" not in out.split("\n", 2)[1], out  # no partition went offline with it


def test_with_unmanaged_ignore_the_plan_names_every_topic_the_drain_leaves(
    tmp_path: Path,
) -> None:
    demo = unmanaged_on_broker_2(tmp_path, "ignore")
    plan = demo.plan_json()
    assert not [a for a in plan["actions"] if a["topic"] == "legacy"]
    (warning,) = [w for w in plan["warnings"] if w["code"] == "DRAIN_INCOMPLETE"]
    assert "legacy (2 partition(s))" in warning["message"]
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    code, out, _ = demo.cli("status")
    assert code == 2 and "broker 2: 2 replica(s)" in out, out


OFFSETS = "__consumer_offsets"


@pytest.mark.parametrize("policy", ["warn", "ignore"])
def test_a_drain_moves_consumer_offsets_whatever_unmanaged_topics_says(
    tmp_path: Path, policy: str
) -> None:
    """Removing a broker that still holds a ``__consumer_offsets`` replica loses consumer
    offsets, so a drain moves Kafka's internal topics like any topic not in git, by the same
    minimal-movement rule, even under ``unmanagedTopics: ignore`` (they are never
    "unmanaged"); status is UNHEALTHY until the broker holds none, HEALTHY only then."""
    demo = Folder(tmp_path)
    demo.cluster(extra=f"unmanagedTopics: {policy}\n")
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    layout = {p: (p % 6 + 1, (p + 1) % 6 + 1, (p + 2) % 6 + 1) for p in range(12)}
    assert sim.create_topics([NewTopic(OFFSETS, layout, {"cleanup.policy": "compact"})]) == {
        OFFSETS: None
    }
    sim.set_size(OFFSETS, 2_000_000)
    sim.close()
    before = demo.replicas(OFFSETS)
    assert sum(2 in r for r in before.values()) == 6
    demo.cluster(decommission=[2], extra=f"unmanagedTopics: {policy}\n")
    code, out, _ = demo.cli("status")
    assert code == 2 and "broker 2:" in out, out

    plan = demo.plan_json()
    (move,) = [a for a in plan["actions"] if a["topic"] == OFFSETS]
    assert move["type"] == "reassign"
    assert sorted(move["moves"]) == sorted(str(p) for p, r in before.items() if 2 in r)
    assert all("internal topic" in m["reason"] for m in move["moves"].values())
    codes = {(w["topic"], w["code"]) for w in plan["warnings"]}
    assert not {c for _, c in codes} & {"DRAIN_INCOMPLETE", "DRAIN_BLOCKED"}, codes
    assert (OFFSETS, "UNMANAGED_TOPIC") not in codes

    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    after = demo.replicas(OFFSETS)
    assert [p for p, r in after.items() if 2 in r] == [], "no offsets replica left on 2"
    for p, r in after.items():
        assert len(r) == 3 and len(set(r)) == 3, "the replication factor is kept"
        assert set(before[p]) - {2} <= set(r), "only the replica on broker 2 moved"
        if 2 not in before[p]:
            assert r == before[p], "a partition not on broker 2 never moves"
    assert demo.state()["topics"][OFFSETS]["config"] == {"cleanup.policy": "compact"}
    converged(demo)
    code, _, err = demo.cli("simulate", "fail-broker", "2")
    assert code == 0, err
    code, out, _ = demo.cli("status")
    assert "offline" not in out.split("\n", 2)[1], out


def test_a_plan_longer_than_the_timeout_warns_and_apply_refuses_it_unless_told(
    rf_raise: Folder,
) -> None:
    demo = rf_raise
    text = (demo.dir / "cluster.yaml").read_text()
    (demo.dir / "cluster.yaml").write_text(
        text.replace("maxConcurrentMoves: 4}", "maxConcurrentMoves: 4, timeoutSeconds: 20}")
    )
    plan = demo.plan_json()
    (warning,) = [w for w in plan["warnings"] if w["code"] == "TIMEOUT_TOO_SHORT"]
    assert warning["data"]["etaSeconds"] > 20 == warning["data"]["timeoutSeconds"]
    before = demo.state()
    code, out, err = demo.cli("apply", "--yes")
    assert code == 1, out + err
    assert "longer than the apply timeout" in err and "--timeout" in err
    assert demo.state()["topics"] == before["topics"]  # nothing was started
    assert throttles_in(demo.state()) == []
    code, out, err = demo.cli("apply", "--yes", "--timeout", "10m")
    assert code == 0, out + err
    converged(demo)


def test_no_wait_is_allowed_past_the_timeout_one_window_at_a_time(rf_raise: Folder) -> None:
    demo = rf_raise
    text = (demo.dir / "cluster.yaml").read_text()
    (demo.dir / "cluster.yaml").write_text(
        text.replace("maxConcurrentMoves: 4}", "maxConcurrentMoves: 4, timeoutSeconds: 20}")
    )
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 3, out + err  # one window submitted, the rest not yet
    assert len(demo.state()["reassignments"]["orders"]) == 4


BLOCKER = """
import os, sys, time
from kgitops import cli
from kgitops.cluster.simulated import SimulatedCluster

real = SimulatedCluster.sleep
go = sys.argv[1]

def sleep(self, seconds):
    open(go + ".waiting", "w").close()
    while not os.path.exists(go):
        time.sleep(0.02)
    return real(self, seconds)

SimulatedCluster.sleep = sleep
sys.exit(cli.main(sys.argv[2:]))
"""


def test_a_second_apply_while_one_runs_refuses_and_changes_nothing(
    rf_raise: Folder, tmp_path: Path
) -> None:
    demo = rf_raise
    go = str(tmp_path / "go")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    first = subprocess.Popen(
        [sys.executable, "-c", BLOCKER, go, "apply", str(demo.dir), "--yes"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(3000):  # the first is in its first wait, moves in flight
            if os.path.exists(go + ".waiting") or first.poll() is not None:
                break
            time.sleep(0.01)
        assert os.path.exists(go + ".waiting"), first.communicate()
        during = demo.state()
        code, out, err = demo.cli("apply", "--yes")
        assert code == 1, out + err
        assert "another `kgitops apply` is running on cluster 'demo' (pid" in err
        assert demo.state() == during, "the second apply changed nothing"
    finally:
        Path(go).touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, out + err
    converged(demo)


def test_the_apply_lock_of_a_real_cluster_never_goes_outside_its_folder(tmp_path: Path) -> None:
    from kgitops.apply.exclusive import exclusive_apply
    from kgitops.errors import FileRefused
    from kgitops.model import ClusterSpec

    folder, elsewhere = tmp_path / "prod", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / ".kgitops").symlink_to(elsewhere)
    cluster = ClusterSpec(name="prod", directory=str(folder), bootstrap_servers=("k:9092",))
    with pytest.raises(FileRefused, match="outside the cluster folder"), exclusive_apply(cluster):
        pass
    assert list(elsewhere.iterdir()) == []


TWICE = """
import os, signal, sys
from kgitops import cli
from kgitops.cluster.simulated import SimulatedCluster

real_sleep, real_alter = SimulatedCluster.sleep, SimulatedCluster.alter_reassignments
fired = []

def sleep(self, seconds):
    real_sleep(self, seconds)
    if self.state.clock >= 25 and not fired:
        fired.append(1)
        os.kill(os.getpid(), signal.SIGTERM)

def alter(self, targets):
    if fired and any(t is None for t in targets.values()):  # the cancel: signal again
        os.kill(os.getpid(), signal.SIGTERM)
    return real_alter(self, targets)

SimulatedCluster.sleep, SimulatedCluster.alter_reassignments = sleep, alter
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_second_sigterm_during_the_clean_up_does_not_cut_it_short(rf_raise: Folder) -> None:
    demo = rf_raise
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", TWICE, "apply", str(demo.dir), "--yes"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "SIGTERM: still cancelling moves and removing throttles" in done.stderr
    state = demo.state()
    assert throttles_in(state) == [] and not state.get("reassignments")
