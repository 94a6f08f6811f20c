"""Throttle configs on the simulated cluster follow Kafka: IncrementalAlterConfigs APPEND and
SUBTRACT on list configs (core/src/main/scala/kafka/server/ConfigAdminManager.scala,
``prepareIncrementalConfigs``), and a broker's config changed only on that broker, so never
while it is down."""

from __future__ import annotations

from pathlib import Path

from kgitops.cluster.port import ConfigChange, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.names import THROTTLE_FOLLOWER_RATE, THROTTLE_LEADER_REPLICAS

KEY = THROTTLE_LEADER_REPLICAS


def cluster(tmp_path: Path) -> SimulatedCluster:
    s = SimulatedCluster.open(str(tmp_path / "s.json"), [Broker(b) for b in (1, 2, 3)])
    s.create_topics([NewTopic("a", {0: (1, 2), 1: (2, 3)})])
    return s


def config(s: SimulatedCluster) -> dict[str, str]:
    return dict(s.describe(["a"]).topics["a"].config)


def test_append_adds_only_the_items_not_there_and_keeps_another_writers(tmp_path: Path) -> None:
    s = cluster(tmp_path)
    assert s.alter_topic_configs({"a": ConfigChange(append={KEY: "0:1,0:2"})}) == {"a": None}
    s.alter_topic_configs({"a": ConfigChange(append={KEY: "1:3,0:2"})})  # another writer
    assert config(s)[KEY] == "0:1,0:2,1:3"


def test_subtract_takes_out_only_those_items_and_leaves_an_empty_value(tmp_path: Path) -> None:
    s = cluster(tmp_path)
    s.alter_topic_configs({"a": ConfigChange(set={KEY: "0:1,0:2,1:3"})})
    s.alter_topic_configs({"a": ConfigChange(subtract={KEY: "0:1,0:2,9:9"})})
    assert config(s)[KEY] == "1:3"
    s.alter_topic_configs({"a": ConfigChange(subtract={KEY: "1:3"})})
    assert config(s)[KEY] == ""  # Kafka keeps the key, empty


def test_append_to_a_config_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    s = cluster(tmp_path)
    err = s.alter_topic_configs({"a": ConfigChange(append={"retention.ms": "5"})})["a"]
    assert err is not None and err.code == "INVALID_CONFIG"
    assert "retention.ms" not in config(s)


def test_one_request_names_a_key_once(tmp_path: Path) -> None:
    s = cluster(tmp_path)
    change = ConfigChange(append={KEY: "0:1"}, subtract={KEY: "0:1"})
    err = s.alter_topic_configs({"a": change})["a"]
    assert err is not None and "duplicate config keys" in str(err)
    assert KEY not in config(s)


def test_a_broker_that_is_down_cannot_have_its_config_changed(tmp_path: Path) -> None:
    s = cluster(tmp_path)
    s.fail_broker(3)
    got = s.alter_broker_configs(
        {b: ConfigChange(set={THROTTLE_FOLLOWER_RATE: "100"}) for b in (1, 3)}
    )
    assert got["broker:1"] is None
    err = got["broker:3"]
    assert err is not None and err.code == "BROKER_NOT_AVAILABLE"
    configs = s.describe([]).broker_configs
    assert configs.get(1) == {THROTTLE_FOLLOWER_RATE: "100"} and 3 not in configs
