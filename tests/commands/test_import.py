"""`kgitops import DIR`: adopting live topics writes files and lock entries that move nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgitops.cli import main
from kgitops.cluster.port import ConfigChange, NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.model import Broker, PartitionState, TopicState
from kgitops.placement.assignment import assign_replicas
from kgitops.plan.adopt import adopt, recover_start_index
from kgitops.spec.load import load_specs
from kgitops.spec.lock import read_lock
from tests.helpers import cluster_folder

RACKED = [Broker(0, "az1"), Broker(1, "az2"), Broker(2, "az3"), Broker(3, "az1")]
ORDERS = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 1
replicationFactor: 1
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return cluster_folder(tmp_path, brokers=RACKED)


def sim(folder: Path) -> SimulatedCluster:
    return SimulatedCluster.open(str(folder / ".state" / "demo.json"), RACKED)


def plan_exit(folder: Path) -> int:
    return main(["plan", str(folder), "--detailed-exitcode"])


def test_import_writes_files_and_lock_so_the_next_plan_is_empty(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics(
        [
            NewTopic("aware", assign_replicas(RACKED, 8, 3, start_index=2), {"retention.ms": "9"}),
            NewTopic("unaware", assign_replicas(RACKED, 5, 2, start_index=1, rack_aware=False)),
            NewTopic("same.rack", {0: (0, 3), 1: (1, 2)}),
            NewTopic("__consumer_offsets", {0: (0, 1)}),
        ]
    )
    s.alter_topic_configs(
        {"aware": ConfigChange(set={"leader.replication.throttled.replicas": "*"})}
    )
    assert main(["import", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "aware: 8 partition(s), RF 3; Kafka's rack-aware placement, start index 2" in out
    assert "unaware: 5 partition(s), RF 2; Kafka's rack-unaware placement, start index 1" in out
    # a throttle is not the topic's spec: it is not imported, and the plan takes it out
    assert "the next plan still has for the imported topics:\n  ~ remove_throttles aware" in out
    assert sorted(p.name for p in folder.glob("*.yaml")) == [
        "aware.yaml",
        "cluster.yaml",
        "same.rack.yaml",
        "unaware.yaml",
    ]
    specs = load_specs(str(folder))
    assert specs.errors == []
    aware = specs.topic("aware")
    assert aware is not None
    assert (aware.partitions, aware.replication_factor) == (8, 3)
    assert dict(aware.config) == {"retention.ms": "9"}  # the throttle is apply's, not git's
    lock = read_lock(str(folder))
    assert lock is not None
    assert lock.entries["aware"].start_index == 2
    assert lock.entries["aware"].placement == "rack-aware"
    assert lock.entries["unaware"].placement == "rack-unaware"
    assert lock.entries["same.rack"].placement == "adopted"
    assert plan_exit(folder) == 2  # only the leftover throttle, ~ remove_throttles aware


def test_include_internal_never_imports_kafkas_own_internal_topics(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec may not name ``__consumer_offsets`` (validate refuses it), so importing it would
    write a folder that no longer validates: ``--include-internal`` takes other ``__*``
    topics only (Connect's), and naming Kafka's own is one line, nothing written."""
    sim(folder).create_topics(
        [
            NewTopic("__consumer_offsets", {0: (0, 1)}),
            NewTopic("__transaction_state", {0: (1, 2)}),
            NewTopic("__connect-offsets", {0: (2, 3)}),
        ]
    )
    assert main(["import", str(folder), "--topic", "__consumer_offsets"]) == 1
    assert "never imports" in capsys.readouterr().err
    assert sorted(p.name for p in folder.glob("*.yaml")) == ["cluster.yaml"]
    assert main(["import", str(folder), "--include-internal"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in folder.glob("*.yaml")) == [
        "__connect-offsets.yaml",
        "cluster.yaml",
    ]
    specs = load_specs(str(folder))
    assert specs.errors == [], [str(d) for d in specs.diagnostics]
    assert plan_exit(folder) == 0, "adopting moved nothing, and no internal topic is unmanaged"


def test_a_topic_already_in_git_is_left_alone(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "orders.yaml").write_text(ORDERS)
    sim(folder).create_topics([NewTopic("orders", {0: (0,)})])
    assert main(["import", str(folder)]) == 0
    assert "nothing to import" in capsys.readouterr().out
    assert (folder / "orders.yaml").read_text() == ORDERS


def test_an_existing_file_is_never_overwritten(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "x.yaml").write_text(ORDERS)  # holds topic orders, not x
    sim(folder).create_topics([NewTopic("x", {0: (0,)}), NewTopic("orders", {0: (1,)})])
    assert main(["import", str(folder)]) == 1
    assert "exist but hold no valid Topic" in capsys.readouterr().err
    assert (folder / "x.yaml").read_text() == ORDERS


def test_dry_run_writes_nothing(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim(folder).create_topics([NewTopic("x", {0: (0, 1)})])
    assert main(["import", str(folder), "--dry-run"]) == 0
    assert 'name: "x"' in capsys.readouterr().out
    assert not (folder / "x.yaml").exists()
    assert not (folder / "kgitops.lock").exists()


def test_only_the_named_topics(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim(folder).create_topics([NewTopic("x", {0: (0,)}), NewTopic("y", {0: (1,)})])
    assert main(["import", str(folder), "--topic", "y"]) == 0
    assert not (folder / "x.yaml").exists()
    assert (folder / "y.yaml").exists()
    assert main(["import", str(folder), "--topic", "nope"]) == 1
    assert "no such topic on cluster demo: nope" in capsys.readouterr().err


def test_after_import_an_rf_raise_is_a_pure_append(folder: Path) -> None:
    sim(folder).create_topics([NewTopic("a", assign_replicas(RACKED, 8, 3, start_index=1))])
    main(["import", str(folder)])
    text = (folder / "a.yaml").read_text().replace("replicationFactor: 3", "replicationFactor: 4")
    (folder / "a.yaml").write_text(text)
    from kgitops.commands._planning import plan_directory

    plan = plan_directory(str(folder)).plan
    (action,) = plan.actions
    for move in action.to_json()["moves"].values():
        assert move["to"][:3] == move["from"]


def test_an_assignment_nothing_explains_is_written_static_if_that_is_what_it_takes() -> None:
    topic = TopicState("t", {0: PartitionState((0, 1)), 1: PartitionState((1, 2, 3))})
    a = adopt(topic, RACKED)
    assert a.stage == "static"
    assert a.spec.assignment == ((0, 1), (1, 2, 3))


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(1, 9),
    parts=st.integers(1, 30),
    data=st.data(),
    racks=st.booleans(),
)
def test_kafkas_own_placement_is_always_recognised(
    n: int, parts: int, data: st.DataObject, racks: bool
) -> None:
    brokers = [Broker(i * 2, f"r{i % 3}" if racks else None) for i in range(n)]
    rf = data.draw(st.integers(1, n))
    start = data.draw(st.integers(0, n - 1))
    assignment = assign_replicas(brokers, parts, rf, start_index=start)
    found = recover_start_index(assignment, brokers, racks)
    assert found is not None
    assert assign_replicas(brokers, parts, rf, start_index=found) == assignment


def test_a_topic_being_reassigned_is_imported_with_a_note(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sim(folder)
    s.create_topics([NewTopic("m", {0: (0, 1)})])
    s.set_size("m", 10**9)
    s.alter_reassignments({("m", 0): (2, 1)})
    assert main(["import", str(folder), "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "1 partition(s) are being reassigned" in captured.err
    assert "# note: 1 partition(s) are being reassigned" in captured.out


def test_importing_some_topics_works_under_unmanaged_topics_error(folder: Path) -> None:
    cluster_folder(folder, brokers=RACKED, extra="unmanagedTopics: error\n")
    sim(folder).create_topics([NewTopic("x", {0: (0,)}), NewTopic("y", {0: (1,)})])
    assert main(["import", str(folder), "--topic", "x"]) == 0
    assert (folder / "x.yaml").exists()


def test_import_summary_names_only_the_access_parts_it_could_read(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster that does not serve DescribeUserScramCredentials (or answers it too slowly):
    the summary does not claim every SCRAM user is in git next to 'users not imported'."""
    from kgitops.errors import AccessUnsupported

    sim(folder).create_topics([NewTopic("orders", {0: (0,)})])

    def refused(self: SimulatedCluster, apis: object) -> None:
        if "DescribeUserScramCredentials" in apis:  # type: ignore[operator]
            raise AccessUnsupported("DescribeUserScramCredentials", "did not answer it")

    real_describe = SimulatedCluster.describe

    def like_kafka(self: SimulatedCluster, topics: object) -> object:
        # a real cluster's describe() carries no access: import reads each part itself
        return dataclasses.replace(real_describe(self, topics), access=None)  # type: ignore[arg-type]

    monkeypatch.setattr(SimulatedCluster, "describe", like_kafka)
    monkeypatch.setattr(SimulatedCluster, "probe_access", refused)
    assert main(["import", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "access: every ACL and quota of the cluster is in git\n" in out
    assert "users not imported: did not answer it" in out
    assert "SCRAM user" not in out
    assert not (folder / "access.yaml").exists()


def test_a_topic_named_with_a_leading_dot_is_written_where_the_loader_reads_it(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``.x`` is a legal Kafka name; ``.x.yaml`` would be a hidden file the loader skips, so
    the next plan would call the topic unmanaged. Its file is ``%2Ex.yaml``, and the round
    trip (import, load, plan) finds every topic and changes nothing."""
    sim(folder).create_topics(
        [NewTopic(".x", {0: (0, 1)}), NewTopic("..y", {0: (1, 2)}), NewTopic("x", {0: (2,)})]
    )
    assert main(["import", str(folder)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".yaml") == [
        "%2E.y.yaml",
        "%2Ex.yaml",
        "cluster.yaml",
        "x.yaml",
    ]
    specs = load_specs(str(folder))
    assert specs.errors == [], [str(d) for d in specs.diagnostics]
    assert sorted(t.name for t in specs.topics) == ["..y", ".x", "x"]
    lock = read_lock(str(folder))
    assert lock is not None and sorted(lock.entries) == ["..y", ".x", "x"]
    assert plan_exit(folder) == 0
    assert main(["import", str(folder)]) == 0
    assert "nothing to import" in capsys.readouterr().out


class _Killed(BaseException):
    """Stands for SIGTERM's default action: nothing after it runs."""


def test_import_killed_between_files_is_completed_by_a_rerun(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill after the first topic file: the re-run writes the rest and every topic has its
    lock entry (Kafka's placement recovered), so ``plan --locked`` passes and nothing moves."""
    import kgitops.files

    s = sim(folder)
    s.create_topics(
        [
            NewTopic("a", assign_replicas(RACKED, 8, 3, start_index=2)),
            NewTopic("b", assign_replicas(RACKED, 4, 2, start_index=1)),
            NewTopic("c", assign_replicas(RACKED, 3, 3, start_index=3)),
        ]
    )
    real = kgitops.files.write_atomic
    written: list[str] = []

    def dying(path: str, data: str | bytes, **kw: object) -> None:
        if path.endswith(".yaml") and written:
            raise _Killed
        real(path, data, **kw)  # type: ignore[arg-type]
        if path.endswith(".yaml"):
            written.append(path)

    monkeypatch.setattr(kgitops.files, "write_atomic", dying)
    with pytest.raises(_Killed):
        main(["import", str(folder)])
    monkeypatch.setattr(kgitops.files, "write_atomic", real)
    assert [Path(p).name for p in written] == ["a.yaml"]
    assert main(["import", str(folder)]) == 0
    capsys.readouterr()
    lock = read_lock(str(folder))
    assert lock is not None
    assert {n: (e.placement, e.start_index) for n, e in lock.entries.items()} == {
        "a": ("rack-aware", 2),
        "b": ("rack-aware", 1),
        "c": ("rack-aware", 3),
    }
    assert main(["plan", str(folder), "--locked", "--detailed-exitcode"]) == 0


def test_a_rerun_adds_the_lock_entries_of_files_an_earlier_import_left_without_them(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files written, lock not (an import killed by an older version, which wrote the lock
    last): the re-run adds the entries import would have written (Kafka's placement and start
    index recovered); a file a person wrote that import would not have written gets none."""
    s = sim(folder)
    s.create_topics(
        [
            NewTopic("a", assign_replicas(RACKED, 8, 3, start_index=2)),
            NewTopic("odd", {0: (0, 3), 1: (1, 2)}),
            NewTopic("hand", assign_replicas(RACKED, 4, 2, start_index=1)),
        ]
    )
    (folder / "hand.yaml").write_text(
        ORDERS.replace("orders", "hand").replace("partitions: 1", "partitions: 6")
    )
    assert main(["import", str(folder)]) == 0
    full = read_lock(str(folder))
    assert full is not None and sorted(full.entries) == ["a", "odd"]
    (folder / "kgitops.lock").unlink()
    capsys.readouterr()
    assert main(["import", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "added the lock entries of 2 topic(s) whose files were already in" in out
    assert read_lock(str(folder)) == full  # hand.yaml's topic stays the planner's to record
