"""The what-if cluster tells the truth (issue 28): producers with acks, the high watermark and
each replica's log end offset, leader epochs, what an election loses, Kafka's version rules,
and one rule per health flag. Each test asserts the state the simulated cluster keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import ConfigChange, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.console.views import partitions_view
from kgitops.errors import StateFileError
from kgitops.model import Broker
from kgitops.plan.health import assess
from tests.helpers import THREE_AZS, cluster_folder

BROKERS = list(THREE_AZS)
MB = 1_000_000
RECORD = 1024


def open_sim(
    tmp_path: Path, version: tuple[int, int] = (4, 1), elr: bool = True
) -> SimulatedCluster:
    return SimulatedCluster.open(
        str(tmp_path / "s.json"),
        BROKERS,
        kafka_version=version,
        eligible_leader_replicas=elr,
        leader_balance_seconds=None,
    )


def topic(sim: SimulatedCluster, name: str = "t", min_isr: str = "2", parts: int = 1) -> None:
    assignment = {p: tuple((p + i) % 3 for i in range(3)) for p in range(parts)}
    assert sim.create_topics([NewTopic(name, assignment, {"min.insync.replicas": min_isr})]) == {
        name: None
    }


def offsets(
    sim: SimulatedCluster, name: str = "t", pid: int = 0
) -> tuple[int, dict[int, int], int]:
    got = sim.describe().offsets_of(name, pid)
    assert got is not None
    return got.high_watermark, dict(got.log_end_offsets), got.leader_epoch


def size(sim: SimulatedCluster, name: str = "t", pid: int = 0) -> int:
    return sim.describe().topics[name].partitions[pid].size_bytes or 0


def test_acks_all_under_min_isr_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    sim = open_sim(tmp_path)
    topic(sim)
    sim.set_produce_rate("t", 1 * MB)
    sim.advance(10)
    hw, leo, _ = offsets(sim)
    assert hw == leo[0] == leo[1] == leo[2] == 10 * MB // RECORD
    sim.fail_broker(1)
    sim.fail_broker(2)
    written_before = size(sim)
    sim.advance(10)
    assert sim.refused == {"t": pytest.approx(10 * MB)}
    assert size(sim) == written_before, "NOT_ENOUGH_REPLICAS: the leader appends nothing"
    assert offsets(sim)[0] == hw
    assert sim.list_offsets([("t", 0)], -1) == {("t", 0): hw}
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["topics"]["t"]["partitions"]["0"]["sizeBytes"] == written_before


def test_acks_1_under_min_isr_is_written_but_readable_only_up_to_the_frozen_hw(
    tmp_path: Path,
) -> None:
    """Kafka 3.7+ (Partition.maybeIncrementLeaderHW, KAFKA-15583): no HW advance under min ISR."""
    sim = open_sim(tmp_path)
    topic(sim)
    sim.set_produce_rate("t", 1 * MB, acks="1")
    sim.advance(10)
    sim.fail_broker(1)
    sim.fail_broker(2)
    hw_before = offsets(sim)[0]
    sim.advance(10)
    hw, leo, _ = offsets(sim)
    assert sim.refused == {}
    assert size(sim) == 20 * MB
    assert leo[0] == 20 * MB // RECORD and hw == hw_before == 10 * MB // RECORD
    assert sim.list_offsets([("t", 0)], -1) == {("t", 0): hw}, "consumers' end is the HW"
    data = json.loads((tmp_path / "s.json").read_text())
    # the leader's LEO where it is ahead of the HW, exact (a fraction of a record included)
    assert data["simulation"]["logEndOffsets"] == {"t": {"0": pytest.approx(20 * MB / RECORD)}}
    assert int(data["simulation"]["logEndOffsets"]["t"]["0"]) == leo[0]
    assert data["consumerGroups"]["logOffsets"] == {"t": {"0": [0, hw]}}
    # the ISR grows back: the follower copies what it lacks, then the HW catches up
    sim.set_produce_rate("t", 0)
    sim.restore_broker(1)
    sim.advance(60)
    hw, leo, _ = offsets(sim)
    assert hw == leo[0] == leo[1] == 20 * MB // RECORD


def test_before_kafka_3_7_the_hw_advances_under_min_isr(tmp_path: Path) -> None:
    sim = open_sim(tmp_path, version=(3, 6), elr=False)
    topic(sim)
    sim.set_produce_rate("t", 1 * MB, acks="1")
    sim.fail_broker(1)
    sim.fail_broker(2)
    sim.advance(10)
    hw, leo, _ = offsets(sim)
    assert hw == leo[0] == 10 * MB // RECORD


def test_keyless_records_go_to_the_partitions_that_have_a_leader(tmp_path: Path) -> None:
    sim = open_sim(tmp_path, elr=False)
    sim.create_topics([NewTopic("k", {0: (0,), 1: (1,), 2: (2,)})])
    sim.fail_broker(2)
    sim.set_produce_rate("k", 3 * MB, acks="1")
    sim.advance(10)
    assert [size(sim, "k", p) for p in range(3)] == [15 * MB, 15 * MB, 0]
    assert sim.refused == {}
    sim.set_produce_rate("k", 3 * MB, acks="1", keys="uniform")
    sim.advance(10)
    assert [size(sim, "k", p) for p in range(3)] == [25 * MB, 25 * MB, 0]
    assert sim.refused == {"k": pytest.approx(10 * MB)}, "keyed records for an offline partition"


def test_an_elr_election_loses_what_the_eligible_replica_lacked_and_says_so(
    tmp_path: Path,
) -> None:
    """The issue's case: the new leader had 10 MB and was credited with 20 MB."""
    sim = open_sim(tmp_path)
    topic(sim)
    sim.set_produce_rate("t", 1 * MB, acks="1")
    sim.advance(10)
    sim.fail_broker(1)
    sim.fail_broker(2)  # ISR [0] < 2: broker 2 is an eligible leader replica
    sim.advance(10)  # 10 MB more on broker 0 alone, above the frozen HW
    hw = offsets(sim)[0]
    sim.set_produce_rate("t", 0)
    sim.fail_broker(0)
    sim.state.take_losses()
    sim.restore_broker(2)
    losses = sim.state.take_losses()
    assert [(t, p, loss.kind, loss.leader) for t, p, loss in losses] == [("t", 0, "elr", 2)]
    assert losses[0][2].bytes == 10 * MB
    assert losses[0][2].records == 20 * MB // RECORD - hw
    state = sim.describe()
    assert state.topics["t"].partitions[0].leader == 2
    assert size(sim) == 10 * MB, "the new leader holds what it had, not the old leader's log"
    new_hw, leo, epoch = offsets(sim)
    assert new_hw == hw == leo[2], "an eligible leader replica holds the HW: nothing read is lost"
    assert epoch == 2, "leader 0 -> none -> 2"


def test_an_unclean_election_loses_records_and_bytes_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(
        tmp_path,
        "d",
        brokers=BROKERS,
        state_file="s.json",
        extra="  eligibleLeaderReplicas: false\n  autoLeaderRebalance: false\n",
    )
    sim = open_sim(tmp_path, elr=False)
    topic(sim, min_isr="1")
    sim.set_produce_rate("t", 1 * MB, acks="1")
    sim.fail_broker(1)
    sim.advance(10)  # broker 1 misses 10 MB
    sim.set_produce_rate("t", 0)
    sim.fail_broker(2)
    sim.fail_broker(0)  # offline: 0 is the last ISR member
    assert sim.alter_topic_configs(
        {"t": ConfigChange(set={"unclean.leader.election.enable": "true"})}
    ) == {"t": None}
    capsys.readouterr()
    sim.state.take_losses()
    assert main(["simulate", str(tmp_path), "restore-broker", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        "t-0: an unclean election of broker 1 lost 9765 record(s), 9.5 MiB "
        "(the log is cut to what it held)" in out
    )
    reread = open_sim(tmp_path, elr=False)
    assert reread.describe().topics["t"].partitions[0].leader == 1
    assert size(reread) == 0
    hw, leo, _ = offsets(reread)
    assert hw == leo[1] == 0


def test_leader_epochs_count_leader_changes_and_survive_the_file(tmp_path: Path) -> None:
    sim = open_sim(tmp_path)
    topic(sim, parts=3)
    sim.fail_broker(0)  # partition 0 (leader 0 -> 1), partition 2 (2,0,1: leader stays 2)
    assert [offsets(sim, "t", p)[2] for p in range(3)] == [1, 0, 0]
    sim.restore_broker(0)
    sim.elect_preferred_leaders([("t", 0)])  # type: ignore[list-item]
    reread = open_sim(tmp_path)
    assert [offsets(reread, "t", p)[2] for p in range(3)] == [2, 0, 0]


def test_a_state_file_without_the_new_fields_still_loads(tmp_path: Path) -> None:
    old = {
        "format": "kgitops-state/v1",
        "clusterId": "simulated-s",
        "brokers": [{"id": 0, "rack": "az1"}, {"id": 1, "rack": "az2"}, {"id": 2, "rack": "az3"}],
        "topics": {
            "t": {
                "config": {},
                "partitions": {"0": {"replicas": [0, 1], "isr": [0, 1], "leader": 0}},
            }
        },
        "consumerGroups": {"groups": {}, "logOffsets": {"t": {"0": [0, 500]}}},
        "simulation": {"clock": 5.0, "produceBytesPerSec": {"t": 1024.0}},
    }
    (tmp_path / "s.json").write_text(json.dumps(old))
    sim = open_sim(tmp_path)
    assert offsets(sim) == (500, {0: 500, 1: 500}, 0)
    assert sim.state.producers()["t"].acks == "all"
    sim.advance(10)
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["kafkaVersion"] == "4.1"
    assert data["consumerGroups"]["logOffsets"]["t"]["0"] == [0, 510]


def test_a_bad_producer_in_the_state_file_is_refused(tmp_path: Path) -> None:
    sim = open_sim(tmp_path)
    topic(sim)
    data = json.loads((tmp_path / "s.json").read_text())
    data["simulation"]["producers"] = {"t": {"acks": "2"}}
    (tmp_path / "s.json").write_text(json.dumps(data))
    with pytest.raises(StateFileError, match="simulation: malformed"):
        open_sim(tmp_path)


def test_rf2_under_min_isr_3_takes_acks_all_from_kafka_3_7_only(tmp_path: Path) -> None:
    """Partition.effectiveMinIsr: min(min.insync.replicas, replicas) since 3.7."""
    for version, written in [((4, 1), 10 * MB), ((3, 6), 0)]:
        sim = open_sim(tmp_path / f"v{version[0]}{version[1]}", version=version, elr=False)
        sim.create_topics([NewTopic("t", {0: (0, 1)}, {"min.insync.replicas": "3"})])
        sim.set_produce_rate("t", 1 * MB)
        sim.advance(10)
        assert size(sim) == written
        health = assess(sim.describe())
        assert health.count("under_min_isr") == (0 if written else 1)


def test_get_partitions_and_status_flag_a_partition_by_one_rule(tmp_path: Path) -> None:
    """A move whose new replica is still copying is not under-replicated (Kafka's
    Partition.isUnderReplicated counts AR minus removing); under min ISR is flagged too."""
    sim = SimulatedCluster.open(
        str(tmp_path / "s.json"), [*BROKERS, Broker(3, "az1")], leader_balance_seconds=None
    )
    sim.create_topics([NewTopic("t", {0: (0, 1, 2)})])
    sim.create_topics([NewTopic("u", {0: (3, 1)}, {"min.insync.replicas": "2"})])
    sim.set_size("t", 10 * MB)
    sim.alter_reassignments({("t", 0): (0, 1, 3)})  # type: ignore[dict-item]
    before = {r["topic"]: r["flags"] for r in partitions_view(sim.describe())["partitions"]}
    assert before == {"t": ["reassigning"], "u": []}  # AR [0,1,3,2] removing [2], ISR [0,1,2]
    sim.fail_broker(3)
    state = sim.describe()
    rows = {r["topic"]: r for r in partitions_view(state)["partitions"]}
    health = {f.topic: f.flags for f in assess(state).findings}
    for name in ("t", "u"):
        assert tuple(rows[name]["flags"]) == health[name]
    assert rows["t"]["flags"] == ["reassigning", "stalled"]
    assert rows["u"]["flags"] == ["under_replicated", "under_min_isr", "leader_off_preferred"]


def test_simulate_produce_reports_the_refused_rate_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(tmp_path, "d", brokers=BROKERS, state_file="s.json")
    sim = open_sim(tmp_path)
    topic(sim, parts=3)
    sim.fail_broker(1)
    sim.fail_broker(2)
    capsys.readouterr()
    assert main(["simulate", str(tmp_path), "produce", "t", "3MB/s"]) == 0
    out = capsys.readouterr().out
    assert "t: written at 3000000 bytes/s (acks=all, keys none)" in out
    assert "refused now: 2.9 MiB/s of 2.9 MiB/s" in out
    assert main(["simulate", str(tmp_path), "advance", "10s"]) == 0
    assert "t: the producer had 28.6 MiB refused (nothing written)" in capsys.readouterr().out
    assert [size(open_sim(tmp_path), "t", p) for p in range(3)] == [0, 0, 0]
    assert main(["simulate", str(tmp_path), "produce", "t", "3MB/s", "--acks", "1"]) == 0
    assert main(["simulate", str(tmp_path), "advance", "10s"]) == 0
    capsys.readouterr()
    assert main(["simulate", str(tmp_path), "show"]) == 0
    out = capsys.readouterr().out
    assert "producing to t at 3 MB/s (acks=1, keys none): 3 MB/s written" in out
    assert "t-0: HW 0, LEO 0: 9765, 1: 0, 2: 0, leader epoch 0: 9765 record(s) not readable" in out


def test_a_dead_broker_is_fenced_after_the_session_timeout_not_at_once(tmp_path: Path) -> None:
    """ReplicationControlManager.handleBrokerFenced runs when broker.session.timeout.ms has
    passed without a heartbeat; until then the broker leads and sits in the ISR."""
    sim = open_sim(tmp_path)
    topic(sim, parts=3)  # partition 1: replicas (1, 2, 0), leader 1
    sim.set_produce_rate("t", 3 * MB, acks="1")
    sim.stop_broker(1)
    sim.advance(5)
    state = sim.describe()
    assert state.topics["t"].partitions[1].leader == 1
    assert state.topics["t"].partitions[1].isr == (1, 2, 0)
    assert size(sim, "t", 1) == 0, "the stopped leader takes no records"
    assert sim.refused == {"t": pytest.approx(5 * MB)}
    hw, leo, _ = offsets(sim, "t", 0)  # broker 1 follows partition 0 and fetches nothing
    assert hw == 0 and leo[0] == 5 * MB // RECORD and leo[1] == 0
    sim.advance(4)  # 9 s: fenced
    state = sim.describe()
    assert not {b.id: b.online for b in state.brokers}[1]
    assert state.topics["t"].partitions[1].leader == 2
    assert state.topics["t"].partitions[0].isr == (0, 2)
    hw, leo, _ = offsets(sim, "t", 0)
    assert hw == leo[0] == 9 * MB // RECORD, "the ISR shrank: the HW moves on"


def test_a_short_pause_is_not_fenced_and_a_long_one_is(tmp_path: Path) -> None:
    sim = open_sim(tmp_path)
    topic(sim, parts=3)
    sim.stop_broker(1, resume_after=5)
    sim.advance(5)
    assert 1 in sim.state.online and sim.state.stopped == {}
    assert sim.describe().topics["t"].partitions[1].leader == 1
    sim.stop_broker(1, resume_after=20)
    sim.advance(10)
    assert 1 not in sim.state.online, "fenced at 9 s"
    sim.advance(10)
    state = sim.describe()
    assert 1 in sim.state.online and sim.state.stopped == {}
    assert state.topics["t"].partitions[0].isr == (0, 1, 2), "nothing written: back in sync"


def test_a_follower_that_cannot_keep_up_leaves_the_isr_after_replica_lag_time_max(
    tmp_path: Path,
) -> None:
    """Partition.maybeShrinkIsr / getOutOfSyncReplicas: 300 MB/s into a partition whose
    followers fetch over 100 MB/s; they stay in the ISR for replica.lag.time.max.ms (30 s)."""
    sim = open_sim(tmp_path)
    sim.create_topics([NewTopic("t", {0: (0, 1, 2)}, {"min.insync.replicas": "2"})])
    sim.set_produce_rate("t", 300 * MB, acks="1")
    sim.advance(29)
    assert sim.describe().topics["t"].partitions[0].isr == (0, 1, 2)
    sim.advance(2)
    state = sim.describe()
    assert state.topics["t"].partitions[0].isr == (0,)
    hw, leo, _ = offsets(sim)
    assert leo[1] == leo[2] < leo[0] and hw <= leo[0]
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["simulation"]["behindSince"] == {}
    assert data["simulation"]["eligibleLeaderReplicas"] == {"t": {"0": [1, 2]}}
    # never catching up (100 MB/s copy, 300 MB/s growth), they stay out
    sim.advance(60)
    assert sim.describe().topics["t"].partitions[0].isr == (0,)


def test_the_lag_time_is_the_brokers_replica_lag_time_max_ms(tmp_path: Path) -> None:
    sim = open_sim(tmp_path)
    sim.create_topics([NewTopic("t", {0: (0, 1)})])
    data = json.loads((tmp_path / "s.json").read_text())
    data["brokerDefaults"] = {"replica.lag.time.max.ms": "10000"}
    (tmp_path / "s.json").write_text(json.dumps(data))
    sim = open_sim(tmp_path)
    sim.set_produce_rate("t", 200 * MB, acks="1")
    sim.advance(9)
    assert sim.describe().topics["t"].partitions[0].isr == (0, 1)
    sim.advance(1)
    assert sim.describe().topics["t"].partitions[0].isr == (0,)


def test_simulate_pause_broker_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster_folder(tmp_path, "d", brokers=BROKERS, state_file="s.json")
    topic(open_sim(tmp_path), parts=3)
    assert main(["simulate", str(tmp_path), "pause-broker", "1", "3s"]) == 0
    out = capsys.readouterr().out
    assert "broker 1 paused for 3s and back; not fenced" in out
    assert "HEALTHY" in out
    assert main(["simulate", str(tmp_path), "pause-broker", "1", "30s"]) == 0
    out = capsys.readouterr().out
    assert "broker 1 paused for 30s: fenced after 9s (broker.session.timeout.ms), back now" in out
    assert open_sim(tmp_path).state.clock == 33


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pause-broker", "1", "0s"], "a pause must last more than 0 s"),
        (["pause-broker", "1", "9223372036854775807ms"], "the simulated clock would pass"),
        (["pause-broker", "7", "5s"], "broker 7 is not in the cluster"),
    ],
)
def test_a_bad_pause_is_one_line_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    cluster_folder(tmp_path, "d", brokers=BROKERS, state_file="s.json")
    sim = open_sim(tmp_path)
    topic(sim)
    sim.advance(10)
    before = (tmp_path / "s.json").read_bytes()
    assert main(["simulate", str(tmp_path), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "s.json").read_bytes() == before


def test_get_lags_and_status_measure_from_the_high_watermark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group that read everything consumers can read has no lag, though the leader's log
    end is ahead (acks=1 under min ISR); status shows the records not readable yet."""
    cluster_folder(tmp_path, "d", brokers=BROKERS, state_file="s.json")
    sim = open_sim(tmp_path)
    topic(sim)
    sim.set_produce_rate("t", 1 * MB, acks="1")
    sim.advance(10)
    sim.fail_broker(1)
    sim.fail_broker(2)
    sim.advance(10)
    sim.join_group("g", "g-1", ["t"])
    hw = sim.list_offsets([("t", 0)], -1)[("t", 0)]
    sim.commit("g", {("t", 0): hw})
    capsys.readouterr()
    assert main(["get", str(tmp_path), "lags", "g", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["partitions"]
    assert (row["end"], row["lag"]) == (hw, 0)
    assert main(["status", str(tmp_path), "--format", "json"]) == 2
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["highWatermark"] == hw == 10 * MB // RECORD
    assert finding["logEndOffsets"] == {"0": 20 * MB // RECORD, "1": hw, "2": hw}
    assert main(["status", str(tmp_path)]) == 2
    assert f"HW {hw} < leader LEO {20 * MB // RECORD}" in capsys.readouterr().out


def test_kafka_version_round_trips_through_a_state_file_and_a_bad_one_is_refused(
    tmp_path: Path,
) -> None:
    from kgitops.cluster.snapshot import read_state, write_state
    from kgitops.model import ClusterState

    state = ClusterState(brokers=(Broker(0, "az1"),), topics={}, kafka_version=(3, 6))
    path = tmp_path / "snap.json"
    write_state(str(path), state)
    data = json.loads(path.read_text())
    assert data["kafkaVersion"] == "3.6"
    assert read_state(str(path)).kafka_version == (3, 6)
    del data["kafkaVersion"]  # a snapshot from before kafkaVersion
    path.write_text(json.dumps(data))
    assert read_state(str(path)).kafka_version is None
    assert read_state(str(path)).version == (4, 1)
    data["kafkaVersion"] = "four"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(StateFileError) as exc:
        read_state(str(path))
    assert 'kafkaVersion: expected a Kafka version such as "4.1" or "3.7.2"' in str(exc.value)
