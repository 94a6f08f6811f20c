"""The planner's fast paths give the plan its slow paths give.

* ``_leaders`` skips the under-replication rule for a partition whose ISR is its replica
  tuple itself (the state loaders share equal tuples): such a partition is never
  under-replicated, reassigning or not. A state whose ISR tuples are equal copies (nothing
  shared: every partition goes through ``is_under_replicated``) plans the same.
* ``topic_digest`` remembers the text of the partition ids ``0..n-1``: the digest of every
  id list, contiguous or not, is the one of the text the digest is documented to hash.
* A state file is read into ``PartitionTable`` columns (``read_state``), which the diff and
  the digests read without building a PartitionState per partition, and a topic whose ISRs
  are its replicas and whose leaders are the preferred ones is ``settled`` (no election or
  under-replication pass): the table state equals the dict state and plans as it does, in
  every mode, a leader of -1 included.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from planner_builders import brokers, specs, state, topic

from kgitops.cluster.snapshot import read_state, state_to_json
from kgitops.model import (
    ClusterState,
    PartitionState,
    PartitionTable,
    Reassignment,
    TopicState,
)
from kgitops.plan.diff import compute_plan
from kgitops.plan.fingerprint import _Reprs, state_fingerprint, topic_digest

BROKERS = brokers(6, ["a", "b", "c"])


@st.composite
def partitions(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int | None]:
    """(replicas, isr, leader): an ISR equal to the replicas, a subset, or another order."""
    replicas = tuple(draw(st.permutations(range(6)))[: draw(st.integers(1, 4))])
    kind = draw(st.sampled_from(["same", "subset", "reordered"]))
    if kind == "same":
        isr = replicas
    elif kind == "subset":
        isr = tuple(b for b in replicas if draw(st.booleans())) or replicas[:1]
    else:
        isr = tuple(reversed(replicas))
    leader = draw(st.sampled_from([None, *isr]))
    return replicas, isr, leader


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, list[str]]:
    """A state of a few topics (some reassigning), the ISR tuples shared with the replicas."""
    topics = []
    moves: dict[str, dict[int, Reassignment]] = {}
    for i in range(draw(st.integers(1, 4))):
        name = f"t{i}"
        parts = {}
        for p in range(draw(st.integers(1, 6))):
            replicas, isr, leader = draw(partitions())
            parts[p] = PartitionState(replicas, isr, leader, 100)
            if draw(st.integers(0, 4)) == 0:
                removing = replicas[-1:] if len(replicas) > 1 else ()
                moves.setdefault(name, {})[p] = Reassignment((), removing, None)
        topics.append(TopicState(name, parts, {}))
    base = state(BROKERS, *topics)
    return ClusterState(brokers=base.brokers, topics=base.topics, reassignments=moves), [
        t.name for t in topics
    ]


def _unshared(cluster: ClusterState) -> ClusterState:
    """The same state with every ISR an equal copy, never the replica tuple itself."""
    topics = {
        name: TopicState(
            name,
            {
                p: PartitionState(
                    ps.replicas,
                    None if ps.isr is None else tuple(list(ps.isr)),
                    ps.leader,
                    ps.size_bytes,
                )
                for p, ps in t.partitions.items()
            },
            t.config,
        )
        for name, t in cluster.topics.items()
    }
    return ClusterState(brokers=cluster.brokers, topics=topics, reassignments=cluster.reassignments)


@settings(max_examples=60, deadline=None)
@given(clusters(), st.sampled_from([False, True]))
def test_shared_isr_tuples_plan_as_equal_copies(
    drawn: tuple[ClusterState, list[str]], rf3: bool
) -> None:
    cluster, names = drawn
    unshared = _unshared(cluster)
    for t in unshared.topics.values():  # the slow path is the one taken
        assert all(ps.isr is not ps.replicas for ps in t.partitions.values())
    desired = specs(*(topic(n, len(cluster.topics[n].partitions), 3 if rf3 else 2) for n in names))
    fast, fast_lock = compute_plan(desired, cluster, None)
    slow, slow_lock = compute_plan(desired, unshared, None)
    assert fast.to_json() == slow.to_json()
    assert fast_lock == slow_lock


@settings(max_examples=150, deadline=None)
@given(st.sets(st.integers(0, 40), min_size=0, max_size=30), st.integers(0, 3))
def test_digest_of_partition_ids_is_their_text(ids: set[int], offset: int) -> None:
    parts = {p + offset: PartitionState((1, 2)) for p in ids}
    cluster = state(BROKERS, TopicState("t", parts, {"retention.ms": "5"}))
    ordered = sorted(parts)
    text = ";".join(["(1, 2)"] * len(ordered))
    expected = f"{ordered!r}|{text}|{[('retention.ms', '5')]!r}"
    want = "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    reprs = _Reprs()
    assert topic_digest(cluster, "t", reprs) == want
    assert topic_digest(cluster, "t", reprs) == want  # remembered: the same text
    assert state_fingerprint(cluster, ["t"])[1] == {"t": want}


@st.composite
def settled_or_not(draw: st.DrawFn) -> tuple[ClusterState, list[str]]:
    """``clusters()``, with some topics entirely in sync on their preferred leaders."""
    cluster, names = draw(clusters())
    topics = dict(cluster.topics)
    for name in names:
        if draw(st.booleans()):
            t = topics[name]
            topics[name] = TopicState(
                name,
                {
                    p: PartitionState(ps.replicas, ps.replicas, ps.replicas[0], ps.size_bytes)
                    for p, ps in t.partitions.items()
                },
                t.config,
            )
    return ClusterState(
        brokers=cluster.brokers, topics=topics, reassignments=cluster.reassignments
    ), names


@settings(max_examples=80, deadline=None)
@given(
    settled_or_not(),
    st.sampled_from([False, True]),
    st.sampled_from(["placed", "rebalance", "leaders", "drain"]),
    st.booleans(),
)
def test_a_state_read_into_tables_plans_as_the_dict_state(
    drawn: tuple[ClusterState, list[str]], rf3: bool, mode: str, minus_one: bool
) -> None:
    cluster, names = drawn
    data = state_to_json(cluster)
    data.pop("clusterId")  # another program's file: no clusterId
    for t in data["topics"].values():  # Kafka's -1 for no leader, as another program writes it
        for p in t["partitions"].values():
            if minus_one and "leader" in p and p["leader"] is None:
                p["leader"] = -1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.json"
        path.write_text(json.dumps(data))
        read = read_state(str(path))
    assert all(isinstance(t.partitions, PartitionTable) for t in read.topics.values())
    assert read.topics == cluster.topics  # a table equals the dict of its partitions
    for name, t in read.topics.items():
        table = t.partitions
        assert isinstance(table, PartitionTable)
        assert table.settled == all(
            ps.isr == ps.replicas and ps.leader == ps.replicas[0]
            for ps in cluster.topics[name].partitions.values()
        )
    extra = {"decommission": (0,)} if mode == "drain" else {}
    desired = specs(
        *(topic(n, len(cluster.topics[n].partitions), 3 if rf3 else 2) for n in names), **extra
    )
    flags = {"rebalance": mode == "rebalance", "leaders": mode == "leaders"}
    tables, tables_lock = compute_plan(desired, read, None, **flags)
    dicts, dicts_lock = compute_plan(desired, cluster, None, **flags)
    assert tables.to_json() == dicts.to_json()
    assert tables_lock == dicts_lock


def test_a_partition_table_is_the_mapping_of_its_partitions() -> None:
    r1, r2 = (1, 2), (2, 1)
    table = PartitionTable([r1, r2], [r1, (2,)], [1, None], [10, None])
    plain = {0: PartitionState(r1, r1, 1, 10), 1: PartitionState(r2, (2,), None, None)}
    assert table == plain and plain == table and dict(table) == plain
    assert list(table) == [0, 1] and len(table) == 2 and repr(table) == repr(plain)
    assert 1 in table and 2 not in table and -1 not in table and "0" not in table
    assert table.get(2) is None and table.get(-1) is None
    for missing in (2, -1, "0", None):
        try:
            table[missing]  # type: ignore[index]
        except KeyError:
            continue
        raise AssertionError(f"{missing!r} found")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet='0123456789, :[]x\x00"é', max_size=4),
        st.lists(st.integers(-(2**70), 2**70), max_size=4) | _JSON,
        max_size=4,
    )
    | _JSON,
    st.dictionaries(st.text(max_size=3), _JSON, max_size=3),
    st.booleans(),
)
def test_an_assignment_encoded_apart_gives_the_standard_text(
    assignment: object, rest: dict[str, object], slot_in_rest: bool
) -> None:
    """render_json encodes an action's ``assignment`` with msgspec where that gives the
    standard encoder's text, and falls back to it for anything else (floats, escapes,
    non-ASCII, the slot's own text elsewhere in the action)."""
    from kgitops.render.text import _SLOT, _dumps, _dumps_item

    item = {**rest, "assignment": assignment}
    if slot_in_rest:
        item["config"] = {"x": _SLOT}
    assert _dumps_item(item) == _dumps(item)
    table = {"type": "create_topic", "assignment": {str(p): [p, p + 1] for p in range(3)}}
    assert _dumps_item(table) == _dumps(table)


def _planned(desired: object, cluster: ClusterState, general: bool, **flags: bool) -> object:
    """The plan and lock, by ``update_topic``'s short path for a topic as its spec wants it,
    or (``general``) by the general path only."""
    from unittest import mock

    from kgitops.plan import diff_topic

    if not general:
        return compute_plan(desired, cluster, None, **flags)  # type: ignore[arg-type]
    with mock.patch.object(diff_topic, "_as_spec_wants", lambda *args: False):
        return compute_plan(desired, cluster, None, **flags)  # type: ignore[arg-type]


@st.composite
def mostly_as_wanted(draw: st.DrawFn) -> tuple[ClusterState, list[str], list[int]]:
    """A state of a few topics placed as Kafka places them (what a spec wants), some
    partitions then changed: another replica list, an ISR short of a replica, a leader off
    the preferred one, a reassignment in flight; and each topic's replication factor."""
    from kgitops.placement.assignment import assign_replicas

    topics, rfs = [], []
    moves: dict[str, dict[int, Reassignment]] = {}
    for i in range(draw(st.integers(1, 4))):
        name, n, rf = f"t{i}", draw(st.integers(1, 8)), draw(st.integers(1, 3))
        placed = assign_replicas(
            BROKERS, n, rf, start_index=draw(st.integers(0, 5)), rack_aware=draw(st.booleans())
        )
        parts = {}
        for p, replicas in placed.items():
            change = draw(st.sampled_from(["none"] * 6 + ["replicas", "isr", "leader", "moving"]))
            if change == "replicas":
                replicas = tuple(draw(st.permutations(range(6)))[: draw(st.integers(1, 4))])
            isr = replicas[:-1] or replicas if change == "isr" else replicas
            leader = isr[-1] if change == "leader" else replicas[0]
            parts[p] = PartitionState(replicas, isr, leader, 100)
            if change == "moving":
                moves.setdefault(name, {})[p] = Reassignment((), replicas[-1:], None)
        topics.append(TopicState(name, parts, {}))
        rfs.append(rf)
    base = state(BROKERS, *topics)
    cluster = ClusterState(brokers=base.brokers, topics=base.topics, reassignments=moves)
    return cluster, [t.name for t in topics], rfs


@settings(max_examples=150, deadline=None)
@given(
    mostly_as_wanted(),
    st.sampled_from(["placed", "placed", "rebalance", "leaders", "drain"]),
    st.lists(st.sampled_from([0, 0, 0, 1]), min_size=4, max_size=4),
    st.sampled_from(["rack-aware", "rack-unaware", "rack-unaware", None]),
    st.booleans(),
)
def test_a_topic_as_its_spec_wants_plans_as_by_the_general_path(
    drawn: tuple[ClusterState, list[str], list[int]],
    mode: str,
    more: list[int],
    placement: str | None,
    tables: bool,
) -> None:
    """``update_topic`` skips building the mapping of a topic's replicas when the plan
    only places what the spec changes and the topic needs nothing: the plan and lock are
    the general path's, for states read into tables or held as dicts, topics with more
    partitions wanted, reassignments in flight, every mode."""
    cluster, names, rfs = drawn
    if tables:
        data = state_to_json(cluster)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "state.json"
            path.write_text(json.dumps(data))
            cluster = read_state(str(path))
    extra = {"decommission": (0,)} if mode == "drain" else {}
    kw = {} if placement is None else {"placement": placement}
    desired = specs(
        *(
            topic(n, len(cluster.topics[n].partitions) + more[i], rfs[i], **kw)
            for i, n in enumerate(names)
        ),
        **extra,
    )
    flags = {"rebalance": mode == "rebalance", "leaders": mode == "leaders"}
    short, short_lock = _planned(desired, cluster, False, **flags)  # type: ignore[misc]
    general, general_lock = _planned(desired, cluster, True, **flags)  # type: ignore[misc]
    assert short.to_json() == general.to_json()
    assert short_lock == general_lock


def test_a_topic_as_its_spec_wants_takes_the_short_path() -> None:
    """The case the short path is for: a topic placed as its spec wants, one leader off its
    preferred replica (an election, the short path's only action), one to move."""
    from unittest import mock

    from kgitops.plan import diff_topic

    cluster = state(
        BROKERS,
        TopicState(
            "kept",
            {
                0: PartitionState((0, 1, 2), (0, 1, 2), 1, 10),
                1: PartitionState((1, 2, 3), (1, 2, 3), 1, 10),
            },
            {},
        ),
        TopicState("moved", {0: PartitionState((0, 3), (0, 3), 0, 10)}, {}),
    )
    desired = specs(topic("kept", 2, 3), topic("moved", 1, 3))
    answers: list[bool] = []
    real = diff_topic._as_spec_wants

    def spy(*args: object) -> bool:
        answers.append(real(*args))  # type: ignore[arg-type]
        return answers[-1]

    with mock.patch.object(diff_topic, "_as_spec_wants", spy):
        short, _ = compute_plan(desired, cluster, None)  # type: ignore[arg-type]
    assert answers == [True, False]
    general, _ = _planned(desired, cluster, True)  # type: ignore[misc]
    assert short.to_json() == general.to_json()
    assert [a["type"] for a in short.to_json()["actions"]] == ["reassign", "elect_leaders"]
    # the balancer's modes and a drain take every topic the general way
    for extra, flags in (
        ({}, {"rebalance": True}),
        ({}, {"leaders": True}),
        ({"decommission": (5,)}, {}),
    ):
        answers.clear()
        with mock.patch.object(diff_topic, "_as_spec_wants", spy):
            compute_plan(specs(topic("kept", 2, 3), **extra), cluster, None, **flags)  # type: ignore[arg-type]
        assert answers == [False], (extra, flags)
