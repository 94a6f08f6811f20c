"""The planner's fast paths give the plan its slow paths give.

* ``_leaders`` skips the under-replication rule for a partition whose ISR is its replica
  tuple itself (the state loaders share equal tuples): such a partition is never
  under-replicated, reassigning or not. A state whose ISR tuples are equal copies (nothing
  shared: every partition goes through ``is_under_replicated``) plans the same.
* ``topic_digest`` remembers the text of the partition ids ``0..n-1``: the digest of every
  id list, contiguous or not, is the one of the text the digest is documented to hash.
"""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st
from planner_builders import brokers, specs, state, topic

from kgitops.model import ClusterState, PartitionState, Reassignment, TopicState
from kgitops.plan.diff import compute_plan
from kgitops.plan.value import _Reprs, state_fingerprint, topic_digest

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
