"""The long, risky step of apply: moving replicas, throttled, a window at a time.

A new replica copies the whole partition from the leader (docs/apply.md). So:

1. read the partitions and the reassignments already in flight; a move already in flight to
   the same target is *resumed* (waited for, never submitted twice); one already at its
   target is done; one whose replicas are neither the plan's source nor target is refused;
2. keep at most ``maxConcurrentMoves`` partitions in flight, submitting more as others
   finish (``kgitops.plan.schedule.next_batch`` picks them: the plan's ETA runs the same
   choice), polling with ``admin.sleep`` (the simulated clock advances) -- at once, without
   the sleep, after a window with a move that copies nothing (a reorder, a pure removal, an
   empty partition: done as it is submitted; a drain's dozens of them would otherwise cost a poll
   interval each, so the time would hang on ``--poll-interval``); a partition's
   throttle entries are added as it enters the window and taken out as it leaves, rates
   only on the online brokers involved (``kgitops.apply.throttles``) -- a move whose
   throttle could not be set is not submitted;
3. record before you act: a batch is written to the move record (``journal.started``) and
   added to the window *before* its AlterPartitionReassignments is sent -- a signal right
   after the request leaves it cancelled (or kept throttled), a kill -9 leaves it recorded
   for the next apply; a record that cannot be written starts nothing;
4. a move onto a broker that goes offline is cancelled; at the timeout, on error and on
   Ctrl-C every move still in flight is cancelled (Kafka reverts it to its old replicas) --
   at the timeout, but one an earlier apply left running that no action names (it stays in
   the window, throttled: ``moves.LEFT_RUNNING``); a cancel answered
   NO_REASSIGNMENT_IN_PROGRESS is read back (it completed, or its submit never arrived), one
   that fails keeps the move in the window, throttled;
5. finally no throttle of this run is left but those of the moves still in the window --
   ``wait=False`` submits one window and leaves it running with its throttles -- for a later
   apply (or plan: they are ``~ remove_throttles`` once their moves are done) to clean up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kgitops.apply.journal import MoveJournal
from kgitops.apply.moves import (
    LEFT_RUNNING,
    RECHECKS,
    MoveOptions,
    ReassignResult,
    classify,
    ended_on_target,
    in_flight_target,
    leftover_throttles,
    not_in_flight,
    reverted,
)
from kgitops.apply.progress import Snapshot
from kgitops.apply.signals import why as interrupted_why
from kgitops.apply.throttles import Throttler
from kgitops.cluster.port import ClusterAdmin
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterTimeout,
    ClusterUnreachable,
)
from kgitops.model import TopicPartition
from kgitops.plan.actions import Move, Reassign
from kgitops.plan.schedule import LOOKAHEAD, MoveJob, next_batch
from kgitops.plan.throttles import MoveThrottle
from kgitops.units import human_seconds
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion, throttle_delivered

FATAL = (ClusterUnreachable, ClusterTimeout, ClusterAuthError)
TP = tuple[str, int]


class Reassigner:
    def __init__(self, admin: ClusterAdmin, options: MoveOptions) -> None:
        self.admin = admin
        self.journal = options.journal if options.journal is not None else MoveJournal()
        self.record = None if options.dry_run else options.record
        self.settings = options.settings
        self.progress = options.progress
        self.wait = options.wait
        self.poll = max(0.01, options.poll_seconds)
        self.dry_run = options.dry_run
        self.moves: dict[TP, Move] = {}
        self.bytes: dict[TP, int] = {}
        self.jobs: dict[TP, MoveJob] = {}
        self.active: set[TP] = set()
        self.queue: list[TP] = []
        self.done: set[TP] = set()
        self.result = ReassignResult()
        self.throttler: Throttler | None = None
        self.entered: set[TP] = set()
        self.elapsed = 0.0
        self.offline: set[int] = set()
        self.off_preferred: set[TP] = set()
        self.adopted: set[TP] = set()
        self.unwatched: list[TP] = []  # ours, ended after the plan, before this run looked
        self.leftover: list[MoveThrottle] = []
        self.foreign: list[MoveThrottle] = []
        self.rechecks: dict[TP, int] = {}
        self.start_bytes: int | None = None
        self.submitted: set[TP] = set()  # moves whose submit was (or may have been) sent
        self.stuck: set[TP] = set()  # moves a cancel could not stop: still moving, throttled
        self.failed: set[TP] = set()
        self.deferred: set[TP] = set()  # left for a later apply (--no-wait: one window)
        self.first_estimate: float | None = None
        self.version: KafkaVersion = DEFAULT_VERSION  # the cluster's, once read

    # ------------------------------------------------------------ bookkeeping

    def _fail(self, tp: TP, why: str) -> None:
        self.failed.add(tp)
        self.result.failed.setdefault(tp[0], []).append(f"partition {tp[1]}: {why}")

    def _fail_queue(self, why: str) -> None:
        for tp in sorted(self.queue):
            self._fail(tp, f"not submitted: {why}")
        self.queue = []

    def _pending(self, tp: TP, why: str) -> None:
        self.result.pending.setdefault(tp[0], []).append(f"partition {tp[1]} {why}")

    def leaders_to_elect(self) -> list[TP]:
        """Moved partitions not led by their (new) preferred leader, as last seen; in a dry
        run, those whose preferred leader changes."""
        if self.dry_run:
            return sorted(
                tp for tp in self.done if self.moves[tp].target[0] != self.moves[tp].source[0]
            )
        return sorted(self.off_preferred & self.done)

    # -------------------------------------------------------------------- run

    def run(
        self,
        actions: list[Reassign],
        adopt: Iterable[str] = (),
        *,
        adopt_ours: Callable[[str], bool] | None = None,
    ) -> ReassignResult:
        """Run the moves of ``actions``; also wait for (adopt) moves in flight that kgitops
        started (the move record) and no action names -- those a ``--no-wait`` apply left
        running -- on the topics in ``adopt``, or on every topic ``adopt_ours`` accepts when
        it is given (``run.adopts``: a drain's moves of ``__consumer_offsets`` too, which no
        plan digest names). Moves another tool started are noted on the topics in ``adopt``."""
        for a in actions:
            for p, m in sorted(a.moves.items()):
                self.moves[(a.topic, p)] = m
        try:
            named = set(adopt)
            self._start(named, adopt_ours or named.__contains__)
            if self.queue or self.active:
                self._loop()
        except FATAL as exc:
            self.result.fatal = exc
            self._fail_queue(str(exc))
            self._cancel_or_keep(f"lost the cluster: {exc}")
        except ClusterError as exc:
            self._fail_queue(str(exc))
            self._cancel_or_keep(str(exc))
        except BaseException as exc:  # Ctrl-C, or a bug: never leave a move unthrottled
            self.abort(interrupted_why(exc) if isinstance(exc, KeyboardInterrupt) else "stopped")
            raise
        finally:
            self._details()
            if self.wait or not self.active:
                self._remove_throttles()
            if self.active and self.throttler is not None:  # what it leaves running, throttled
                self.throttler.write_record("no-wait" if not self.wait else "left-running")
            self.progress.finish()
            self._details()
        return self.result

    def _details(self) -> None:
        for topic in {tp[0] for tp in self.moves}:
            n = sum(1 for tp in self.done if tp[0] == topic)
            self.result.detail[topic] = f"{n} partition(s) moved"
        self.result.notes.extend(n for n in self.journal.notes if n not in self.result.notes)

    @property
    def changed(self) -> bool:
        """Whether this run may have changed the cluster for good: a move submitted (or
        whose submit a signal cut short), or a throttle it could not take back."""
        armed = self.throttler is not None and self.throttler.armed
        return bool(self.submitted) or armed

    def abort(self, why: str) -> list[str]:
        """Cancel what is in flight and take the throttles back (Ctrl-C)."""
        notes_before = len(self.result.notes)
        self._fail_queue(why)
        for tp in sorted(set(self.moves) - self.done - self.failed - self.active - self.deferred):
            self._fail(tp, f"not submitted: {why}")  # stopped before it was looked at
        try:
            self._cancel_or_keep(why)
        except KeyboardInterrupt as exc:
            self.result.notes.append(f"warning: could not cancel the moves in flight: {exc}")
        self._remove_throttles()
        self._details()
        return self.result.notes[notes_before:]

    def _start(self, adopt: set[str], adopt_ours: Callable[[str], bool]) -> None:
        in_flight = self.admin.list_reassignments()
        foreign: list[str] = []
        for name, parts in sorted(in_flight.items()):
            for p, (replicas, adding, removing) in sorted(parts.items()):
                target = in_flight_target(replicas, removing)
                source = tuple(r for r in replicas if r not in adding)
                if self.journal.ours((name, p), target):
                    if adopt_ours(name) and (name, p) not in self.moves:
                        self.moves[(name, p)] = Move(
                            source, target, "in flight from an earlier apply"
                        )
                        self.adopted.add((name, p))
                else:
                    self.foreign.append(MoveThrottle(name, p, source, tuple(adding)))
                    if name in adopt or any(t == name for t, _ in self.moves):
                        foreign.append(f"{name}-{p} -> {list(target)}")
        if not self.dry_run:  # recorded moves that ended while no apply watched them
            listed = {(t, p) for t, parts in in_flight.items() for p in parts}
            ended = [tp for tp in self.journal.moves if tp not in listed]
            # every recorded move is kgitops' own: its throttles go once it ended, whether or
            # not the plan names its topic (a drain's moves of __consumer_offsets: the plan
            # made while they still ran kept their throttles, and no digest names the topic)
            self.unwatched = sorted(tp for tp in ended if tp not in self.moves)
            self.journal.ended(ended)
        self.result.notes.extend(self.journal.notes)
        if foreign:
            shown = ", ".join(foreign[:10]) + (
                f" and {len(foreign) - 10} more" if len(foreign) > 10 else ""
            )
            self.result.notes.append(
                f"note: {len(foreign)} reassignment(s) in flight that kgitops did not start "
                f"({shown}): left alone, neither waited for nor cancelled"
            )
        if not self.moves and not self.unwatched:
            return
        topics = sorted({t for t, _ in [*self.moves, *self.unwatched]})
        state = self.admin.describe(topics)
        self.version = state.version
        self.leftover = leftover_throttles(state, self.unwatched)
        offline = {b.id for b in state.brokers if not b.online}
        self.offline = offline
        for tp, m in sorted(self.moves.items()):
            topic = state.topics.get(tp[0])
            part = topic.partitions.get(tp[1]) if topic else None
            size = m.size_bytes or (part.size_bytes if part else 0) or 0
            self.bytes[tp] = size * len(m.adding)
            sender = part.leader if part is not None and part.leader is not None else m.source[0]
            self.jobs[tp] = MoveJob(tp, sender, m.adding, size)
            flying = in_flight.get(tp[0], {}).get(tp[1])
            ours = flying is None or self.journal.ours(tp, in_flight_target(flying[0], flying[2]))
            verdict, why = classify(m, part.replicas if part else None, flying, offline, ours)
            if verdict == "resume":
                self.active.add(tp)
            elif verdict == "done":
                self.done.add(tp)
                if part is not None and part.leader != m.target[0]:
                    self.off_preferred.add(tp)
            elif verdict == "fail":
                self._fail(tp, why)
            else:
                self.queue.append(tp)
        if self.active:
            self.progress.message(
                f"reassign: {len(self.active)} partition(s) already moving to the planned "
                "replicas; waiting for them, not submitting them again"
            )
        if not self.wait:
            room = max(0, self.settings.max_concurrent_moves - len(self.active))
            for tp in self.queue[room:]:
                self.result.deferred.setdefault(tp[0], []).append(tp[1])
            self.deferred = set(self.queue[room:])
            self.queue = self.queue[:room]
        self.throttler = Throttler(
            self.admin, self.settings.throttle_bytes_per_sec, state, self.record
        )
        rate = self.settings.throttle_bytes_per_sec
        if rate is not None and (self.active or self.queue):
            self.progress.message(
                f"reassign: throttling replication to {rate} B/s, a window of at most "
                f"{self.settings.max_concurrent_moves} partition(s) at a time"
            )
        self._throttle_in(sorted(self.active))

    # -------------------------------------------------------------- throttles

    def _spec(self, tp: TP) -> MoveThrottle:
        m = self.moves[tp]
        return MoveThrottle(tp[0], tp[1], m.source, m.adding)

    def _throttle_in(self, tps: list[TP]) -> list[TP]:
        """Throttle ``tps`` as they enter the window; those whose throttle could not be set
        (a topic refused it, or a broker of theirs) are failed and left out."""
        if self.throttler is None or self.throttler.rate is None or not tps:
            return tps
        self.entered |= set(tps)  # before the request: a signal during it still takes them out
        errors = self.throttler.enter([self._spec(tp) for tp in tps])
        self.result.notes.extend(n for n in self.throttler.notes if n not in self.result.notes)
        if not errors:
            return tps
        self.result.notes.append("error: could not set the throttle: " + "; ".join(errors))
        bad_topics = {e.split(":", 1)[0].removeprefix("topic ") for e in errors}
        bad_brokers = {int(e.split(":", 2)[1]) for e in errors if e.startswith("broker:")}
        ok: list[TP] = []
        for tp in tps:
            m = self.moves[tp]
            if tp[0] in bad_topics or set(m.source) & bad_brokers or set(m.adding) & bad_brokers:
                self._fail(tp, "not submitted: the replication throttle could not be set")
            else:
                ok.append(tp)
        gone = [tp for tp in tps if tp not in ok]
        self._throttle_out(gone)
        return ok

    def _throttle_out(self, tps: Iterable[TP], still: Iterable[TP] | None = None) -> None:
        """Take out the throttles of ``tps`` (completed, cancelled or refused) that none of
        ``still`` (default: the moves in the window) needs."""
        tps = sorted(set(tps) & self.entered)
        self.entered -= set(tps)
        if self.throttler is None or not tps:
            return
        left = sorted(self.active if still is None else still)
        others = [self._spec(tp) for tp in left if tp not in tps]
        self._not_removed(self.throttler.leave([self._spec(tp) for tp in tps], others))

    def _not_removed(self, errors: list[str]) -> None:
        if errors:
            self.result.notes.append(
                "error: some replication throttles could not be removed ("
                + "; ".join(errors)
                + "); the next `kgitops plan` lists them under ~ remove_throttles (a broker "
                "that is down: once it is back)"
            )

    def _remove_throttles(self) -> None:
        """The end of the run: every throttle of this run goes but those of the moves left
        running (``--no-wait``, the timeout's, a failed cancel's), for a later apply or plan."""
        if self.throttler is None:
            return
        had = bool(self.entered) or self.throttler.armed or bool(self.leftover)
        self._throttle_out([tp for tp in self.entered if tp not in self.active])
        keep = [*self.foreign, *(self._spec(tp) for tp in sorted(self.active))]
        errors = self.throttler.clear(self.leftover, keep)  # a --no-wait apply's, ended since
        self.leftover = []
        if self.active and not self.dry_run and self.result.fatal is None:  # SUBTRACT's "" keys
            errors += self.throttler.drop_empty()
        self._not_removed(errors)
        if self.active:
            return
        errors = self.throttler.finish(read=not self.dry_run)
        if errors:
            self.result.notes.append(
                "error: the replication throttles could not all be removed ("
                + "; ".join(errors)
                + "); run `kgitops apply` again (the plan lists them under "
                "~ remove_throttles), or remove them by hand: " + self.throttler.listing()
            )
        elif self.throttler.rate is not None and had:
            self.progress.message("reassign: replication throttles removed")

    # ------------------------------------------------------------------- wait

    def _submit_settled(self) -> None:
        """``_submit``, then, while the window just took a move that copies nothing, poll at
        once and fill the room it leaves (``kgitops.plan.schedule`` models the same). Ends:
        each round submits moves from the shrinking queue, or nothing."""
        batch = self._submit()
        while any(self._copies_nothing(tp) for tp in batch):
            self._poll(at_once=True)
            batch = self._submit()

    def _copies_nothing(self, tp: TP) -> bool:
        """A move that adds no replica, or adds replicas of an empty partition."""
        return not self.moves[tp].adding or not self.moves[tp].size_bytes

    def _submit(self) -> list[TP]:
        """Fill the room in the window; the moves submitted (and not refused)."""
        room = self.settings.max_concurrent_moves - len(self.active)
        batch: list[TP] = []
        while self.queue and len(batch) < room:
            busy = {b for tp in (*self.active, *batch) for b in self.jobs[tp].brokers}
            jobs = [self.jobs[tp] for tp in self.queue[: LOOKAHEAD + room]]
            picked = next_batch(jobs, busy, room - len(batch))
            chosen = [self.queue[i] for i in picked]
            for i in reversed(picked):
                del self.queue[i]
            for tp in chosen:
                down = sorted(set(self.moves[tp].target) & self.offline)
                if down:
                    self._fail(tp, f"target broker(s) {down} offline; not submitted")
                else:
                    batch.append(tp)
        batch = self._throttle_in(batch)
        if not batch:
            return []
        if not self.dry_run:  # recorded before the request that starts them (module docstring)
            unrecorded = self.journal.started({tp: self.moves[tp].target for tp in batch})
            if unrecorded is not None:
                why = f"not submitted: {unrecorded} (a later apply would not know it as its own)"
                for tp in [*batch, *self.queue]:
                    self._fail(tp, why)
                self.queue = []
                self._throttle_out(batch)
                return []
        self.active |= set(batch)  # from here on they may be moving: cancelled or kept throttled
        self.submitted |= set(batch)
        results = self.admin.alter_reassignments(
            {TopicPartition(*tp): self.moves[tp].target for tp in batch}
        )
        refused = []
        for tp in batch:
            err = results.get(TopicPartition(*tp))
            if err is not None:
                self.active.discard(tp)
                self._fail(tp, f"submit refused: {err}")
                refused.append(tp)
        if not self.dry_run:
            self.journal.ended(refused)
        self._throttle_out(refused)
        return [tp for tp in batch if tp not in refused]

    def _cancel_or_keep(self, why: str) -> None:
        """Cancel every move in the window not already found uncancellable; when the cancel
        request fails, they stay in the window with their throttles (reported as moving)."""
        try:
            self._cancel(sorted(self.active - self.stuck), why)
        except ClusterError as exc:
            self.result.notes.append(
                f"warning: could not cancel the moves in flight ({exc}): they keep their "
                "replication throttles; `kgitops apply` again waits for them"
            )

    def _cancel(self, tps: list[TP], why: str) -> None:
        """Cancel the moves of ``tps`` (all in the window). A move the cluster cancelled, or
        one it says is not in flight (NO_REASSIGNMENT_IN_PROGRESS: it completed, or its
        submit never reached the cluster; read back to tell which), leaves the window with its
        throttles; one that could not be cancelled stays in the window, still throttled, and
        is reported as still moving. A request that fails as a whole changes nothing here."""
        if not tps:
            return
        try:
            results = self.admin.alter_reassignments(
                dict.fromkeys(TopicPartition(*tp) for tp in tps)
            )
        except ClusterError as exc:
            for tp in tps:
                self._fail(tp, f"{why}; could not cancel ({exc}): still moving, still throttled")
                self.stuck.add(tp)
            raise
        cancelled = [tp for tp in tps if results.get(TopicPartition(*tp)) is None]
        ended = [tp for tp in tps if not_in_flight(results.get(TopicPartition(*tp)))]
        for tp in tps:
            err = results.get(TopicPartition(*tp))
            if err is not None and not not_in_flight(err):
                self._fail(tp, f"{why}; could not cancel ({err}): still moving, still throttled")
                self.stuck.add(tp)
        for tp in cancelled:
            m = self.moves[tp]
            back = reverted(m.source, m.target)
            order = (
                ""
                if back == m.source
                else f" (KRaft's revert order: preferred leader now {back[0]})"
            )
            self._fail(tp, f"{why}; cancelled, back to {list(back)}{order}")
        self._read_back(ended, why)
        self.active -= {*cancelled, *ended}
        self.journal.ended([*cancelled, *ended])
        self._throttle_out([*cancelled, *ended])  # keeps what the window (stuck ones too) needs

    def _read_back(self, tps: list[TP], why: str) -> None:
        """Where moves the cluster no longer lists ended: on the target (done), or not."""
        if not tps:
            return
        try:
            state = self.admin.describe(sorted({t for t, _ in tps}))
        except ClusterError as exc:
            for tp in tps:
                self._fail(tp, f"{why}; no longer moving, could not read where it ended: {exc}")
            return
        for tp in tps:
            topic = state.topics.get(tp[0])
            part = topic.partitions.get(tp[1]) if topic else None
            m = self.moves[tp]
            if part is not None and ended_on_target(part.replicas, m.target) is not None:
                self.done.add(tp)
                if part.replicas != m.target or part.leader != m.target[0]:
                    self.off_preferred.add(tp)
            else:
                now = list(part.replicas) if part else "gone"
                self._fail(tp, f"{why}; not moving, replicas are {now}")

    def _snapshot(self) -> Snapshot:
        total = sum(self.bytes.values())
        done_b = sum(self.bytes.get(tp, 0) for tp in self.done)
        remaining = total - done_b
        if self.start_bytes is None:
            self.start_bytes = done_b
        moved = done_b - self.start_bytes
        eta: float | None = None
        if remaining == 0:
            eta = 0.0
        elif moved > 0 and self.elapsed > 0:
            eta = remaining / (moved / self.elapsed)  # the rate observed so far
        elif self.settings.throttle_bytes_per_sec:
            if self.first_estimate is None:  # every receiving broker at the throttled rate
                receivers = {b for tp in self.active for b in self.moves[tp].adding}
                rate = (  # of which Kafka's quota lets 23/24 through, as the plan's ETA counts
                    self.settings.throttle_bytes_per_sec
                    * throttle_delivered(self.version)
                    * max(1, len(receivers))
                )
                self.first_estimate = self.elapsed + remaining / rate
            left = self.first_estimate - self.elapsed
            eta = left if left > 0 else None
        return Snapshot(
            partitions_done=len(self.done),
            partitions_total=len(self.moves),
            bytes_done=done_b,
            bytes_total=total,
            in_flight=len(self.active),
            elapsed_seconds=self.elapsed,
            eta_seconds=eta,
        )

    def _loop(self) -> None:
        first = self._submit()
        if not self.wait:
            for tp in sorted(self.active):
                self._pending(tp, f"moving to {list(self.moves[tp].target)}")
            if self.active:
                self.result.notes.append(
                    f"note: {len(self.active)} partition move(s) left running with their "
                    "replication throttles (--no-wait); run `kgitops apply` again to wait for "
                    "them and remove the throttles, `kgitops status` to watch them"
                )
            return
        if self.dry_run:
            while self.queue or self.active:
                finished = sorted(self.active)
                self.done |= self.active
                self.active = set()
                self._throttle_out(finished)
                self._submit()
            return
        self.progress.update(self._snapshot())
        if any(self._copies_nothing(tp) for tp in first):
            self._poll(at_once=True)  # the first window's moves that copy nothing are done
            self._submit_settled()
            self.progress.update(self._snapshot())
        while self.active or self.queue:
            if self.elapsed >= self.settings.timeout_seconds:
                self._fail_queue("timed out")
                why = f"timed out after {human_seconds(self.elapsed)}"
                for tp in sorted((self.active & self.adopted) - self.stuck):  # LEFT_RUNNING
                    self._fail(tp, f"{why}; {LEFT_RUNNING}")
                    self.stuck.add(tp)
                self._cancel_or_keep(why)
                return
            self.admin.sleep(self.poll)
            self.elapsed += self.poll
            self._poll()
            self._submit_settled()
            self.progress.update(self._snapshot())

    def _poll(self, at_once: bool = False) -> None:
        """Read which moves ended. ``at_once``: a poll without a sleep before it, where a
        move the controller no longer lists but the metadata does not yet show at its
        target stays in the window without using up one of its ``RECHECKS``."""
        in_flight = self.admin.list_reassignments()
        state = self.admin.describe(sorted({t for t, _ in self.active}))
        offline = {b.id for b in state.brokers if not b.online}
        self.offline = offline
        stalled: list[TP] = []
        before = set(self.active)
        for tp in sorted(self.active):
            m = self.moves[tp]
            if in_flight.get(tp[0], {}).get(tp[1]) is not None:
                # Kafka completes a move only when every target replica is in sync
                if set(m.target) & offline:
                    stalled.append(tp)
                continue
            topic = state.topics.get(tp[0])
            part = topic.partitions.get(tp[1]) if topic else None
            ended = ended_on_target(part.replicas if part else None, m.target)
            if ended is None and at_once:
                continue
            if ended is None and self.rechecks.get(tp, 0) < RECHECKS:
                # the controller no longer lists it, the broker's metadata disagrees: ask again
                self.rechecks[tp] = self.rechecks.get(tp, 0) + 1
                continue
            self.active.discard(tp)
            if ended is not None:
                self.done.add(tp)
                if ended or part is None or part.leader != m.target[0]:
                    self.off_preferred.add(tp)  # elected; ELECTION_NOT_NEEDED is success
            else:
                now = list(part.replicas) if part else "gone"
                self._fail(tp, f"the reassignment ended with replicas {now}, not {list(m.target)}")
        self.journal.ended(before - self.active)
        self._throttle_out(before - self.active)
        if stalled:
            down = sorted({b for tp in stalled for b in self.moves[tp].target} & offline)
            self._cancel(stalled, f"broker(s) {down} went offline during the move")
