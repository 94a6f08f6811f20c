"""kgitops.lock: deterministic text, exact round trip, positioned errors, staleness."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.errors import LockError
from kgitops.model import Broker
from kgitops.spec.lock import (
    Lock,
    LockEntry,
    dumps_lock,
    loads_lock,
    lock_differences,
    read_lock,
    require_fresh,
    write_lock,
)

BROKERS = (Broker(0, "az1"), Broker(1, "az2"), Broker(2, None))


def _lock() -> Lock:
    return Lock(
        {
            "b.topic": LockEntry("b.topic", 2, BROKERS, 12, 3, "rack-unaware"),
            "a": LockEntry("a", None, BROKERS[:2], 1, 1, "adopted"),
            "true": LockEntry("true", 0, BROKERS, 3, 2, "static"),
        }
    )


def test_the_lock_round_trips_exactly_and_is_sorted(tmp_path: Path) -> None:
    write_lock(str(tmp_path), _lock())
    text = (tmp_path / "kgitops.lock").read_text()
    assert read_lock(str(tmp_path)) == _lock()
    assert text.index('"a":') < text.index('"b.topic":') < text.index('"true":')
    assert dumps_lock(loads_lock(text)) == text


def test_broker_lists_are_stored_once() -> None:
    text = dumps_lock(_lock())
    assert text.count('{id: 0, rack: "az1"}') == 2  # two distinct broker sets


def test_a_missing_lock_reads_as_none(tmp_path: Path) -> None:
    assert read_lock(str(tmp_path)) is None


def test_malformed_yaml_names_the_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "kgitops.lock").write_text("version: 1\ntopics: [\n")
    with pytest.raises(LockError, match=r"kgitops.lock:3:1: invalid YAML"):
        read_lock(str(tmp_path))


def test_a_wrong_shape_says_how_to_fix_it() -> None:
    with pytest.raises(LockError, match="regenerate it with `kgitops plan --update-lock`"):
        loads_lock('version: 1\ntopics:\n  "t": {startIndex: -1}\n')
    with pytest.raises(LockError, match="unsupported lock version"):
        loads_lock("version: 7\n")


def test_differences_name_each_topic_and_field() -> None:
    old = _lock()
    new = Lock(
        {
            **old.entries,
            "b.topic": LockEntry("b.topic", 2, BROKERS[:2], 24, 3, "rack-unaware"),
            "c": LockEntry("c", 1, BROKERS, 1, 1, "rack-unaware"),
        }
    )
    assert lock_differences(old, new) == [
        "b.topic: partitions 12 -> 24, brokers [0, 1, 2] -> [0, 1]",
        "c: no entry in the lock",
    ]
    assert lock_differences(None, new) == ["kgitops.lock is missing"]
    require_fresh(old, old, ".")
    with pytest.raises(LockError, match="missing or stale"):
        require_fresh(old, new, ".")


@pytest.mark.parametrize("start", ["3", "7", "99999999999999999999"])
def test_a_start_index_not_below_the_entrys_broker_count_is_refused_at_the_lock_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start: str
) -> None:
    """3 brokers: start index 3 would be wrapped silently (Kafka's AdminUtils takes it modulo
    the broker count), 10**20 failed as 'cannot place' at the topic's replicationFactor; both
    are the lock's line, and plan changes nothing."""
    from kgitops.cli import main

    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Cluster\nname: demo\nsimulated:\n"
        "  stateFile: .state/demo.json\n  brokers: [{id: 0}, {id: 1}, {id: 2}]\n"
    )
    (tmp_path / "t.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Topic\nname: payments.orders\npartitions: 3\n"
        "replicationFactor: 2\n"
    )
    assert main(["plan", str(tmp_path), "--update-lock"]) == 0
    lock = tmp_path / "kgitops.lock"
    text = lock.read_text().replace("startIndex: 0", f"startIndex: {start}")
    lock.write_text(text)
    capsys.readouterr()
    assert main(["plan", str(tmp_path), "--update-lock"]) == 1
    err = capsys.readouterr().err
    line = text.splitlines().index(f"    startIndex: {start}") + 1
    assert err.splitlines() == [
        f"error: {lock}:{line}:17: topics.payments.orders.startIndex {start} is not below the "
        "number of brokers it was computed for (3); fix it, or delete the entry and run "
        "`kgitops plan --update-lock`"
    ]
    assert lock.read_text() == text
