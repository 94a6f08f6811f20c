"""One schedule for plan and apply: which moves run together, and how long they take. Pure.

``apply`` keeps at most ``maxConcurrentMoves`` partition moves in flight and, each time it
polls, fills the free room with :func:`next_batch`; the plan's ETA is :func:`schedule`, which
runs the same ``next_batch`` on a model of Kafka's replication so that the figure a reviewer
reads is the time apply takes, not a lower bound.

The model (the simulated cluster follows the same rules, ``kgitops/cluster/replication.py``):

- a move copies the partition (``size`` bytes) from its leader to each added replica; it
  completes when every added replica has it, and apply notices at its next poll;
- every copy into a broker shares that broker's link (``network`` bytes/s); with a throttle,
  the copies into a broker share its follower rate and the copies served by a leader share
  the leader's rate (Kafka's ``*.replication.throttled.rate`` are per broker); the rate given
  here is the one Kafka delivers: the plan passes 23/24 of the configured one
  (``versionrules.throttle_delivered``, ``kgitops.plan.transfer``);
- moves that copy nothing (a reorder, a pure removal, an empty partition) complete at once,
  and apply, which polls at once after submitting one (no sleep), fills their room at the
  same instant.

``next_batch`` prefers moves whose brokers are idle: four moves into one new broker share its
one throttle, four moves into four brokers get four. Ties keep the plan's order (topic, then
partition), so the schedule is a pure function of the plan.

Example, throttle 10 MB/s, 2 moves at a time, poll 5 s, three 100 MB moves into brokers 6, 6
and 7 (leaders 0, 1, 2)::

    window 1  t=0     p0 -> 6, p2 -> 7     each alone on its broker: 10 s
    window 2  t=10    p1 -> 6              10 s; ETA 20 s
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NETWORK_BYTES_PER_SEC = 100_000_000
"""The link each broker receives on, as the simulated cluster assumes."""

DEFAULT_POLL_SECONDS = 5.0
LOOKAHEAD = 256
"""How far down the queue ``next_batch`` looks for a move onto idle brokers."""


@dataclass(frozen=True, slots=True)
class MoveJob:
    """One partition move as scheduling sees it: ``key`` names it (topic, partition)."""

    key: tuple[str, int]
    sender: int
    adding: tuple[int, ...]
    size_bytes: int
    brokers: frozenset[int] = frozenset()
    """The leader and the added replicas (filled in from them)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "brokers", frozenset((self.sender, *self.adding)))


@dataclass(frozen=True, slots=True)
class Window:
    """The moves submitted at one poll, when they started, and when the last one ended."""

    moves: int
    bytes: int
    start_seconds: float
    end_seconds: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Window:
        start = float(data.get("startSeconds") or 0.0)
        return cls(
            int(data.get("moves") or 0),
            int(data.get("bytes") or 0),
            start,
            start + float(data.get("seconds") or 0.0),
        )

    def to_json(self) -> dict[str, float | int]:
        return {
            "moves": self.moves,
            "bytes": self.bytes,
            "startSeconds": round(self.start_seconds, 1),
            "seconds": round(self.end_seconds - self.start_seconds, 1),
        }


@dataclass(frozen=True, slots=True)
class Schedule:
    total_seconds: float
    total_bytes: int
    windows: tuple[Window, ...]


def next_batch(queue: Sequence[MoveJob], busy: Iterable[int], room: int) -> list[int]:
    """Indexes into ``queue`` (ascending) of the moves to submit now, at most ``room``: first
    those among the next ``LOOKAHEAD`` whose brokers (leader and added replicas) are all idle,
    in queue order, then the rest in queue order. ``busy``: the brokers of the moves in
    flight."""
    if room <= 0 or not queue:
        return []
    taken = set(busy)
    chosen: list[int] = []
    for i in range(min(len(queue), LOOKAHEAD)):
        if len(chosen) == room:
            return chosen
        job = queue[i]
        if taken.isdisjoint(job.brokers):
            chosen.append(i)
            taken.update(job.brokers)
    if len(chosen) < room:
        picked = set(chosen)
        for i in range(len(queue)):
            if len(chosen) == room:
                break
            if i not in picked:
                chosen.append(i)
        chosen.sort()
    return chosen


def _first_end(
    left: Mapping[tuple[int, int], float],
    active: Mapping[int, MoveJob],
    throttle: float | None,
    network: float,
) -> float:
    """Seconds until the first copy in ``left`` ends at the current rates."""
    into: dict[int, int] = {}
    served: dict[int, int] = {}
    for m, r in left:
        into[r] = into.get(r, 0) + 1
        served[active[m].sender] = served.get(active[m].sender, 0) + 1
    first = float("inf")
    for (m, r), rest in left.items():
        rate = network / into[r]
        if throttle:
            rate = min(rate, throttle / into[r], throttle / served[active[m].sender])
        first = min(first, rest / rate)
    return first


def _run_until(
    tick: float,
    now: float,
    left: dict[tuple[int, int], float],
    active: Mapping[int, MoveJob],
    throttle: float | None,
    network: float,
) -> float:
    """Copy at the model's rates until ``tick``, event by event (a copy finishing changes the
    others' shares); finished copies leave ``left``. Returns ``tick``."""
    while now < tick and left:
        keys = list(left)
        into: dict[int, int] = {}
        served: dict[int, int] = {}
        senders = [active[m].sender for m, _ in keys]
        for (_, r), sender in zip(keys, senders, strict=True):
            into[r] = into.get(r, 0) + 1
            served[sender] = served.get(sender, 0) + 1
        rates = []
        for (_, r), sender in zip(keys, senders, strict=True):
            rate = network / into[r]
            if throttle:
                rate = min(rate, throttle / into[r], throttle / served[sender])
            rates.append(rate)
        step = tick - now
        for key, rate in zip(keys, rates, strict=True):
            t = left[key] / rate
            if t < step:
                step = t
        for key, rate in zip(keys, rates, strict=True):
            rest = left[key] - rate * step
            if rest <= 1e-6 * max(1.0, active[key[0]].size_bytes):
                del left[key]
            else:
                left[key] = rest
        now += step
    return tick


def schedule(
    jobs: Sequence[MoveJob],
    *,
    max_concurrent_moves: int,
    throttle_bytes_per_sec: float | None,
    network_bytes_per_sec: float = NETWORK_BYTES_PER_SEC,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
) -> Schedule:
    """Run ``jobs`` as apply does (``next_batch`` at each poll, at most
    ``max_concurrent_moves`` in flight) on the replication model; the windows are the
    batches submitted together. Events are exact; completions are seen at poll ticks."""
    poll = max(0.01, poll_seconds)
    room_max = max(1, max_concurrent_moves)
    # next_batch picks near the head (the first LOOKAHEAD + room): a deque deletes there in
    # O(index), where a list of 100,000 moves would shift the whole tail at every submit
    queue = deque(jobs)
    total_bytes = sum(j.size_bytes * len(j.adding) for j in jobs)
    left: dict[tuple[int, int], float] = {}  # (move index, receiver) -> bytes left
    active: dict[int, MoveJob] = {}
    window_of: dict[int, int] = {}
    starts: list[float] = []
    ends: list[float] = []
    counts: list[int] = []
    sizes: list[int] = []
    now = 0.0
    serial = 0
    while queue or active:
        busy = {b for j in active.values() for b in j.brokers}
        picked = next_batch(queue, busy, room_max - len(active))
        if picked:
            w = len(starts)
            starts.append(now)
            ends.append(now)
            counts.append(len(picked))
            sizes.append(sum(queue[i].size_bytes * len(queue[i].adding) for i in picked))
            for i in picked:
                job = queue[i]
                active[serial] = job
                window_of[serial] = w
                for r in job.adding:
                    if job.size_bytes > 0:
                        left[(serial, r)] = float(job.size_bytes)
                serial += 1
            for i in reversed(picked):
                del queue[i]
            instant = [
                m
                for m in range(serial - len(picked), serial)
                if not active[m].adding or not active[m].size_bytes
            ]
            if instant:  # apply polls at once after them (no sleep) and fills their room
                for m in instant:
                    del active[m]
                    window_of.pop(m)
                continue
        # run until the next poll tick, event by event; when nothing was submitted, nothing
        # changes before a copy ends, so the polls until then are skipped (the work is then
        # linear in the moves, not in the ETA: 1 PB partitions plan as fast as 1 GB ones)
        polls = 1
        if not picked and left:
            first = _first_end(left, active, throttle_bytes_per_sec, network_bytes_per_sec)
            polls = max(1, math.floor(first / poll))
        now = _run_until(
            now + polls * poll, now, left, active, throttle_bytes_per_sec, network_bytes_per_sec
        )
        waiting = {m for m, _ in left}
        for m in [m for m in active if m not in waiting]:
            del active[m]
            w = window_of.pop(m)
            ends[w] = max(ends[w], now)
    windows = tuple(Window(counts[i], sizes[i], starts[i], ends[i]) for i in range(len(starts)))
    return Schedule(total_seconds=now if jobs else 0.0, total_bytes=total_bytes, windows=windows)
