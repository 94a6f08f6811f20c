"""``apply --no-wait``, then an ``apply`` during whose run the moves the first one left
running end -- after its plan, before its reassignment step reads the moves in flight -- on
the simulated cluster (the same race as tests/realkafka/test_no_wait_race.py on Kafka): the
second apply leaves no throttle behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_apply_simulated import Folder, topic
from test_fault_suite import converged, throttles_in

from kgitops.apply import reassign


def test_moves_that_end_after_the_plan_leave_no_throttle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 8, 2))
    demo.apply()
    demo.set_sizes("orders", 100_000_000)
    demo.topics(topic("orders", 8, 3))
    code, out, err = demo.cli("apply", "--yes", "--no-wait")
    assert code == 3, out + err
    assert throttles_in(demo.state()), "its first window runs throttled"
    real_start = reassign.Reassigner._start

    def late_start(
        self: reassign.Reassigner, adopt: set[str], adopt_ours: Callable[[str], bool]
    ) -> None:
        sim = getattr(self.admin, "inner", self.admin)  # under apply's request recorder
        sim.advance(600)  # the first window ends
        real_start(self, adopt, adopt_ours)

    monkeypatch.setattr(reassign.Reassigner, "_start", late_start)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    assert throttles_in(demo.state()) == []
    monkeypatch.undo()
    converged(demo)
