"""Run a plan through the cluster port: in order, batched, throttled, verified, resumable.

Apply does what the reviewed plan says and nothing else; it never reads the specs. The steps
(in the order of ``kgitops.plan.kinds.STEPS``), each one batched port call (one request per
admin API)::

    1 create_topic    create_topics        all new topics, with configs and explicit assignments
    2 alter_config    alter_topic_configs  one IncrementalAlterConfigs
    3 add_partitions  create_partitions    one CreatePartitions
    4 reassign        at most maxConcurrentMoves partitions in flight, each throttled while in
                      the window, polled until done; no throttle left at the end (also on
                      error, timeout and Ctrl-C/SIGTERM/SIGHUP, which cancel the moves in flight)
    4b alter_config   those marked ``after_reassign`` (a min.insync.replicas raise that needs
                      the raised replication factor), once the topic's moves completed
    5 remove_throttles  SUBTRACT leftover throttled-replica entries, DELETE leftover rates
                      (never one a move in flight needs now)
    6 elect_leaders   elect_preferred_leaders
    7 upsert_user, alter_quota, create_acl, delete_acl   one request each (apply/access.py)
    8 delete_topic    delete_topics        only with allow_delete; only topics the plan names

A failure of one item never stops unrelated items; later actions on a topic whose earlier
action failed are skipped (never reassign a topic whose create failed). Losing the cluster
stops the run. Afterwards the cluster is read again and compared with the plan. Anything not
done raises ``PartialApply`` (exit 3) listing per action what was done and what was not; the
cluster is left so that a new plan completes the rest.

``dry_run`` runs the same code against a recorder that sends nothing, so the printed requests
are exactly those a real run would send (reassignments as if each window completed at once).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kgitops.apply.access import require_access_support, require_passwords, run_access
from kgitops.apply.journal import MoveJournal
from kgitops.apply.moves import MoveOptions, ReassignResult
from kgitops.apply.progress import Progress, SilentProgress
from kgitops.apply.reassign import Reassigner
from kgitops.apply.record import ThrottleRecord
from kgitops.apply.recorder import Recorder
from kgitops.apply.report import ApplyReport, label
from kgitops.apply.seam import RunSeam
from kgitops.apply.signals import why as interrupted_why
from kgitops.apply.throttles import needed_now, removal
from kgitops.apply.verify import read_back_in_doubt, verify_applied
from kgitops.cluster.port import (
    ClusterAdmin,
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    Results,
)
from kgitops.errors import (
    ActionOutcome,
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    InterruptedBeforeAnyChange,
    NothingApplied,
    PartialApply,
    Status,
)
from kgitops.model import ReassignmentSettings, TopicPartition
from kgitops.plan import actions
from kgitops.plan.action_base import Action
from kgitops.plan.kinds import STEPS
from kgitops.plan.throttles import REPLICA_KEYS, stale_throttles
from kgitops.plan.value import Plan

FATAL = (ClusterUnreachable, ClusterTimeout, ClusterAuthError)


# -------------------------------------------------------------------------- run


@dataclass(eq=False)
class _Run(RunSeam):
    """One run of ``apply_plan``: the outcomes so far; ``indexed``, ``fail`` and ``batch``
    are the seam a step module drives (``kgitops.apply.seam``)."""

    plan: Plan
    admin: Recorder
    options: MoveOptions
    outcomes: dict[int, ActionOutcome] = field(init=False)
    failed_topics: set[str] = field(init=False, default_factory=set)
    broken: ClusterError | None = field(init=False, default=None)
    notes: list[str] = field(init=False, default_factory=list)
    reassigner: Reassigner | None = field(init=False, default=None)
    changed: bool = field(init=False, default=False)
    sending: list[int] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.outcomes = {
            i: ActionOutcome(label(a), Status.NOT_ATTEMPTED, kind=a.kind, subject=a.name)
            for i, a in enumerate(self.plan.actions)
        }

    def indexed(self, kind: type[Action], after_moves: bool = False) -> list[tuple[int, Any]]:
        out = []
        for i, a in enumerate(self.plan.actions):
            if not isinstance(a, kind) or getattr(a, "after_reassign", False) != after_moves:
                continue
            if self.broken is not None:
                self._set(i, Status.NOT_ATTEMPTED, str(self.broken))
            elif a.topic in self.failed_topics:
                self._set(i, Status.SKIPPED, "an earlier action on this topic failed")
            else:
                out.append((i, a))
        return out

    def _set(self, i: int, status: Status, reason: str = "", items: Sequence[str] = ()) -> None:
        self.outcomes[i] = replace(
            self.outcomes[i], status=status, reason=reason, items=tuple(items)
        )

    def _done(self, i: int, detail: str = "") -> None:
        self.changed = True
        self._set(i, Status.DONE, detail)

    def fail(self, i: int, error: object, items: Sequence[str] = ()) -> None:
        if isinstance(error, ClusterRequestError) and error.changed:
            self.changed = True  # not done, but the cluster changed: exit 3, not 1
        in_doubt = isinstance(error, ClusterTimeout)
        if in_doubt:
            self.changed = True  # sent, no answer: it may have taken effect -- exit 3, not 1
        reason = (
            f"{error} -- it may still take effect; a new plan shows" if in_doubt else str(error)
        )
        self._set(i, Status.IN_DOUBT if in_doubt else Status.FAILED, reason, items)
        if i < len(self.plan.actions):
            self.failed_topics.add(self.plan.actions[i].topic)

    def batch(self, what: str, items: list[tuple[int, Any]], call: Callable[[], Results]) -> None:
        """One port call for ``items``; per-item results (by topic) to outcomes."""
        if not items:
            return
        self.options.progress.message(f"{what}: {len(items)} in one request")
        self.sending = [i for i, _ in items]  # what Ctrl-C would leave in doubt
        try:
            results: Results = call()
        except FATAL as exc:
            self.sending = []
            self.broken = exc
            for i, _ in items:
                self.fail(i, exc)
            return
        except ClusterError as exc:
            self.sending = []
            for i, _ in items:
                self.fail(i, exc)
            return
        self.sending = []
        for i, a in items:
            err = results.get(a.topic, None) if a.topic in results else _missing(a.topic)
            if err is None:
                self._done(i)
            else:
                self.fail(i, err)

    def creates(self) -> None:
        self.send(actions.CreateTopic, "create topics", self.admin.create_topics, _new_topics)

    def configs(self) -> None:
        self._configs(self.indexed(actions.AlterConfig))

    def configs_after_moves(self) -> None:
        """Config changes the plan puts after the topic's moves (a min.insync.replicas raise
        that needs the higher replication factor first): only once those moves completed."""
        items = []
        moving = {
            a.topic: self.outcomes[i]
            for i, a in enumerate(self.plan.actions)
            if a.kind == "reassign"
        }
        for i, a in self.indexed(actions.AlterConfig, after_moves=True):
            moved = moving.get(a.topic)
            if moved is not None and not moved.done:
                self._set(
                    i,
                    Status.NOT_ATTEMPTED,
                    "it waits for the topic's moves to complete "
                    "(run `kgitops apply` again once they have)",
                )
                continue
            items.append((i, a))
        self._configs(items)

    def _configs(self, items: list[tuple[int, actions.AlterConfig]]) -> None:
        changes = {a.topic: ConfigChange(dict(a.set), tuple(a.delete)) for _, a in items}
        self.batch("alter configs", items, lambda: self.admin.alter_topic_configs(changes))

    def partitions(self) -> None:
        self.send(
            actions.AddPartitions, "add partitions", self.admin.create_partitions, _new_partitions
        )

    def reassign(self) -> None:
        items = self.indexed(actions.Reassign)
        if self.broken is not None or (not items and not self.options.wait):
            return
        self.reassigner = Reassigner(self.admin, self.options)
        adopt = set(self.plan.state_digests) - self.failed_topics if self.options.wait else set()

        def ours(topic: str) -> bool:
            return (
                self.options.wait and topic not in self.failed_topics and adopts(self.plan, topic)
            )

        try:
            result = self.reassigner.run([a for _, a in items], adopt, adopt_ours=ours)
        except KeyboardInterrupt:
            self._record(items, self.reassigner.result)
            raise
        self._record(items, result)

    def _record(self, items: list[tuple[int, actions.Reassign]], result: ReassignResult) -> None:
        assert self.reassigner is not None
        named = {a.topic for _, a in items}
        for topic in sorted({t for t, _ in self.reassigner.adopted} - named):
            i = len(self.outcomes)
            what = f"~ reassign {topic} (moves in flight from an earlier apply)"
            self.outcomes[i] = ActionOutcome(
                what, Status.NOT_ATTEMPTED, kind=actions.Reassign.kind, subject=topic
            )
            items = [*items, (i, actions.Reassign(topic))]
        self.changed = (
            self.changed
            or bool(self.reassigner.done)
            or bool(result.pending)
            or self.reassigner.changed
        )
        self.notes.extend(n for n in result.notes if n not in self.notes)
        if result.fatal is not None:
            self.broken = result.fatal
        for i, a in items:
            moved = result.detail.get(a.topic, "")
            bad = result.failed.get(a.topic, [])
            later = result.deferred.get(a.topic, [])
            pending = result.pending.get(a.topic, [])
            if bad:
                why = f"{len(bad)} partition(s) not moved" + (f", {moved}" if moved else "")
                if later:
                    why += f", {len(later)} deferred (--no-wait)"
                self.fail(i, why, bad)
            elif later:
                why = (
                    f"{len(later)} partition(s) left for the next `kgitops apply`: --no-wait "
                    f"submits one window of {self.options.settings.max_concurrent_moves}"
                )
                self._set(i, Status.DEFERRED, why + _moving(pending), pending)
            elif pending:
                self._set(i, Status.IN_FLIGHT, f"{len(pending)} partition(s) moving", pending)
            else:
                self._done(i, moved)

    def throttles(self) -> None:
        """``~ remove_throttles``: take out leftovers, keeping what a move in flight needs
        now (read again: a move may have started or ended since the plan)."""
        items = self.indexed(actions.RemoveThrottles)
        if not items:
            return
        self.options.progress.message(f"remove leftover throttles: {len(items)} item(s)")
        try:
            state = self.admin.describe(sorted({a.topic for _, a in items if a.topic}))
        except ClusterError as exc:
            for i, _ in items:
                self.fail(i, exc)
            if isinstance(exc, FATAL):
                self.broken = exc
            return
        keep, busy = needed_now(state)
        topics: dict[str, ConfigChange] = {}
        brokers: dict[int, ConfigChange] = {}
        kept: dict[int, str] = {}
        for i, a in items:
            if a.broker is not None:
                if a.broker in busy:
                    kept[i] = f"kept: a move in flight now involves broker {a.broker}"
                else:
                    brokers[a.broker] = ConfigChange(delete=tuple(sorted(a.remove)))
                continue
            subtract: dict[str, str] = {}
            delete: list[str] = []
            for key in sorted(a.remove):
                entries, whole = removal(a.remove, keep.get(a.topic, {}).get(key), key)
                if whole:
                    delete.append(key)
                elif entries:
                    subtract[key] = entries
            if subtract or delete:
                topics[a.topic] = ConfigChange(delete=tuple(delete), subtract=subtract)
            else:
                kept[i] = "kept: the moves in flight now need these entries"
        self.sending = [i for i, _ in items]  # what a signal would leave in doubt
        try:
            results: dict[str, ClusterError | None] = {}
            if topics:
                results.update(self.admin.alter_topic_configs(topics))
            if brokers:
                results.update(self.admin.alter_broker_configs(brokers))
            if topics and self.admin.send:
                results.update(self._drop_empty(sorted(topics)))
        except ClusterError as exc:
            self.sending = []
            for i, _ in items:
                self.fail(i, exc)
            if isinstance(exc, FATAL):
                self.broken = exc
            return
        self.sending = []
        for i, a in items:
            err = results.get(f"broker:{a.broker}" if a.broker is not None else a.topic)
            if err is not None:
                self.fail(i, err)
            else:
                self._done(i, kept.get(i, ""))

    def _drop_empty(self, topics: list[str]) -> Results:
        """DELETE the throttled-replicas keys a SUBTRACT left as ``""`` (Kafka keeps them)."""
        state = self.admin.describe(topics)
        changes = {}
        for name, t in state.topics.items():
            empty = tuple(k for k in REPLICA_KEYS if k in t.config and not t.config[k].strip())
            if empty:
                changes[name] = ConfigChange(delete=empty)
        return self.admin.alter_topic_configs(changes) if changes else {}

    def elections(self) -> None:
        items = self.indexed(actions.ElectLeaders)
        extra = self.reassigner.leaders_to_elect() if self.reassigner else []
        parts = [TopicPartition(a.topic, p) for _, a in items for p in a.partitions]
        wanted = sorted(set(parts) | {TopicPartition(*tp) for tp in extra})
        if not wanted or self.broken is not None:
            return
        self.options.progress.message(f"elect preferred leaders: {len(wanted)} partition(s) ...")
        self.sending = [i for i, _ in items]
        try:
            results: PartitionResults = self.admin.elect_preferred_leaders(wanted)
        except ClusterError as exc:
            results = dict.fromkeys(wanted, exc)
            if isinstance(exc, FATAL):
                self.broken = exc
        self.sending = []
        for i, a in items:
            errs = [
                f"{a.topic}-{p}: {results[TopicPartition(a.topic, p)]}"
                for p in a.partitions
                if _real_error(results.get(TopicPartition(a.topic, p)))
            ]
            if errs:
                self.fail(i, "; ".join(errs))
            else:
                self._done(i)
        for t, p in extra:
            err = results.get(TopicPartition(t, p))
            if _real_error(err) and (t, p) not in parts:
                self.notes.append(
                    f"note: {t}-{p} has moved but its preferred leader was not elected ({err}); "
                    "Kafka's auto leader rebalance or `kgitops apply` again will do it"
                )

    def deletes(self) -> None:
        self.send(actions.DeleteTopic, "delete topics", self.admin.delete_topics, _topics)

    def abort(self, why: str) -> None:
        """Ctrl-C: stop, cancel moves still in flight, take back the throttles."""
        self.changed = self.changed or bool(self.sending)  # it may have taken effect
        for i in self.sending:
            self._set(
                i,
                Status.IN_DOUBT,
                f"{why} while the request was in flight: it may have taken effect; "
                "a new plan shows",
            )
        for i, o in list(self.outcomes.items()):
            if o.status is Status.NOT_ATTEMPTED and not o.reason:
                self._set(i, Status.NOT_ATTEMPTED, why)
        if self.reassigner is not None:
            self.notes.extend(n for n in self.reassigner.abort(why) if n not in self.notes)
            self.changed = self.changed or self.reassigner.changed


def _new_topics(items: list[actions.CreateTopic]) -> list[NewTopic]:
    return [NewTopic(a.topic, dict(a.assignment), dict(a.config)) for a in items]


def _new_partitions(items: list[actions.AddPartitions]) -> list[NewPartitions]:
    return [NewPartitions(a.topic, a.to_count, dict(a.assignment)) for a in items]


def _topics(items: list[actions.DeleteTopic]) -> list[str]:
    return [a.topic for a in items]


def _moving(pending: Sequence[str]) -> str:
    return f"; {len(pending)} moving now" if pending else ""


def _missing(item: str) -> ClusterError:
    return ClusterRequestError(f"the cluster gave no result for {item}", item=item)


def _real_error(err: ClusterError | None) -> bool:
    """ELECTION_NOT_NEEDED means the leader already is the preferred one: success."""
    if err is None:
        return False
    return not (isinstance(err, ClusterRequestError) and err.code == "ELECTION_NOT_NEEDED")


def adopts(plan: Plan, topic: str) -> bool:
    """Whether an apply of ``plan`` waits for the moves kgitops started (its move record) that
    are in flight on ``topic``: on every topic, a drain's moves of ``__consumer_offsets`` or of
    a topic not in git included, unless the plan was cut down with ``--target`` (then on the
    topics it names)."""
    return plan.targets is None or topic in plan.state_digests


def apply_plan(
    plan: Plan,
    admin: ClusterAdmin,
    settings: ReassignmentSettings,
    *,
    allow_delete: bool,
    wait: bool = True,
    progress: Progress | None = None,
    dry_run: bool = False,
    poll_seconds: float = 5.0,
    verify: bool = True,
    journal: MoveJournal | None = None,
    record: ThrottleRecord | None = None,
) -> ApplyReport:
    """Run ``plan`` through ``admin``; see the module docstring. Raises DeletionNotAllowed,
    and AccessUnsupported (a cluster that does not serve an access API the plan needs),
    before sending anything, and PartialApply (exit 3; NothingApplied, exit 1, when nothing
    was done) when some actions failed or verification found a difference. ``journal``
    records the moves this apply starts (``kgitops.apply.journal``): only moves it records
    are waited for or cancelled; without one, only moves started by this call are."""
    plan.raise_if_deletes(allow_delete=allow_delete)
    require_passwords(plan)
    if not dry_run:
        require_access_support(plan, admin)
    recorder = Recorder(admin, send=not dry_run)
    options = MoveOptions(
        settings,
        progress or SilentProgress(),
        wait=wait,
        poll_seconds=poll_seconds,
        dry_run=dry_run,
        journal=journal,
        record=record,
    )
    run = _Run(plan, recorder, options)
    report = ApplyReport(requests=recorder.requests, dry_run=dry_run)
    try:
        for step in STEPS:  # each kind's steps, in the order kgitops.plan.kinds gives
            STEP_FUNCTIONS[step](run)
        report.outcomes = [run.outcomes[i] for i in sorted(run.outcomes)]
        report.notes = run.notes
        if dry_run:
            if run.broken is not None:
                raise run.broken
            return report
        if verify and run.broken is None:
            n = len(plan.actions)
            checked = verify_applied(plan, recorder, report.outcomes[:n], wait=wait)
            report.outcomes = [*checked, *report.outcomes[n:]]
        report.outcomes = _read_back(plan, recorder, report.outcomes)
        if record is not None and wait and run.broken is None:
            _forget_throttles_if_none_left(recorder, record)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP (kgitops.apply.signals)
        reason = interrupted_why(exc)
        run.abort(reason)
        report.outcomes = _read_back(
            plan, recorder, [run.outcomes[i] for i in sorted(run.outcomes)]
        )
        report.notes = run.notes
        raise _partial(report, f"apply was {reason}", run.changed, interrupted=True) from None
    if report.complete:
        return report
    if run.broken:
        why = f"lost the cluster: {run.broken}"
    elif all(o.status in (Status.DONE, Status.IN_FLIGHT, Status.DEFERRED) for o in report.outcomes):
        later = sum(o.status is Status.DEFERRED for o in report.outcomes)
        why = f"moves of {later} topic(s) deferred to the next `kgitops apply` (--no-wait)"
    else:
        why = "some actions were not done"
    raise _partial(report, why, run.changed)


#: Each apply step a kind names (``kgitops.plan.kinds``): the function that runs it.
STEP_FUNCTIONS: Mapping[str, Callable[[_Run], None]] = {
    "creates": _Run.creates,
    "configs": _Run.configs,
    "partitions": _Run.partitions,
    "reassign": _Run.reassign,
    "configs_after_moves": _Run.configs_after_moves,
    "throttles": _Run.throttles,
    "elections": _Run.elections,
    "access": run_access,
    "deletes": _Run.deletes,
}


def _read_back(plan: Plan, admin: Recorder, outcomes: list[ActionOutcome]) -> list[ActionOutcome]:
    """The outcomes with what was left in doubt read back from the cluster (the plan's own
    actions; those apply added, moves it adopted, are already read)."""
    n = len(plan.actions)
    if not admin.send or not any(o.status is Status.IN_DOUBT for o in outcomes[:n]):
        return outcomes
    return [*read_back_in_doubt(plan, admin, outcomes[:n]), *outcomes[n:]]


def _forget_throttles_if_none_left(admin: Recorder, record: ThrottleRecord) -> None:
    """Delete the throttle record once the cluster has no throttle left and no move in
    flight: there is nothing left for a later plan to explain."""
    if not os.path.exists(record.path):
        return
    try:
        state = admin.describe(None)
    except ClusterError:
        return
    if not state.reassignments and not stale_throttles(state):
        record.clear()


def _partial(
    report: ApplyReport, why: str, changed: bool, *, interrupted: bool = False
) -> PartialApply:
    """The error ending an apply that did not finish, worded for what happened: ``apply
    finished partly: <why>`` when the cluster changed, ``apply changed nothing: <why>``
    when it did not (exit 1), or ``why`` itself for a signal (``apply was interrupted``)."""
    error: PartialApply
    if changed or any(o.done for o in report.outcomes):
        message = why if interrupted else f"apply finished partly: {why}"
        error = PartialApply(message, report.outcomes, report.notes)
    elif interrupted:
        error = InterruptedBeforeAnyChange(why, report.outcomes, report.notes)
    else:
        error = NothingApplied(f"apply changed nothing: {why}", report.outcomes, report.notes)
    error.report = report
    return error
