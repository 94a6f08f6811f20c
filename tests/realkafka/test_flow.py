"""The README flow on a real Apache Kafka cluster (4 brokers in racks az1, az2, az3, az1; the
session's ``kafka_cluster``), through the CLI, each step read back with kafka-python and, for
moves, with Kafka's own ``kafka-reassign-partitions --verify``:

create with explicit assignments -> produce a few MB -> add partitions, RF change, config
change -> drain broker 4 (SIGTERM to an apply mid-move, then ``--no-wait``, then a later
apply) -> preferred-leader election -> config removal -> a plan with no changes.
After every apply: no replication throttle on any broker or topic (DescribeConfigs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType

import kgitops
from kgitops.plan.throttles import RATE_KEYS, REPLICA_KEYS
from tests.helpers import eventually, run_cli
from tests.realkafka.kafka_flow_helpers import (
    Inspector,
    KafkaFolder,
    actions,
    produce,
    verify_reassignments,
)

ROOT = str(Path(kgitops.__file__).resolve().parent.parent)
DRAINED = 4


@pytest.fixture
def kafka(
    kafka_cluster: Any, tmp_path: Path, topic_prefix: str
) -> Iterator[tuple[KafkaFolder, Inspector]]:
    inspector = Inspector(kafka_cluster.bootstrap)
    folder = KafkaFolder(tmp_path, kafka_cluster.bootstrap, topic_prefix)
    try:
        yield folder, inspector
    finally:
        try:
            clean_up(inspector, topic_prefix)
        finally:
            inspector.close()


def clean_up(inspector: Inspector, prefix: str) -> None:
    """What a failed test may leave on the shared cluster goes, so it cannot fail the tests
    after it: its moves in flight (cancelled), its topics (with their throttle entries), the
    throttle entries of other topics its drain moved, and the throttle rates of brokers that
    no move in flight involves. A test that passed left no throttle (it checks), so for it
    this only deletes its topics."""
    # the session's tests run one at a time, so every move in flight is this test's: of its
    # topics, or of a topic its drain moved (``__consumer_offsets``)
    mine = inspector.in_flight()
    if mine:
        inspector.admin.alter_partition_reassignments(
            {TopicPartition(t, p): None for t, p in sorted(mine)}
        )
        eventually(lambda: mine & inspector.in_flight(), set().__eq__, seconds=30)
    topics = sorted(t for t in inspector.admin.list_topics() if t.startswith(prefix))
    if topics:
        inspector.admin.delete_topics(topics)
    others = sorted(
        {x.split()[1].rstrip(":") for x in inspector.throttles() if x.startswith("topic ")}
        - set(topics)
    )
    if others:
        inspector.admin.reset_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, t, dict.fromkeys(REPLICA_KEYS))
                for t in others
            ]
        )
    listed = inspector.admin.list_partition_reassignments().values()
    busy = {b for flying in listed for b in flying["replicas"]}
    rated = {
        int(x.split()[1].rstrip(":")) for x in inspector.throttles() if x.startswith("broker ")
    }
    if rated - busy:
        inspector.admin.reset_configs(
            [
                ConfigResource(ConfigResourceType.BROKER, str(b), dict.fromkeys(RATE_KEYS))
                for b in sorted(rated - busy)
            ],
            raise_on_unknown=False,
        )


def off_the_drained_broker(inspector: Inspector, prefix: str) -> None:
    """Moves the replicas of other topics on the shared cluster off broker ``DRAINED``, each to
    the broker its partition lacks, and waits for them. ``__consumer_offsets`` (made by an
    earlier test's group, placed at random) is the one there is: left where it is, the drain
    moves it too, and the window takes the first moves in its queue whose brokers are free, so
    the moves of ``__consumer_offsets`` (sorted first, small, over in a moment) may fill the
    first window of an apply and leave no move of this test's topics running."""
    brokers = set(inspector.brokers())
    moves = {}
    for topic in sorted(t for t in inspector.admin.list_topics() if not t.startswith(prefix)):
        for p, replicas in inspector.replicas(topic).items():
            if DRAINED in replicas:
                spares = sorted(brokers - set(replicas))
                assert spares, f"{topic}-{p} is on every broker {replicas}: no drain can move it"
                moves[TopicPartition(topic, p)] = [
                    spares[0] if b == DRAINED else b for b in replicas
                ]
    if moves:
        inspector.admin.alter_partition_reassignments(moves)
        left = eventually(inspector.in_flight, set().__eq__, seconds=60)
        assert not left, f"still moving off broker {DRAINED}: {sorted(left)}"
        # the reassignments are over on the controller; a broker's metadata follows a moment
        # later (``eventually``), and until then lists the replicas being moved as well
        wanted = {(tp.topic, tp.partition): tuple(r) for tp, r in moves.items()}
        now = eventually(lambda: where(inspector, wanted), wanted.__eq__, seconds=10)
        assert now == wanted, now


def where(inspector: Inspector, partitions: dict[tuple[str, int], Any]) -> dict[Any, Any]:
    """The live replicas of ``partitions`` (topic, partition)."""
    live = {t: inspector.replicas(t) for t in {t for t, _ in partitions}}
    return {(t, p): live[t][p] for t, p in partitions}


def no_throttles(inspector: Inspector) -> None:
    """No throttle anywhere, allowing the brokers a moment to apply the last change."""
    left = eventually(inspector.throttles, lambda t: t == [], seconds=10)
    assert left == [], left


def moves_of(plan: dict[str, Any]) -> dict[tuple[str, int], tuple[int, ...]]:
    return {
        (topic, int(p)): tuple(m["to"])
        for topic, a in actions(plan, "reassign").items()
        for p, m in a["moves"].items()
    }


def all_completed(
    folder: KafkaFolder, plan: Path, moves: dict[tuple[str, int], tuple[int, ...]]
) -> None:
    """Kafka's tool, given the plan's moves as ``kgitops export-reassignment`` writes them,
    says every one is complete."""
    exported = plan.with_suffix(".reassign.json")
    code, out, err = run_cli("export-reassignment", str(plan), "--out", str(exported))
    assert code == 0, out + err
    listed = {
        (p["topic"], p["partition"]): tuple(p["replicas"])
        for p in json.loads(exported.read_text())["partitions"]
    }
    assert listed == moves
    verdicts = verify_reassignments(folder.bootstrap, exported)
    assert verdicts == dict.fromkeys(moves, "completed"), verdicts


def throttled_as_planned(
    inspector: Inspector, plan: dict[str, Any], flying: set[tuple[str, int]], rate: int
) -> None:
    """Each move in flight is throttled as kafka-reassign-partitions throttles one: its
    current replicas in the topic's leader list, the replicas it adds in the follower list,
    the rate on every broker of both (docs/real-clusters.md, the throttle arithmetic)."""
    assert flying, "the moves --no-wait started are still running"
    brokers: set[int] = set()
    for topic, p in flying:
        move = actions(plan, "reassign")[topic]["moves"][str(p)]
        got = inspector.admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
        )["topic"][topic]
        leader = set(got["leader.replication.throttled.replicas"]["value"].split(","))
        follower = set(got["follower.replication.throttled.replicas"]["value"].split(","))
        adding = [b for b in move["to"] if b not in move["from"]]
        assert {f"{p}:{b}" for b in move["from"]} <= leader, (topic, p, leader)
        assert {f"{p}:{b}" for b in adding} <= follower, (topic, p, follower)
        brokers.update(move["from"], adding)
    for b in sorted(brokers):
        got = inspector.admin.describe_configs(
            [ConfigResource(ConfigResourceType.BROKER, str(b))], config_filter="all"
        )["broker"][str(b)]
        for key in ("leader.replication.throttled.rate", "follower.replication.throttled.rate"):
            assert got[key]["value"] == str(rate), (b, key, got.get(key))


def settled_layout(
    inspector: Inspector, topic: str, replicas: dict[int, tuple[int, ...]]
) -> dict[int, tuple[tuple[int, ...], int]]:
    """The (replicas, leader) of the topic's partitions in ``replicas`` once the brokers show
    ``replicas`` with the first one leading."""
    want = {p: (r, r[0]) for p, r in replicas.items()}

    def read() -> dict[int, tuple[tuple[int, ...], int]]:
        layout = inspector.layout(topic)
        return {p: layout[p] for p in want if p in layout}

    return eventually(read, want.__eq__)


def orders(partitions: int = 6, **config: str) -> dict[str, Any]:
    return {
        "name": "orders",
        "partitions": partitions,
        "replicationFactor": 3,
        "placement": "rack-aware",
        "config": {"min.insync.replicas": "2", **config},
    }


def events(rf: int = 2) -> dict[str, Any]:
    return {"name": "events", "partitions": 4, "replicationFactor": rf, "placement": "rack-aware"}


def spawn_apply(folder: KafkaFolder) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from kgitops.cli import main; sys.exit(main(sys.argv[1:]))",
            "apply",
            str(folder.dir),
            "--yes",
            "--poll-interval",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.slow
def test_the_readme_flow_on_a_rack_aware_kafka_cluster(
    kafka: tuple[KafkaFolder, Inspector],
) -> None:
    folder, kafka_ = kafka
    o, e = folder.name("orders"), folder.name("events")

    # 1. create, with the planned assignments, exactly
    folder.topics(orders(6, **{"retention.ms": "86400000"}), events())
    path, plan = folder.plan()
    created = actions(plan, "create_topic")
    assert set(created) == {o, e}
    folder.apply(path)
    for topic, action in created.items():
        planned = {int(p): tuple(r) for p, r in action["assignment"].items()}
        assert settled_layout(kafka_, topic, planned) == {p: (r, r[0]) for p, r in planned.items()}
    no_throttles(kafka_)
    folder.replan_is_empty()

    # 2. data, so that moves take a while at a low throttle
    # (a throttle holds a follower back only between fetches of up to 1 MiB: events' 1.5 MiB
    # partitions take two, a quota window apart)
    produce(folder.bootstrap, o, 6, 2)
    produce(folder.bootstrap, e, 4, 6)

    # 3. add partitions, RF 2 -> 3, a config change; moves throttled at 1 MB/s
    folder.cluster(throttle=1_000_000)
    folder.topics(
        orders(8, **{"retention.ms": "172800000", "max.message.bytes": "2097152"}), events(3)
    )
    path, plan = folder.plan()
    added = actions(plan, "add_partitions")[o]
    assert (added["from"], added["to"]) == (6, 8)
    assert set(actions(plan, "alter_config")) == {o}
    moved = moves_of(plan)
    assert {t for t, _ in moved} == {e} and len(moved) == 4
    folder.apply(path)
    planned = {int(p): tuple(r) for p, r in added["assignment"].items()}
    assert settled_layout(kafka_, o, planned) == {p: (r, r[0]) for p, r in planned.items()}
    targets = {p: r for (_, p), r in moved.items()}
    assert settled_layout(kafka_, e, targets) == {p: (r, r[0]) for p, r in targets.items()}
    all_completed(folder, path, moved)
    no_throttles(kafka_)
    configs = kafka_.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, o)])
    got = configs["topic"][o]
    assert got["retention.ms"]["value"] == "172800000"
    assert got["max.message.bytes"]["value"] == "2097152"
    folder.replan_is_empty()

    # 4. drain broker 4. First an apply that gets SIGTERM while its first moves run.
    # A move of its first window is certainly still running when the test looks: the queue is in
    # (topic, partition) order, so the first window of each apply of this drain starts with a
    # move of events (the drain has one, checked; ``events`` sorts before ``orders``; no other
    # topic's replica is left on broker 4 to move: off_the_drained_broker); moving
    # one of events' 1.5 MiB partitions takes two fetches; at 10 KB/s, far below the 1 MiB a
    # first fetch puts in the quota's window (10-11 s of 1 s samples), the second waits until
    # that fetch's sample expires, about 11 s later (at 200 KB/s the two moves of a window
    # could both copy all in one pass and end before the test looked)
    slow = 10_000
    off_the_drained_broker(kafka_, folder.prefix)
    folder.cluster(throttle=slow, moves=2, decommission=[DRAINED])
    before = {t: kafka_.replicas(t) for t in (o, e)}
    runner = spawn_apply(folder)
    try:
        ours = eventually(
            lambda: {tp for tp in kafka_.in_flight() if tp[0] in (o, e)}, bool, seconds=60
        )
        assert ours, "no move of ours started"
        assert kafka_.throttles(), "a move runs throttled"
        runner.send_signal(signal.SIGTERM)
        out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    # 130 when no move finished before the signal (every one cancelled), 3 when some did
    assert runner.returncode in (3, 130), out + err
    assert "apply was interrupted (SIGTERM)" in err, err
    no_throttles(kafka_)
    assert not {tp for tp in kafka_.in_flight() if tp[0] in (o, e)}, "cancelled"
    for t, replicas in before.items():  # a move cancelled goes back to its replicas
        live = kafka_.replicas(t)  # (in KRaft's revert order: ReplicationControlManager)
        assert all(
            sorted(live[p]) == sorted(r) or DRAINED not in live[p] for p, r in replicas.items()
        ), (live, replicas)

    # ... then --no-wait: one window left running, its throttles with it
    folder.cluster(throttle=slow, moves=2, decommission=[DRAINED])
    drain_plan, plan = folder.plan()
    drain = moves_of(plan)
    assert {t for t, _ in drain} == {o, e}  # its first window starts with a move of events
    assert all(DRAINED not in r for r in drain.values())
    folder.apply(drain_plan, "--no-wait", expect=3)
    flying = {tp for tp in kafka_.in_flight() if tp[0] in (o, e)}
    assert min(tp for tp in drain if tp[0] == e) in flying, (flying, sorted(drain))
    throttled_as_planned(kafka_, plan, flying, slow)
    code, out, _ = folder.cli("status", str(folder.dir))
    assert code == 2 and "UNHEALTHY" in out, out
    # ... and a later apply finishes them and everything else, then removes the throttles
    folder.cluster(throttle=5_000_000, moves=4, decommission=[DRAINED])
    throttled = kafka_.throttles()
    code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--poll-interval", "1")
    if code == 1:
        # the --no-wait window's moves still end on their own (11 s after their first fetch)
        # while `apply DIR` plans and then checks the cluster: a move ending between the two
        # refuses the plan as stale and changes nothing (docs/apply.md); the next apply plans
        # from what it finds
        assert "is stale" in err, out + err
        assert kafka_.throttles() == throttled, "the refused apply changed no throttle"
        assert {tp for tp in kafka_.in_flight() if tp[0] in (o, e)} <= flying, "nor a move"
        code, out, err = folder.cli("apply", str(folder.dir), "--yes", "--poll-interval", "1")
    assert code == 0, out + err
    no_throttles(kafka_)
    for t in (o, e):
        assert all(DRAINED not in r for r in kafka_.replicas(t).values())
    all_completed(folder, drain_plan, drain)
    for t in (o, e):
        live = kafka_.replicas(t)  # every leader its partition's first replica (elected)
        assert settled_layout(kafka_, t, live) == {p: (r, r[0]) for p, r in live.items()}
    folder.replan_is_empty()

    # 5. preferred-leader election: another tool reorders a partition's replicas
    first = kafka_.replicas(o)[0]
    reordered: tuple[int, ...] = (first[1], first[0], *first[2:])
    kafka_.admin.alter_partition_reassignments({TopicPartition(o, 0): list(reordered)})
    eventually(lambda: kafka_.layout(o)[0][0], reordered.__eq__)
    _, plan = folder.plan()
    assert actions(plan, "elect_leaders") == {
        o: {"type": "elect_leaders", "topic": o, "partitions": [0]}
    }, plan["actions"]
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    assert settled_layout(kafka_, o, {0: reordered})[0] == (reordered, reordered[0])

    # 6. a config removed from git is removed from the topic (back to the broker default)
    folder.topics(orders(8, **{"retention.ms": "172800000"}), events(3))
    code, out, err = folder.cli("apply", str(folder.dir), "--yes")
    assert code == 0, out + err
    got = kafka_.admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, o)], config_filter="all"
    )["topic"][o]
    assert got["max.message.bytes"]["config_source"] != "DYNAMIC_TOPIC_CONFIG"
    no_throttles(kafka_)
    folder.replan_is_empty()


def test_the_kafka_example_folder_applies_as_written(
    kafka_cluster: Any, tmp_path: Path, topic_prefix: str
) -> None:
    """topics/kafka against the cluster: only its addresses (the session cluster's ports) and
    its topic names (the cluster is shared) are changed."""
    import re
    import shutil

    example = Path(ROOT) / "topics" / "kafka"
    folder = tmp_path / "kafka"
    shutil.copytree(example, folder)
    cluster = (folder / "cluster.yaml").read_text()
    assert '"127.0.0.1:19101", "127.0.0.1:19102", "127.0.0.1:19103", "127.0.0.1:19104"' in cluster
    servers = ", ".join(f'"{s}"' for s in kafka_cluster.bootstrap.split(","))
    cluster = re.sub(r"bootstrapServers: \[.*\]", f"bootstrapServers: [{servers}]", cluster)
    (folder / "cluster.yaml").write_text(
        cluster.replace("unmanagedTopics: warn", "unmanagedTopics: ignore")
    )
    topics = (
        (folder / "topics.yaml").read_text().replace("name: shop.", f"name: {topic_prefix}shop.")
    )
    (folder / "topics.yaml").write_text(topics)
    inspector = Inspector(kafka_cluster.bootstrap)
    try:
        code, out, err = run_cli("apply", str(folder), "--yes")
        assert code == 0, out + err
        racks = {b["broker_id"]: b["rack"] for b in inspector.admin.describe_cluster()["brokers"]}
        audit = eventually(
            lambda: inspector.replicas(f"{topic_prefix}shop.audit"),
            {0: (1, 2, 3), 1: (4, 3, 2)}.__eq__,
        )
        assert audit == {0: (1, 2, 3), 1: (4, 3, 2)}
        for name, count in (("shop.orders", 6), ("shop.order-status", 3)):
            layout = inspector.replicas(f"{topic_prefix}{name}")
            assert len(layout) == count
            assert all(len({racks[b] for b in r}) == 3 for r in layout.values()), layout
        no_throttles(inspector)
        code, out, err = run_cli("plan", str(folder), "--detailed-exitcode")
        assert code == 0, out + err
    finally:
        inspector.close()
