"""Issue 26, apply's "Wrong" items: what an apply reports and exits with when an answer comes
late, when its moves end under it, and when it cannot write its move record -- each judged
on the simulated cluster's final state."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_apply_faults_simulated import no_throttles_left
from test_apply_simulated import Folder, topic

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import ClusterTimeout


def test_creates_answered_after_a_timeout_are_read_back_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("legacy", 1, 3))
    demo.apply()
    demo.topics(
        topic("orders", 3, 3),
        topic("users", 2, 2),
        topic("legacy", 1, 3, config={"retention.ms": "3600000"}),
    )
    real = SimulatedCluster.create_topics

    def late(self: SimulatedCluster, topics: list[NewTopic]) -> Any:
        real(self, topics)  # the cluster creates them ...
        raise ClusterTimeout("the cluster did not answer within 30s")  # ... the answer is lost

    monkeypatch.setattr(SimulatedCluster, "create_topics", late)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err  # something was sent: never "nothing applied" (exit 1)
    assert set(demo.state()["topics"]) == {"orders", "users", "legacy"}
    assert "NOT done: ~ alter_config legacy (not attempted" in err, err
    assert "done: + create_topic orders" in err and "done: + create_topic users" in err, err
    assert "read back: it took effect" in err
    monkeypatch.undo()
    (action,) = demo.plan_json()["actions"]
    assert action["type"] == "alter_config" and action["topic"] == "legacy"


def test_an_interrupt_after_a_poll_whose_moves_completed_reports_them_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll's ListPartitionReassignments says the moves ended; Ctrl-C lands before apply
    takes note: the cancel is answered NO_REASSIGNMENT_IN_PROGRESS -- the moves ended, they
    are read back and reported moved, never "could not cancel ... still moving"."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 10_000_000)
    demo.topics(topic("orders", 4, 3))
    real = SimulatedCluster.list_reassignments

    def listing(self: SimulatedCluster) -> Any:
        out = real(self)
        if self.state.clock > 0 and not out:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(SimulatedCluster, "list_reassignments", listing)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err  # moves were sent and completed: not 130
    assert "could not cancel" not in err and "still moving" not in err, err
    assert "4 partition(s) moved" in err, err
    assert all(len(r) == 3 for r in demo.replicas("orders").values())
    monkeypatch.undo()
    no_throttles_left(demo)
    code, out, err = demo.cli("plan", "--detailed-exitcode")
    assert code == 0, out + err


@pytest.mark.parametrize("flags", [(), ("--no-wait",)])
def test_moves_are_not_started_when_their_record_cannot_be_written(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 10_000_000)
    demo.topics(topic("orders", 4, 3))
    (demo.dir / ".kgitops").write_text("not a folder\n")  # moves.json cannot be written
    before = demo.replicas("orders")
    code, out, err = demo.cli("apply", "--yes", *flags)
    assert code == 1, out + err  # nothing was started
    assert "could not write .kgitops/moves.json" in err, err
    assert "run `kgitops apply` again to wait for them" not in err  # no false promise
    assert demo.replicas("orders") == before
    no_throttles_left(demo)
    os.remove(demo.dir / ".kgitops")
    demo.apply()
    assert all(len(r) == 3 for r in demo.replicas("orders").values())


@pytest.mark.parametrize("interval", ["0", "0.01", "0.5"])
def test_a_poll_interval_below_one_second_is_refused(tmp_path: Path, interval: str) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 1))
    code, out, err = demo.cli("apply", "--yes", "--poll-interval", interval)
    assert code == 1, out + err
    assert "--poll-interval" in err and "at least 1 second" in err, err
    assert not demo.state_file.exists() or demo.state()["topics"] == {}


def test_a_poll_interval_above_an_hour_is_refused(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 1))
    code, out, err = demo.cli("apply", "--yes", "--poll-interval", "1000000")
    assert code == 1, out + err
    assert "--poll-interval" in err and "at most 3600 seconds" in err, err
    assert not demo.state_file.exists() or demo.state()["topics"] == {}


def _network(demo: Folder, rate: float) -> None:
    data = demo.state()
    data.setdefault("simulation", {})["networkBytesPerSec"] = rate
    demo.state_file.write_text(json.dumps(data))


def test_the_eta_follows_the_simulated_clusters_modelled_network(tmp_path: Path) -> None:
    """A link of 1 MB/s under a 10 MB/s throttle: the plan's ETA is the simulated apply's
    time (was: planned at the default 100 MB/s link, ten times too short)."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 50_000_000)
    demo.topics(topic("orders", 4, 3))
    _network(demo, 1_000_000)
    eta = demo.plan_json()["transfer"]["estimatedSeconds"]
    code, out, err = demo.cli("apply", "--yes", "--timeout", "1h")
    assert code == 0, out + err
    clock = demo.state()["simulation"]["clock"]
    assert clock > 30, clock  # 50 MB into each new replica at 1 MB/s (5 s at the throttle)
    assert abs(eta - clock) <= 0.1 * clock, (eta, clock)


@pytest.mark.parametrize("rate", [0, -5])
def test_a_network_rate_that_copies_nothing_is_a_state_file_error(
    tmp_path: Path, rate: float
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 2, 2))
    demo.apply()
    _network(demo, rate)
    code, out, err = demo.cli("plan")
    assert code == 1, out + err
    assert "networkBytesPerSec" in err and "not a rate above 0" in err, err


def test_with_a_committed_move_record_no_move_is_started(tmp_path: Path) -> None:
    """A record git tracks is never written (tests/security/test_committed_journal.py); then
    apply has nowhere to record a move before starting it, so it starts none (a --no-wait
    would promise a wait the next apply, ignoring the record, never does)."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 10_000_000)
    demo.topics(topic("orders", 4, 3))
    record = demo.dir / ".kgitops" / "moves.json"
    record.parent.mkdir()
    record.write_text('{"format": "kgitops-moves/v1", "cluster": "demo", "moves": {}}\n')
    for args in (["init", "-q"], ["add", "-f", ".kgitops/moves.json"]):
        subprocess.run(["git", "-C", str(demo.dir), *args], check=True, capture_output=True)
    before = demo.replicas("orders")
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 1, out + err
    assert "not submitted: .kgitops/moves.json may not be written (it is committed to git" in err
    assert "run `kgitops apply` again to wait for them" not in err
    assert demo.replicas("orders") == before
    no_throttles_left(demo)


@pytest.mark.parametrize("how", ["refused", "no answer"])
def test_a_move_whose_cancel_fails_keeps_running_throttled_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Ctrl-C mid-drain; the cancel is refused per partition, or not answered at all: the
    moves keep running, so their throttles stay (removing them would let them copy at full
    speed) and the report never says "replication throttles removed"; the next apply waits
    for them and then removes the throttles."""
    from test_signal_windows import recorded_moves, unthrottled

    from kgitops.errors import ClusterRequestError

    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 100_000_000)
    demo.topics(topic("orders", 4, 3))
    real_sleep, real_alter = SimulatedCluster.sleep, SimulatedCluster.alter_reassignments

    def sleep(self: SimulatedCluster, seconds: float) -> None:
        real_sleep(self, seconds)
        if self.state.clock >= 5:
            raise KeyboardInterrupt

    def alter(self: SimulatedCluster, targets: dict[Any, Any]) -> Any:
        if all(t is None for t in targets.values()):  # the cancel
            if how == "no answer":
                raise ClusterTimeout("the cluster did not answer within 30s")
            return {tp: ClusterRequestError("refused", "UNKNOWN_SERVER_ERROR") for tp in targets}
        return real_alter(self, targets)

    monkeypatch.setattr(SimulatedCluster, "sleep", sleep)
    monkeypatch.setattr(SimulatedCluster, "alter_reassignments", alter)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 3, out + err
    assert "still moving, still throttled" in err, err
    assert "replication throttles removed" not in err
    monkeypatch.undo()
    state = SimulatedCluster.open(str(demo.state_file), []).describe(None)
    flying = state.reassignments.get("orders", {})
    assert flying, "the moves still run"
    assert unthrottled(state) == [], "and every one of them is throttled"
    assert {int(p) for p in recorded_moves(demo)["orders"]} == set(flying)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    no_throttles_left(demo)
    assert all(len(r) == 3 for r in demo.replicas("orders").values())
