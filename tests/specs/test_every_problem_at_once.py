"""One ``kgitops validate`` run reports every problem of a cluster folder, and nothing else.

A schema error in a document never hides the other checks of that document or of the other
documents, and a broken cluster.yaml keeps every part that is valid (``defaults:``,
``profiles:``, the simulated brokers), so no false error follows from it: a topic inheriting
its replicationFactor from ``defaults:`` gets no "missing required field".

The proof: a valid folder and a list of independent mistakes, each one line replaced by
one line. Each mistake alone is reported; all of them together are reported exactly as the
union of what each says alone, with file:line:col (nothing hidden, nothing added).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_BROKERS, cluster_folder, cluster_yaml

FILES = {
    "cluster.yaml": """\
apiVersion: kgitops/v1
kind: Cluster
name: many
simulated:
  stateFile: .state/many.json
  brokers:
    - {id: 0, rack: az1}
    - {id: 1, rack: az2}
    - {id: 2, rack: az3}
reassignment:
  maxConcurrentMoves: 4
  timeoutSeconds: 600
unmanagedTopics: warn
# no broker is decommissioned
defaults:
  replicationFactor: 3
  config:
    min.insync.replicas: 2
profiles:
  compacted:
    config:
      cleanup.policy: compact
""",
    "orders.yaml": """\
apiVersion: kgitops/v1
kind: Topic
name: shop.orders
partitions: 12
config:
  retention.ms: 7d
  compression.type: zstd
""",
    "payments.yaml": """\
apiVersion: kgitops/v1
kind: Topic
name: payments.tx
partitions: 6
replicationFactor: 3
placement: rack-aware
---
apiVersion: kgitops/v1
kind: Topic
name: payments.audit
partitions: 3
placement: static
assignment:
  - [0, 1, 2]
  - [1, 2, 0]
  - [2, 0, 1]
""",
    "events.yaml": """\
apiVersion: kgitops/v1
kind: Topic
name: events.state
partitions: 3
profile: compacted
config:
  min.compaction.lag.ms: 1000
  max.compaction.lag.ms: 5000
""",
    "clicks.yaml": """\
apiVersion: kgitops/v1
kind: Topic
name: web.clicks
partitions: 6
""",
}

#: (file, line as written, the mistake): independent of each other.
MISTAKES = [
    # cluster.yaml: three schema errors and a semantic one
    ("cluster.yaml", "  maxConcurrentMoves: 4", "  maxConcurrentMoves: 0"),
    ("cluster.yaml", "  timeoutSeconds: 600", "  timeoutSecs: 600"),
    ("cluster.yaml", "unmanagedTopics: warn", "unmanagedTopics: sometimes"),
    ("cluster.yaml", "# no broker is decommissioned", "decommission: [7]"),
    # a schema error and a semantic one in the same document
    ("orders.yaml", "partitions: 12", "partitons: 12"),
    ("orders.yaml", "  compression.type: zstd", "  min.insync.replicas: 4"),
    ("payments.yaml", "placement: rack-aware", "placement: rackaware"),
    ("payments.yaml", "replicationFactor: 3", "replicationFactor: 5"),
    ("payments.yaml", "  - [1, 2, 0]", "  - [1, x, 0]"),
    ("payments.yaml", "name: payments.audit", "name: payments.tx"),
    ("events.yaml", "partitions: 3", "partitions: -1"),
    ("events.yaml", "profile: compacted", "profile: compact"),
    ("events.yaml", "  max.compaction.lag.ms: 5000", "  max.compaction.lag.ms: 500"),
    # a file that is not YAML at all hides nothing of the others
    ("clicks.yaml", "name: web.clicks", "name: [web.clicks"),
]


def _write(root: Path, mistakes: list[tuple[str, str, str]]) -> Path:
    texts = {}
    for name, text in FILES.items():
        lines = text.splitlines()
        for file, line, wrong in mistakes:
            if file == name:
                assert lines.count(line) == 1, line
                lines[lines.index(line)] = wrong
        texts[name] = "\n".join(lines) + "\n"
    return cluster_folder(root, cluster=texts.pop("cluster.yaml"), files=texts)


def _validate(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["validate", str(folder)])
    out = capsys.readouterr().out
    return code, [line.replace(f"{folder}/", "") for line in out.splitlines()]


def test_the_folder_without_mistakes_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _validate(_write(tmp_path / "ok", []), capsys) == (0, [])


def test_one_run_lists_every_mistake_with_its_position_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _validate(_write(tmp_path / "all", MISTAKES), capsys)
    assert code == 1
    assert lines == [
        "clicks.yaml:4:11: error: invalid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence)",
        "cluster.yaml:11:23: error: reassignment.maxConcurrentMoves must be at least 1, not 0",
        "cluster.yaml:12:3: error: unknown field 'timeoutSecs' in reassignment "
        "(did you mean 'timeoutSeconds'?)",
        "cluster.yaml:13:18: error: unmanagedTopics must be one of ignore, warn, error, "
        "not 'sometimes'",
        "cluster.yaml:14:16: error: broker 7 in decommission is not a broker of the cluster "
        "(brokers: 0, 1, 2)",
        "events.yaml:4:13: error: partitions must be at least 1, not -1",
        "events.yaml:5:10: error: unknown profile 'compact' (did you mean 'compacted'?); "
        "cluster.yaml defines compacted",
        "events.yaml:7:26: error: min.compaction.lag.ms (1000) is above max.compaction.lag.ms "
        "(500)",
        "events.yaml:7:26: warning: min.compaction.lag.ms has no effect without compaction "
        "(cleanup.policy has no compact)",
        "events.yaml:8:26: warning: max.compaction.lag.ms has no effect without compaction "
        "(cleanup.policy has no compact)",
        "orders.yaml:1:1: error: missing required field 'partitions'",
        "orders.yaml:4:1: error: unknown field 'partitons' (did you mean 'partitions'?)",
        "orders.yaml:7:24: warning: min.insync.replicas 4 is above replicationFactor 3: "
        "Kafka 4.1 counts it as 3 (every replica must be in sync), so one broker down stops "
        "producers with acks=all",
        "payments.yaml:5:20: error: replicationFactor 5 is larger than the number of brokers (3)",
        "payments.yaml:6:12: error: placement must be one of rack-aware, rack-unaware, static, "
        "not 'rackaware' (did you mean 'rack-aware'?)",
        "payments.yaml:10:7: error: topic 'payments.tx' is defined twice (first at "
        "payments.yaml:3:7)",
        "payments.yaml:15:9: error: assignment.1.1 must be an integer, not the string 'x'",
    ]


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: f"{m[0]}:{m[2].strip()}")
def test_each_mistake_alone_says_what_it_says_among_all_the_others(
    mistake: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, alone = _validate(_write(tmp_path / "one", [mistake]), capsys)
    assert alone, f"{mistake} is reported"
    _, together = _validate(_write(tmp_path / "all", MISTAKES), capsys)
    assert set(alone) <= set(together)


def test_all_mistakes_together_say_exactly_what_each_says_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    union: set[str] = set()
    for i, mistake in enumerate(MISTAKES):
        union.update(_validate(_write(tmp_path / f"one{i}", [mistake]), capsys)[1])
    _, together = _validate(_write(tmp_path / "all", MISTAKES), capsys)
    assert sorted(together) == sorted(union)


BROKEN_CLUSTER = cluster_yaml(
    "c",
    brokers=THREE_BROKERS,
    extra="reassignment: {maxConcurrentMoves: 1}\ndefaults: {replicationFactor: 3}\n"
    "profiles: {critical: {replicationFactor: 2}}\n",
)

TOPICS = """\
apiVersion: kgitops/v1
kind: Topic
name: a
partitions: 3
---
apiVersion: kgitops/v1
kind: Topic
name: b
partitions: 3
profile: critical
"""


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        (
            "{maxConcurrentMoves: 1}",
            "{maxConcurrentMoves: 0}",
            "cluster.yaml:7:36: error: reassignment.maxConcurrentMoves must be at least 1, not 0",
        ),
        (
            "defaults: {replicationFactor: 3}",
            "defaults: {replicationFactor: 0}",
            "cluster.yaml:8:31: error: defaults.replicationFactor must be at least 1, not 0",
        ),
        (
            "defaults: {replicationFactor: 3}",
            "defaults: [3]",
            "cluster.yaml:8:11: error: defaults must be a mapping, not a list",
        ),
        (
            "{critical: {replicationFactor: 2}}",
            "{critical: {replicationFactor: x}}",
            "cluster.yaml:9:42: error: profiles.critical.replicationFactor must be an integer, "
            "not the string 'x'",
        ),
        (
            "profiles: {critical: {replicationFactor: 2}}",
            "profiles: [critical]",
            "cluster.yaml:9:11: error: profiles must be a mapping, not a list",
        ),
        (
            "brokers: [{id: 0}, {id: 1}, {id: 2}]",
            "brokers: [{id: 0}, {id: x}, {id: 2}]",
            "cluster.yaml:6:27: error: simulated.brokers.1.id must be an integer, "
            "not the string 'x'",
        ),
        (
            "kind: Cluster",
            "kind: Clustr",
            "cluster.yaml:2:7: error: unknown kind 'Clustr': expected Topic, Cluster, ACL, User, "
            "Quota (did you mean 'Cluster'?)",
        ),
        (
            "name: c",
            "name: [c",
            "cluster.yaml:4:10: error: invalid YAML: did not find expected ',' or ']' "
            "(while parsing a flow sequence)",
        ),
    ],
    ids=[
        "reassignment",
        "defaults-value",
        "defaults-type",
        "profile-value",
        "profiles-type",
        "brokers",
        "kind",
        "not-yaml",
    ],
)
def test_a_broken_cluster_yaml_is_its_own_error_and_no_topic_gets_one_from_it(
    old: str, new: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert old in BROKEN_CLUSTER
    cluster = BROKEN_CLUSTER.replace(old, new)
    folder = cluster_folder(tmp_path / "c", cluster=cluster, files={"topics.yaml": TOPICS})
    assert _validate(folder, capsys) == (1, [error])


def test_a_topic_missing_its_replication_factor_with_a_valid_cluster_yaml_is_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = BROKEN_CLUSTER.replace("defaults: {replicationFactor: 3}\n", "")
    folder = cluster_folder(tmp_path / "c", cluster=cluster, files={"topics.yaml": TOPICS})
    assert _validate(folder, capsys) == (
        1,
        [
            "topics.yaml:1:1: error: missing required field 'replicationFactor' (here, or in "
            "cluster.yaml's defaults: or a profile)"
        ],
    )


def test_a_refused_config_value_is_its_own_error_not_also_a_policy_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = (
        BROKEN_CLUSTER
        + "policies:\n  minInsyncReplicas: 2\n  maxRetention: 7d\n"
        + "  requiredConfigs: [cleanup.policy]\n"
    )
    topic = (
        TOPICS.split("---")[0]
        + "config:\n  min.insync.replicas: abc\n  retention.ms: forever\n"
        + "  cleanup.policy: compcat\n"
    )
    folder = cluster_folder(tmp_path / "c", cluster=cluster, files={"t.yaml": topic})
    assert _validate(folder, capsys) == (
        1,
        [
            "t.yaml:6:24: error: min.insync.replicas must be an integer, not the string 'abc'",
            "t.yaml:7:17: error: retention.ms must be a duration (7d, 36h, 15m, 500ms) or a "
            "number of milliseconds, or infinite, not the string 'forever'",
            "t.yaml:8:19: error: cleanup.policy: 'compcat' is not one of compact, delete "
            "(did you mean 'compact'?)",
        ],
    )


def test_a_refused_part_of_the_policies_holds_no_topic_to_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mode: wran`` is an error at its line; the topics above maxPartitions are not also
    errors (the mode meant warnings), and the valid folder shows them as warnings."""
    policies = "policies:\n  maxPartitions: 2\n  mode: wran\n"
    cluster = BROKEN_CLUSTER + policies
    folder = cluster_folder(tmp_path / "c", cluster=cluster, files={"topics.yaml": TOPICS})
    assert _validate(folder, capsys) == (
        1,
        [
            "cluster.yaml:12:9: error: policies.mode must be one of error, warn, not 'wran' "
            "(did you mean 'warn'?)"
        ],
    )
    (folder / "cluster.yaml").write_text(BROKEN_CLUSTER + policies.replace("wran", "warn"))
    code, lines = _validate(folder, capsys)
    assert code == 0 and len(lines) == 2
    assert all("warning: partitions 3 is above the policy maxPartitions 2" in x for x in lines)
