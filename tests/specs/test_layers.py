"""cluster.yaml's ``defaults:`` and ``profiles:``: topic > profile > defaults > broker, and
every inherited value is positioned at the line of cluster.yaml that set it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.spec.load import load_specs
from tests.helpers import THREE_RACKS, cluster_folder

from .conftest import CLUSTER, Problems

LAYERED = (
    CLUSTER
    + """\
defaults:
  replicationFactor: 3
  config:
    retention.ms: 7d
    min.insync.replicas: 1
profiles:
  critical:
    description: money
    config:
      min.insync.replicas: 2
      retention.ms: 30d
  ephemeral:
    replicationFactor: 2
    placement: rack-unaware
    config: {retention.ms: 1h}
"""
)
# line numbers in LAYERED: defaults.replicationFactor 8:22, defaults retention.ms 10:19,
# defaults min.insync.replicas 11:26, critical min.insync.replicas 16:28, critical
# retention.ms 17:21, ephemeral replicationFactor 19:24, ephemeral retention.ms 21:24
BARE = "apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 3\n"
BROKERS = THREE_RACKS


def folder(tmp_path: Path, cluster: str, **topics: str) -> Path:
    files = {f"{name}.yaml": text for name, text in topics.items()}
    return cluster_folder(tmp_path, cluster=cluster, files=files)


def test_a_topic_takes_its_own_value_then_its_profile_then_the_defaults(tmp_path: Path) -> None:
    own = BARE.format(name="own") + "replicationFactor: 2\nprofile: critical\n"
    own += "config:\n  retention.ms: 90d\n"
    specs = load_specs(
        str(
            folder(
                tmp_path,
                LAYERED,
                own=own,
                critical=BARE.format(name="critical") + "profile: critical\n",
                plain=BARE.format(name="plain"),
                eph=BARE.format(name="eph") + "profile: ephemeral\n",
            )
        )
    )
    assert specs.errors == []
    got = {
        t.name: (t.replication_factor, t.placement, dict(t.config), dict(t.origins))
        for t in specs.topics
    }
    day = 86_400_000
    assert got["own"] == (
        2,
        None,
        {"retention.ms": str(90 * day), "min.insync.replicas": "2"},
        {"config.min.insync.replicas": "profile critical"},
    )
    assert got["critical"][:3] == (
        3,
        None,
        {"retention.ms": str(30 * day), "min.insync.replicas": "2"},
    )
    assert got["plain"] == (
        3,
        None,
        {"retention.ms": str(7 * day), "min.insync.replicas": "1"},
        {
            "replicationFactor": "defaults",
            "config.retention.ms": "defaults",
            "config.min.insync.replicas": "defaults",
        },
    )
    assert got["eph"][:3] == (
        2,
        "rack-unaware",
        {"retention.ms": "3600000", "min.insync.replicas": "1"},
    )
    cluster = str(tmp_path / "cluster.yaml")
    critical = specs.topic("critical")
    assert critical is not None
    assert str(critical.mark_of("replicationFactor")) == f"{cluster}:8:22"
    assert str(critical.mark_of("config.min.insync.replicas")) == f"{cluster}:16:28"
    assert str(critical.mark_of("partitions")) == f"{tmp_path / 'critical.yaml'}:4:13"


def test_an_unknown_profile_is_an_error_at_the_topic_with_a_suggestion(
    problems: Problems,
) -> None:
    text = BARE.format(name="t") + "profile: critcal\n"
    assert problems({"t.yaml": text}, cluster=LAYERED) == [
        "t.yaml:5:10: error: unknown profile 'critcal' (did you mean 'critical'?); "
        "cluster.yaml defines critical, ephemeral"
    ]
    assert problems({"t.yaml": text}) == [
        "t.yaml:1:1: error: missing required field 'replicationFactor' (here, or in "
        "cluster.yaml's defaults: or a profile)",
        "t.yaml:5:10: error: unknown profile 'critcal'; cluster.yaml has none",
    ]


def test_a_replication_factor_nobody_sets_is_still_required(problems: Problems) -> None:
    assert problems({"t.yaml": BARE.format(name="t")}) == [
        "t.yaml:1:1: error: missing required field 'replicationFactor' (here, or in "
        "cluster.yaml's defaults: or a profile)"
    ]


def test_a_bad_value_in_the_defaults_is_reported_once_at_cluster_yaml(problems: Problems) -> None:
    cluster = LAYERED.replace("retention.ms: 7d", "retention.ms: 7x")
    cluster = cluster.replace("  replicationFactor: 3\n", "  replicationFactor: 5\n", 1)
    files = {f"t{i}.yaml": BARE.format(name=f"t{i}") for i in range(3)}
    found = [p for p in problems(files, cluster=cluster) if ": error: " in p]
    assert found[1] == (
        "cluster.yaml:10:19: error: retention.ms must be a duration (7d, 36h, 15m, 500ms) or a "
        "number of milliseconds, or infinite, not the string '7x'"
    )
    # the inherited replication factor is too high for 3 brokers: said where it is set
    assert found[0] == (
        "cluster.yaml:8:22: error: replicationFactor 5 is larger than the number of brokers (3)"
    )
    assert len(found) == 2


def test_an_unused_profile_is_still_checked(problems: Problems) -> None:
    cluster = LAYERED.replace("config: {retention.ms: 1h}", "config: {retention.mss: 1h}")
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:21:14: error: unknown topic config 'retention.mss' "
        "(did you mean 'retention.ms'?)"
    ]


def test_the_layers_are_closed(problems: Problems) -> None:
    cluster = LAYERED.replace("  replicationFactor: 3\n", "  partitions: 3\n", 1)
    found = problems({}, cluster=cluster)
    assert len(found) == 1 and found[0].startswith("cluster.yaml:8:3: error: unknown field")
    cluster = LAYERED.replace("  ephemeral:", "  'bad name':")
    assert problems({}, cluster=cluster)[0].startswith("cluster.yaml:")


def test_placement_static_is_no_default(problems: Problems) -> None:
    cluster = LAYERED.replace("    placement: rack-unaware", "    placement: static")
    found = problems({}, cluster=cluster)
    assert len(found) == 1 and found[0].startswith("cluster.yaml:20:16: error:")


configs = st.dictionaries(
    st.sampled_from(["retention.ms", "min.insync.replicas", "segment.ms"]),
    st.integers(min_value=1, max_value=3),
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(defaults=configs, profile=configs, own=configs)
def test_each_config_comes_from_the_highest_layer_that_sets_it(
    tmp_path_factory: pytest.TempPathFactory,
    defaults: dict[str, int],
    profile: dict[str, int],
    own: dict[str, int],
) -> None:
    tmp = tmp_path_factory.mktemp("layers")
    cluster = CLUSTER + "defaults:\n  replicationFactor: 3\n  config: " + json.dumps(defaults)
    cluster += "\nprofiles:\n  p:\n    config: " + json.dumps(profile) + "\n"
    topic = BARE.format(name="t") + "profile: p\nconfig: " + json.dumps(own) + "\n"
    specs = load_specs(str(folder(tmp, cluster, t=topic)))
    assert specs.errors == []
    t = specs.topic("t")
    assert t is not None
    expected = {**defaults, **profile, **own}
    assert dict(t.config) == {k: str(v) for k, v in expected.items()}
    for key in expected:
        origin = "topic" if key in own else "profile p" if key in profile else "defaults"
        assert t.origins.get(f"config.{key}", "topic") == origin
        file = "t.yaml" if origin == "topic" else "cluster.yaml"
        assert t.mark_of(f"config.{key}").path == str(tmp / file)


def test_explain_shows_each_value_and_where_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = BARE.format(name="orders") + "profile: critical\nconfig:\n  retention.ms: 90d\n"
    d = folder(tmp_path, LAYERED, orders=own)
    assert main(["explain", str(d), "orders"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"orders  {d}/orders.yaml:3:1  profile critical"
    cells = [line.split() for line in lines[1:-1]]
    assert cells[0] == ["partitions", "3", "topic", f"{d}/orders.yaml:4:13"]
    assert cells[1] == ["replicationFactor", "3", "defaults", f"{d}/cluster.yaml:8:22"]
    assert cells[3] == [
        "config.min.insync.replicas",
        "2",
        "profile",
        "critical",
        f"{d}/cluster.yaml:16:28",
    ]
    assert cells[4] == [
        "config.retention.ms",
        "90d",
        "(7776000000)",
        "topic",
        f"{d}/orders.yaml:7:17",
    ]
    assert main(["explain", str(d), "orders", "--all", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    broker = [v for v in data["values"] if v["origin"] == "broker"]
    assert {
        "field": "config.segment.bytes",
        "value": "1GiB (Kafka's default)",
        "origin": "broker",
        "where": None,
    } in broker
    assert not any(v["field"] == "config.retention.ms" for v in broker)


def test_explain_an_unknown_topic_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = folder(tmp_path, LAYERED, orders=BARE.format(name="orders"))
    assert main(["explain", str(d), "ordres"]) == 1
    err = capsys.readouterr().err
    assert err == f"error: no topic 'ordres' in {d} (did you mean 'orders'?)\n"


def test_a_changed_default_is_applied_to_every_topic_that_inherits_it(tmp_path: Path) -> None:
    d = folder(
        tmp_path,
        LAYERED,
        a=BARE.format(name="a"),
        b=BARE.format(name="b") + "config:\n  retention.ms: 2d\n",
    )
    assert main(["apply", str(d), "--yes"]) == 0
    (d / "cluster.yaml").write_text(LAYERED.replace("retention.ms: 7d", "retention.ms: 4d"))
    assert main(["apply", str(d), "--yes"]) == 0
    state = SimulatedCluster.open(str(d / ".state" / "test.json"), BROKERS).describe()
    assert state.topics["a"].config["retention.ms"] == str(4 * 86_400_000)
    assert state.topics["b"].config["retention.ms"] == str(2 * 86_400_000)
    assert state.topics["a"].replication_factor == 3
    assert main(["plan", str(d), "--detailed-exitcode"]) == 0


def test_the_plan_says_where_an_inherited_change_comes_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = folder(tmp_path, LAYERED, a=BARE.format(name="a"))
    assert main(["apply", str(d), "--yes"]) == 0
    (d / "cluster.yaml").write_text(LAYERED.replace("retention.ms: 7d", "retention.ms: 4d"))
    capsys.readouterr()
    assert main(["plan", str(d)]) == 0
    out = capsys.readouterr().out
    assert (
        f"~ retention.ms: 604800000 (7d) -> 345600000 (4d)  (defaults at {d}/cluster.yaml:10:19)"
        in out
    )
    out_file = tmp_path / "plan.json"
    assert main(["plan", str(d), "--out", str(out_file)]) == 0
    saved = json.loads(out_file.read_text())
    [action] = [a for a in saved["actions"] if a["type"] == "alter_config"]
    assert action["origins"] == {"retention.ms": f"defaults at {d}/cluster.yaml:10:19"}
    assert main(["apply", "--plan", str(out_file), "--yes"]) == 0  # a saved plan replays


def test_a_created_topic_says_where_each_inherited_value_comes_from_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = BARE.format(name="c") + "profile: critical\nconfig:\n  retention.ms: 90d\n"
    d = folder(tmp_path, LAYERED, c=own)
    assert main(["plan", str(d)]) == 0
    text = capsys.readouterr().out
    assert f"+ min.insync.replicas = 2  (profile critical at {d}/cluster.yaml:16:28)" in text
    assert "+ retention.ms = 7776000000 (90d)\n" in text  # the topic's own: no origin
    assert main(["plan", str(d), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert f"+ min.insync.replicas = 2  (profile critical at {d}/cluster.yaml:16:28)" in md
    out_file = tmp_path / "plan.json"
    assert main(["plan", str(d), "--out", str(out_file)]) == 0
    [action] = json.loads(out_file.read_text())["actions"]
    assert action["type"] == "create_topic"
    assert action["origins"] == {
        "min.insync.replicas": f"profile critical at {d}/cluster.yaml:16:28"
    }
    assert main(["apply", "--plan", str(out_file), "--yes"]) == 0  # the schema takes it
    state = SimulatedCluster.open(str(d / ".state" / "test.json"), BROKERS).describe()
    assert state.topics["c"].config["min.insync.replicas"] == "2"
