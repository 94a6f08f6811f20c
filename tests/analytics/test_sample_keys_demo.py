"""The end-to-end demo on the local Tansu broker: keys produced to a topic, sampled with
``kgitops sample-keys``, analysed, and an expansion plan whose markdown shows the share of
keys and messages that move."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kgitops.cli import main
from kgitops.placement.partitioner import partition_for
from tests.analytics.kafka_topics import create_topic
from tests.helpers import cluster_folder

KEYS = [f"account-{i % 120}" for i in range(1500)] + ["whale"] * 300


def _produce(bootstrap: str, topic: str, partitions: int) -> None:
    import kafka

    create_topic(bootstrap, topic, partitions)
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for i, key in enumerate(KEYS):
            producer.send(topic, key=key.encode(), value=b"v" * (i % 40))
        for _ in range(20):
            producer.send(topic, key=None, value=b"no key")
        producer.flush()
    finally:
        producer.close()


def _cluster(folder: Path, bootstrap: str, topic: str, partitions: int) -> None:
    orders = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {topic}\npartitions: {partitions}\n"
        "replicationFactor: 1\nkeys:\n  sample: samples/orders.parquet\n  column: key\n"
        "  sizeColumn: bytes\n"
    )
    cluster_folder(
        folder,
        "dev",
        bootstrap=bootstrap,
        extra="unmanagedTopics: ignore\n",
        files={"orders.yaml": orders},
    )


def test_sample_keys_reads_every_key_and_size_the_producer_sent(
    local_broker: str, topic_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_prefix + "sampled"
    _produce(local_broker, topic, 3)
    folder = tmp_path / "dev"
    _cluster(folder, local_broker, topic, 3)
    assert main(["sample-keys", str(folder), "--topic", topic, "--max", "100000"]) == 0
    table = pq.read_table(folder / "samples" / "orders.parquet").to_pydict()
    keys = Counter(None if k is None else k.decode() for k in table["key"])
    assert keys == Counter([*KEYS, *[None] * 20])
    assert sum(table["bytes"]) == sum(len(k) + i % 40 for i, k in enumerate(KEYS)) + 20 * 6
    assert "wrote 1,820 messages" in capsys.readouterr().err


def test_sample_keys_stops_at_max_and_names_a_missing_topic(
    local_broker: str, topic_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_prefix + "bounded"
    _produce(local_broker, topic, 2)
    folder = tmp_path / "dev"
    _cluster(folder, local_broker, topic, 2)
    out = tmp_path / "s.parquet"
    assert (
        main(["sample-keys", str(folder), "--topic", topic, "--max", "500", "--out", str(out)]) == 0
    )
    assert pq.read_metadata(out).num_rows == 500
    code = main(
        [
            "sample-keys",
            str(folder),
            "--topic",
            topic_prefix + "absent",
            "--max",
            "5",
            "--out",
            str(out),
            "--timeout",
            "10",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "does not exist" in err and "Traceback" not in err


@pytest.mark.spark
def test_demo_produce_sample_analyse_and_plan_an_expansion(
    spark: Any,
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KGITOPS_CACHE_DIR", str(tmp_path / "cache"))
    topic = topic_prefix + "orders"
    _produce(local_broker, topic, 3)
    folder = tmp_path / "dev"
    _cluster(folder, local_broker, topic, 6)  # the change under review: 3 -> 6 partitions
    assert main(["sample-keys", str(folder), "--topic", topic, "--max", "10000"]) == 0
    sample = folder / "samples" / "orders.parquet"

    report_file = tmp_path / "report.json"
    assert (
        main(
            [
                "analyze",
                "keys",
                "--input",
                str(sample),
                "--partitions",
                "3,6",
                "--size-column",
                "bytes",
                "--out",
                str(report_file),
            ]
        )
        == 0
    )
    report = json.loads(report_file.read_text())
    moved = [k for k in set(KEYS) if partition_for(k, 3) != partition_for(k, 6)]
    move = report["moves"][0]
    assert (move["from"], move["to"]) == (3, 6)
    assert move["movedKeys"] == len(moved)
    assert move["movedMessages"] == sum(1 for k in KEYS if k in set(moved))
    assert report["nullKeys"] == 20 and report["hotKeys"][0]["key"] == "whale"
    capsys.readouterr()

    assert main(["plan", str(folder), "--format", "markdown"]) == 0
    plan_md = capsys.readouterr().out
    key_share = f"{move['keyShare']:.1%}"
    msg_share = f"{move['messageShare']:.1%}"
    assert "KEY_REMAP" in plan_md or "remap" in plan_md.lower()
    assert f"{key_share} of keys and {msg_share} of messages" in plan_md
