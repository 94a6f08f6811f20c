"""Plan one cluster folder end to end, the shell's part: read the specs, the live state (or
a saved one), the lock, the owner and throttle records, check the connection settings
against a git base; make the plan in one call (``kgitops.plan.make.make_plan``); write the
lock when asked.

Shared by ``plan`` and ``apply`` (which plans when it is not given a saved plan), so both see
exactly the same plan for the same inputs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kgitops.errors import ConnectionChanged, PlanError, SpecError
from kgitops.model import ClusterSpec, ClusterState, TopicSpec
from kgitops.perf import paused_gc, stage
from kgitops.plan.access_diff import needed_parts, wants_access
from kgitops.plan.connection import connection_changes
from kgitops.plan.fields import PlanOptions
from kgitops.plan.identity import check_cluster_id
from kgitops.plan.key_analysis import KeyReport
from kgitops.plan.make import PlanInputs, make_plan
from kgitops.plan.value import Finding, Plan
from kgitops.spec.lock import Lock, read_lock, read_lock_for_update, write_lock

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


#: A plan of everything the folder declares, made with none of the options.
WHOLE_PLAN = PlanOptions()


def plan_options(args: argparse.Namespace) -> PlanOptions:
    """The options ``plan DIR`` and ``apply DIR`` make a plan with, from the flags both take
    (the ``--target`` selectors as given; the plan holds them parsed, ``Plan.targets``)."""
    return PlanOptions(
        rebalance=bool(args.rebalance),
        leaders=bool(args.leaders),
        allow_retention_drop=bool(args.allow_retention_drop),
        targets=tuple(args.target),
    )


@paused_gc()  # the specs, the state and the plan: millions of acyclic objects (kgitops.perf)
def plan_directory(
    directory: str,
    options: PlanOptions = WHOLE_PLAN,
    *,
    state_file: str | None = None,
    locked: bool = False,
    update_lock: bool = False,
    state: ClusterState | None = None,
    analyse_keys: bool = True,
    base: Base | None = None,
    take_over_owner: bool = False,
) -> PlanResult:
    """Plan ``directory`` against its cluster (or the saved state in ``state_file``, or
    ``state`` itself: a saved plan's recorded state, when apply checks the plan): read what
    the plan needs, make it in one call (``kgitops.plan.make``), write the lock.

    ``options``: how the plan is made, as a saved plan records it: ``--rebalance``,
    ``--leaders``, ``--allow-retention-drop`` (cut retention in one step,
    ``kgitops.plan.retention``) and the ``--target`` selectors (only what they name,
    ``kgitops.plan.targets``).
    ``locked``: LockError unless kgitops.lock is exactly what this plan would write.
    ``update_lock``: write the lock when it changed.
    ``analyse_keys``: run the key analysis of KEY_REMAP warnings (Spark; figures only).
    ``take_over_owner``: this folder's ``owns.owner`` may be recorded from another folder.
    ``base``: the cluster.yaml of a git ref to compare the connection settings with; a
    change is a CONNECTION_CHANGED finding, and without ``base.allow`` kgitops does not
    connect with the changed settings (ConnectionChanged) unless it plans offline.
    """
    if locked and update_lock:
        raise PlanError("--locked and --update-lock contradict each other; pick one")
    from kgitops.plan.targets import parse_targets
    from kgitops.spec.load import load_specs

    parse_targets(options.targets)  # a bad selector is refused before anything is read

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
    findings = _connection_findings(directory, cluster, base, offline=state is not None)
    access = wants_access(specs.access, cluster)
    write_rates: Mapping[str, float] | None = None
    records: Mapping[str, OwnerRecord] = {}
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
    lock, conflicted = (
        read_lock_for_update(directory) if update_lock else (read_lock(directory), None)
    )
    owner = None
    if records and not cluster.owns.declared:  # checked against the plan's names
        from kgitops.commands._owners import owner_of

        owner = owner_of(cluster)
    made = make_plan(
        PlanInputs(
            directory=directory,
            specs=specs,
            cluster=cluster,
            state=state,
            lock=lock,
            options=options,
            locked=locked,
            write_rates=write_rates,
            throttle_record=_throttle_record(cluster) if state_file is None else None,
            findings=findings,
            records=records,
            owner=owner,
            key_report=_key_report(directory) if analyse_keys else None,
        )
    )
    written = False
    if update_lock and (made.lock != lock or conflicted is not None):
        write_lock(directory, made.lock)
        written = True
    return PlanResult(
        made.plan,
        specs,
        cluster,
        state,
        made.lock if written else lock,
        written,
        conflicted,
        made.lock,
    )


def _connection_findings(
    directory: str, cluster: ClusterSpec, base: Base | None, *, offline: bool
) -> tuple[Finding, ...]:
    """The CONNECTION_CHANGED findings of cluster.yaml against ``base``; ConnectionChanged
    when there are some, the plan would connect (not ``offline``) and ``base.allow`` is not
    given."""
    if base is None:
        return ()
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
    if findings and not offline and not base.allow:
        raise ConnectionChanged(
            f"{os.path.join(directory, 'cluster.yaml')} changes how kgitops connects to the "
            f"cluster since {base.ref}; kgitops does not connect with settings nobody "
            "allowed: review the change, then pass --allow-connection-change (or plan "
            "offline with --state)",
            [f.message for f in findings],
        )
    return findings


def _throttle_record(cluster: ClusterSpec) -> Mapping[str, Any] | None:
    """What the last apply wrote down about the throttles it set (``kgitops.apply.record``)."""
    from kgitops.apply.record import read_record

    return read_record(cluster)


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


def _key_report(directory: str) -> KeyReport:
    """The key analysis of a topic's key sample (Spark, ``kgitops.analytics``): the sample is
    read inside ``directory`` only."""

    def report(spec: TopicSpec, old: int, new: int) -> Mapping[str, Any]:
        assert spec.keys is not None
        from kgitops.analytics.api import key_report
        from kgitops.files import resolve_inside

        sample = resolve_inside(directory, spec.keys.sample)  # validated; checked again
        return key_report(sample, spec.keys.column, [old, new], size_column=spec.keys.size_column)

    return report
