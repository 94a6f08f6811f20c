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
the target): a partition being reassigned now counts as its target in the plan's digest. It
can still be refused as stale there (docs/apply.md): the freshness check reads the replicas
from a broker's Metadata and the moves in flight from the controller after it
(``kgitops/cluster/kafka/describe.py``), so a move ending between the two reads, or a broker
whose metadata lags the controller, shows target + removing with no move listed. That refusal
changes nothing, the next plan lists the throttles as ``~ remove_throttles``, and the next
apply removes them: the test accepts it there, and only there, and then checks exactly that
(on the shared cluster a refused case used to leave its entries for every later test to find).
"The freshness check's reads" makes it certain: the move ends between those two reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kgitops.apply import reassign
from kgitops.apply.journal import MoveJournal
from kgitops.cluster.kafka.describe import Describe
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


@pytest.mark.parametrize(
    "when",
    [
        "before it looks for its moves",
        "before the freshness check",
        "between the freshness check's reads",
        "before the moves are read",
    ],
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

        def late_start(
            self: reassign.Reassigner, adopt: set[str], adopt_ours: Callable[[str], bool]
        ) -> None:
            end_the_move()
            real_start(self, adopt, adopt_ours)

        monkeypatch.setattr(reassign.Reassigner, "_start", late_start)
    elif when == "before it looks for its moves":  # planned while it ran: no changes
        real_open = MoveJournal.open.__func__  # type: ignore[attr-defined]

        def late_open(cls: type[MoveJournal], directory: str, cluster: str) -> MoveJournal:
            end_the_move()
            return real_open(cls, directory, cluster)  # type: ignore[no-any-return]

        monkeypatch.setattr(MoveJournal, "open", classmethod(late_open))
    elif when == "between the freshness check's reads":  # its Metadata read, then the moves
        real_fresh, real_listed = apply_command.fresh_state, Describe._reassignments
        checking: list[int] = []

        def checked(plan: Any, admin: Any, recorded: Any, cluster: Any) -> Any:
            checking.append(1)
            return real_fresh(plan, admin, recorded, cluster)

        def late_listed(self: Describe, names: set[str]) -> Any:
            if len(checking) == 1:
                checking.append(1)
                end_the_move()
            return real_listed(self, names)

        monkeypatch.setattr(apply_command, "fresh_state", checked)
        monkeypatch.setattr(Describe, "_reassignments", late_listed)
    else:  # planned while it ran
        real_fresh = apply_command.fresh_state
        calls: list[int] = []

        def late_fresh(plan: Any, admin: Any, recorded: Any, cluster: Any) -> Any:
            if not calls:
                end_the_move()
            calls.append(1)
            return real_fresh(plan, admin, recorded, cluster)

        monkeypatch.setattr(apply_command, "fresh_state", late_fresh)
    set_by_no_wait = ours(inspector, t)
    start = time.monotonic()
    code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--poll-interval", "1")
    if when == "between the freshness check's reads":  # replicas target + removing, no move
        assert code == 1, out + err  # the documented refusal, made certain (module docstring)
    if code != 0 and when != "before the moves are read":  # the plan was checked before that
        refused_as_stale(folder, inspector, t, moving, set_by_no_wait, out + err)
        code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--poll-interval", "1")
    assert code == 0, out + err
    assert time.monotonic() - start < 60
    assert eventually(lambda: ours(inspector, t), [].__eq__, 10) == [], out + err
    assert eventually(lambda: unneeded_rates(inspector), [].__eq__, 10) == [], out + err
    assert inspector.replicas(t)[0] == (1, 3)
    folder.replan_is_empty()


def refused_as_stale(
    folder: KafkaFolder,
    inspector: Inspector,
    topic: str,
    moving: tuple[int, ...],
    entries: list[str],
    output: str,
) -> None:
    """The documented refusal (docs/apply.md): stale, exit 1, nothing changed; the next plan
    lists the move's throttles -- its topic's entries and the rates of its brokers -- for
    removal."""
    assert "is stale" in output and topic in output, output
    assert (topic, 0) not in inspector.in_flight()
    # a broker's Metadata may show target + removing a moment longer (the very window)
    assert eventually(lambda: inspector.replicas(topic)[0], (1, 3).__eq__, 10) == (1, 3)
    assert ours(inspector, topic) == entries, "the refused apply changed no throttle"
    _, plan = folder.plan()
    removing = {a["topic"] or f"broker {a['broker']}" for a in plan["actions"]}
    assert {a["type"] for a in plan["actions"]} == {"remove_throttles"}, plan["actions"]
    assert removing >= {topic, *(f"broker {b}" for b in moving)}, plan["actions"]


def unneeded_rates(inspector: Inspector) -> list[str]:
    """The throttle rates on brokers that no move in flight involves (the shared dev cluster
    may run another test's move meanwhile; none is left running in CI)."""
    listed = inspector.admin.list_partition_reassignments().values()
    busy = {b for flying in listed for b in flying["replicas"]}
    rates = [x for x in inspector.throttles() if x.startswith("broker ")]
    return [x for x in rates if int(x.split()[1].rstrip(":")) not in busy]
