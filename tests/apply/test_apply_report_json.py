"""`apply --format json`: one JSON document on stdout that schemas/apply.json describes, whatever
way apply ends (applied, no changes, dry run, partly, deferred moves), with the same exit code
as the text report and the state the report claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from test_apply_simulated import Folder, topic

from kgitops.apply.report import STATUS_JSON
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.errors import Status
from kgitops.spec.schemacheck import schema

APPLY = Draft202012Validator(schema("apply.json"))


def report(demo: Folder, *flags: str, code: int = 0) -> tuple[dict[str, Any], str]:
    got, out, err = demo.cli("apply", "--yes", "--format", "json", *flags)
    assert got == code, out + err
    data = json.loads(out)  # stdout is the report alone
    APPLY.validate(data)
    assert data["exitCode"] == code
    assert sum(data["counts"].values()) == len(data["actions"])
    for word, n in data["counts"].items():
        assert n == sum(a["status"] == word for a in data["actions"])
    return data, err


def test_a_full_apply_reports_each_action_done_and_the_requests_sent(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 3, 2, config={"retention.ms": "1000"}), topic("users", 2, 2))
    data, err = report(demo)
    assert err.startswith("kgitops plan for cluster demo")  # the plan, shown on stderr
    assert (data["result"], data["dryRun"], data["message"]) == ("applied", False, None)
    assert [(a["type"], a["name"], a["status"]) for a in data["actions"]] == [
        ("create_topic", "orders", "done"),
        ("create_topic", "users", "done"),
    ]
    assert data["counts"]["done"] == 2
    assert [r.split(" ", 1)[0] for r in data["requests"]] == ["CreateTopics"]
    assert set(demo.state()["topics"]) == {"orders", "users"}

    again, _ = report(demo)
    assert (again["result"], again["actions"], again["requests"]) == ("noChanges", [], [])


def test_a_dry_run_reports_the_requests_and_sends_none(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 3, 2))
    data, _ = report(demo, "--dry-run")
    assert (data["result"], data["dryRun"]) == ("dryRun", True)
    assert [a["status"] for a in data["actions"]] == ["notAttempted"]
    assert data["requests"][0].startswith('CreateTopics [{"assignment"')
    assert not demo.state_file.exists() or "orders" not in demo.state()["topics"]


def test_a_partial_apply_prints_the_report_and_exits_3(rf_raise: Folder) -> None:
    demo = rf_raise
    text = (demo.dir / "cluster.yaml").read_text()
    (demo.dir / "cluster.yaml").write_text(
        text.replace("maxConcurrentMoves: 4}", "maxConcurrentMoves: 4, timeoutSeconds: 60}")
    )
    SimulatedCluster.open(str(demo.state_file), []).set_produce_rate("orders", 200_000_000)
    before = demo.replicas("orders")
    data, err = report(demo, code=3)
    assert data["result"] == "partial"
    assert data["message"].startswith("apply finished partly")
    assert f"error: {data['message']}" in err  # the text lines still go to stderr
    (move,) = [a for a in data["actions"] if a["type"] == "reassign"]
    assert move["status"] == "failed"
    assert move["reason"] == "8 partition(s) not moved, 0 partition(s) moved"
    assert "timed out after 1m" in err
    assert len(move["items"]) == 8  # every partition, not the text report's first 10 only
    assert any(r.startswith("AlterPartitionReassignments") for r in data["requests"])
    assert demo.replicas("orders") == before  # nothing moved, as the report says


def test_no_wait_reports_the_submitted_moves_as_running(tmp_path: Path) -> None:
    """4 partitions, 4 moves at a time: one window, all submitted and left running."""
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 4, 2))
    demo.apply()
    demo.set_sizes("orders", 100_000_000)
    demo.topics(topic("orders", 4, 3))
    data, _ = report(demo, "--no-wait")
    assert data["result"] == "applied"
    (move,) = [a for a in data["actions"] if a["type"] == "reassign"]
    assert (move["name"], move["status"]) == ("orders", "running")
    assert data["counts"]["running"] == 1
    assert len(move["items"]) == 4 == len(demo.state()["reassignments"]["orders"])


def test_every_status_has_one_json_word_the_schema_lists() -> None:
    words = schema("apply.json")["properties"]["counts"]["required"]
    assert set(STATUS_JSON) == set(Status)
    assert sorted(STATUS_JSON.values()) == sorted(words)
    assert (
        schema("apply.json")["properties"]["actions"]["items"]["properties"]["status"]["enum"]
        == words
    )


def test_an_error_before_apply_starts_prints_no_report(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    (demo.dir / "topics.yaml").write_text("apiVersion: kgitops/v1\nkind: Topic\nname: x\n")
    code, out, err = demo.cli("apply", "--yes", "--format", "json")
    assert (code, out) == (1, "")
    assert "error" in err
