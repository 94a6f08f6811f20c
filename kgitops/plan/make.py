"""One cluster folder's plan, in one pure call: ``make_plan(inputs) -> Planned``.

The shell (``kgitops.commands._planning``) does the I/O: it reads the folder's specs, the
cluster's state (or a saved one), the lock, the owner records and the throttle record,
checks the connection settings against a git base, and passes what it read here, with the
key analysis as a function (it runs Spark). ``make_plan`` composes the plan from it, each
step a function of its own::

    compute_plan        the topic actions, warnings, transfer, spread and the lock
    with_access         the ACL, SCRAM user and quota actions, and the access fingerprint
    credentials_in_clear  SCRAM credentials over a plaintext connection
    policy warnings     cluster.yaml's policies and the rules that read the live state
    unowned check       a folder without ``owns:`` vs other owners' records
    targeted            ``--target``: the part the selectors name, and its lock
    require_fresh       ``--locked``: the lock must already say what this plan chose
    with_key_analysis   KEY_REMAP warnings with the share of keys that move

and returns the plan with the lock it implies (what ``--update-lock`` writes and apply
records). Errors are raised as the steps find them: SpecError for a rule the specs break,
PlanError, LockError.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgitops.errors import SpecError
from kgitops.model import ClusterSpec, ClusterState
from kgitops.perf import stage
from kgitops.plan.access_diff import wants_access, with_access
from kgitops.plan.connection import credentials_in_clear
from kgitops.plan.diff import compute_plan
from kgitops.plan.fields import PlanOptions
from kgitops.plan.key_analysis import KeyReport, with_key_analysis
from kgitops.plan.owners import OwnerRecord, plan_names, unowned_conflicts
from kgitops.plan.targets import parse_targets, targeted
from kgitops.plan.value import Finding, Plan, PlanWarning
from kgitops.spec.celrules import evaluate
from kgitops.spec.lock import Lock, require_fresh

if TYPE_CHECKING:
    from kgitops.spec.load import Specs


@dataclass(frozen=True)
class PlanInputs:
    """What the shell read for one plan, and how the plan is to be made.

    ``specs`` are the folder's (without errors) and ``cluster`` its cluster.yaml; ``state``
    the cluster's (with ``access`` read when the folder manages access); ``lock`` the
    folder's kgitops.lock. ``options`` say how the plan is made (``--rebalance``,
    ``--leaders``, ``--allow-retention-drop``, the ``--target`` selectors as given).
    ``write_rates`` (topic -> bytes/s, where the adapter knows them)
    and ``throttle_record`` (what the last apply wrote of the throttles it set) inform the
    diff. ``findings`` are the connection changes found against the git base.
    ``records`` (owner -> record, read from the cluster) and ``owner`` (this folder's owner
    and where it writes from) check a folder without ``owns:`` against other owners; no
    ``records``, no check. ``key_report`` runs the key analysis (None: not at all).
    """

    directory: str
    specs: Specs
    cluster: ClusterSpec
    state: ClusterState
    lock: Lock | None = None
    options: PlanOptions = field(default_factory=PlanOptions)
    locked: bool = False
    write_rates: Mapping[str, float] | None = None
    throttle_record: Mapping[str, Any] | None = None
    findings: tuple[Finding, ...] = ()
    records: Mapping[str, OwnerRecord] = field(default_factory=dict)
    owner: tuple[str, str] | None = None
    key_report: KeyReport | None = None


@dataclass(frozen=True)
class Planned:
    """The plan, and the lock it implies (for a targeted plan: the new entries of its topics,
    every other as the lock had it)."""

    plan: Plan
    lock: Lock


def make_plan(inputs: PlanInputs) -> Planned:
    """The plan of ``inputs`` (see the module doc for its steps)."""
    specs, cluster, state = inputs.specs, inputs.cluster, inputs.state
    changes = evaluate(specs.rules, specs.topics, specs.written, state)  # rules reading old
    if any(d.is_error for _, d in changes):
        raise SpecError(sorted(d for _, d in changes))
    with stage("diff"):
        plan, lock = compute_plan(
            specs,
            state,
            inputs.lock,
            rebalance=inputs.options.rebalance,
            leaders=inputs.options.leaders,
            write_rates=inputs.write_rates,
            throttle_record=inputs.throttle_record,
            allow_retention_drop=inputs.options.allow_retention_drop,
        )
    if wants_access(specs.access, cluster):
        plan = credentials_in_clear(with_access(plan, specs.access, state, cluster), cluster)
    if specs.policy or changes:  # warnings (errors stopped above): the reviewer sees them
        policy = tuple(
            PlanWarning(topic, "POLICY", f"{d.mark}: {d.message}")
            for topic, d in (*specs.policy, *changes)
        )
        plan = replace(plan, warnings=plan.warnings + policy)
    if inputs.records and not cluster.owns.declared:  # owns all, but not what is recorded
        _check_unowned(inputs, plan)
    selectors = parse_targets(inputs.options.targets)
    if selectors:
        plan = targeted(plan, selectors, specs.topics, state, cluster, specs.access)
        lock = _targeted_lock(inputs.lock, lock, plan.state_digests)
    if inputs.locked:
        require_fresh(inputs.lock, lock, inputs.directory)
    if inputs.key_report is not None:
        plan = with_key_analysis(plan, specs.topics, inputs.key_report)
    folder = os.path.normpath(inputs.directory)
    return Planned(replace(plan, cluster_dir=folder, findings=inputs.findings), lock)


def _targeted_lock(old: Lock | None, new: Lock, topics: Collection[str]) -> Lock:
    """A targeted plan's lock: the new entries of its topics, every other as it was."""
    entries = dict(old.entries) if old is not None else {}
    for topic in topics:
        if topic in new.entries:
            entries[topic] = new.entries[topic]
        else:
            entries.pop(topic, None)
    return Lock(entries=dict(sorted(entries.items())))


def _check_unowned(inputs: PlanInputs, plan: Plan) -> None:
    """A folder without ``owns:``: SpecError when another owner's record owns a topic or
    principal it declares or its plan creates, changes or deletes (a drain still moves
    every replica)."""
    assert inputs.owner is not None, "the shell reads the owner with the records"
    specs = inputs.specs
    topics, principals = plan_names(plan.actions)
    topics.update(t.name for t in specs.topics)
    principals.update(a.acl.principal for a in specs.access.acls)
    principals.update(f"User:{u.name}" for u in specs.access.users)
    me, source = inputs.owner
    found = unowned_conflicts(inputs.cluster, me, inputs.records, topics, principals, source=source)
    if found:
        raise SpecError(found)
