"""On the local Kafka-protocol broker (Tansu): plan, apply, plan again = no changes, configs
included (Tansu reports topic configs differently from Kafka; the plan must still be empty)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder


def test_plan_apply_plan_converges_on_a_live_broker(
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cluster_folder(tmp_path, "local", bootstrap=local_broker, extra="unmanagedTopics: ignore\n")
    topic = tmp_path / "t.yaml"
    topic.write_text(
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {topic_prefix}orders\npartitions: 4\n"
        "replicationFactor: 1\nconfig:\n  retention.ms: 86400000\n"
        "  cleanup.policy: [compact, delete]\n"
    )
    d = str(tmp_path)
    assert main(["plan", d, "--detailed-exitcode"]) == 2
    assert main(["apply", d, "--yes"]) == 0
    capsys.readouterr()
    assert main(["plan", d, "--detailed-exitcode"]) == 0, capsys.readouterr().out
    topic.write_text(topic.read_text() + "  segment.ms: 3600000\n")
    assert main(["plan", d, "--detailed-exitcode"]) == 2
    assert "+ segment.ms = 3600000 (1h)" in capsys.readouterr().out
    assert main(["apply", d, "--yes"]) == 0
    capsys.readouterr()
    assert main(["plan", d, "--detailed-exitcode"]) == 0, capsys.readouterr().out
