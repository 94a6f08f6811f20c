"""The report arithmetic and its renderers, from hand-made aggregates (no Spark)."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from kgitops.analytics.render import bar, render_load_change, render_markdown, render_text
from kgitops.analytics.report import (
    HotKey,
    LoadRow,
    Placement,
    ReportInput,
    broker_load,
    build_report,
    placements_for,
    skew,
)
from kgitops.model import Broker
from kgitops.placement.assignment import assign_replicas

SCHEMA = json.loads(
    (resources.files("kgitops") / "schemas" / "keys-report.json").read_text(encoding="utf-8")
)


def _two_counts() -> ReportInput:
    # 2 partitions: p0 holds 3 keys / 10 messages, p1 1 key / 30; 4 partitions: one key
    # (5 messages) and one key (30 messages) moved; 7 null-key messages.
    rows = (
        LoadRow(2, 0, keys=3, messages=10, bytes=100),
        LoadRow(2, 1, keys=1, messages=30, bytes=300),
        LoadRow(2, None, keys=1, messages=7, bytes=70),
        LoadRow(4, 0, keys=2, messages=5, bytes=50),
        LoadRow(4, 1, keys=0, messages=0, bytes=0),
        LoadRow(4, 2, keys=1, messages=5, bytes=50, moved_keys=1, moved_messages=5, moved_bytes=50),
        LoadRow(
            4, 3, keys=1, messages=30, bytes=300, moved_keys=1, moved_messages=30, moved_bytes=300
        ),
        LoadRow(4, None, keys=1, messages=7, bytes=70),
    )
    hot = (HotKey(b"big", 30, 300, {2: 1, 4: 3}), HotKey(b"\xff\x00", 5, 50, {2: 0, 4: 2}))
    return ReportInput(counts=(2, 4), base=2, rows=rows, hot=hot, sizes=True)


def test_skew_is_max_over_mean_and_coefficient_of_variation() -> None:
    assert skew([10, 30]) == (1.5, 0.5)
    assert skew([5, 5, 5]) == (1.0, 0.0)
    assert skew([]) == (0.0, 0.0)
    assert skew([0, 0]) == (0.0, 0.0)


def test_report_counts_null_keys_apart_and_measures_moves_from_the_base() -> None:
    report = build_report(_two_counts())
    assert report["messages"] == 47
    assert report["nullKeys"] == 7
    assert report["distinctKeys"] == 4
    assert report["bytes"] == 470
    assert report["partitionCounts"]["2"]["messages"] == [10, 30]
    assert report["partitionCounts"]["4"]["messages"] == [5, 0, 5, 30]
    assert report["partitionCounts"]["4"]["emptyPartitions"] == 1
    assert report["partitionCounts"]["2"]["maxOverMean"] == 1.5
    assert report["moves"] == [
        {
            "from": 2,
            "to": 4,
            "keyShare": 0.5,
            "messageShare": 0.875,
            "movedKeys": 2,
            "movedMessages": 35,
            "byteShare": 0.875,
        }
    ]
    assert report["hotKeys"][0] == {
        "key": "big",
        "messages": 30,
        "share": 0.75,
        "bytes": 300,
        "partitions": {"2": 1, "4": 3},
    }
    assert report["hotKeys"][1]["keyHex"] == "ff00"
    jsonschema.validate(report, SCHEMA)


def test_broker_load_sums_leaders_and_all_replicas_per_broker_and_rack() -> None:
    placement = Placement({0: (1, 2), 1: (2, 1)}, (Broker(1, "a"), Broker(2, "b"), Broker(3, "b")))
    load = broker_load(placement, [10, 30], None)
    by_id = {b["id"]: b for b in load["brokers"]}
    assert (by_id[1]["leaderMessages"], by_id[1]["replicaMessages"]) == (10, 40)
    assert (by_id[2]["leaderMessages"], by_id[2]["replicaMessages"]) == (30, 40)
    assert (by_id[3]["leaderMessages"], by_id[3]["replicaMessages"]) == (0, 0)
    racks = {r["rack"]: r for r in load["racks"]}
    assert racks["b"]["brokers"] == [2, 3]
    assert racks["b"]["replicaMessages"] == 40
    assert racks["a"]["leaderPartitions"] == 1


def test_placements_keep_live_partitions_and_add_kafkas_assignment_for_larger_counts() -> None:
    brokers = (Broker(0), Broker(1), Broker(2))
    live = assign_replicas(brokers, 3, 2, start_index=1)
    placements = placements_for(live, brokers, [2, 3, 6])
    assert 2 not in placements  # Kafka cannot shrink a topic
    assert placements[3].source == "state"
    grown = placements[6]
    assert grown.source == "computed"
    assert all(grown.assignment[p] == live[p] for p in live)
    assert sorted(grown.assignment) == list(range(6))


def test_consumer_load_follows_the_range_and_round_robin_assignors() -> None:
    data = _two_counts()
    report = build_report(
        ReportInput(data.counts, data.base, data.rows, data.hot, sizes=True, consumers=3)
    )
    group = report["partitionCounts"]["4"]["consumers"]
    assert group["range"]["assignment"][0] == {"member": "c0", "partitions": [0, 1], "messages": 5}
    assert [r["partitions"] for r in group["roundrobin"]["assignment"]] == [[0, 3], [1], [2]]
    jsonschema.validate(report, SCHEMA)
    assert "| c0 | 5 | 35 |" in render_markdown(report)
    assert "consumers (roundrobin): c0=35, c1=0, c2=5" in render_text(report)


def test_bar_uses_eighth_blocks_scaled_to_the_peak() -> None:
    assert bar(1, 2, 4) == "██"
    assert bar(2, 2, 4) == "████"
    assert bar(1, 16, 4) == "▎"
    assert bar(0, 2) == ""


def test_text_and_markdown_show_moves_hot_keys_and_a_bar_per_partition() -> None:
    report = build_report(_two_counts())
    text = render_text(report)
    assert "2 -> 4 partitions: 50.0% of keys and 87.5% of messages change partition" in text
    assert "0xff00" in text
    md = render_markdown(report)
    assert "| 2 → 4 | **50.0%** | **87.5%** |" in md
    assert "| 3 | 30 | 75.0% | `████████████████████████` |" in md
    assert md.count("<details>") == 2


@pytest.mark.parametrize("bad", [{"format": "x"}, {"format": "kgitops-keys/v1"}])
def test_schema_refuses_reports_that_are_not_kgitops_keys_v1(bad: dict[str, object]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)


def test_load_change_puts_before_and_after_side_by_side_on_one_scale() -> None:
    md = render_load_change(build_report(_two_counts()), 2, 4)
    lines = md.splitlines()
    assert lines[0] == "| p | 2 partitions | | 4 partitions | |"
    assert lines[3] == "| 1 | 30 | `████████████████` | 0 | ` ` |"
    assert lines[5] == "| 3 |  |  | 30 | `████████████████` |"
    assert "50.0% of keys and 87.5% of messages change partition" in md
    assert render_load_change(build_report(_two_counts()), 2, 8) == ""
