"""The passwordVersion topic is kgitops' own: a spec may not manage it, plan never reports it
as unmanaged (not even under ``unmanagedTopics: error``), ``import`` never adopts it, and its
name in cluster.yaml follows Kafka's topic-name rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import PASSWORD_VERSION_TOPIC
from kgitops.spec.load import load_specs
from tests.helpers import THREE_BROKERS, cluster_folder

BROKERS = THREE_BROKERS


def _cluster(folder: Path, extra: str = "") -> None:
    cluster_folder(folder, brokers=BROKERS, extra=extra)


def _topic(folder: Path, name: str) -> None:
    (folder / f"{name}.yaml").write_text(
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 1\nreplicationFactor: 3\n"
    )


def _live(folder: Path, *names: str) -> None:
    sim = SimulatedCluster.open(str(folder / ".state" / "demo.json"), BROKERS)
    sim.create_topics([NewTopic(n, {0: (0, 1, 2)}) for n in names])


def test_the_default_name_and_a_configured_one_are_read_from_cluster_yaml(tmp_path: Path) -> None:
    _cluster(tmp_path)
    cluster = load_specs(str(tmp_path)).cluster
    assert cluster is not None
    assert cluster.password_version_topic == PASSWORD_VERSION_TOPIC == "_kgitops-password-versions"
    _cluster(tmp_path, "passwordVersionTopic: ops.kgitops-versions\n")
    cluster = load_specs(str(tmp_path)).cluster
    assert cluster is not None
    assert cluster.own_topics == {"ops.kgitops-versions", "_kgitops-owners"}  # + owner records


@pytest.mark.parametrize(
    "name", ["'has space'", "'..'", "x" * 250, "''", "'a/b'", "'ünïcode'", "42"]
)
def test_a_password_version_topic_kafka_would_refuse_is_an_error_at_its_position(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path, f"passwordVersionTopic: {name}\n")
    assert main(["validate", str(tmp_path)]) == 1
    err = "".join(capsys.readouterr())
    assert f"{tmp_path / 'cluster.yaml'}:7:" in err
    assert "passwordVersionTopic" in err


@pytest.mark.parametrize("configured", [None, "ops.versions"])
def test_a_topic_document_may_not_manage_the_password_version_topic(
    tmp_path: Path, configured: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path, f"passwordVersionTopic: {configured}\n" if configured else "")
    name = configured or PASSWORD_VERSION_TOPIC
    _topic(tmp_path, name)
    assert main(["validate", str(tmp_path)]) == 1
    err = "".join(capsys.readouterr())
    assert f"{tmp_path / (name + '.yaml')}:3:7: error: {name} is the topic kgitops keeps" in err
    if configured:  # the default name is then an ordinary topic
        (tmp_path / f"{name}.yaml").unlink()
        _topic(tmp_path, PASSWORD_VERSION_TOPIC)
        assert main(["validate", str(tmp_path)]) == 0


@pytest.mark.parametrize("policy", ["warn", "error"])
def test_plan_never_reports_the_password_version_topic_as_unmanaged(
    tmp_path: Path, policy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path, f"unmanagedTopics: {policy}\n")
    _topic(tmp_path, "orders")
    _live(tmp_path, "orders", PASSWORD_VERSION_TOPIC)
    assert main(["plan", str(tmp_path), "--detailed-exitcode"]) == 0
    out, err = capsys.readouterr()
    assert PASSWORD_VERSION_TOPIC not in out + err
    # a topic nobody owns still is unmanaged: the rule is about kgitops' own topic only
    _live(tmp_path, "stray")
    code = main(["plan", str(tmp_path)])
    out, err = capsys.readouterr()
    assert "stray" in out + err and PASSWORD_VERSION_TOPIC not in out + err
    assert code == (1 if policy == "error" else 0)


@pytest.mark.parametrize(
    ("partitions", "config", "why"),
    [
        (3, {}, "3 partitions, not 1"),
        (1, {"cleanup.policy": "delete"}, "cleanup.policy delete, not compact"),
    ],
)
def test_a_password_version_topic_naming_another_programs_topic_is_still_unmanaged(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    partitions: int,
    config: dict[str, str],
    why: str,
) -> None:
    """A cluster.yaml pointing passwordVersionTopic at another team's topic must not silence
    that topic's UNMANAGED_TOPIC warning, even in a folder without User documents."""
    _cluster(tmp_path, "passwordVersionTopic: payments.events\n")
    _topic(tmp_path, "orders")
    _live(tmp_path, "orders")
    sim = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), BROKERS)
    layout = {p: (0, 1, 2) for p in range(partitions)}
    sim.create_topics([NewTopic("payments.events", layout, config)])
    assert main(["plan", str(tmp_path), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    mine = [w for w in warnings if w.get("topic") == "payments.events"]
    assert [w["code"] for w in mine] == ["UNMANAGED_TOPIC"]
    assert why in mine[0]["message"] and "passwordVersionTopic" in mine[0]["message"]
    # kgitops' own shape (one partition, compacted) is still kgitops' own: no warning
    _cluster(tmp_path, "passwordVersionTopic: ops.versions\n")
    sim.create_topics([NewTopic("ops.versions", {0: (0, 1, 2)}, {"cleanup.policy": "compact"})])
    assert main(["plan", str(tmp_path), "--format", "json"]) == 0
    topics = {w.get("topic") for w in json.loads(capsys.readouterr().out)["warnings"]}
    assert "ops.versions" not in topics and "payments.events" in topics


def test_import_never_adopts_the_password_version_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path)
    _live(tmp_path, "orders", PASSWORD_VERSION_TOPIC)
    assert main(["import", str(tmp_path), "--include-internal"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.glob("*.yaml")) == ["cluster.yaml", "orders.yaml"]
    assert main(["import", str(tmp_path), "--topic", PASSWORD_VERSION_TOPIC]) == 1
    err = capsys.readouterr().err
    assert "is the topic kgitops keeps SCRAM passwordVersion records in" in err
    assert not (tmp_path / f"{PASSWORD_VERSION_TOPIC}.yaml").exists()
    assert main(["plan", str(tmp_path), "--detailed-exitcode"]) == 0


def _names(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["get", *argv, "--format", "json"]) == 0
    view = json.loads(capsys.readouterr().out)
    return sorted({row.get("name", row.get("topic")) for row in view[argv[1]]})


@pytest.mark.parametrize("configured", [None, "ops.versions"])
def test_get_topics_leaves_the_password_version_topic_out_unless_asked(
    tmp_path: Path, configured: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path, f"passwordVersionTopic: {configured}\n" if configured else "")
    own = configured or PASSWORD_VERSION_TOPIC
    _live(tmp_path, "orders", own, "__consumer_offsets")
    d = str(tmp_path)
    assert _names(capsys, d, "topics") == ["orders"]
    assert _names(capsys, d, "partitions", "--topic", "*") == ["orders"]
    assert _names(capsys, d, "topics", "--include-internal") == sorted(
        ["__consumer_offsets", "orders", own]
    )
    assert _names(capsys, d, "partitions", "--topic", own) == [own]
    # a snapshot read without a cluster.yaml knows only the default name
    state = tmp_path / "snap.json"
    assert main(["snapshot", d, "--out", str(state)]) == 0
    capsys.readouterr()
    bare = tmp_path / "bare"
    bare.mkdir()
    shown = _names(capsys, str(bare), "topics", "--state", str(state))
    assert shown == (sorted(["orders", own]) if configured else ["orders"])


@pytest.mark.parametrize(
    "name", ["__consumer_offsets", "__cluster_metadata", "__transaction_state", "__connect-offsets"]
)
def test_a_password_version_topic_naming_an_internal_topic_is_an_error_at_its_position(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _cluster(tmp_path, f"passwordVersionTopic: {name}\n")
    assert main(["validate", str(tmp_path)]) == 1
    err = "".join(capsys.readouterr())
    assert f"{tmp_path / 'cluster.yaml'}:7:23: error: passwordVersionTopic: {name} is an " in err
    assert err.count("error:") == 1
