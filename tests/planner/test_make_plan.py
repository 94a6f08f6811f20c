"""One pure plan: ``make_plan(inputs)`` composes a folder's plan from what the shell read,
and every field of the plan that drives behaviour is typed (``Plan.extra`` holds only JSON
fields this version does not know)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kgitops.cli import main
from kgitops.cluster.snapshot import read_state
from kgitops.commands._planning import plan_directory
from kgitops.model import TopicSpec
from kgitops.plan.fields import PlanOptions
from kgitops.plan.make import PlanInputs, make_plan
from kgitops.plan.value import Plan
from kgitops.spec.load import load_specs
from tests.helpers import cluster_folder

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "review-comment"


@pytest.fixture(autouse=True)
def _passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGITOPS_PAYMENTS_API_PASSWORD", "p1")
    monkeypatch.setenv("KGITOPS_FRAUD_DETECTOR_PASSWORD", "p2")


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--rebalance"], PlanOptions(rebalance=True)),
        (
            ["--target", "acl:User:*", "--leaders"],
            PlanOptions(leaders=True, targets=("acl:User:*",)),
        ),
    ],
)
def test_a_saved_plan_reads_back_typed_and_writes_back_the_same_fields_in_the_same_order(
    tmp_path: Path, flags: list[str], options: PlanOptions, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    topics, state = str(GOLDEN / "topics"), str(GOLDEN / "state.json")
    assert main(["plan", topics, "--state", state, "--out", str(out), *flags]) == 0
    capsys.readouterr()
    data = json.loads(out.read_text())
    data["futureField"] = {"x": [1]}
    plan = Plan.from_json(data)
    assert plan.extra == {"futureField": {"x": [1]}}
    assert plan.access_fingerprint == data["accessFingerprint"]
    assert plan.access_parts == tuple(data["accessParts"])
    assert plan.options == options
    assert plan.targets == (tuple(data["targets"]) if "targets" in data else None)
    assert plan.recorded_state == data["recordedState"]
    assert list(plan.to_json().items()) == list(data.items())


def test_a_field_of_the_wrong_type_is_a_malformed_plan() -> None:
    from kgitops.errors import PlanError

    data = Plan(cluster="c", state_fingerprint="sha256:" + "0" * 64).to_json()
    with pytest.raises(PlanError, match=r"malformed plan.*accessParts"):
        Plan.from_json({**data, "accessParts": "acls"})


def test_make_plan_gives_plan_directorys_plan_from_what_the_shell_read() -> None:
    folder = str(GOLDEN / "topics")
    selectors = ["acl:User:*"]
    result = plan_directory(
        folder,
        PlanOptions(targets=tuple(selectors)),
        state_file=str(GOLDEN / "state.json"),
        analyse_keys=False,
    )
    specs = load_specs(folder)
    state = read_state(str(GOLDEN / "state.json"))
    made = make_plan(
        PlanInputs(
            directory=folder,
            specs=specs,
            cluster=result.cluster,
            state=state,
            lock=result.lock,
            options=PlanOptions(targets=tuple(selectors)),
        )
    )
    assert made.plan.to_json() == result.plan.to_json()
    assert made.plan.targets == ("acl:User:*",)
    assert made.lock == result.next_lock


KEYED = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 4
replicationFactor: 1
keys: {sample: samples/keys.parquet, column: user}
"""


def test_the_key_analysis_runs_through_the_function_given_and_only_then(tmp_path: Path) -> None:
    cluster_folder(tmp_path, bootstrap="k:9092", files={"orders.yaml": KEYED})
    (tmp_path / "state.json").write_text(
        json.dumps(
            {
                "format": "kgitops-state/v1",
                "brokers": [{"id": 0}, {"id": 1}],
                "topics": {
                    "orders": {"partitions": {"0": {"replicas": [0]}, "1": {"replicas": [1]}}}
                },
            }
        )
    )
    specs = load_specs(str(tmp_path))
    assert specs.cluster is not None
    state = read_state(str(tmp_path / "state.json"))
    calls: list[tuple[str, int, int]] = []

    def report(spec: TopicSpec, old: int, new: int) -> Mapping[str, Any]:
        calls.append((spec.name, old, new))
        return {"moves": [{"from": old, "to": new, "keyShare": 0.5, "messageShare": 0.25}]}

    inputs = PlanInputs(directory=str(tmp_path), specs=specs, cluster=specs.cluster, state=state)
    (plain,) = [w for w in make_plan(inputs).plan.warnings if w.code == "KEY_REMAP"]
    assert "keyShare" not in plain.data and not calls
    with_keys = make_plan(PlanInputs(**{**vars(inputs), "key_report": report}))
    (w,) = [w for w in with_keys.plan.warnings if w.code == "KEY_REMAP"]
    assert calls == [("orders", 2, 4)]
    assert w.data["keyShare"] == 0.5 and w.data["messageShare"] == 0.25
    assert "50.0% of keys and 25.0% of messages move" in w.message
