"""The pure helpers of ``benchmarks/peers.py`` (the benchmark itself is not run in CI): the
configs it writes for each tool, the assignments, the bytes-moved arithmetic and the parsing
of Kafka's and kgitops' output."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from kgitops.model import Broker
from kgitops.spec.load import load_specs_or_raise

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("peers_bench", ROOT / "benchmarks" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_bench"] = module
    spec.loader.exec_module(module)
    return module


peers = _load()


def test_step_assignment_rotates_over_the_brokers_with_distinct_replicas() -> None:
    assert peers.step_assignment(0, 3) == [[1, 2, 3], [2, 3, 4], [3, 4, 1]]
    assert peers.step_assignment(3, 2) == [[4, 1, 2], [1, 2, 3]]
    for i in range(8):
        for row in peers.step_assignment(i, 5):
            assert len(set(row)) == 3 and set(row) <= {1, 2, 3, 4}
    # one rack per broker: every partition is in three racks
    assert len(peers.RACKS) == peers.BROKERS == len(set(peers.RACKS))
    # the drained broker holds 3 of every 4 data partitions
    rows = [row for i in range(4) for row in peers.step_assignment(i, peers.DATA_PARTITIONS)]
    assert sum(peers.DRAIN_BROKER in row for row in rows) * 4 == len(rows) * 3


def test_topicctl_topic_config_is_the_yaml_topicctl_reads() -> None:
    text = peers.topicctl_topic_yaml("tc.t00001", 3, [[2, 3, 4], [3, 4, 1], [4, 1, 2]], 86_400_000)
    doc = yaml.safe_load(text)
    assert doc == {
        "meta": {
            "name": "tc.t00001",
            "cluster": "peers",
            "environment": "local",
            "region": "local",
        },
        "spec": {
            "partitions": 3,
            "replicationFactor": 3,
            "retentionMinutes": 1440,
            "placement": {
                "strategy": "static",
                "staticAssignments": [[2, 3, 4], [3, 4, 1], [4, 1, 2]],
            },
        },
    }
    data = yaml.safe_load(peers.topicctl_topic_yaml("tcd.data00", 6, None, 86_400_000))
    assert data["spec"]["placement"] == {"strategy": "cross-rack"}


def test_topicctl_topic_config_refuses_what_topicctl_cannot_say() -> None:
    with pytest.raises(ValueError, match="whole minutes"):
        peers.topicctl_topic_yaml("t", 1, None, 90_500)
    with pytest.raises(ValueError, match="2 rows for 3 partitions"):
        peers.topicctl_topic_yaml("t", 3, [[1, 2, 3], [2, 3, 4]], 60_000)


def test_topicctl_cluster_config_matches_the_topic_configs_meta() -> None:
    cluster = yaml.safe_load(peers.topicctl_cluster_yaml("127.0.0.1:1,127.0.0.1:2"))
    topic = yaml.safe_load(peers.topicctl_topic_yaml("t", 1, [[1, 2, 3]], 60_000))
    assert cluster["spec"] == {"bootstrapAddrs": ["127.0.0.1:1", "127.0.0.1:2"]}
    for key in ("environment", "region"):
        assert cluster["meta"][key] == topic["meta"][key]
    assert cluster["meta"]["name"] == topic["meta"]["cluster"]


BROKERS = [Broker(i, rack) for i, rack in enumerate(peers.RACKS, start=1)]


def test_kgitops_create_folder_loads_clean_with_the_assignments(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(peers.kgitops_cluster_yaml("127.0.0.1:1,127.0.0.1:2"))
    (tmp_path / "topics.yaml").write_text(
        "---\n".join(
            peers.kgitops_topic_doc(f"kg.t{i}", 3, peers.step_assignment(i, 3), 86_400_000)
            for i in range(4)
        )
    )
    loaded = load_specs_or_raise(str(tmp_path), brokers=BROKERS)
    assert loaded.diagnostics == ()  # no warning either: every partition in three racks
    assert loaded.cluster is not None
    assert loaded.cluster.bootstrap_servers == ("127.0.0.1:1", "127.0.0.1:2")
    assert loaded.cluster.unmanaged_topics == "ignore"
    topics = {t.name: t for t in loaded.topics}
    assert topics["kg.t1"].assignment == ((2, 3, 4), (3, 4, 1), (4, 1, 2))
    assert dict(topics["kg.t1"].config) == {"retention.ms": "86400000"}


def test_kgitops_drain_folder_loads_with_the_decommission(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(
        peers.kgitops_cluster_yaml("127.0.0.1:1", throttle=5_000_000, decommission=[4])
    )
    (tmp_path / "topics.yaml").write_text(
        peers.kgitops_topic_doc("kgd.data00", 6, None, 86_400_000)
    )
    loaded = load_specs_or_raise(str(tmp_path), brokers=BROKERS)
    assert loaded.cluster is not None
    assert loaded.cluster.decommission == (4,)
    assert loaded.cluster.reassignment.throttle_bytes_per_sec == 5_000_000
    (topic,) = loaded.topics
    assert topic.assignment is None and topic.partitions == 6


def test_replica_assignment_argument_is_kafka_topics_syntax() -> None:
    assert peers.replica_assignment_arg([[1, 2, 3], [2, 3, 4]]) == "1:2:3,2:3:4"


def test_bytes_moved_counts_each_new_replica_once_with_its_partition_size() -> None:
    before = {("a", 0): [1, 2, 4], ("a", 1): [2, 3, 1], ("b", 0): [4, 2, 3]}
    after = {("a", 0): [1, 2, 3], ("a", 1): [3, 1, 2], ("b", 0): [1, 3, 2]}
    sizes = {("a", 0): 100, ("a", 1): 1_000, ("b", 0): 10}
    # a-0 gains 3 (100), a-1 only reorders (0), b-0 gains 1 (10)
    assert peers.bytes_moved(before, after, sizes) == (110, 2)
    # a partition moved whole (RF 3 onto three new brokers) copies three times
    assert peers.bytes_moved({("c", 0): [1, 2, 3]}, {("c", 0): [4, 5, 6]}, {("c", 0): 7}) == (21, 3)


GENERATE = """Current partition replica assignment
{"version":1,"partitions":[{"topic":"krd.data00","partition":0,"replicas":[1,2,3],"log_dirs":["any","any","any"]}]}

Proposed partition reassignment configuration
{"version":1,"partitions":[{"topic":"krd.data00","partition":0,"replicas":[2,3,1],"log_dirs":["any","any","any"]}]}
"""


def test_parse_generate_takes_the_proposed_plan_not_the_current_one() -> None:
    plan = peers.parse_generate(GENERATE)
    assert plan["partitions"][0]["replicas"] == [2, 3, 1]
    with pytest.raises(ValueError, match="no proposed reassignment"):
        peers.parse_generate(GENERATE.split("\n\n")[0])


def test_parse_verify_counts_completed_and_moving_partitions() -> None:
    text = (
        "Status of partition reassignment:\n"
        "Reassignment of partition krd.data00-0 is completed.\n"
        "Reassignment of partition krd.data00-1 is still in progress.\n"
        "Reassignment of partition krd.data01-5 is completed.\n"
        "\nClearing broker-level throttles on brokers 1,2,3,4\n"
    )
    assert peers.parse_verify(text) == (2, 1)
    assert peers.parse_verify("There is no active reassignment") == (0, 0)


def test_kgitops_reported_requests_reads_the_report_line() -> None:
    line = (
        "apply: 5 of 5 action(s) done; 1,041 request(s) sent to the brokers: 15 DescribeConfigs "
        "(connection set-up aside)"
    )
    assert peers.kgitops_reported_requests(line) == 1041
    assert peers.kgitops_reported_requests("apply: nothing to do") is None


def test_ratio_is_a_dash_without_both_figures() -> None:
    assert peers.ratio(30.0, 10.0) == "3.0x"
    assert peers.ratio(0.1, 1.1) == "0.09x"
    assert peers.ratio(None, 10.0) == "—"
    assert peers.ratio(3.0, None) == "—"
    assert peers.ratio(3.0, 0.0) == "—"
