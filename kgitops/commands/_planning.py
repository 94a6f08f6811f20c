"""Plan one cluster folder end to end: specs, live state (or a saved one), lock, diff, keys.

Shared by ``plan`` and ``apply`` (which plans when it is not given a saved plan), so both see
exactly the same plan for the same inputs.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kgitops.errors import ConnectionChanged, KgitopsError, PlanError, SpecError
from kgitops.model import ClusterSpec, ClusterState, TopicSpec
from kgitops.perf import paused_gc, stage
from kgitops.plan.access_diff import needed_parts, wants_access, with_access
from kgitops.plan.connection import connection_changes, credentials_in_clear
from kgitops.plan.diff import compute_plan
from kgitops.plan.identity import check_cluster_id
from kgitops.plan.value import Finding, Plan, PlanWarning
from kgitops.spec.lock import (
    Lock,
    read_lock,
    read_lock_for_update,
    require_fresh,
    write_lock,
)

if TYPE_CHECKING:
    from kgitops.plan.owners import OwnerRecord
    from kgitops.spec.load import Specs


@dataclass(frozen=True)
class PlanResult:
    plan: Plan
    specs: Specs
    cluster: ClusterSpec
    state: ClusterState
    lock: Lock | None = None
    lock_written: bool = False
    #: --update-lock over a merge conflict: the topics the two sides disagreed on
    lock_conflict: tuple[str, ...] | None = None
    #: the lock this plan implies: what --update-lock writes, and apply records
    next_lock: Lock | None = None


@dataclass(frozen=True)
class Base:
    """The connection settings to compare with: cluster.yaml at git ref ``ref`` (``cluster``
    None: it has none there), and whether a change of them is allowed (``allow``)."""

    ref: str
    cluster: ClusterSpec | None
    allow: bool = False


@dataclass(frozen=True)
class _Desired:
    cluster: ClusterSpec
    topics: Sequence[TopicSpec]


def plan_directory(
    directory: str,
    *,
    state_file: str | None = None,
    rebalance: bool = False,
    locked: bool = False,
    update_lock: bool = False,
    state: ClusterState | None = None,
    analyse_keys: bool = True,
    leaders: bool = False,
    base: Base | None = None,
    allow_retention_drop: bool = False,
    targets: Sequence[str] = (),
    take_over_owner: bool = False,
) -> PlanResult:
    """Plan ``directory`` against its cluster (or the saved state in ``state_file``, or
    ``state`` itself: a saved plan's recorded state, when apply checks the plan).

    ``locked``: LockError unless kgitops.lock is exactly what this plan would write.
    ``update_lock``: write the lock when it changed.
    ``allow_retention_drop``: cut retention in one step (``kgitops.plan.retention``).
    ``analyse_keys``: run the key analysis of KEY_REMAP warnings (Spark; figures only).
    ``targets``: ``--target`` selectors: only what they name (``kgitops.plan.targets``).
    ``take_over_owner``: this folder's ``owns.owner`` may be recorded from another folder.
    ``base``: the cluster.yaml of a git ref to compare the connection settings with; a
    change is a CONNECTION_CHANGED finding, and without ``base.allow`` kgitops does not
    connect with the changed settings (ConnectionChanged) unless it plans offline.
    """
    if locked and update_lock:
        raise PlanError("--locked and --update-lock contradict each other; pick one")
    with paused_gc():
        return _plan_directory(
            directory,
            state_file,
            rebalance,
            locked,
            update_lock,
            state,
            analyse_keys,
            leaders,
            base,
            allow_retention_drop,
            targets,
            take_over_owner,
        )


def _plan_directory(
    directory: str,
    state_file: str | None,
    rebalance: bool,
    locked: bool,
    update_lock: bool,
    state: ClusterState | None,
    analyse_keys: bool,
    leaders: bool = False,
    base: Base | None = None,
    allow_retention_drop: bool = False,
    targets: Sequence[str] = (),
    take_over_owner: bool = False,
) -> PlanResult:
    from kgitops.plan.targets import parse_targets, targeted
    from kgitops.spec.celrules import evaluate
    from kgitops.spec.load import load_specs

    selectors = parse_targets(targets)  # a bad selector before anything is read

    if state is None and state_file is not None:
        from kgitops.cluster.snapshot import read_state

        state = read_state(state_file)
    with stage("specs"):
        specs = load_specs(directory, brokers=None if state is None else state.brokers)
    if specs.errors:
        raise SpecError(specs.diagnostics)
    cluster = specs.cluster
    if cluster is None:  # load_specs reports a missing cluster.yaml as an error
        raise PlanError(f"{directory}: no cluster.yaml")
    findings: tuple[Finding, ...] = ()
    if base is not None:
        from kgitops.apply.journal import tracked_records

        committed = tracked_records(directory)
        if committed:
            raise PlanError(
                f"{committed[0]}: .kgitops/ is kgitops' local record of this checkout and must "
                "not be committed (apply ignores it): git rm --cached it"
            )
        from kgitops.commands._gitbase import connection_contents

        findings = tuple(
            connection_changes(
                base.cluster,
                cluster,
                base=base.ref,
                old_contents=connection_contents(base.cluster, base.ref),
                new_contents=connection_contents(cluster),
            )
        )
        if findings and state is None and not base.allow:
            raise ConnectionChanged(
                f"{os.path.join(directory, 'cluster.yaml')} changes how kgitops connects to the "
                f"cluster since {base.ref}; kgitops does not connect with settings nobody "
                "allowed: review the change, then pass --allow-connection-change (or plan "
                "offline with --state)",
                [f.message for f in findings],
            )
    access = wants_access(specs.access, cluster)
    write_rates: Mapping[str, float] | None = None
    records: Mapping[str, OwnerRecord] | None = None
    if state is None:
        state, write_rates, records = _describe(cluster, specs, access, take_over_owner)
    elif access and state.access is None:
        raise PlanError(
            f"{state_file}: the saved state has no ACLs, users or quotas (taken before they "
            "were managed); take a new snapshot"
        )
    check_cluster_id(cluster, state)
    if state.kafka_version is None:  # a state file from before kafkaVersion: cluster.yaml's
        state = replace(state, kafka_version=cluster.kafka_version)
    changes = evaluate(specs.rules, specs.topics, specs.written, state)  # rules reading old
    if any(d.is_error for _, d in changes):
        raise SpecError(sorted(d for _, d in changes))
    lock, conflicted = (
        read_lock_for_update(directory) if update_lock else (read_lock(directory), None)
    )
    with stage("diff"):
        plan, new_lock = compute_plan(
            _Desired(cluster, specs.topics),
            state,
            lock,
            rebalance=rebalance,
            leaders=leaders,
            write_rates=write_rates,
            throttle_record=_throttle_record(cluster) if state_file is None else None,
            allow_retention_drop=allow_retention_drop,
        )
    if access:
        plan = credentials_in_clear(with_access(plan, specs.access, state, cluster), cluster)
    if specs.policy or changes:  # warnings (errors stopped above): the reviewer sees them
        policy = tuple(
            PlanWarning(topic, "POLICY", f"{d.mark}: {d.message}")
            for topic, d in (*specs.policy, *changes)
        )
        plan = replace(plan, warnings=plan.warnings + policy)
    if records and not cluster.owns.declared:  # it owns everything, but not what is recorded
        _check_unowned(cluster, records, specs, plan)
    if selectors:
        plan = targeted(plan, selectors, specs.topics, state, cluster, specs.access)
        new_lock = _targeted_lock(lock, new_lock, plan.state_digests)
    if locked:
        require_fresh(lock, new_lock, directory)
    if analyse_keys:
        plan = _with_key_analysis(plan, specs.topics, directory)
    plan = replace(plan, cluster_dir=os.path.normpath(directory), findings=findings)
    written = False
    if update_lock and (new_lock != lock or conflicted is not None):
        write_lock(directory, new_lock)
        written = True
    return PlanResult(
        plan, specs, cluster, state, new_lock if written else lock, written, conflicted, new_lock
    )


def _targeted_lock(old: Lock | None, new: Lock, topics: Collection[str]) -> Lock:
    """A targeted plan's lock: the new entries of its topics, every other as it was."""
    entries = dict(old.entries) if old is not None else {}
    for topic in topics:
        if topic in new.entries:
            entries[topic] = new.entries[topic]
        else:
            entries.pop(topic, None)
    return Lock(entries=dict(sorted(entries.items())))


def _throttle_record(cluster: ClusterSpec) -> Mapping[str, Any] | None:
    """What the last apply wrote down about the throttles it set (``kgitops.apply.record``)."""
    from kgitops.apply.record import read_record

    return read_record(cluster)


def _check_unowned(
    cluster: ClusterSpec, records: Mapping[str, OwnerRecord], specs: Specs, plan: Plan
) -> None:
    """A folder without ``owns:``: SpecError when another owner's record owns a topic or
    principal it declares or its plan creates, changes or deletes (a drain still moves
    every replica)."""
    from kgitops.commands._owners import check_unowned
    from kgitops.plan.owners import plan_names

    topics, principals = plan_names(plan.actions)
    topics.update(t.name for t in specs.topics)
    principals.update(a.acl.principal for a in specs.access.acls)
    principals.update(f"User:{u.name}" for u in specs.access.users)
    check_unowned(cluster, records, topics, principals)


def _describe(
    cluster: ClusterSpec, specs: Specs, access: bool, take_over_owner: bool = False
) -> tuple[ClusterState, Mapping[str, float] | None, Mapping[str, OwnerRecord]]:
    """One batched describe: every topic when unmanaged topics matter (or a drain, which must
    see every replica on the drained brokers), else the managed ones; with ``access``, the
    ACLs, SCRAM users and quotas too (three more requests). And the owner records: a folder
    with ``owns:`` stops (SpecError) at another owner's overlapping claim
    (kgitops/plan/owners.py); one without is checked against them once planned. And the
    topics' write rates where the adapter knows them
    (the simulated cluster does; Kafka's admin API does not)."""
    from kgitops.cluster.connect import open_cluster
    from kgitops.cluster.port import describe_access
    from kgitops.commands._owners import check_records, keeps_record, read_records

    admin = open_cluster(cluster)
    try:
        if cluster.unmanaged_topics == "ignore" and not cluster.decommission:
            state = admin.describe([t.name for t in specs.topics])
        else:
            state = admin.describe(None)
        if access:
            parts = needed_parts(specs.access, cluster)
            state = replace(state, access=describe_access(admin, parts))
        records = read_records(cluster, admin)
        if keeps_record(cluster):  # another owner's overlapping claim stops the plan
            check_records(cluster, records, take_over=take_over_owner)
        rates = getattr(admin, "write_rates", None)
        return state, (rates() if callable(rates) else None), records
    finally:
        admin.close()


def _with_key_analysis(plan: Plan, topics: Sequence[TopicSpec], directory: str) -> Plan:
    """Add the key analysis (share of keys and messages that move) to KEY_REMAP warnings of
    topics whose spec has a key sample. The analysis runs Spark, so only when needed."""
    by_name = {t.name: t for t in topics}
    wanted = [
        w for w in plan.warnings if w.code == "KEY_REMAP" and by_name[w.topic].keys is not None
    ]
    if not wanted:
        return plan
    done: dict[int, PlanWarning] = {}
    for w in wanted:
        spec = by_name[w.topic]
        assert spec.keys is not None
        done[id(w)] = _analysed(w, spec, directory)
    return replace(plan, warnings=tuple(done.get(id(w), w) for w in plan.warnings))


def _analysed(w: PlanWarning, spec: TopicSpec, directory: str) -> PlanWarning:
    assert spec.keys is not None
    old, new = int(w.data["from"]), int(w.data["to"])
    data: dict[str, Any] = dict(w.data)
    try:
        from kgitops.analytics.api import key_report
        from kgitops.files import resolve_inside

        sample = resolve_inside(directory, spec.keys.sample)  # validated; checked again

        report = key_report(sample, spec.keys.column, [old, new], size_column=spec.keys.size_column)
        move = _move(report, old, new)
    except ImportError as exc:
        data["analysis"] = f"unavailable: {exc}"
        return replace(w, message=w.message + "; key analysis unavailable", data=data)
    except KgitopsError as exc:
        data["analysis"] = f"failed: {exc}"
        return replace(w, message=f"{w.message}; key analysis failed: {exc}", data=data)
    if move is None:
        data["analysis"] = "the report has no figures for this change"
        return replace(w, data=data)
    key_share, msg_share = float(move["keyShare"]), float(move["messageShare"])
    data.update(keyShare=key_share, messageShare=msg_share, sample=spec.keys.sample)
    counts = report.get("partitionCounts", {})
    if str(old) in counts and str(new) in counts:
        data.update(
            loadBefore=[int(x) for x in counts[str(old)]["messages"]],
            loadAfter=[int(x) for x in counts[str(new)]["messages"]],
        )
    return replace(
        w,
        message=f"{w.message}; in the key sample {key_share:.1%} of keys and "
        f"{msg_share:.1%} of messages move to another partition",
        data=data,
    )


def _move(report: Mapping[str, Any], old: int, new: int) -> Mapping[str, Any] | None:
    for m in report.get("moves", []):
        if int(m.get("from", -1)) == old and int(m.get("to", -1)) == new:
            return dict(m)
    return None
