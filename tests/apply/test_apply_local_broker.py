"""apply end to end against the local Kafka-protocol broker (Tansu), checked with kafka-python
directly, never through kgitops."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import kafka
import pytest

from tests.helpers import cluster_folder, run_cli


def write_cluster(root: Path, bootstrap: str, topics: str) -> Path:
    return cluster_folder(
        root / "local",
        "local",
        bootstrap=bootstrap,
        extra="unmanagedTopics: ignore\n",
        files={"topics.yaml": topics},
    )


def topic_doc(name: str, partitions: int, config: dict[str, str], delete: bool = False) -> str:
    lines = [
        "apiVersion: kgitops/v1",
        "kind: Topic",
        f"name: {name}",
        f"partitions: {partitions}",
        "replicationFactor: 1",
    ]
    if config:
        lines.append("config:")
        lines += [f'  {k}: "{v}"' for k, v in config.items()]
    if delete:
        lines.append("delete: true")
    return "\n".join(lines) + "\n"


@pytest.fixture
def admin(local_broker: str) -> Iterator[object]:
    client = kafka.KafkaAdminClient(bootstrap_servers=local_broker, client_id="apply-test")
    try:
        yield client
    finally:
        client.close()


def live_topics(admin: object, names: list[str]) -> dict[str, int]:
    meta = admin.describe_topics(names)  # type: ignore[attr-defined]
    return {t["name"]: len(t["partitions"]) for t in meta if t["error_code"] == 0}


def live_configs(admin: object, name: str) -> dict[str, str]:
    from kafka.admin import ConfigResource, ConfigResourceType

    res = admin.describe_configs(  # type: ignore[attr-defined]
        [ConfigResource(ConfigResourceType.TOPIC, name)], config_filter="all"
    )
    return {k: v["value"] for k, v in res["topic"].get(name, {}).items()}


def test_create_alter_delete_a_batch_then_messages_land_where_kgitops_partition_says(
    tmp_path: Path, local_broker: str, admin: object, topic_prefix: str
) -> None:
    names = [f"{topic_prefix}{i}" for i in range(5)]
    docs = "---\n".join(
        topic_doc(n, 3 + i, {"retention.ms": str(60000 * (i + 1))}) for i, n in enumerate(names)
    )
    d = write_cluster(tmp_path, local_broker, docs)

    code, out, err = run_cli("apply", str(d), "--yes")
    assert code == 0, out + err
    assert live_topics(admin, names) == {n: 3 + i for i, n in enumerate(names)}
    for i, n in enumerate(names):
        assert live_configs(admin, n).get("retention.ms") == str(60000 * (i + 1))
    code, out, err = run_cli("plan", str(d), "--detailed-exitcode")
    assert code == 0, out + err

    # alter: one config changed, one removed; delete the last topic (with permission)
    docs = "---\n".join(
        [
            topic_doc(names[0], 3, {"retention.ms": "123456"}),
            topic_doc(names[1], 4, {}),
            *(
                topic_doc(n, 3 + i, {"retention.ms": str(60000 * (i + 1))})
                for i, n in enumerate(names[2:4], start=2)
            ),
            topic_doc(names[4], 7, {}, delete=True),
        ]
    )
    d = write_cluster(tmp_path, local_broker, docs)
    code, out, err = run_cli("apply", str(d), "--yes")
    assert code == 1 and "--allow-delete" in err, out + err
    assert names[4] in live_topics(admin, names)
    code, out, err = run_cli("apply", str(d), "--yes", "--allow-delete")
    assert code == 0, out + err
    assert live_configs(admin, names[0]).get("retention.ms") == "123456"
    assert "retention.ms" not in live_configs(admin, names[1])
    assert names[4] not in live_topics(admin, names)
    code, out, err = run_cli("plan", str(d), "--detailed-exitcode")
    assert code == 0, out + err

    # messages with keys land in the partition `kgitops partition` predicts
    keys = [f"user-{i}" for i in range(200)]
    code, out, err = run_cli("partition", "--partitions", "5", *keys)
    assert code == 0, err
    predicted = dict(zip(keys, (int(x) for x in out.split()), strict=True))
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker)
    landed = {
        k: producer.send(names[2], key=k.encode(), value=b"x").get(timeout=10).partition
        for k in keys
    }
    producer.close()
    assert landed == predicted
    assert len(set(landed.values())) == 5


def test_dry_run_prints_requests_and_creates_nothing(
    tmp_path: Path, local_broker: str, admin: object, topic_prefix: str
) -> None:
    name = f"{topic_prefix}dry"
    d = write_cluster(tmp_path, local_broker, topic_doc(name, 2, {"cleanup.policy": "compact"}))
    code, out, err = run_cli("apply", str(d), "--dry-run")
    assert code == 0, err
    line = out.splitlines()[0]
    assert line.startswith("CreateTopics ")
    body = json.loads(line.removeprefix("CreateTopics "))
    assert body[0]["name"] == name and body[0]["config"] == {"cleanup.policy": "compact"}
    assert name not in live_topics(admin, [name])


def test_without_a_terminal_apply_refuses_unless_yes(
    tmp_path: Path, local_broker: str, admin: object, topic_prefix: str
) -> None:
    name = f"{topic_prefix}ask"
    d = write_cluster(tmp_path, local_broker, topic_doc(name, 1, {}))
    code, _, err = run_cli("apply", str(d))
    assert code == 1 and "--yes" in err
    assert name not in live_topics(admin, [name])


def test_the_summary_counts_the_requests_the_run_sent_to_the_broker(
    tmp_path: Path,
    local_broker: str,
    topic_prefix: str,
    count_requests: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = [f"{topic_prefix}{i}" for i in range(3)]
    d = write_cluster(tmp_path, local_broker, "---\n".join(topic_doc(n, 2, {}) for n in names))
    count_requests.clear()
    from kgitops.cluster.kafka import bootstrap

    clients: list[object] = []  # every kafka-python client kgitops opens bootstraps once
    opened = bootstrap.Connections.__init__

    def counted(self: object, **configs: object) -> None:
        clients.append(self)
        opened(self, **configs)  # type: ignore[arg-type]

    monkeypatch.setattr(bootstrap.Connections, "__init__", counted)
    code, out, err = run_cli("apply", str(d), "--yes")
    assert code == 0, out + err
    last = out.splitlines()[-1]
    head, _, listed = last.partition(" request(s) sent to the brokers: ")
    assert head.startswith("apply: 3 of 3 action(s) done; "), last
    assert listed.endswith(" (connection set-up aside)"), last
    ours = {
        api: int(n)
        for n, api in (
            p.split(" ") for p in listed.removesuffix(" (connection set-up aside)").split(", ")
        )
    }
    assert int(head.rsplit(" ", 1)[1]) == sum(ours.values())
    assert ours["CreateTopics"] == 1
    # what reached the broker, as kafka-python wrote it: the same, but for each connection's
    # set-up (ApiVersions) and each client's bootstrap Metadata (the plan's and the apply's
    # admin clients; a consumer and a producer of the owner records when a test before this
    # one left that topic on the shared broker)
    wire = dict(count_requests)
    assert wire.pop("ApiVersions") > 0
    assert len(clients) >= 2
    assert 0 < wire.pop("Metadata") - ours.pop("Metadata") <= len(clients)
    assert wire == ours
