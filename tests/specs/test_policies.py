"""cluster.yaml ``policies:``: checked on every topic's effective values, each finding at the
value that breaks it and citing the policy's line; ``mode: warn`` only warns."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import cluster_folder

from .conftest import CLUSTER, Problems

POLICIES = (
    CLUSTER
    + """\
policies:
  maxPartitions: 100
  minPartitions: 2
  minReplicationFactor: 2
  minInsyncReplicas: 2
  maxRetention: 30d
  requiredConfigs: [min.insync.replicas]
  forbiddenConfigs: [unclean.leader.election.enable]
  names:
    - {folder: team-a/, pattern: '^team-a\\.', owners: ['@acme/team-a']}
  mode: error
"""
)
GOOD = """\
apiVersion: kgitops/v1
kind: Topic
name: {name}
partitions: 10
replicationFactor: 3
config:
  min.insync.replicas: 2
  retention.ms: 7d
"""


def test_a_topic_within_every_policy_has_no_finding(problems: Problems) -> None:
    files = {"team-a/ok.yaml": GOOD.format(name="team-a.ok"), "other.yaml": GOOD.format(name="x")}
    assert problems(files, cluster=POLICIES) == []


def test_each_policy_is_reported_at_the_value_that_breaks_it(problems: Problems) -> None:
    bad = GOOD.format(name="team-a.big").replace("partitions: 10", "partitions: 101")
    bad = bad.replace("min.insync.replicas: 2", "min.insync.replicas: 1")
    bad = bad.replace("retention.ms: 7d", "retention.ms: infinite")
    bad += "  unclean.leader.election.enable: false\n"
    assert [p for p in problems({"a.yaml": bad}, cluster=POLICIES) if "policy" in p] == [
        "a.yaml:4:13: error: partitions 101 is above the policy maxPartitions 100 "
        "(cluster.yaml:8:18)",
        "a.yaml:7:24: error: min.insync.replicas 1 is below the policy minInsyncReplicas 2 "
        "(cluster.yaml:11:22)",
        "a.yaml:8:17: error: retention.ms infinite is above the policy maxRetention 30d "
        "(cluster.yaml:12:17)",
        "a.yaml:9:35: error: unclean.leader.election.enable may not be set in this cluster "
        "(policy forbiddenConfigs at cluster.yaml:14:21)",
    ]


def test_unset_configs_count_as_kafkas_defaults(problems: Problems) -> None:
    bare = "apiVersion: kgitops/v1\nkind: Topic\nname: t\npartitions: 1\nreplicationFactor: 1\n"
    found = [p for p in problems({"t.yaml": bare}, cluster=POLICIES) if "polic" in p]
    assert found == [
        "t.yaml:3:1: error: min.insync.replicas is not set (Kafka's default is 1); the policy "
        "minInsyncReplicas wants at least 2 (cluster.yaml:11:22)",
        "t.yaml:3:1: error: min.insync.replicas must be set (policy requiredConfigs at "
        "cluster.yaml:13:20): here, in the topic's profile or in defaults:",
        "t.yaml:4:13: error: partitions 1 is below the policy minPartitions 2 (cluster.yaml:9:18)",
        "t.yaml:5:20: error: replicationFactor 1 is below the policy minReplicationFactor 2 "
        "(cluster.yaml:10:25)",
    ]
    short = POLICIES.replace("maxRetention: 30d", "maxRetention: 1d")
    found = [p for p in problems({"t.yaml": GOOD.format(name="t")}, cluster=short) if "polic" in p]
    assert found == [
        "t.yaml:8:17: error: retention.ms 7d is above the policy maxRetention 1d "
        "(cluster.yaml:12:17)"
    ]


def test_a_team_folder_only_creates_names_matching_its_pattern(problems: Problems) -> None:
    files = {
        "team-a/x.yaml": GOOD.format(name="payments.x"),
        "team-a/deep/y.yaml": GOOD.format(name="team-b.y"),
        "team-ab/z.yaml": GOOD.format(name="z"),  # another folder with a common prefix
        "team-a/gone.yaml": GOOD.format(name="old") + "delete: true\n",
    }
    assert problems(files, cluster=POLICIES) == [
        "team-a/deep/y.yaml:3:7: error: topic 'team-b.y' in team-a/ must match ^team-a\\. "
        "(policy names at cluster.yaml:16:7)",
        "team-a/x.yaml:3:7: error: topic 'payments.x' in team-a/ must match ^team-a\\. "
        "(policy names at cluster.yaml:16:7)",
    ]


def test_mode_warn_reports_without_stopping(problems: Problems) -> None:
    warn = POLICIES.replace("mode: error", "mode: warn")
    found = problems({"team-a/x.yaml": GOOD.format(name="payments.x")}, cluster=warn)
    assert found == [
        "team-a/x.yaml:3:7: warning: topic 'payments.x' in team-a/ must match ^team-a\\. "
        "(policy names at cluster.yaml:16:7)"
    ]


def test_an_inherited_value_breaks_a_policy_at_cluster_yaml(problems: Problems) -> None:
    cluster = POLICIES + "defaults:\n  replicationFactor: 1\n"
    topic = GOOD.format(name="t").replace("replicationFactor: 3\n", "")
    found = [p for p in problems({"t.yaml": topic}, cluster=cluster) if "polic" in p]
    assert found == [
        "cluster.yaml:19:22: error: replicationFactor 1 is below the policy "
        "minReplicationFactor 2 (cluster.yaml:10:25)"
    ]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("'^team-a\\.'", "'(unclosed'"),
            "cluster.yaml:16:34: error: pattern '(unclosed' is not a regular expression: "
            "missing ), unterminated subpattern at position 0",
        ),
        (
            ("folder: team-a/", "folder: ../other/"),
            "cluster.yaml:16:16: error: folder '../other/' is not inside the cluster folder",
        ),
        (
            ("maxRetention: 30d", "maxRetention: 30days"),
            "cluster.yaml:12:17: error: maxRetention: must be a duration (7d, 36h, 15m, 500ms) "
            "or a number of milliseconds, or infinite, not the string '30days'",
        ),
        (
            ("requiredConfigs: [min.insync.replicas]", "requiredConfigs: [min.insync.replica]"),
            "cluster.yaml:13:21: error: unknown topic config 'min.insync.replica' (did you mean "
            "'min.insync.replicas'?)",
        ),
        (
            ("minPartitions: 2", "minPartitions: 101"),
            "cluster.yaml:9:18: error: minPartitions 101 is above maxPartitions 100 "
            "(cluster.yaml:8:18): no topic can meet both",
        ),
        (
            (
                "forbiddenConfigs: [unclean.leader.election.enable]",
                "forbiddenConfigs: [unclean.leader.election.enable, min.insync.replicas]",
            ),
            "cluster.yaml:14:54: error: min.insync.replicas is both forbidden and required "
            "(requiredConfigs at cluster.yaml:13:21): no topic can meet both",
        ),
    ],
)
def test_a_bad_policy_is_an_error_at_its_line(
    problems: Problems, edit: tuple[str, str], expected: str
) -> None:
    assert expected in problems({}, cluster=POLICIES.replace(*edit))


def test_plan_refuses_a_topic_that_breaks_a_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = GOOD.format(name="t").replace("partitions: 10", "partitions: 500")
    cluster_folder(tmp_path, cluster=POLICIES, files={"t.yaml": topic})
    assert main(["plan", str(tmp_path)]) == 1
    assert "partitions 500 is above the policy maxPartitions 100" in capsys.readouterr().err
    assert (
        not (tmp_path / ".state" / "test.json").exists()
        or "t" not in (tmp_path / ".state" / "test.json").read_text()
    )


def test_codeowners_prints_one_line_per_team_folder_from_the_repository_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("prod", "staging"):
        cluster = POLICIES.replace("name: test", f"name: {name}")
        if name == "staging":
            cluster += "    - {folder: 'shared stuff', pattern: '.',\n"
            cluster += "       owners: ['@acme/platform', 'ops@acme.io']}\n"
            cluster = cluster.replace("  mode: error\n", "") + "  mode: warn\n"
        cluster_folder(tmp_path / "topics" / name, cluster=cluster)
    # a topic that breaks a policy does not stop the owners from being printed
    (tmp_path / "topics" / "prod" / "x.yaml").write_text(GOOD.format(name="t").replace("10", "999"))
    monkeypatch.chdir(tmp_path / "topics")
    assert main(["codeowners", "."]) == 0
    assert capsys.readouterr().out == (
        "# BEGIN kgitops codeowners: generated by `kgitops codeowners .`; edit cluster.yaml\n"
        "/topics/prod/team-a/ @acme/team-a\n"
        "/topics/staging/team-a/ @acme/team-a\n"
        "/topics/staging/shared\\ stuff/ @acme/platform ops@acme.io\n"
        "# END kgitops codeowners\n"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("'@acme/team-a'", "'acme team'"),  # a bad owner: codeowners would print it
        ("mode: error", "mode: sometimes"),  # another part of the policies
        ("name: test", "name: test\nreassignment: {maxConcurrentMoves: 0}"),  # elsewhere
    ],
)
def test_codeowners_prints_nothing_from_a_cluster_yaml_with_errors(
    old: str, new: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert old in POLICIES
    cluster_folder(tmp_path, cluster=POLICIES.replace(old, new))
    assert main(["codeowners", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{tmp_path}/cluster.yaml:" in err


def test_owners_must_look_like_codeowners_names(problems: Problems) -> None:
    cluster = POLICIES.replace("'@acme/team-a'", "'acme team'")
    found = problems({}, cluster=cluster)
    assert len(found) == 1 and found[0].startswith("cluster.yaml:16:")


def test_plan_shows_a_warned_policy_as_a_plan_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(POLICIES.replace("mode: error", "mode: warn"))
    (tmp_path / "t.yaml").write_text(
        GOOD.format(name="t").replace("partitions: 10", "partitions: 500")
    )
    assert main(["plan", str(tmp_path), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert {
        "topic": "t",
        "code": "POLICY",
        "message": f"{tmp_path}/t.yaml:4:13: partitions 500 is above the policy maxPartitions "
        f"100 ({tmp_path}/cluster.yaml:8:18)",
    } in warnings
