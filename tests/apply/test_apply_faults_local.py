"""The local broker stops answering in the middle of an apply: the report is honest, the exit
code is 3, and once it is back a new plan holds exactly what was not done."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgitops.apply.run import apply_plan
from kgitops.errors import PartialApply
from tests.helpers import cluster_folder
from tests.helpers import run_cli_text as cli_run

pytestmark = pytest.mark.broker


@pytest.fixture
def own_broker() -> Iterator[Any]:
    """A broker of this test's own: it gets frozen (SIGSTOP), which the shared one must not."""
    from kgitops.cluster.local import start_broker

    broker = start_broker()
    try:
        yield broker
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(broker.pid, signal.SIGCONT)
        broker.stop()


def folder(root: Path, bootstrap: str, topics: list[tuple[str, str]]) -> Path:
    docs = [
        "apiVersion: kgitops/v1\nkind: Topic\n"
        f"name: {name}\npartitions: 2\nreplicationFactor: 1\n"
        f'config:\n  retention.ms: "{retention}"\n'
        for name, retention in topics
    ]
    return cluster_folder(
        root / "c",
        "c",
        bootstrap=bootstrap,
        extra="requestTimeoutMs: 2000\n",
        files={"topics.yaml": "---\n".join(docs)},
    )


class StopsAfterCreate:
    """The real adapter, but the broker freezes right after the CreateTopics answer."""

    def __init__(self, inner: Any, pid: int) -> None:
        self.inner, self.pid = inner, pid

    def create_topics(self, topics: Any) -> Any:
        out = self.inner.create_topics(topics)
        os.kill(self.pid, signal.SIGSTOP)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_broker_stopping_mid_apply_is_exit_3_with_an_honest_report_and_a_clean_replan(
    tmp_path: Path, own_broker: Any
) -> None:
    from kgitops.cluster.connect import open_cluster
    from kgitops.commands._planning import plan_directory

    d = folder(tmp_path, own_broker.bootstrap, [("old", "1000"), ("gone", "1000")])
    assert cli_run("apply", str(d), "--yes")[0] == 0

    d = folder(tmp_path, own_broker.bootstrap, [("old", "2000"), ("new", "3000")])
    with (d / "topics.yaml").open("a") as f:
        f.write(
            "---\napiVersion: kgitops/v1\nkind: Topic\nname: gone\npartitions: 2\n"
            "replicationFactor: 1\ndelete: true\n"
        )
    result = plan_directory(str(d))
    kinds = [a.kind for a in result.plan.actions]
    assert kinds == ["create_topic", "alter_config", "delete_topic"]
    admin = open_cluster(result.cluster)
    try:
        with pytest.raises(PartialApply) as err:
            apply_plan(
                result.plan,
                StopsAfterCreate(admin, own_broker.pid),
                result.cluster.reassignment,
                allow_delete=True,
            )
    finally:
        os.kill(own_broker.pid, signal.SIGCONT)
        admin.close()
    assert err.value.exit_code == 3
    lines = err.value.lines()
    assert "  done: + create_topic new" in lines
    text = "\n".join(lines)
    # the frozen broker got the alter request but did not answer in time: its outcome is
    # unknown and the report says so; the deletion after it was never sent
    assert "  NOT done: ~ alter_config old (in doubt: " in text, text  # a timeout: unknown
    assert "  NOT done: - delete_topic gone (not attempted: " in text, text
    assert lines[-1] == "  run `kgitops plan` again: it picks up what was not done"

    again = [(a.kind, a.topic) for a in plan_directory(str(d)).plan.actions]
    assert ("delete_topic", "gone") in again
    assert set(again) <= {("alter_config", "old"), ("delete_topic", "gone")}
    assert cli_run("apply", str(d), "--yes", "--allow-delete")[0] == 0
    code, text = cli_run("plan", str(d), "--detailed-exitcode")
    assert code == 0, text
