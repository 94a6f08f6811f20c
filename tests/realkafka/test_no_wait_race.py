"""``apply --no-wait`` then ``apply``, when a move the first apply left running ends between
the second apply's plan and its reassignment step (found by tests/realkafka/test_flow.py on
Kafka 4.1.2, at random).

The plan keeps the throttle entries of a move in flight (it needs them) and the apply did not
wait for a move that was no longer listed, so the entries the ``--no-wait`` apply had set
stayed on the topic after an apply that reported success. Now the apply takes out the
throttles of every move of its journal that ended unwatched. The race is made certain here:
the second apply's reassignment step starts only once Kafka lists the move no more.

A move that ends a little earlier, between that apply's plan and its check that the plan is
fresh, made the plan stale (exit 1: the partition's replicas went from target + removing to
the target): a partition being reassigned now counts as its target in the plan's digest.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kgitops.apply import reassign
from kgitops.apply.journal import MoveJournal
from kgitops.commands import apply as apply_command
from kgitops.plan.throttles import RATE_KEYS
from tests.helpers import eventually
from tests.realkafka.kafka_flow_helpers import Inspector, KafkaFolder, produce

pytestmark = pytest.mark.slow


@pytest.fixture
def kafka(
    kafka_cluster: Any, tmp_path: Path, topic_prefix: str
) -> Iterator[tuple[KafkaFolder, Inspector]]:
    inspector = Inspector(kafka_cluster.bootstrap)
    yield KafkaFolder(tmp_path, kafka_cluster.bootstrap, topic_prefix), inspector
    inspector.close()


def ours(inspector: Inspector, topic: str) -> list[str]:
    return [t for t in inspector.throttles() if f"topic {topic}:" in t]


# Intermittent on real Kafka (CI, 2026-11-26): a move ending in "the freshness check" window
# can still make the plan stale (refused, nothing changed; docs/apply.md), and once a broker
# rate was left after "before the moves are read". Open; run with `pytest -m known_race`.
@pytest.mark.known_race
@pytest.mark.parametrize(
    "when",
    ["before it looks for its moves", "before the freshness check", "before the moves are read"],
)
def test_a_no_wait_move_that_ends_after_the_plan_leaves_no_throttle(
    kafka: tuple[KafkaFolder, Inspector], monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    folder, inspector = kafka
    t = folder.name("grow")
    doc = {
        "name": "grow",
        "partitions": 1,
        "replicationFactor": 2,
        "placement": "static",
        "assignment": [[1, 2]],
    }
    folder.topics(doc)
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    produce(folder.bootstrap, t, 1, 2.5)
    # A throttle holds a follower back only between fetches (ReplicaManager checks the quota
    # before it reads, and one fetch takes up to replica.fetch.max.bytes, 1 MiB): at 10 KB/s
    # the first MiB is copied at once, the next one after the quota's 11 s window
    folder.cluster(throttle=10_000)
    folder.topics({**doc, "assignment": [[1, 3]]})  # a move: 3 added, 2 removed
    code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--no-wait")
    assert code == 0 and "left running" in out, out + err  # its one window: all it had
    assert (t, 0) in inspector.in_flight() and ours(inspector, t)
    _, plan = folder.plan()
    assert plan["actions"] == [], "the move is in flight: nothing to do, its throttles kept"
    moving = inspector.replicas(t)[0]  # the replicas removed, kept and added

    def end_the_move() -> None:
        # someone raises the throttle: the move ends while the next apply runs
        fast = dict.fromkeys(RATE_KEYS, "50000000")
        inspector.admin.alter_configs(
            [ConfigResource(ConfigResourceType.BROKER, str(b), fast) for b in moving],
            raise_on_unknown=False,
        )
        assert eventually(lambda: (t, 0) in inspector.in_flight(), False.__eq__, 60) is False

    if when == "before the moves are read":  # planned and checked fresh while it ran
        real_start = reassign.Reassigner._start

        def late_start(self: reassign.Reassigner, adopt: set[str]) -> None:
            end_the_move()
            real_start(self, adopt)

        monkeypatch.setattr(reassign.Reassigner, "_start", late_start)
    elif when == "before it looks for its moves":  # planned while it ran: no changes
        real_open = MoveJournal.open.__func__  # type: ignore[attr-defined]

        def late_open(cls: type[MoveJournal], directory: str, cluster: str) -> MoveJournal:
            end_the_move()
            return real_open(cls, directory, cluster)  # type: ignore[no-any-return]

        monkeypatch.setattr(MoveJournal, "open", classmethod(late_open))
    else:  # planned while it ran
        real_fresh = apply_command.fresh_state
        calls: list[int] = []

        def late_fresh(plan: Any, admin: Any, recorded: Any, cluster: Any) -> Any:
            if not calls:
                end_the_move()
            calls.append(1)
            return real_fresh(plan, admin, recorded, cluster)

        monkeypatch.setattr(apply_command, "fresh_state", late_fresh)
    start = time.monotonic()
    code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--poll-interval", "1")
    assert code == 0, out + err
    assert time.monotonic() - start < 60
    assert eventually(lambda: ours(inspector, t), [].__eq__, 10) == [], out + err
    assert inspector.throttles() == [], "nor a rate on any broker"
    assert inspector.replicas(t)[0] == (1, 3)
    folder.replan_is_empty()
