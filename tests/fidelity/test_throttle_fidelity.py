"""Replication throttles as a real Kafka applies them, one test per rule, each naming the
Kafka source it follows (apache/kafka trunk):

- core/src/main/scala/kafka/server/ReplicaManager.scala (``shouldLeaderThrottle``),
  ReplicaFetcherThread.scala (``shouldFollowerThrottle``) and ReplicationQuotaManager.scala:
  in-sync followers of a throttled partition are never held back, but their bytes are
  recorded against the quota; only out-of-sync (catching-up) replicas wait when it is spent;
- core/src/main/scala/kafka/server/ConfigAdminManager.scala: IncrementalAlterConfigs APPEND
  (2) and SUBTRACT (3) on list configs; a broker's config is changed on that broker only;
- docs/ops.html, "Limiting Bandwidth Usage during Data Migration";
- ReplicationQuotaManager.scala's ``SimpleRate`` over SampledStat.java's samples: a quota lets
  23/24 of its rate through on average (``versionrules.throttle_delivered``, docs/apply.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kraft_fakes import RecordingManager, adapter

from kgitops.cluster.port import ConfigChange, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)
from kgitops.versionrules import throttle_delivered

MB = 1_000_000
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "apply"))
from test_apply_simulated import Folder, topic  # noqa: E402


def moving(tmp_path: Path, write_rate: float) -> SimulatedCluster:
    """One partition of 1 GB on [1, 2, 3] (leader 1) written at ``write_rate``, moving to
    [1, 2, 3, 4] under a 30 MB/s throttle set as kgitops sets it."""
    s = SimulatedCluster.open(str(tmp_path / "s.json"), [Broker(b) for b in (1, 2, 3, 4)])
    s.create_topics([NewTopic("busy", {0: (1, 2, 3)})])
    s.set_size("busy", 1000 * MB)
    s.set_produce_rate("busy", write_rate)
    s.alter_topic_configs(
        {
            "busy": ConfigChange(
                append={THROTTLE_LEADER_REPLICAS: "0:1,0:2,0:3", THROTTLE_FOLLOWER_REPLICAS: "0:4"}
            )
        }
    )
    rates = {THROTTLE_LEADER_RATE: str(30 * MB), THROTTLE_FOLLOWER_RATE: str(30 * MB)}
    s.alter_broker_configs({b: ConfigChange(set=rates) for b in (1, 2, 3, 4)})
    s.alter_reassignments({("busy", 0): (1, 2, 3, 4)})
    return s


def test_in_sync_followers_of_a_throttled_partition_are_charged_to_the_quota(
    tmp_path: Path,
) -> None:
    # ReplicationQuotaManager records the two in-sync followers' 2 x 20 MB/s: the 30 MB/s
    # leader quota is spent before the new replica gets a byte (docs/ops.html, issue 18)
    s = moving(tmp_path, 20 * MB)
    assert s.rates()[("busy", 0, 4)] == 0.0
    s.advance(3600)
    state = s.describe(["busy"])
    assert state.topics["busy"].partitions[0].replicas == (1, 2, 3, 4), "still moving"
    assert 4 not in (state.topics["busy"].partitions[0].isr or ())


def test_what_in_sync_traffic_leaves_of_the_quota_is_what_a_new_replica_copies_at(
    tmp_path: Path,
) -> None:
    # 5 MB/s of writes: 2 x 5 MB/s in sync, 18.75 MB/s left of the 28.75 MB/s the 30 MB/s
    # quota lets through (23/24: versionrules.throttle_delivered); the log grows at 5 MB/s,
    # so the new replica gains 13.75 MB/s on it: 1 GB in 72.7 s
    s = moving(tmp_path, 5 * MB)
    assert s.rates()[("busy", 0, 4)] == 30 * MB * 23 / 24 - 10 * MB
    s.advance(72)
    assert s.describe(["busy"]).reassignments.get("busy"), "not done after 72 s"
    s.advance(1)
    part = s.describe(["busy"]).topics["busy"].partitions[0]
    assert part.replicas == (1, 2, 3, 4) and not s.describe(["busy"]).reassignments


def test_the_plan_warns_throttle_below_write_rate_naming_the_broker(tmp_path: Path) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 1, 2))
    demo.apply()
    sim = SimulatedCluster.open(str(demo.state_file), [])
    sim.set_size("orders", 1000 * MB)
    sim.set_produce_rate("orders", 9 * MB)  # 9 MB/s to one in-sync follower, 10 MB/s throttle
    leader = sim.describe(["orders"]).topics["orders"].partitions[0].leader
    demo.topics(topic("orders", 1, 3))
    code, out, err = demo.cli("plan", "--format", "json")
    assert code == 0, err
    (w,) = [w for w in json.loads(out)["warnings"] if w["code"] == "THROTTLE_BELOW_WRITE_RATE"]
    assert w["data"]["broker"] == leader and w["data"]["measured"] is True
    assert w["message"].startswith(f"broker {leader}: ")
    sim.set_produce_rate("orders", 1 * MB)
    code, out, err = demo.cli("plan", "--format", "json")
    assert "THROTTLE_BELOW_WRITE_RATE" not in out


def test_without_a_measured_write_rate_it_is_estimated_from_size_and_retention(
    tmp_path: Path,
) -> None:
    demo = Folder(tmp_path)
    # retention.ms 100 s and 1 GB kept: written at about 10 MB/s, against a 10 MB/s throttle
    demo.topics(topic("logs", 1, 2, config={"retention.ms": "100000"}))
    demo.apply()
    SimulatedCluster.open(str(demo.state_file), []).set_size("logs", 1000 * MB)
    demo.topics(topic("logs", 1, 3, config={"retention.ms": "100000"}))
    code, out, err = demo.cli("plan", "--format", "json")
    assert code == 0, err
    (w,) = [w for w in json.loads(out)["warnings"] if w["code"] == "THROTTLE_BELOW_WRITE_RATE"]
    assert w["data"]["measured"] is False and w["data"]["inSyncBytesPerSec"] == 10 * MB
    assert "never catch up" in w["message"]


def test_rates_go_only_to_online_brokers_and_the_drain_of_a_dead_broker_completes(
    tmp_path: Path,
) -> None:
    demo = Folder(tmp_path)
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    demo.set_sizes("orders", 10 * MB)
    dead = 2
    SimulatedCluster.open(str(demo.state_file), []).fail_broker(dead)
    demo.cluster(decommission=[dead])
    code, out, err = demo.cli("apply", "--dry-run")
    assert code == 0, err
    broker_lines = [line for line in out.splitlines() if "IncrementalAlterConfigs brokers" in line]
    assert broker_lines and all(f'"{dead}":' not in line for line in broker_lines)
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    state = demo.state()
    assert not any(
        dead in ps["replicas"] for ps in state["topics"]["orders"]["partitions"].values()
    )
    assert not any(state.get("brokerConfigs", {}).values())


def _ok_alter(request: Any, node: int | None) -> Any:
    return SimpleNamespace(
        responses=[
            SimpleNamespace(resource_name=r.resource_name, error_code=0, error_message=None)
            for r in request.resources
        ]
    )


class _Versions:
    def api_version(self, request_class: Any) -> int:
        return 0


def test_the_adapter_sends_append_and_subtract_as_ops_2_and_3(tmp_path: Path) -> None:
    manager = RecordingManager(_ok_alter)
    manager.broker_version_data = _Versions()  # type: ignore[attr-defined]
    admin = adapter(manager)
    change = ConfigChange(
        append={THROTTLE_LEADER_REPLICAS: "0:1,0:2"}, subtract={THROTTLE_FOLLOWER_REPLICAS: "0:3"}
    )
    assert admin.alter_topic_configs({"a": change}) == {"a": None}
    ((request, _node),) = manager.sent
    (resource,) = request.resources
    ops = {(c.name, c.config_operation, c.value) for c in resource.configs}
    assert ops == {
        (THROTTLE_LEADER_REPLICAS, 2, "0:1,0:2"),
        (THROTTLE_FOLLOWER_REPLICAS, 3, "0:3"),
    }


def test_a_broker_the_adapter_cannot_reach_is_that_items_error_not_a_lost_cluster() -> None:
    # ConfigAdminManager: a broker's config is changed on that broker, so a dead broker is
    # unreachable for it; the other brokers' rates are still set
    import kafka.errors as kerr

    def answer(request: Any, node: int | None) -> Any:
        if node == 3:
            raise kerr.KafkaConnectionError("connection refused")
        return _ok_alter(request, node)

    manager = RecordingManager(answer)
    manager.broker_version_data = _Versions()  # type: ignore[attr-defined]
    admin = adapter(manager, timeout_ms=300)  # plaintext: no TLS advice
    rate = ConfigChange(set={THROTTLE_LEADER_RATE: "100"})
    got = admin.alter_broker_configs({1: rate, 3: rate, 4: rate})
    assert got["broker:1"] is None and got["broker:4"] is None
    err = got["broker:3"]
    assert err is not None and err.code == "BROKER_NOT_AVAILABLE"  # type: ignore[attr-defined]
    assert {node for _, node in manager.sent} >= {1, 3, 4}


def test_a_quota_lets_23_24_of_its_rate_through_from_kafka_3_8_and_21_22_before() -> None:
    # SampledStat keeps samples + 1 slots since 3.8 (apache/kafka#15889), samples before:
    # fully bursty fetching gets (slots - 1) / slots of the rate, smooth fetching all of it
    assert throttle_delivered((3, 8)) == throttle_delivered((4, 1)) == 23 / 24
    assert throttle_delivered((3, 7)) == 21 / 22
