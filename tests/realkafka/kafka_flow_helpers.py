"""Helpers of the real-Kafka flow tests: a cluster folder driven through ``kgitops.cli.main``,
and the cluster read back with kafka-python and with Kafka's own
``kafka-reassign-partitions --verify`` -- never through kgitops' adapter, so a wrong read in
the adapter cannot hide a wrong write."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType

from kgitops.cluster.kafka.runtime import ensure_runtime
from tests.helpers import cluster_folder, run_cli

Assignment = dict[int, tuple[int, ...]]


class KafkaFolder:
    """A cluster folder pointing at a real cluster; topic names carry ``prefix``."""

    def __init__(self, root: Path, bootstrap: str, prefix: str) -> None:
        self.dir = root / "kafka"
        self.dir.mkdir()
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.cluster()

    def name(self, short: str) -> str:
        return f"{self.prefix}{short}"

    def cluster(
        self,
        *,
        throttle: int = 10_000_000,
        moves: int = 4,
        decommission: list[int] | None = None,
    ) -> None:
        # unmanagedTopics: ignore -- the cluster is shared with other tests' topics
        extra = (
            "requestTimeoutMs: 15000\n"
            f"reassignment: {{throttleBytesPerSec: {throttle}, maxConcurrentMoves: {moves}}}\n"
            "unmanagedTopics: ignore\n"
            + (f"decommission: {decommission}\n" if decommission else "")
        )
        cluster_folder(self.dir, "kafka", bootstrap=self.bootstrap, extra=extra)

    def topics(self, *docs: Mapping[str, Any]) -> None:
        text = []
        for d in docs:
            lines = ["apiVersion: kgitops/v1", "kind: Topic", f"name: {self.name(d['name'])}"]
            for k, v in d.items():
                if k == "name":
                    continue
                if isinstance(v, dict):
                    lines.append(f"{k}:")
                    lines += [f'  {ck}: "{cv}"' for ck, cv in v.items()]
                else:
                    lines.append(f"{k}: {json.dumps(v)}")
            text.append("\n".join(lines) + "\n")
        (self.dir / "topics.yaml").write_text("---\n".join(text))

    def cli(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def plan(self) -> tuple[Path, dict[str, Any]]:
        """``plan DIR --format json --out PLAN``: the saved plan and its JSON."""
        path = self.dir.parent / f"plan-{time.monotonic_ns()}.json"
        code, out, err = self.cli("plan", str(self.dir), "--format", "json", "--out", str(path))
        assert code == 0, out + err
        return path, json.loads(path.read_text())

    def apply(self, plan: Path, *flags: str, expect: int = 0) -> str:
        code, out, err = self.cli("apply", "--plan", str(plan), "--yes", *flags)
        assert code == expect, f"exit {code}\n{out}{err}"
        return out + err

    def replan_is_empty(self) -> None:
        code, out, err = self.cli("plan", str(self.dir), "--detailed-exitcode")
        assert code == 0, f"a plan after apply must show no changes:\n{out}{err}"


def actions(plan: Mapping[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {a["topic"]: a for a in plan["actions"] if a["type"] == kind}


class Inspector:
    """The cluster as kafka-python's KafkaAdminClient sees it."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)

    def close(self) -> None:
        self.admin.close()

    def layout(self, topic: str) -> dict[int, tuple[tuple[int, ...], int]]:
        """partition -> (replicas, leader)."""
        [t] = self.admin.describe_topics([topic])
        assert t["error_code"] == 0, t
        return {
            p["partition_index"]: (tuple(p["replica_nodes"]), p["leader_id"])
            for p in t["partitions"]
        }

    def replicas(self, topic: str) -> Assignment:
        return {p: r for p, (r, _) in self.layout(topic).items()}

    def in_flight(self) -> set[tuple[str, int]]:
        return set(self.admin.list_partition_reassignments())

    def brokers(self) -> list[int]:
        return sorted(b["broker_id"] for b in self.admin.describe_cluster()["brokers"])

    def throttles(self) -> list[str]:
        """Every replication throttle on the cluster, read with DescribeConfigs: a
        ``*.replication.throttled.rate`` on any broker (a cluster-wide default shows there
        too, as DYNAMIC_DEFAULT_BROKER_CONFIG), a non-empty
        ``*.replication.throttled.replicas`` on any topic."""
        found = []
        brokers = [str(b) for b in self.brokers()]
        resources = [ConfigResource(ConfigResourceType.BROKER, b) for b in brokers]
        for b, r in zip(brokers, resources, strict=True):
            answer = self.admin.describe_configs([r], config_filter="all")
            for key, entry in answer.get("broker", {}).get(b, {}).items():
                if key.endswith("replication.throttled.rate"):
                    found.append(f"broker {b}: {key}={entry['value']}")
        topics = sorted(self.admin.list_topics())
        answer = self.admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics], config_filter="all"
        )
        for topic, configs in answer.get("topic", {}).items():
            for key, entry in configs.items():
                if key.endswith("replication.throttled.replicas") and entry["value"]:
                    found.append(f"topic {topic}: {key}={entry['value']}")
        return sorted(found)


def produce(bootstrap: str, topic: str, partitions: int, megabytes: float) -> None:
    """About ``megabytes`` of incompressible records spread over every partition, acks=all."""
    import os

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=20, batch_size=256 * 1024
    )
    try:
        size = 16 * 1024
        for i in range(int(megabytes * 1024 * 1024 / size)):
            producer.send(topic, value=os.urandom(size), partition=i % partitions)
        producer.flush(timeout=60)
    finally:
        producer.close(timeout=10)


_VERDICT = re.compile(
    r"Reassignment of partition (?P<tp>\S+) is (?P<state>completed|still in progress)"
)


def verify_reassignments(bootstrap: str, reassignment_json: Path) -> dict[tuple[str, int], str]:
    """Kafka's own ``kafka-reassign-partitions --verify --preserve-throttles`` on a
    reassignment JSON file (one JVM for every partition in it):
    ``(topic, partition) -> "completed" | "still in progress"``."""
    runtime = ensure_runtime()
    done = subprocess.run(
        [
            runtime.java,
            *runtime.logging_options(),
            "-cp",
            runtime.classpath,
            "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
            "--bootstrap-server",
            bootstrap.split(",")[0],
            "--verify",
            "--preserve-throttles",
            "--reassignment-json-file",
            str(reassignment_json),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    verdicts: dict[tuple[str, int], str] = {}
    for m in _VERDICT.finditer(done.stdout):
        topic, _, part = m["tp"].rpartition("-")
        verdicts[(topic, int(part))] = m["state"]
    assert verdicts, f"exit {done.returncode}\n{done.stdout}{done.stderr}"
    return verdicts
