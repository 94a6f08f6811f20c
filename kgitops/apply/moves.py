"""Where one planned move stands, without I/O (``MoveOptions`` only carries the journal and
the throttle record the ``Reassigner`` writes): before apply submits it (``classify``), after the
controller stopped listing it (``ended_on_target``), once cancelled (``reverted``), and the
throttles a move that ended unwatched left behind (``leftover_throttles``); how a run of
moves goes (``MoveOptions``) and what it ended with (``ReassignResult``).
``reassign.Reassigner`` asks these as it runs the moves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field

from kgitops.apply.journal import MoveJournal
from kgitops.apply.progress import Progress
from kgitops.apply.record import ThrottleRecord
from kgitops.errors import ClusterError, ClusterRequestError
from kgitops.model import ClusterState, ReassignmentSettings
from kgitops.names import THROTTLE_FOLLOWER_REPLICAS, THROTTLE_LEADER_REPLICAS
from kgitops.plan.actions import Move
from kgitops.plan.throttles import MoveThrottle, parse_entries

TP = tuple[str, int]


@dataclass(frozen=True)
class MoveOptions:
    """How an apply moves replicas, as ``apply_plan`` was asked: the cluster's reassignment
    settings, where progress goes, whether to wait for the moves (polling every
    ``poll_seconds``) or leave one window running (``--no-wait``), whether requests are only
    recorded (``dry_run``), the journal of the moves it starts and the record of the
    throttles it sets (a dry run writes none). ``apply_plan`` makes one; its run and its
    ``Reassigner`` read it."""

    settings: ReassignmentSettings
    progress: Progress
    _: KW_ONLY
    wait: bool
    poll_seconds: float
    dry_run: bool = False
    journal: MoveJournal | None = None
    record: ThrottleRecord | None = None


@dataclass
class ReassignResult:
    """Per topic: moves that failed, moves left in flight, partitions deferred to a later
    apply (``--no-wait``: past its one window); notes."""

    failed: dict[str, list[str]] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)
    deferred: dict[str, list[int]] = field(default_factory=dict)
    detail: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fatal: ClusterError | None = None


#: Polls a partition gets after the controller stopped listing its move while the broker's
#: Metadata still shows neither the target nor target + removing, before it counts as failed.
RECHECKS = 3

#: At the timeout, a move an earlier apply left running (``--no-wait``) and no action of this
#: plan names is not this apply's to throw away (the time gate counted only the plan's moves):
#: it stays in the window, throttled, as a move a cancel could not stop does, with this reason.
LEFT_RUNNING = (
    "moving since an earlier apply, so left running, still throttled: `kgitops apply` again "
    "waits for it"
)


def ended_on_target(replicas: tuple[int, ...] | None, target: tuple[int, ...]) -> bool | None:
    """Whether a move the controller no longer lists (ListPartitionReassignments, the
    controller's own view) ended on ``target``, judged from a broker's Metadata, which lags
    the controller: False when the replicas are the target; True when they are still
    target + the removing replicas (the broker has not yet seen the completion: it is done,
    and its leader must be elected once the broker catches up); None when they are neither
    (ask again before calling it a failure)."""
    if replicas is None:
        return None
    if replicas == target:
        return False
    if replicas[: len(target)] == target:
        return True
    return None


def reverted(source: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...]:
    """The replicas a cancelled move from ``source`` to ``target`` goes back to in KRaft:
    AR was ``target + sorted(source - target)`` (``PartitionReassignmentReplicas``) and a
    cancel keeps AR minus the adding replicas, in AR's order (``PartitionReassignmentRevert``).
    The set is the source's, the order need not be::

        reverted((1, 2), (1, 3)) == (1, 2)
        reverted((2, 1), (3, 4)) == (1, 2)      # preferred leader 2 -> 1
        reverted((3, 1, 2), (2, 4)) == (2, 1, 3)
    """
    removing = sorted(set(source) - set(target))
    return tuple(b for b in (*target, *removing) if b in source)


def not_in_flight(err: ClusterError | None) -> bool:
    """A cancel answered NO_REASSIGNMENT_IN_PROGRESS: the move is no longer (or never was)
    in flight -- not a failure to cancel."""
    return isinstance(err, ClusterRequestError) and err.code == "NO_REASSIGNMENT_IN_PROGRESS"


def in_flight_target(replicas: tuple[int, ...], removing: tuple[int, ...]) -> tuple[int, ...]:
    """Kafka reports a partition under reassignment with replicas = target + removing."""
    return tuple(r for r in replicas if r not in removing)


def classify(
    move: Move,
    replicas: tuple[int, ...] | None,
    flying: tuple[tuple[int, ...], ...] | None,
    offline: frozenset[int] | set[int],
    ours: bool = True,
) -> tuple[str, str]:
    """Where one planned move stands before apply submits anything. Pure.

    ``replicas`` is the partition's live replica list (None: the partition is gone);
    ``flying`` Kafka's (replicas, adding, removing) when a reassignment is in flight.
    Returns (verdict, why) with verdict one of ``resume`` (already moving to the target:
    wait, never submit twice), ``done`` (already on the target), ``queue`` (submit it),
    ``fail`` (why says what). ``ours``: whether the move in flight (if any) is one kgitops
    started (``kgitops.apply.journal``); another tool's is never waited for nor re-targeted::

        classify(Move((1, 2), (1, 3)), (1, 2), None, set())          -> ("queue", "")
        classify(Move((1, 2), (1, 3)), (1, 3), None, set())          -> ("done", "")
        classify(Move((1, 2), (1, 3)), (1, 3, 2), ((1, 3, 2), (3,), (2,)), set())
                                                                       -> ("resume", "")
        classify(Move((1, 2), (1, 3)), (1, 2), None, {3})            -> ("fail", "target ...")
    """
    if replicas is None:
        return "fail", "the partition does not exist"
    down = sorted(set(move.target) & set(offline))
    if flying is not None and not ours:
        target = list(in_flight_target(flying[0], flying[2]))
        return "fail", (
            f"a reassignment kgitops did not start is in flight (to {target}); left alone "
            "(not waited for, not cancelled): plan again once it has finished"
        )
    if flying is not None and in_flight_target(flying[0], flying[2]) == move.target:
        return "resume", ""
    if flying is None and replicas == move.target:
        return "done", ""
    if down:
        return "fail", f"target broker(s) {down} offline; not submitted"
    if flying is None and replicas != move.source:
        return (
            "fail",
            f"replicas are {list(replicas)}, the plan expected {list(move.source)}; plan again",
        )
    return "queue", ""


def leftover_throttles(state: ClusterState, ended: Iterable[TP]) -> list[MoveThrottle]:
    """The throttles still on the cluster for moves of ours that ``ended`` while no apply
    watched them (after the plan that left them in place was made): each partition's
    entries in its topic's leader list (as sources) and follower list (as added replicas).
    No move of such a partition is in flight, so none of them is needed any more::

        leader "2:2,2:3,2:4,3:1", follower "2:1", partition 2 ended -> source (2, 3, 4),
        adding (1,)
    """
    out = []
    for topic, p in sorted(ended):
        t = state.topics.get(topic)
        if t is None:
            continue
        leader = parse_entries(t.config.get(THROTTLE_LEADER_REPLICAS)) or frozenset()
        follower = parse_entries(t.config.get(THROTTLE_FOLLOWER_REPLICAS)) or frozenset()
        source = tuple(sorted(b for q, b in leader if q == p))
        adding = tuple(sorted(b for q, b in follower if q == p))
        if source or adding:
            out.append(MoveThrottle(topic, p, source, adding))
    return out
