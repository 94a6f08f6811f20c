"""The simulated cluster's clock and its brokers' lives: time passing (replication,
fencing of stopped brokers, followers falling out of the ISR, the controller's automatic
preferred-leader election) and brokers stopping, failing and returning.

Functions of the in-memory state (``state_sim.SimState``); ``simulated.py`` calls them under
the file lock and writes the state after. Each cites the Kafka code whose rule it follows.
"""

from __future__ import annotations

import math

from kgitops.cluster import partition_sim as partition
from kgitops.cluster import replication as repl
from kgitops.cluster.state_sim import MAX_CLOCK, SimState
from kgitops.errors import ClusterError
from kgitops.model import Broker
from kgitops.plan import isrlag


def advance(s: SimState, seconds: float, refused: dict[str, float]) -> None:
    """Let simulated time pass: replicas catch up, reassignments complete, and the
    controller's automatic preferred-leader election runs when it is due. ``refused``
    gathers the bytes each topic's producer had refused."""
    end = s.clock + max(0.0, seconds)
    if not math.isfinite(end) or end > MAX_CLOCK:
        raise ClusterError(
            f"cannot advance the simulated clock by {seconds:g} s: it would pass "
            f"{MAX_CLOCK:g} s (Kafka's longest time, about 292 million years)"
        )
    while True:
        _apply_due(s)
        due = _next_due(s)
        horizon = end if due is None else min(end, due)
        schedule_balance(s)
        if s.balance_at is not None and not _electable(s):
            _idle_until_event(s, horizon, refused)
            if s.clock >= end and s.balance_at > s.clock:
                break
            continue
        stop = horizon if s.balance_at is None else min(horizon, s.balance_at)
        spent = repl.advance(
            s.topics,
            s.online,
            s.broker_configs,
            stop - s.clock,
            s.network,
            s.producers(),
            until_event=_lag_watch(s),
            refused=refused,
            serving=s.serving,
        )
        s.clock = stop if spent >= stop - s.clock else s.clock + spent
        if s.balance_at is not None and s.clock >= s.balance_at:
            _balance_leaders(s)
            continue
        if s.clock >= end:
            break
    _apply_due(s)
    s.sync_logs()
    s.groups.checkpoint(s.clock)


def _growth(s: SimState) -> dict[str, list[float]]:
    return {
        t: repl.write_rates(s.topics[t].parts, p, s.serving)[0] for t, p in s.producers().items()
    }


def _lag_watch(s: SimState) -> bool:
    """Whether an ISR change inside an advance could start a follower lagging (writes
    go on): then time advances event by event, so that lag is noticed when it starts."""
    return bool(s.produce)


def _next_due(s: SimState) -> float | None:
    """The next time a stopped broker is fenced or resumes, or a lagging follower has
    been behind for ``replica.lag.time.max.ms``; None: nothing pending."""
    times = [t for pair in s.stopped.values() for t in pair if t is not None]
    times += [t + s.lag_time_max for t in s.behind.values()]
    return min(times) if times else None


def _apply_due(s: SimState) -> None:
    """What is due at the current clock: stopped brokers resume or are fenced (the
    controller's session timeout, ``handleBrokerFenced``), then followers that have been
    behind for ``replica.lag.time.max.ms`` leave the ISR (``Partition.maybeShrinkIsr``),
    and lagging starts or ends (a follower's in-sync fetches outgrow its network, or its
    broker stops)."""
    for b, (fence, resume) in sorted(s.stopped.items()):
        back = resume is not None and resume <= s.clock
        if back and fence is None:  # back after being fenced
            del s.stopped[b]
            _set_online(s, b, True)
            partition.settle([p for parts, _ in s.topics.values() for p in parts], s.online)
            elect_unclean(s)
        elif back and fence is not None and resume is not None and resume <= fence:
            del s.stopped[b]  # back before the controller noticed
            _resume(s, b)
        elif fence is not None and fence <= s.clock:
            _fence(s, b)
            if resume is None:
                del s.stopped[b]
            else:
                s.stopped[b] = (None, resume)
    growth = _growth(s)
    demand = repl.follower_demand(s.topics, s.serving, growth)
    slow = isrlag.falling_behind(demand, s.network, s.stopped)
    for b in list(s.behind):
        if b not in slow:
            del s.behind[b]
    shares: dict[int, float] = {}
    for b, share in slow.items():
        since = s.behind.setdefault(b, s.clock)
        if since + s.lag_time_max <= s.clock:
            shares[b] = share
            del s.behind[b]
    if shares:
        repl.drop_lagging(s.topics, shares, growth, s.lag_time_max)


def _resume(s: SimState, broker_id: int) -> None:
    """A stopped broker works again before it was fenced: its in-sync followers fetch
    what they missed (at once: the model does not time that catch-up), and the HW
    they held back moves on."""
    for parts, _ in s.topics.values():
        for part in parts:
            if broker_id in part.isr and broker_id in part.copied:
                del part.copied[broker_id]
                part.update_hw()


def stop_broker(s: SimState, broker_id: int, resume_after: float | None = None) -> None:
    """What-if: broker ``broker_id`` stops (a crash, or with ``resume_after`` seconds a
    stall such as a long GC pause). It neither serves nor fetches, but the controller
    knows nothing until ``broker.session.timeout.ms`` passes without a heartbeat: then it
    fences the broker (as ``fail_broker``). Until then the broker stays leader of its
    partitions -- writes to them fail -- and in their ISRs. Time passes with ``advance``."""
    broker = s.brokers.get(broker_id)
    if broker is None or not broker.online:
        _set_online(s, broker_id, False)  # raises: unknown, or already offline
    if broker_id in s.stopped:
        raise ClusterError(f"broker {broker_id} is already stopped")
    if resume_after is not None and not (math.isfinite(resume_after) and resume_after > 0):
        raise ClusterError("a pause must last more than 0 s")
    if resume_after is not None and s.clock + resume_after > MAX_CLOCK:
        raise ClusterError(
            f"cannot pause for {resume_after:g} s: the simulated clock would pass "
            f"{MAX_CLOCK:g} s (Kafka's longest time, about 292 million years)"
        )
    resume = None if resume_after is None else s.clock + resume_after
    s.stopped[broker_id] = (s.clock + s.session_timeout, resume)
    for parts, _ in s.topics.values():
        for part in parts:
            if broker_id in part.isr and broker_id != part.leader:
                part.copied[broker_id] = float(part.size)  # it fetches no more


def _idle_until_event(s: SimState, end: float, refused: dict[str, float]) -> None:
    """No election is possible until a copy completes (a broker offline, a preferred
    replica out of the ISR): replicate up to ``end`` or that copy, whichever is first;
    the checks due in between ran and elected nothing, so the pending one moves to the
    first interval after the new time (or stays at it, when it can elect there, as
    ``advance`` would have). ``advance 1000d`` with a broker down is then a few steps,
    not 288,000 checks that elect nothing."""
    assert s.balance_at is not None and s.leader_balance_seconds is not None
    left = end - s.clock
    spent = repl.advance(
        s.topics,
        s.online,
        s.broker_configs,
        left,
        s.network,
        s.producers(),
        until_event=True,
        refused=refused,
        serving=s.serving,
    )
    s.clock = end if spent >= left else s.clock + spent
    interval = s.leader_balance_seconds
    if s.balance_at < s.clock:
        s.balance_at += math.ceil((s.clock - s.balance_at) / interval) * interval
        s.balance_at = max(s.balance_at, s.clock)  # float dust: never behind
    if s.balance_at <= s.clock and not _electable(s):
        s.balance_at = max(s.balance_at, s.clock) + interval


def _electable(s: SimState) -> bool:
    """Whether a balance now would elect anything (``_balance_leaders``' condition)."""
    online = s.online
    return any(
        p.leader != p.replicas[0] and p.replicas[0] in p.isr and p.replicas[0] in online
        for parts, _ in s.topics.values()
        for p in parts
    )


def _imbalanced(s: SimState) -> bool:
    """KRaft's ``imbalancedPartitions``: some partition not led by its first replica."""
    return any(p.leader != p.replicas[0] for parts, _ in s.topics.values() for p in parts)


def schedule_balance(s: SimState) -> None:
    """``QuorumController.maybeScheduleNextBalancePartitionLeaders``: when leaders are
    imbalanced and no balance is pending, one is scheduled an interval from now."""
    if s.leader_balance_seconds is None:
        s.balance_at = None
    elif s.balance_at is None and _imbalanced(s):
        s.balance_at = s.clock + s.leader_balance_seconds


def _balance_leaders(s: SimState) -> None:
    """``ReplicationControlManager.maybeBalancePartitionLeaders``: a preferred election
    for every imbalanced partition whose first replica is in the ISR and online. KRaft
    has no per-broker threshold (``leader.imbalance.per.broker.percentage`` was the
    ZooKeeper controller's, removed in Kafka 4.0: KAFKA-18743)."""
    online = s.online
    for parts, _ in s.topics.values():
        for p in parts:
            preferred = p.replicas[0]
            if p.leader != preferred and preferred in p.isr and preferred in online:
                p.leader = preferred
    s.balance_at = None


def fail_broker(s: SimState, broker_id: int) -> None:
    """The broker stops: it leaves every ISR and its leaderships move. Without ELR the
    last in-sync replica stays (Kafka never empties an ISR) and its partition goes
    offline; with ELR the ISR may empty, and the replicas that left it below
    min.insync.replicas are eligible leaders when they come back."""
    s.stopped.pop(broker_id, None)
    _fence(s, broker_id)


def _fence(s: SimState, broker_id: int) -> None:
    """The controller fences the broker (``ReplicationControlManager.handleBrokerFenced``)."""
    _set_online(s, broker_id, False)
    s.behind.pop(broker_id, None)
    online = s.online
    for parts, _ in s.topics.values():
        for part in parts:
            part.leave_isr(broker_id)
            if part.leader == broker_id:
                part.leader = None
            part.elect(online)
    elect_unclean(s)


def restore_broker(s: SimState, broker_id: int) -> None:
    """The broker returns: offline partitions whose ISR it holds get their leader back,
    and its replicas rejoin the ISR once they have copied what was written while it was
    down (at once when nothing was: see ``set_produce_rate``). A stopped broker not
    fenced yet simply works again."""
    if s.stopped.pop(broker_id, None) is not None and s.brokers[broker_id].online:
        _resume(s, broker_id)
        return
    _set_online(s, broker_id, True)
    partition.settle([p for parts, _ in s.topics.values() for p in parts], s.online)
    elect_unclean(s)


def elect_unclean(s: SimState) -> None:
    """Kafka's controller does an unclean election for offline partitions of topics that
    allow it (``unclean.leader.election.enable``, topic or broker default)."""
    online = s.online
    for parts, config in s.topics.values():
        if s.unclean_allowed(config):
            for part in parts:
                partition.elect_unclean(part, online)


def _set_online(s: SimState, broker_id: int, online: bool) -> None:
    broker = s.brokers.get(broker_id)
    if broker is None:
        known = ", ".join(str(b) for b in sorted(s.brokers))
        raise ClusterError(f"broker {broker_id} is not in the cluster (brokers: {known})")
    if broker.online == online:
        raise ClusterError(f"broker {broker_id} is already {'online' if online else 'offline'}")
    s.brokers[broker_id] = Broker(broker.id, broker.rack, online)
