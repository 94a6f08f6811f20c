"""Per-broker bytes, replicas and leaders before -> after (kgitops.plan.spread): the plan's
JSON, the text and markdown renderings (a table with a bar before and after), and status."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from kgitops.plan.diff import compute_plan
from kgitops.plan.spread import broker_spread, text_lines
from kgitops.render.markdown import render_markdown
from kgitops.render.text import render_text
from tests.planner.planner_builders import brokers, live, specs, state, topic


def _drain_plan() -> dict[str, Any]:
    t = live("t", {0: [0, 1], 1: [1, 0], 2: [0, 1]}, size=100)
    plan, _ = compute_plan(specs(topic("t", 3, 2), decommission=(0,)), state(brokers(3), t), None)
    return plan.to_json()


def test_the_plan_carries_each_brokers_figures_before_and_after() -> None:
    data = _drain_plan()
    spread = data["spread"]
    assert spread["bytesKnown"] is True
    assert spread["brokers"]["0"] == {"bytes": [300, 0], "replicas": [3, 0], "leaders": [2, 0]}
    assert spread["brokers"]["2"]["replicas"] == [0, 3]
    total = {m: [sum(v[m][i] for v in spread["brokers"].values()) for i in (0, 1)]
             for m in ("bytes", "replicas", "leaders")}  # fmt: skip
    assert total == {"bytes": [600, 600], "replicas": [6, 6], "leaders": [3, 3]}


def test_a_plan_that_moves_nothing_carries_no_spread() -> None:
    t = live("t", {0: [0, 1], 1: [1, 2], 2: [2, 0]})
    plan, _ = compute_plan(specs(topic("t", 3, 2)), state(brokers(3), t), None)
    assert "spread" not in plan.to_json()


def test_markdown_shows_one_collapsed_table_with_a_bar_before_and_after() -> None:
    md = render_markdown(_drain_plan())
    section = md[md.index("<details><summary>Per broker before → after") :]
    section = section[: section.index("</details>")]
    assert "| 0 | 300 B → 0 B | `████████████` | `·` | 3 → 0 | 2 → 0 |" in section
    assert "| 2 | 0 B → 300 B | `·` | `████████████` | 0 → 3 | 0 → 2 |" in section
    assert "mermaid" not in md  # the bars are in the table: no chart repeats it


def test_bars_count_replicas_when_no_size_is_known() -> None:
    data = _drain_plan()
    for v in data["spread"]["brokers"].values():
        v["bytes"] = [0, 0]
    md = render_markdown(data)
    assert "Per broker before → after: replicas (with bars)" in md
    assert "| 0 | 0 B | `████████████` | `·` | 3 → 0 | 2 → 0 |" in md


def test_hostile_spread_in_a_plan_file_cannot_break_out_of_the_chart_or_table() -> None:
    data = _drain_plan()
    data["spread"]["brokers"] = {
        '1"]\n```\n@acme/admins ![x](https://e/p)': {
            "bytes": ["```", 1],
            "replicas": [True, "<script>"],
            "leaders": "x",
        }
    }
    md = render_markdown(data)
    assert "@acme" not in md.replace("@<!-- -->acme", "")
    assert "![x]" not in md and "<script>" not in md
    cell = '| 1"\\]\\\\x0a\\`\\`\\`\\\\x0a@<!-- -->acme/admins \\!\\[x\\](https:<!-- -->//e/p) |'
    assert cell in md  # one cell: escaped, on one line
    assert "| 0 B → 1 B | `·` | `████████████` | 0 | 0 |" in md  # bad figures count as 0
    text = render_text(data)
    assert "\n```\n@acme" not in text


def test_text_plan_and_status_show_the_same_figures() -> None:
    data = _drain_plan()
    text = render_text(data)
    assert "Per broker (before -> after):" in text
    assert "0       300 B -> 0 B  3 -> 0    2 -> 0" in text
    t = live("t", {0: [0, 1], 1: [1, 0], 2: [0, 1]}, size=100)
    now = text_lines(broker_spread(state(brokers(3), t)), changes=False)
    assert now[0] == "Per broker:"
    assert now[2].split() == ["0", "300", "B", "3", "2"]
    assert now[-1].startswith("Spread: bytes 0 B-300 B")
    assert json.dumps(broker_spread(state(brokers(3), t)))  # JSON for status --format json


def test_the_per_broker_tables_call_first_replicas_preferred_leaders() -> None:
    # every partition led by broker 1 now, while broker 0 is the first replica of two:
    # the figure is the preferred leaders (2 on broker 0), and the tables must say so
    t = live("t", {0: [0, 1], 1: [1, 0], 2: [0, 1]}, size=100)
    t = dataclasses.replace(
        t, partitions={p: dataclasses.replace(ps, leader=1) for p, ps in t.partitions.items()}
    )
    now = text_lines(broker_spread(state(brokers(3), t)), changes=False)
    assert now[1].split() == ["broker", "bytes", "replicas", "preferred", "leaders"]
    assert now[2].split() == ["0", "300", "B", "3", "2"]
    assert "; preferred leaders 0-2 " in now[-1]
    text = render_text(_drain_plan())
    assert "  broker  bytes         replicas  preferred leaders" in text
    assert text.rstrip().splitlines()[-3].endswith("; preferred leaders 0-2 (max 2.00x the mean)")
    md = render_markdown(_drain_plan())
    assert "| broker | bytes | before | after | replicas | preferred leaders |" in md
    assert "; preferred leaders 0-2 (max 2.00x the mean)" in md
    assert "| leaders |" not in md and "; leaders " not in md + text + now[-1]
