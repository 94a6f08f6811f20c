"""`kgitops get`: the everyday views of a cluster (docs/console.md), on the simulated cluster
and a `--state` snapshot; the local broker's half is in test_get_broker.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.cluster.snapshot import write_state
from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.safetext import safe_text
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder, run_cli

BROKERS = [Broker(0, "az1"), Broker(1, "az2"), Broker(2, "az1"), Broker(3, "az2")]
VALIDATOR = Draft202012Validator(schema("console.json"))


def four_brokers(path: Path) -> Path:
    """The simulated cluster of these tests at ``path``: orders, audit and clicks on four
    brokers in two racks."""
    cluster_folder(path, brokers=BROKERS)
    s = SimulatedCluster.open(str(path / ".state" / "demo.json"), BROKERS)
    s.create_topics(
        [
            NewTopic("orders", {0: (0, 1), 1: (1, 2), 2: (2, 3)}, {"retention.ms": "1000"}),
            NewTopic("audit", {0: (0, 1)}),
            NewTopic("clicks", {0: (3, 0), 1: (0, 3)}),
        ]
    )
    s.close()
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return four_brokers(tmp_path)


def get(*argv: str) -> tuple[int, str, str]:
    return run_cli("get", *argv)


def get_json(*argv: str) -> dict[str, Any]:
    code, out, err = get(*argv, "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    VALIDATOR.validate(data)
    return data


def test_topics_are_sorted_and_aligned(folder: Path) -> None:
    code, out, _ = get(str(folder), "topics")
    assert code == 0
    assert out.splitlines() == [
        "TOPIC   PARTITIONS  RF  BYTES  UNDER-REPLICATED  OFFLINE  OVERRIDES",
        "audit            1   2  0 B                   0        0          0",
        "clicks           2   2  0 B                   0        0          0",
        "orders           3   2  0 B                   0        0          1",
    ]


def test_the_topic_glob_filters_every_view(folder: Path) -> None:
    data = get_json(str(folder), "partitions", "--topic", "c*", "--topic", "aud?t")
    assert [(p["topic"], p["partition"]) for p in data["partitions"]] == [
        ("audit", 0),
        ("clicks", 0),
        ("clicks", 1),
    ]
    brokers = get_json(str(folder), "brokers", "--topic", "orders")["brokers"]
    assert [(b["id"], b["replicas"], b["preferredLeaders"]) for b in brokers] == [
        (0, 1, 1),
        (1, 2, 1),
        (2, 2, 1),
        (3, 1, 0),
    ]


def test_internal_topics_are_listed_only_when_asked_for_and_brokers_count_them(
    folder: Path,
) -> None:
    s = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    s.create_topics([NewTopic("__consumer_offsets", {0: (0, 1), 1: (1, 2)})])
    s.close()
    topics = [t["name"] for t in get_json(str(folder), "topics")["topics"]]
    assert topics == ["audit", "clicks", "orders"]
    every = get_json(str(folder), "topics", "--include-internal")["topics"]
    assert [t["name"] for t in every] == ["__consumer_offsets", "audit", "clicks", "orders"]
    for glob in ("*", "*offsets"):
        view = get_json(str(folder), "partitions", "--topic", glob)
        assert {p["topic"] for p in view["partitions"]} <= {"audit", "clicks", "orders"}
    code, _, err = get(str(folder), "partitions", "--topic", "*offsets")
    assert code == 0 and err == (
        "note: no topic shown matches *offsets: 1 internal topic(s) match "
        "(__consumer_offsets); add --include-internal\n"
    )
    every = get_json(str(folder), "partitions", "--topic", "*offsets", "--include-internal")
    assert {p["topic"] for p in every["partitions"]} == {"__consumer_offsets"}
    named = get_json(str(folder), "partitions", "--topic", "__consumer_offsets")
    assert [(p["topic"], p["replicas"]) for p in named["partitions"]] == [
        ("__consumer_offsets", [0, 1]),
        ("__consumer_offsets", [1, 2]),
    ]
    held = {b["id"]: b["replicas"] for b in get_json(str(folder), "brokers")["brokers"]}
    assert held == {0: 5, 1: 5, 2: 3, 3: 3}, "a broker's replicas are all of them"


def test_a_glob_matching_nothing_says_so_and_shows_an_empty_table(folder: Path) -> None:
    code, out, err = get(str(folder), "topics", "--topic", "nothing*")
    assert code == 0
    assert out.splitlines() == [
        "TOPIC  PARTITIONS  RF  BYTES  UNDER-REPLICATED  OFFLINE  OVERRIDES"
    ]
    assert err == "note: no topic matches nothing*\n"


def test_a_failed_broker_shows_in_partitions_and_brokers(folder: Path) -> None:
    s = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    s.fail_broker(1)
    s.close()
    code, out, _ = get(str(folder), "partitions", "--topic", "orders")
    assert code == 0
    # the simulated cluster reports offsets: partition 1's leader moved (epoch 0 -> 1)
    assert out.splitlines() == [
        "TOPIC   PARTITION  LEADER  EPOCH  REPLICAS  ISR  LEO  HW  BYTES  FLAGS",
        "orders          0       0      0  0,1       0    0,0   0  0 B    under-replicated",
        "orders          1       2      1  1,2       2    0,0   0  0 B    "
        "leader-off-preferred,under-replicated",
        "orders          2       2      0  2,3       2,3  0,0   0  0 B",
    ]
    brokers = get_json(str(folder), "brokers")
    assert [b["online"] for b in brokers["brokers"]] == [True, False, True, True]
    assert brokers["brokers"][1]["leaders"] == 0
    assert brokers["brokers"][1]["replicas"] == 3


def test_balance_counts_per_broker_and_rack_with_the_spread(folder: Path) -> None:
    s = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    s.set_size("orders", 1000)
    s.close()
    data = get_json(str(folder), "balance")
    assert [
        (b["id"], b["replicas"], b["preferredLeaders"], b["bytes"]) for b in data["brokers"]
    ] == [
        (0, 4, 3, 1000),
        (1, 3, 1, 2000),
        (2, 2, 1, 2000),
        (3, 3, 1, 1000),
    ]
    assert data["racks"] == [
        {
            "rack": "az1",
            "brokers": 2,
            "replicas": 6,
            "preferredLeaders": 4,
            "leaders": 4,
            "bytes": 3000,
        },
        {
            "rack": "az2",
            "brokers": 2,
            "replicas": 6,
            "preferredLeaders": 2,
            "leaders": 2,
            "bytes": 3000,
        },
    ]
    assert data["spread"]["brokers"]["replicas"] == {
        "min": 2,
        "max": 4,
        "mean": 3.0,
        "maxOverMean": 1.333,
    }
    assert data["spread"]["racks"]["bytes"]["maxOverMean"] == 1.0
    _, out, _ = get(str(folder), "balance")
    assert "Spread over online brokers: replicas 2-4 (1.33x the mean); preferred leaders 1-3" in out
    assert (
        "Spread over racks: replicas 6-6 (1.00x the mean); preferred leaders 2-4 (1.33x the mean)"
        in out
    )


def test_config_shows_what_is_set_on_the_topic(folder: Path) -> None:
    code, out, _ = get(str(folder), "config", "orders")
    assert (code, out) == (0, "CONFIG        VALUE\nretention.ms  1000\n")
    code, out, _ = get(str(folder), "config", "audit")
    assert out == "audit: no config set on the topic (broker defaults)\n"
    assert get_json(str(folder), "config", "orders")["configs"] == [
        {"name": "retention.ms", "value": "1000"}
    ]


def test_an_unknown_topic_is_one_line_and_exit_1(folder: Path) -> None:
    code, out, err = get(str(folder), "config", "nope\x1b[2J")
    assert code == 1
    assert out == ""
    assert err == "error: topic 'nope\\x1b[2J' does not exist on the cluster\n"


def test_a_folder_without_cluster_yaml_is_one_line(tmp_path: Path) -> None:
    code, out, err = get(str(tmp_path), "topics")
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_snapshot_is_read_without_a_cluster(tmp_path: Path) -> None:
    hostile = "x\x1b]0;pwned\x07\nFAKE  ROW\u202e"
    state = ClusterState(
        brokers=(Broker(7, "az1"),),
        topics={
            "t": TopicState(
                "t",
                {0: PartitionState((7,), (7,), 7, None)},
                {"cleanup.policy": hostile},
            )
        },
    )
    snap = tmp_path / "snap.json"
    write_state(str(snap), state)
    code, out, _ = get(str(tmp_path), "config", "t", "--state", str(snap))
    assert code == 0
    assert out.splitlines() == [
        "CONFIG          VALUE",
        "cleanup.policy  x\\x1b]0;pwned\\x07\\nFAKE  ROW\\u202e",
    ]
    data = get_json(str(tmp_path), "topics", "--state", str(snap))
    assert data["topics"][0]["bytes"] is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("a\\nb", "a\\\\nb"),  # a literal backslash cannot pass for an escape
        ("\x00\x7f\x9b", "\\x00\\x7f\\x9b"),
        ("\u2028", "\\u2028"),
        ("é中", "é中"),
    ],
)
def test_safe_text_escapes_what_a_terminal_would_act_on(text: str, shown: str) -> None:
    assert safe_text(text) == shown


def test_safe_text_cuts_long_values() -> None:
    assert safe_text("x" * 100, limit=10) == "xxxxxxx..."


def test_a_glob_matching_only_kgitops_own_topic_says_it_is_hidden_not_absent(folder: Path) -> None:
    from kgitops.model import PASSWORD_VERSION_TOPIC

    s = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    s.create_topics([NewTopic(PASSWORD_VERSION_TOPIC, {0: (0, 1)})])
    s.close()
    for view in ("topics", "partitions"):
        code, _, err = get(str(folder), view, "--topic", "_kgitops*")
        assert code == 0 and err == (
            "note: no topic shown matches _kgitops*: 1 internal topic(s) match "
            f"({PASSWORD_VERSION_TOPIC}); add --include-internal\n"
        )
    shown = get_json(str(folder), "topics", "--topic", "_kgitops*", "--include-internal")
    assert [t["name"] for t in shown["topics"]] == [PASSWORD_VERSION_TOPIC]


def test_brokers_and_balance_put_current_and_preferred_leaders_in_one_order(folder: Path) -> None:
    heads = []
    for view in ("brokers", "balance"):
        _, out, _ = get(str(folder), view)
        heads.append(out.splitlines()[0].split())
    for head in heads:
        i = head.index("LEADERS")
        assert head[i + 1] == "PREFERRED", head  # never "PREFERRED LEADERS" over two columns
