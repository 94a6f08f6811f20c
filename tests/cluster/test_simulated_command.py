"""`kgitops simulate DIR ...`: the what-if commands, across separate runs of the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from tests.helpers import THREE_AZS, cluster_folder

BROKERS = THREE_AZS


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return cluster_folder(tmp_path, brokers=BROKERS)


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)


def test_what_if_broker_1_dies(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim(folder).create_topics([NewTopic("a", {0: (0, 1), 1: (1, 2)})])
    assert main(["simulate", str(folder), "fail-broker", "1"]) == 0
    out = capsys.readouterr().out
    # fenced after broker.session.timeout.ms (Kafka's default 9 s): the clock moves on
    assert (
        "broker 1 stopped; 9s later (broker.session.timeout.ms) the controller fenced it: "
        "it is now offline; clock now 9s" in out
    )
    assert sim(folder).state.clock == 9
    assert "offline brokers: none -> 1" in out
    assert "under-replicated partitions: 0 -> 2" in out
    assert "decommission:" in out  # the hint to get the plan that re-replicates
    assert sim(folder).describe().topics["a"].partitions[1].leader == 2
    assert main(["simulate", str(folder), "restore-broker", "1"]) == 0
    assert "under-replicated partitions: 2 -> 0" in capsys.readouterr().out


def test_advance_lets_replicas_catch_up(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {0: (0, 1)})])
    assert main(["simulate", str(folder), "set-size", "a", "1GB"]) == 0
    s.alter_reassignments({("a", 0): (0, 2)})
    assert main(["simulate", str(folder), "show"]) == 0
    assert "a-0 on broker 2: 0 B of 953.7 MiB at 95.4 MiB/s, ETA 10s" in capsys.readouterr().out
    assert main(["simulate", str(folder), "advance", "9s"]) == 0
    assert sim(folder).list_reassignments() != {}
    assert main(["simulate", str(folder), "advance", "1"]) == 0
    assert "reassignments in flight: 1 -> 0" in capsys.readouterr().out
    assert sim(folder).describe().topics["a"].partitions[0].replicas == (0, 2)
    assert sim(folder).state.clock == 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fail-broker", "7"], "broker 7 is not in the cluster (brokers: 0, 1, 2)"),
        (["advance", "soon"], "'soon' is not a duration"),
        (["set-size", "a", "lots"], "'lots' is not a size"),
        (["set-size", "nope", "1GB"], "no topic 'nope'"),
    ],
)
def test_bad_what_if_input_is_a_clear_error(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    sim(folder).create_topics([NewTopic("a", {0: (0,)})])
    assert main(["simulate", str(folder), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_real_cluster_is_never_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(tmp_path, "prod", bootstrap="k:9092")
    assert main(["simulate", str(tmp_path), "fail-broker", "1"]) == 1
    assert "is not simulated" in capsys.readouterr().err


def test_units() -> None:
    from kgitops.units import human_seconds, parse_duration, parse_size

    assert parse_size("1.5GB") == 1_500_000_000
    assert parse_size("2GiB") == 2 * 2**30
    assert parse_size("512") == 512
    assert parse_duration("2m30s") == 150
    assert parse_duration("90") == 90
    assert parse_duration("1h") == 3600
    assert human_seconds(150) == "2m 30s"
    with pytest.raises(ValueError):
        parse_duration("2x")


def test_produce_makes_a_failed_broker_fall_behind(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim(folder).create_topics([NewTopic("a", {0: (0, 1)})])
    assert main(["simulate", str(folder), "produce", "a", "10MB/s"]) == 0
    assert main(["simulate", str(folder), "fail-broker", "1"]) == 0
    assert main(["simulate", str(folder), "advance", "1m"]) == 0
    assert main(["simulate", str(folder), "restore-broker", "1"]) == 0
    capsys.readouterr()
    assert main(["simulate", str(folder), "show"]) == 0
    out = capsys.readouterr().out
    assert "producing to a at 10 MB/s (acks=all, keys none): 10 MB/s written" in out
    # broker 1 stopped fetching when it died, 9 s before it was fenced: 69 s of writes
    assert "a-0 on broker 1: 0 B of 658.0 MiB at 95.4 MiB/s, ETA 7.67s" in out
    assert main(["simulate", str(folder), "produce", "a", "fast"]) == 1


def test_show_lists_at_most_the_limit(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("a", {p: (0,) for p in range(5)})])
    s.set_size("a", 10**9)
    s.alter_reassignments({("a", p): (0, 1) for p in range(5)})
    capsys.readouterr()
    assert main(["simulate", str(folder), "show", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count(" on broker 1: ") == 2
    assert "... and 3 more (show --limit 0 lists all)" in out


def test_failing_a_retired_broker_is_healthy_as_status_says(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Broker 2 is listed in decommission: and holds no replica: down, it is retired, not
    offline. ``simulate`` judges health as ``status`` does, so both say HEALTHY."""
    cluster_folder(folder, brokers=BROKERS, extra="decommission: [2]\n")
    sim(folder).create_topics([NewTopic("a", {0: (0, 1), 1: (1, 0)})])
    assert main(["simulate", str(folder), "fail-broker", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "  HEALTHY", out
    assert sim(folder).describe().brokers[2].online is False
    assert main(["status", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "HEALTHY"
    assert main(["simulate", str(folder), "show"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "HEALTHY"


def test_produce_offers_exactly_the_acks_and_key_modes_the_replication_model_knows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``simulate produce --acks/--keys`` spell their choices out (the command line imports no
    cluster module at start-up); they must stay the model's own ``ACKS`` and ``KEYS``."""
    from kgitops.cli import build_parser
    from kgitops.cluster.replication import ACKS, KEYS

    parser = build_parser()
    produce = parser.parse_args(["simulate", "d", "produce", "t", "1MB"])
    assert (produce.acks, produce.keys) == (ACKS[0], KEYS[0])
    for flag, known in (("--acks", ACKS), ("--keys", KEYS)):
        with pytest.raises(SystemExit):
            parser.parse_args(["simulate", "d", "produce", "t", "1MB", flag, "every"])
        offered = ", ".join(repr(v) for v in known)
        assert f"(choose from {offered})" in capsys.readouterr().err
