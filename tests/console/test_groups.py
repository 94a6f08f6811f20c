"""Consumer groups and lag on the simulated cluster (Kafka's rules: docs/console.md) and
in snapshots: `get groups`, `get members GROUP`, `get lags GROUP`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder, run_cli

BROKERS = [Broker(0, "az1"), Broker(1, "az2")]
VALIDATOR = Draft202012Validator(schema("console.json"))


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """orders (2 partitions) written at 10 KiB/s for 10 s: 50 records per partition (1 KiB
    each); group billing has two members and committed 40 and 45; group audit has none."""
    cluster_folder(tmp_path, brokers=BROKERS)
    s = sim(tmp_path)
    s.create_topics([NewTopic("orders", {0: (0, 1), 1: (1, 0)}), NewTopic("other", {0: (0,)})])
    s.set_produce_rate("orders", 10 * 1024)
    s.advance(10)
    s.join_group("billing", "c1-a", ["orders"])
    s.join_group("billing", "c2-b", ["orders"])
    s.commit("billing", {("orders", 0): 40, ("orders", 1): 45})
    s.commit("audit", {("orders", 0): 50})
    return tmp_path


def get(*argv: str) -> tuple[int, str, str]:
    return run_cli("get", *argv)


def get_json(*argv: str) -> dict[str, Any]:
    code, out, err = get(*argv, "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    VALIDATOR.validate(data)
    return data


def test_simulate_produce_moves_end_offsets(folder: Path) -> None:
    s = sim(folder)
    assert s.list_offsets([("orders", 0), ("orders", 1), ("other", 0)], -1) == {
        ("orders", 0): 50,
        ("orders", 1): 50,
        ("other", 0): 0,
    }
    s.advance(2)
    assert s.list_offsets([("orders", 0)], -1) == {("orders", 0): 60}
    assert s.list_offsets([("orders", 0)], -2) == {("orders", 0): 0}


def test_lags_per_partition_with_the_owning_member_and_totals(folder: Path) -> None:
    code, out, _ = get(str(folder), "lags", "billing")
    assert code == 0
    assert out.splitlines() == [
        "group billing: Stable; total lag 15, max lag 10",
        "TOPIC   PARTITION  COMMITTED  END  LAG  MEMBER  CLIENT-ID  HOST",
        "orders          0         40   50   10  c1-a    c1         /127.0.0.1",
        "orders          1         45   50    5  c2-b    c2         /127.0.0.1",
    ]
    data = get_json(str(folder), "lags", "audit")
    assert (data["state"], data["totalLag"], data["maxLag"]) == ("Empty", 0, 0)
    assert data["partitions"][0]["member"] is None


def test_groups_and_members(folder: Path) -> None:
    data = get_json(str(folder), "groups")
    assert [(g["group"], g["state"], g["members"], g["totalLag"]) for g in data["groups"]] == [
        ("audit", "Empty", 0, 0),
        ("billing", "Stable", 2, 15),
    ]
    _, out, _ = get(str(folder), "members", "billing")
    assert out.splitlines() == [
        "group billing: Stable, 2 member(s)",
        "MEMBER  CLIENT-ID  HOST        PARTITIONS",
        "c1-a    c1         /127.0.0.1  orders-0",
        "c2-b    c2         /127.0.0.1  orders-1",
    ]


def test_production_after_a_commit_grows_the_lag(folder: Path) -> None:
    sim(folder).advance(4)  # 40 KiB more over 2 partitions: 20 records each
    data = get_json(str(folder), "lags", "billing")
    assert [r["lag"] for r in data["partitions"]] == [30, 25]


def test_an_unknown_group_is_one_line_and_exit_1(folder: Path) -> None:
    for view in ("lags", "members"):
        code, out, err = get(str(folder), view, "nope\x1b")
        assert (code, out) == (1, "")
        assert err == "error: consumer group 'nope\\x1b' does not exist\n"


def test_deleting_a_topic_drops_the_offsets_committed_for_it(folder: Path) -> None:
    s = sim(folder)
    s.leave_group("billing", "c1-a")
    s.leave_group("billing", "c2-b")
    s.delete_topics(["orders"])
    code, _, err = get(str(folder), "lags", "audit")
    assert code == 1 and "does not exist" in err
    assert get_json(str(folder), "groups")["groups"] == []


def test_a_snapshot_keeps_groups_and_their_log_offsets(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = folder / "snap.json"
    assert main(["snapshot", str(folder), "--out", str(snap)]) == 0
    capsys.readouterr()
    assert json.loads(snap.read_text())["consumerGroups"]["logOffsets"]["orders"] == {
        "0": [0, 50],
        "1": [0, 50],
    }
    sim(folder).advance(100)  # the live lag moves on; the snapshot's does not
    data = get_json(str(folder), "lags", "billing", "--state", str(snap))
    assert data["totalLag"] == 15


def test_a_snapshot_without_groups_says_so(tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"format": "kgitops-state/v1", "brokers": [], "topics": {}}))
    code, out, err = get(str(tmp_path), "groups", "--state", str(snap))
    assert (code, out) == (1, "")
    assert "the snapshot holds no consumer groups" in err
    assert len(err.splitlines()) == 1


def test_simulate_consume_commit_and_leave_drive_a_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_folder(tmp_path, brokers=BROKERS)
    sim(tmp_path).create_topics([NewTopic("orders", {0: (0, 1), 1: (1, 0)})])
    d = str(tmp_path)
    assert main(["simulate", d, "produce", "orders", "2KiB/s"]) == 0
    assert main(["simulate", d, "advance", "30s"]) == 0  # 30 records per partition
    assert main(["simulate", d, "consume", "billing", "orders"]) == 0
    assert main(["simulate", d, "consume", "billing", "orders", "--member", "b-2"]) == 0
    assert main(["simulate", d, "commit", "billing", "orders", "--lag", "4"]) == 0
    out = capsys.readouterr().out
    assert "group billing: billing-1 joined; it is assigned orders-0, orders-1" in out
    assert "group billing committed on orders: 0: 26, 1: 26" in out
    data = get_json(d, "lags", "billing")
    assert [(r["lag"], r["member"]) for r in data["partitions"]] == [(4, "b-2"), (4, "billing-1")]
    assert main(["simulate", d, "leave", "billing", "b-2"]) == 0
    assert main(["simulate", d, "leave", "billing", "billing-1"]) == 0
    capsys.readouterr()
    assert get_json(d, "groups")["groups"][0]["state"] == "Empty"
    assert main(["simulate", d, "consume", "billing", "nope"]) == 1
    assert capsys.readouterr().err == "error: no topic 'nope' in the simulated cluster\n"


@pytest.fixture
def two_topics(folder: Path) -> Path:
    """The folder, plus: billing's member c1-a also consumes `other` and committed 90 of its
    100 records; audit commits on orders only."""
    s = sim(folder)
    s.set_produce_rate("other", 10 * 1024)
    s.advance(10)  # orders: 100 per partition, other: 100
    s.join_group("billing", "c1-a", ["orders", "other"])
    s.commit("billing", {("other", 0): 90})
    return folder


def test_the_topic_glob_keeps_the_groups_that_consume_it_and_their_lag_there(
    two_topics: Path,
) -> None:
    whole = get_json(str(two_topics), "groups")["groups"]
    assert [(g["group"], g["topics"], g["totalLag"]) for g in whole] == [
        ("audit", ["orders"], 50),
        ("billing", ["orders", "other"], 125),
    ]
    data = get_json(str(two_topics), "groups", "--topic", "oth*")
    assert [(g["group"], g["topics"], g["totalLag"], g["maxLag"]) for g in data["groups"]] == [
        ("billing", ["other"], 10, 10),
    ]
    assert data["groups"][0]["members"] == 2  # the group's members, whatever they consume
    both = get_json(str(two_topics), "groups", "--topic", "other", "--topic", "ord?rs")
    assert [g["group"] for g in both["groups"]] == ["audit", "billing"]


def test_the_topic_glob_narrows_a_groups_lags_and_members(two_topics: Path) -> None:
    lags = get_json(str(two_topics), "lags", "billing", "--topic", "other")
    assert [(r["topic"], r["partition"], r["lag"]) for r in lags["partitions"]] == [
        ("other", 0, 10)
    ]
    assert (lags["totalLag"], lags["maxLag"]) == (10, 10)
    members = get_json(str(two_topics), "members", "billing", "--topic", "other")
    assert [(m["member"], m["partitions"]) for m in members["members"]] == [
        ("c1-a", [{"topic": "other", "partition": 0}])
    ]
    code, out, err = get(str(two_topics), "lags", "billing", "--topic", "other")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "group billing: Stable; total lag 10, max lag 10"
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["other"]


def test_a_topic_glob_matching_nothing_is_an_empty_view_and_a_note(two_topics: Path) -> None:
    code, out, err = get(str(two_topics), "groups", "--topic", "nope*")
    assert (code, out.splitlines()[1:]) == (0, [])
    assert err == (
        "note: no consumer group has an offset or a partition of a topic matching nope*\n"
    )
    code, out, err = get(str(two_topics), "lags", "audit", "--topic", "other")
    assert code == 0
    assert err == "note: group audit has no offset or partition of a topic matching other\n"
    code, out, err = get(str(two_topics), "members", "audit", "--topic", "\x1b[2J")
    assert code == 0
    assert err == (
        "note: no member of group audit is assigned a partition of a topic matching \\x1b[2J\n"
    )
    # an unknown group is still an error, filter or not
    code, out, err = get(str(two_topics), "lags", "nope", "--topic", "orders")
    assert (code, out, err) == (1, "", "error: consumer group 'nope' does not exist\n")


def test_the_topic_glob_works_on_a_snapshot_too(
    two_topics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = two_topics / "snap.json"
    assert main(["snapshot", str(two_topics), "--out", str(snap)]) == 0
    capsys.readouterr()
    data = get_json(str(two_topics), "lags", "billing", "--topic", "o*s", "--state", str(snap))
    assert [(r["topic"], r["lag"]) for r in data["partitions"]] == [
        ("orders", 60),
        ("orders", 55),
    ]
