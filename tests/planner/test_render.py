"""Renderers read the plan's JSON form: text, markdown (bounded), JSON, Kafka reassignment."""

from __future__ import annotations

import json
import re

from kgitops.plan.actions import AddPartitions, CreateTopic, DeleteTopic, Move, Reassign
from kgitops.plan.transfer import Traffic, Transfer
from kgitops.plan.value import Plan, PlanWarning
from kgitops.render.markdown import render_markdown
from kgitops.render.text import (
    GITHUB_COMMENT_LIMIT,
    reassignment_json,
    render_text,
)
from kgitops.units import human_bytes, human_seconds


def _plan(n_creates: int = 1) -> Plan:
    creates = [
        CreateTopic(
            f"topic-{i:05d}",
            partitions=100,
            replication_factor=3,
            start_index=0,
            assignment={p: (p % 60, (p + 1) % 60, (p + 2) % 60) for p in range(100)},
            config={"retention.ms": "1000"},
            placement="rack-aware",
        )
        for i in range(n_creates)
    ]
    return Plan(
        cluster="prod",
        state_fingerprint="sha256:" + "0" * 64,
        actions=(
            *creates,
            AddPartitions("grow", 2, 3, None, {2: (1, 2)}),
            Reassign("move", {0: Move((1, 2), (1, 3), "broker 2 is decommissioned", 2048)}, 2048),
            DeleteTopic("old", 12, 4096),
        ),
        warnings=(PlanWarning("grow", "KEY_REMAP", "partitions 2 -> 3: keys move"),),
        transfer=Transfer(
            brokers={1: Traffic(0, 2048), 3: Traffic(2048, 0)},
            total_bytes=2048,
            cluster_bytes=10_000,
            throttle_bytes_per_sec=1024,
            estimated_seconds=2.0,
        ),
    )


def test_text_shows_each_action_with_its_symbol_and_no_colour_off_a_terminal() -> None:
    out = render_text(_plan().to_json())
    assert "\x1b[" not in out
    assert "+ create_topic topic-00000" in out
    assert "~ add_partitions grow  partitions 2 -> 3" in out
    assert "~ reassign move" in out and "0: [1, 2] -> [1, 3]  broker 2 is decommissioned" in out
    assert "- delete_topic old" in out and "--allow-delete" in out
    assert "! KEY_REMAP grow: partitions 2 -> 3: keys move" in out
    assert "... 88 more partition(s)" in out
    assert out.rstrip().endswith(
        "Plan: 1 to create, 1 to add partitions, 1 to reassign, 1 to delete."
    )


def test_text_uses_colour_when_asked() -> None:
    out = render_text(_plan().to_json(), colour=True)
    assert "\x1b[32m+ create_topic\x1b[0m" in out
    assert "\x1b[31m- delete_topic\x1b[0m" in out


def test_text_says_no_changes_for_an_empty_plan() -> None:
    out = render_text(Plan("prod", "sha256:x").to_json())
    assert "No changes." in out


def test_markdown_puts_warnings_first_then_the_summary_then_topics_then_details() -> None:
    out = render_markdown(_plan().to_json())
    assert out.index("KEY_REMAP") < out.index("| `+` | create_topic | 1 topic |")
    assert out.index("**Data to move:** 2.0 KiB of 9.8 KiB stored") < out.index("#### Topic")
    assert out.index("create_topic | 1 topic") < out.index("<details>")
    assert out.index("#### Topic changes") < out.index("#### Details")
    assert out.index("#### Details") < out.index("| 3 | 2.0 KiB | 0 B | 2s |")
    # a deletion has no lines to unfold: one line, no empty details block
    assert "<p><code>-</code> <b>old</b> delete_topic: 12 partitions, 4.0 KiB" in out


def test_markdown_diff_lines_start_with_the_marks_github_colours() -> None:
    out = render_markdown(_plan().to_json())
    fences = re.findall(r"```diff\n(.*?)\n```", out, flags=re.S)
    assert fences
    for body in fences:
        for line in body.split("\n"):
            assert line[:1] in ("+", "-") or line.startswith("@@"), line
    # the reason of a move is said once, in a hunk header, not on every partition
    assert "@@ broker 2 is decommissioned: 1 partition(s) @@\n- 0: [1, 2]\n+ 0: [1, 3]" in out
    assert "+ 2: [1, 2]" in out  # the added partition


def test_markdown_groups_the_changes_of_one_topic_in_one_block() -> None:
    data = _plan().to_json()
    data["actions"].insert(
        1,
        {"type": "alter_config", "topic": "grow", "set": {"retention.ms": "2000"},
         "delete": [], "previous": {"retention.ms": "1000"}},
    )  # fmt: skip
    out = render_markdown(data)
    assert out.count("<b>grow</b>") == 1
    block = out[out.index("<b>grow</b>") :]
    block = block[: block.index("</details>")]
    assert "alter_config: 1 set, 0 removed · add_partitions: partitions 2 -&gt; 3" in block
    assert "@@ alter_config @@\n- retention.ms = 1000 (1s)\n+ retention.ms = 2000 (2s)" in block
    assert "@@ add_partitions @@\n+ 2: [1, 2]" in block


def test_markdown_stays_under_the_github_limit_and_says_what_it_left_out() -> None:
    data = _plan(2000).to_json()
    out = render_markdown(data)
    assert len(out) <= GITHUB_COMMENT_LIMIT
    assert "topic(s) left out" in out
    assert "| `+` | create_topic | 2000 topics |" in out


def test_reassignment_json_is_what_kafka_reassign_partitions_reads() -> None:
    assert reassignment_json(_plan().to_json()) == {
        "version": 1,
        "partitions": [
            {"topic": "move", "partition": 0, "replicas": [1, 3], "log_dirs": ["any", "any"]}
        ],
    }
    json.dumps(reassignment_json(_plan().to_json()))


def test_human_units() -> None:
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(None) == "unknown size"
    assert human_seconds(3725) == "1h 2m 5s"
    assert human_seconds(150) == "2m 30s"
    assert human_seconds(6.666) == "6.67s"
    assert human_bytes(10**9) == "953.7 MiB"


def test_markdown_shows_the_measured_key_load_before_and_after_an_expansion() -> None:
    warning = PlanWarning(
        "orders",
        "KEY_REMAP",
        "partitions 2 -> 3: keys move; in the key sample 66.0% of keys and 60.0% move",
        {
            "from": 2,
            "to": 3,
            "keyShare": 0.66,
            "messageShare": 0.6,
            "loadBefore": [500, 300],
            "loadAfter": [200, 300, 300],
        },
    )
    plan = Plan("prod", "sha256:0", (AddPartitions("orders", 2, 3, None, {2: (1,)}),), (warning,))
    md = render_markdown(plan.to_json())
    assert "Key load per partition of <b>orders</b>: 2 → 3 partitions" in md
    assert "| 0 | 500 | `████████████████` | 200 | `██████▍` |" in md
    assert "| 2 |  |  | 300 | `█████████▋` |" in md
    assert "66.0% of keys and 60.0% of messages change partition." in md


def test_markdown_shows_bytes_per_rack_and_what_crosses_racks() -> None:
    data = _plan().to_json()
    data["transfer"]["racks"] = {"az1": {"in": 0, "out": 2048}, "az2": {"in": 2048, "out": 0}}
    data["transfer"]["crossRackBytes"] = 2048
    md = render_markdown(data)
    assert "Per rack (2.0 KiB of it crosses racks):" in md
    assert "| az2 | 2.0 KiB | 0 B |" in md
    assert "(2.0 KiB across racks)" in render_text(data)


def test_the_summary_counts_each_kind_by_what_it_acts_on() -> None:
    data = Plan("prod", "sha256:0").to_json()
    data["actions"] = [
        {"type": "remove_throttles", "topic": "a", "broker": None, "remove": {"x": "*"},
         "reason": "leftover"},
        {"type": "remove_throttles", "topic": "", "broker": 2, "remove": {"y": ""},
         "reason": "leftover"},
        {"type": "elect_leaders", "topic": "b", "partitions": [0]},
    ]  # fmt: skip
    out = render_markdown(data)
    assert "| `~` | remove_throttles | 1 topic, 1 broker |" in out
    assert "| `~` | elect_leaders | 1 topic |" in out
    assert "<details><summary><code>~</code> <b>broker 2</b> remove_throttles: leftover" in out
    line = "<p><code>~</code> <b>b</b> elect_leaders: preferred leader for partition(s) 0</p>"
    assert line in out  # nothing to unfold: one line
