"""A 5,000-topic plan still makes one pull-request comment, and says what it left out."""

from __future__ import annotations

import re

from kgitops.integrations.github.body import COMMENT_LIMIT, compose_body
from kgitops.plan.actions import AlterConfig, CreateTopic, Move, Reassign
from kgitops.plan.value import Plan
from kgitops.render.markdown import render_markdown

TOPICS = 5000


def big_plan() -> Plan:
    actions: list[CreateTopic | AlterConfig | Reassign] = []
    for i in range(TOPICS):
        name = f"team{i % 40:02d}.events-{i:05d}"
        if i % 10 == 0:
            moves = {
                p: Move(
                    source=(p % 6, (p + 1) % 6),
                    target=(p % 6, (p + 1) % 6, (p + 2) % 6),
                    reason="replication factor 2 -> 3",
                    size_bytes=1 << 30,
                )
                for p in range(12)
            }
            actions.append(Reassign(name, moves=moves, bytes_to_move=12 << 30))
        elif i % 10 == 1:
            actions.append(
                AlterConfig(
                    name, set={"retention.ms": "604800000"}, previous={"retention.ms": "86400000"}
                )
            )
        else:
            assignment = {p: ((p + i) % 6, (p + i + 1) % 6, (p + i + 2) % 6) for p in range(12)}
            actions.append(
                CreateTopic(
                    name,
                    partitions=12,
                    replication_factor=3,
                    start_index=i % 6,
                    assignment=assignment,
                    config={"cleanup.policy": "compact"},
                )
            )
    return Plan("prod", "sha256:" + "ab" * 32, tuple(actions))


def test_markdown_of_a_5000_topic_plan_fits_a_comment_and_says_what_it_left_out() -> None:
    plan = big_plan()
    md = render_markdown(plan.to_json())
    assert len(md) <= COMMENT_LIMIT
    summary = plan.summary()
    assert summary["create_topic"] == 4000 and summary["reassign"] == 500
    assert "| create_topic | 4000 topics |" in md
    found = re.search(r"(\d+) of (\d+) topic\(s\) left out", md)
    assert found is not None, md[-500:]
    left, total = int(found.group(1)), int(found.group(2))
    assert total == TOPICS
    shown = md.count("<details>")
    assert shown > 0 and left == TOPICS - shown


def test_the_posted_comment_of_a_5000_topic_plan_keeps_the_renderers_note_and_footer() -> None:
    md = render_markdown(big_plan().to_json())
    offline = (
        "> [!NOTE]\n> Planned **offline** from the committed snapshot "
        "`topics/prod/snapshot.json` (a pull request from a fork gets no secrets):\n"
        "> the live cluster was not read. The plan at merge runs against the live cluster.\n\n"
    )
    footer = (
        "\n<sub>commit `0123456` · [workflow run](https://github.com/acme/topics/actions/runs/"
        "1234567890) · plan JSON in the run's artifact `kgitops-plan-prod`</sub>\n"
    )
    body = compose_body(
        offline + md + footer,
        "plan-prod",
        artifact_url="https://github.com/acme/topics/actions/runs/1/artifacts/2",
    )
    assert len(body.text) <= COMMENT_LIMIT
    assert body.text.startswith("<!-- kgitops:plan-prod -->\n> [!NOTE]")
    assert re.search(r"\d+ of 5000 topic\(s\) left out", body.text)
    assert body.text.endswith(footer)
