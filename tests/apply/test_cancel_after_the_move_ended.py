"""A move that ends between apply's last poll and its cancel (a broker killed, SIGTERM, the
timeout): Kafka answers the cancel NO_REASSIGNMENT_IN_PROGRESS (ReplicationControlManager
cancels only a reassignment it lists). Apply must not call that move "still moving", and
must take its throttles out like any ended move. Seen on a real cluster
(benchmarks/chaos.py, tests/realkafka/test_broker_kill.py)."""

from __future__ import annotations

import pytest
from apply_fakes import FakeCluster

from kgitops.apply.run import apply_plan
from kgitops.errors import PartialApply
from kgitops.model import Broker, ReassignmentSettings
from kgitops.plan.actions import Move, Reassign
from kgitops.plan.value import Plan

SETTINGS = ReassignmentSettings(throttle_bytes_per_sec=1000, max_concurrent_moves=3)


def test_a_cancel_answered_no_reassignment_in_progress_is_an_ended_move_not_a_moving_one() -> None:
    fake = FakeCluster(brokers=[Broker(i, f"r{i % 3}") for i in range(1, 7)])
    fake.replicas["m"] = {0: (1, 2), 1: (1, 2)}
    fake.sizes = {("m", 0): 1_000_000, ("m", 1): 1_000_000}
    moves = {p: Move(source=(1, 2), target=(3, 1, 2), size_bytes=1_000_000) for p in (0, 1)}
    plan = Plan(cluster="test", state_fingerprint="sha256:x", actions=(Reassign("m", moves=moves),))

    def finish_then_interrupt(f: FakeCluster) -> None:
        for (t, p), flight in list(f.flights.items()):  # both moves end behind apply's back
            f.replicas[t][p] = flight.target
            del f.flights[(t, p)]
        raise KeyboardInterrupt

    fake.on_sleep = finish_then_interrupt
    with pytest.raises(PartialApply) as err:
        apply_plan(plan, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    text = "\n".join(err.value.lines())
    assert "still moving" not in text
    # read back after the cancel: both ended on their targets, so they are moved, not failed
    assert "done: ~ reassign m (2 partition(s) moved)" in text, text
    assert fake.flights == {}
    assert fake.replicas["m"] == {0: (3, 1, 2), 1: (3, 1, 2)}
    assert all(not c for c in fake.broker_configs.values())
    assert not any("throttled" in k for k in fake.configs.get("m", {}))
