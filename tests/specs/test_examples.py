"""The example repository under topics/ is valid, and loads into the specs it describes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.spec.load import load_specs, load_specs_or_raise
from tests.helpers import cluster_folder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["local", "kafka", "demo", "prod", "staging", "dev"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_cluster_validates_with_exit_code_0(name: str) -> None:
    assert main(["validate", str(ROOT / "topics" / name)]) == 0


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_has_no_errors_and_no_warnings(name: str) -> None:
    specs = load_specs(str(ROOT / "topics" / name))
    assert [str(d) for d in specs.diagnostics] == []
    assert specs.cluster is not None and specs.cluster.name == name
    assert specs.topics


def test_validate_of_the_topics_folder_checks_each_cluster_folder(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", str(ROOT / "topics")]) == 0
    err = capsys.readouterr().err
    for name in EXAMPLES:
        assert f"topics/{name}: " in err


def test_the_demo_cluster_is_simulated_with_six_brokers_in_three_racks() -> None:
    specs = load_specs_or_raise(str(ROOT / "topics" / "demo"))
    assert specs.cluster is not None and specs.cluster.simulated is not None
    brokers = specs.cluster.simulated.brokers
    assert [b.id for b in brokers] == [0, 1, 2, 3, 4, 5]
    assert sorted({b.rack for b in brokers if b.rack}) == ["az1", "az2", "az3"]
    assert specs.cluster.simulated.state_file.endswith("topics/demo/.state/demo.json")
    orders = specs.topic("shop.orders")
    assert orders is not None and orders.keys is not None
    assert (ROOT / "topics" / "demo" / orders.keys.sample).is_file()
    audit = specs.topic("payments.audit")
    assert audit is not None
    assert audit.assignment == ((0, 1, 2), (4, 5, 3), (2, 3, 1))
    assert audit.config["cleanup.policy"] == "compact,delete"
    assert audit.config["retention.ms"] == "-1"


def committed_demo_state() -> bytes:
    """The demo state as committed: running the README's demo rewrites the working copy."""
    import subprocess

    path = "topics/demo/.state/demo.json"
    try:
        shown = subprocess.run(
            ["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the file as it is
        return (ROOT / path).read_bytes()
    return shown.stdout


def test_the_demo_state_is_a_valid_cluster_with_data_and_a_lagging_group() -> None:
    """The committed demo state (the "live" cluster of the README's main job) holds data, so
    the demo plan shows bytes to move and an ETA, and group billing lags, so `get lags`
    has something to show."""
    from jsonschema import Draft202012Validator

    state = json.loads(committed_demo_state())
    schema = json.loads((ROOT / "schemas" / "state.json").read_text(encoding="utf-8"))
    assert [e.message for e in Draft202012Validator(schema).iter_errors(state)] == []
    orders = state["topics"]["shop.orders"]["partitions"]
    assert all(p["sizeBytes"] > 0 and len(p["replicas"]) == 2 for p in orders.values())
    billing = state["consumerGroups"]["groups"]["billing"]
    logs = state["consumerGroups"]["logOffsets"]["payments.transactions"]
    committed = billing["offsets"]["payments.transactions"]
    assert sorted(committed, key=int) == [str(p) for p in range(24)]
    assert all(logs[p][1] - offset > 0 for p, offset in committed.items())


def test_the_prod_cluster_names_its_secrets_by_environment_variable_only() -> None:
    specs = load_specs_or_raise(str(ROOT / "topics" / "prod"))
    cluster = specs.cluster
    assert cluster is not None and cluster.security.sasl is not None
    assert cluster.security.protocol == "SASL_SSL"
    assert cluster.security.sasl.username_env == "KGITOPS_KAFKA_USERNAME"
    assert cluster.security.sasl.password_env == "KGITOPS_KAFKA_PASSWORD"
    assert cluster.decommission == (7,)
    assert cluster.reassignment.throttle_bytes_per_sec == 50_000_000
    assert [t.name for t in specs.topics] == sorted(t.name for t in specs.topics)
    deleted = specs.topic("search.legacy-feed")
    assert deleted is not None and deleted.delete


def test_the_docs_list_every_topic_config() -> None:
    from kgitops.spec.config_table import CONFIGS

    text = (ROOT / "docs" / "specs.md").read_text()
    assert [name for name in CONFIGS if f"| `{name}` |" not in text] == []


def _example_files() -> list[Path]:
    return sorted(p for p in (ROOT / "topics").rglob("*.yaml") if ".state" not in p.parts)


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_points_editors_at_a_schema_that_accepts_it(path: Path) -> None:
    import yaml
    from jsonschema import Draft202012Validator

    first = path.read_text().splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix)
    target = (path.parent / first.removeprefix(prefix)).resolve()
    assert target.is_file()
    validator = Draft202012Validator(json.loads(target.read_text()))
    for doc in yaml.safe_load_all(path.read_text()):
        assert [e.message for e in validator.iter_errors(doc)] == []


def test_the_topic_and_cluster_examples_in_the_docs_validate(tmp_path: Path) -> None:
    import re

    text = (ROOT / "docs" / "specs.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    cluster_folder(
        tmp_path,
        cluster=next(b for b in blocks if "kind: Cluster" in b),
        files={
            "topic.yaml": next(b for b in blocks if "kind: Topic" in b),
            "samples/orders-keys.csv": "key\na\n",
        },
    )
    assert [str(d) for d in load_specs(str(tmp_path)).diagnostics] == []


def test_the_readme_what_if_drain_flow_works_on_a_copy_of_the_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README.md "What-if on a simulated cluster", step by step, with the edits it tells."""
    import re
    import shutil

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "add `decommission: [3]` to cluster.yaml" in readme
    edits = re.findall(r"\[([\d, ]+)\] -> \[([\d, ]+)\]", readme.split("What-if")[1][:1500])
    assert edits == [("4, 5, 3", "4, 5, 0"), ("2, 3, 1", "2, 0, 1")]
    d = tmp_path / "demo"
    shutil.copytree(
        ROOT / "topics" / "demo", d, ignore=shutil.ignore_patterns("*.json.lock", "*.apply.lock")
    )
    (d / ".state" / "demo.json").write_bytes(committed_demo_state())
    assert main(["apply", str(d), "--yes"]) == 0
    assert main(["simulate", str(d), "fail-broker", "3"]) == 0
    assert main(["status", str(d)]) == 2
    cluster = d / "cluster.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8") + "decommission: [3]\n")
    payments = d / "payments.yaml"
    text = payments.read_text(encoding="utf-8")
    for old, new in edits:
        assert f"  - [{old}]\n" in text
        text = text.replace(f"  - [{old}]\n", f"  - [{new}]\n")
    payments.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["plan", str(d)]) == 0
    assert "Plan: 5 to reassign." in capsys.readouterr().out
    assert main(["apply", str(d), "--yes", "--no-wait"]) == 3
    assert main(["simulate", str(d), "advance", "5m"]) == 0
    assert main(["apply", str(d), "--yes"]) == 0
    assert main(["status", str(d)]) == 0
    state = json.loads((d / ".state" / "demo.json").read_text(encoding="utf-8"))
    parts = [p for t in state["topics"].values() for p in t["partitions"].values()]
    assert parts and all(
        3 not in p["replicas"] and sorted(p["isr"]) == sorted(p["replicas"]) for p in parts
    )
    assert main(["plan", str(d), "--detailed-exitcode"]) == 0
