"""cluster.yaml ``policies.rules``: CEL expressions over a topic as written, its effective
values and (plan) its live values; findings at the topic with the rule's position; a broken
expression one line at its own position. Asserted on the simulated state file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import THREE_RACKS, cluster_folder, run_cli

RULES = """\
defaults:
  config: {{min.insync.replicas: 2}}
policies:
  rules:
    - name: {name}
      expression: '{expression}'
      message: {message}
      severity: {severity}
"""


def topic(rf: int = 3, labels: str = "labels: {tier: 1}\n", extra: str = "") -> str:
    return (
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\n"
        f"replicationFactor: {rf}\n{labels}{extra}"
    )


class Folder:
    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.dir = root / "demo"
        self.dir.mkdir()
        self.capsys = capsys
        self.state = self.dir / ".state" / "demo.json"

    def write(
        self,
        expression: str,
        *,
        severity: str = "error",
        message: str = "tier-1 topics keep their replication factor",
        spec: str | None = None,
    ) -> None:
        rules = RULES.format(
            name="tier1", expression=expression, message=message, severity=severity
        )
        orders = spec if spec is not None else topic()
        cluster_folder(self.dir, brokers=THREE_RACKS, extra=rules, files={"orders.yaml": orders})

    def run(self, *argv: str, stdout_only: bool = False) -> tuple[int, str]:
        result = run_cli(*argv)
        return result.code, result.out if stdout_only else result.text

    def errors(self, output: str) -> list[str]:
        return [line for line in output.splitlines() if ": error: " in line]


@pytest.fixture
def folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Folder:
    return Folder(tmp_path, capsys)


TIER1_RF = '!(labels.tier == "1" && new.replicationFactor < old.replicationFactor)'


def test_a_false_rule_is_an_error_at_the_topic_citing_the_rule(folder: Folder) -> None:
    folder.write('labels.tier != "1" || new.replicationFactor >= 4', message="tier-1 needs RF 4")
    code, output = folder.run("validate", str(folder.dir))
    assert code == 1
    assert folder.errors(output) == [
        f"{folder.dir}/orders.yaml:3:7: error: tier-1 needs RF 4 (rule tier1 at "
        f"{folder.dir}/cluster.yaml:11:7)"
    ]
    code, output = folder.run("apply", str(folder.dir), "--yes")
    assert code == 1 and not folder.state.exists()


def test_a_warn_rule_is_a_warning_and_a_plan_warning(folder: Folder) -> None:
    folder.write("new.partitions >= 6", severity="warn", message="few partitions")
    code, output = folder.run("validate", str(folder.dir))
    assert code == 0 and "orders.yaml:3:7: warning: few partitions (rule tier1" in output
    code, output = folder.run("plan", str(folder.dir), "--format", "json", stdout_only=True)
    assert code == 0
    warnings = json.loads(output)["warnings"]
    assert [(w["topic"], w["code"]) for w in warnings] == [("orders", "POLICY")]


def test_the_rule_sees_the_topic_as_written_and_its_effective_values(folder: Folder) -> None:
    # min.insync.replicas comes from defaults: effective (new), not written (topic)
    folder.write('new.config["min.insync.replicas"] == "2" && !has(topic.config)')
    assert folder.run("validate", str(folder.dir))[0] == 0
    folder.write("has(topic.config)")
    assert folder.run("validate", str(folder.dir))[0] == 1


def test_a_rule_on_a_label_the_topic_lacks_does_not_apply(folder: Folder) -> None:
    folder.write('labels.tier == "1"', spec=topic(labels=""))
    assert folder.run("validate", str(folder.dir))[0] == 0


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('labels.tier = "1"', "not a CEL expression: Syntax error: token recognition error"),
        ("lables.tier == 1", "unknown variable(s) lables"),
    ],
)
def test_a_bad_expression_is_one_line_at_its_position(
    folder: Folder, expression: str, message: str
) -> None:
    folder.write(expression)
    code, output = folder.run("validate", str(folder.dir))
    assert code == 1
    (line,) = folder.errors(output)
    assert line.startswith(
        f"{folder.dir}/cluster.yaml:12:19: error: policies.rules.0.expression: {message}"
    ), line
    code, output = folder.run("plan", str(folder.dir))
    assert code == 1 and len(folder.errors(output)) == 1


def test_a_rule_giving_no_boolean_is_an_error(folder: Folder) -> None:
    folder.write("new.partitions")
    code, output = folder.run("validate", str(folder.dir))
    assert code == 1 and "the rule gave int 3, not true or false" in output


def test_a_change_rule_is_checked_by_plan_against_the_live_topic(folder: Folder) -> None:
    folder.write(TIER1_RF)
    assert folder.run("apply", str(folder.dir), "--yes")[0] == 0
    (folder.dir / "orders.yaml").write_text(topic(rf=2))
    code, output = folder.run("validate", str(folder.dir))
    assert code == 0, output  # no live value: validate cannot tell
    before = folder.state.read_bytes()
    code, output = folder.run("apply", str(folder.dir), "--yes")
    assert code == 1
    assert folder.errors(output) == [
        f"{folder.dir}/orders.yaml:3:7: error: tier-1 topics keep their replication factor "
        f"(rule tier1 at {folder.dir}/cluster.yaml:11:7)"
    ]
    assert folder.state.read_bytes() == before
    # another tier may lower it
    (folder.dir / "orders.yaml").write_text(topic(rf=2, labels="labels: {tier: 2}\n"))
    assert folder.run("apply", str(folder.dir), "--yes")[0] == 0
    live = json.loads(folder.state.read_text())["topics"]["orders"]["partitions"]
    assert all(len(p["replicas"]) == 2 for p in live.values())


@pytest.mark.parametrize(
    "expression", ["1 / 0 == 1", "new.partitions % 0 == 1", "9223372036854775807 + 1 > 0"]
)
def test_a_rule_that_cannot_compute_is_an_error_line_not_an_internal_error(
    folder: Folder, expression: str
) -> None:
    folder.write(expression)
    code, output = folder.run("validate", str(folder.dir))
    assert code == 1 and "internal error" not in output
    assert "the rule cannot be evaluated" in output, output
