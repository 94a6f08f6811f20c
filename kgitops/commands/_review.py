"""Review = apply, the shell side: check a saved plan file before anything runs it.

1. The file must match ``kgitops/schemas/plan.json`` (``check_schema``).
2. It must carry the state it was planned on (``recordedState``, written by ``plan --out``):
   all of it but the topics the plan names (``stateDigests``) and no action touches. Those
   the stale check proves unchanged, so the file need not carry them (of a plan that changes
   nothing on a cluster of a million partitions, they are 98 % of the file): apply takes
   them from the live cluster, ``check-plan`` from ``--state``, each checked against its
   digest first. A plan with a reassignment, or made with ``--rebalance`` or ``--leaders``,
   records the whole state: its moves weigh every topic's bytes.
3. Planning again from the same specs (the plan's ``clusterDir``) and that state must give
   the same fingerprint and hold every action of the file (``kgitops.plan.review``);
   anything else is refused, naming each action.

Apply then checks the live cluster against the plan's digests (``Plan.raise_if_stale``), so
what runs is what the specs ask for, on the state the reviewer saw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kgitops.errors import StalePlan, UnreviewedPlan
from kgitops.model import ClusterState
from kgitops.plan.actions import Reassign
from kgitops.plan.fields import PlanOptions
from kgitops.plan.fingerprint import ABSENT_DIGEST, fingerprint_of, topic_digest
from kgitops.plan.value import Plan

#: Where the topics a saved plan does not record come from: the state of the named topics.
Fill = Callable[[Sequence[str]], ClusterState]

if TYPE_CHECKING:
    from kgitops.commands._planning import PlanResult

_SCHEMA_ERRORS_SHOWN = 20


def check_schema(path: str, data: Any) -> None:
    """UnreviewedPlan listing where ``data`` breaks schemas/plan.json (JSON pointer each)."""
    from jsonschema import Draft202012Validator

    from kgitops.spec.schemacheck import schema

    validator = Draft202012Validator(schema("plan.json"))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    reasons = [
        f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message[:200]}"
        for e in errors[:_SCHEMA_ERRORS_SHOWN]
    ]
    if len(errors) > _SCHEMA_ERRORS_SHOWN:
        reasons.append(f"... and {len(errors) - _SCHEMA_ERRORS_SHOWN} more")
    raise UnreviewedPlan(f"{path}: not a valid kgitops plan (schemas/plan.json)", reasons)


def state_to_record(plan: Plan, state: ClusterState, options: PlanOptions) -> ClusterState:
    """The part of ``state`` that ``plan --out`` records (module docstring, step 2): all but
    the topics the plan's digests cover and no action touches, unless the plan moves replicas
    or was made with ``--rebalance`` or ``--leaders`` (then all of it)."""
    if options.rebalance or options.leaders or plan.of_kind(Reassign):
        return state
    touched = {a.topic for a in plan.actions}
    kept = {
        name: topic
        for name, topic in state.topics.items()
        if name in touched or name not in plan.state_digests
    }
    return state if len(kept) == len(state.topics) else replace(state, topics=kept)


def unrecorded_topics(plan: Plan, recorded: ClusterState) -> list[str]:
    """The topics the plan names whose state it does not record (they existed when it was
    made: a topic recorded absent has nothing to record)."""
    return sorted(
        t
        for t, digest in plan.state_digests.items()
        if t not in recorded.topics and digest != ABSENT_DIGEST
    )


def completed(plan: Plan, recorded: ClusterState, names: Sequence[str], fill: Fill) -> ClusterState:
    """``recorded`` with the topics ``names`` taken from ``fill``; StalePlan naming each one
    whose replicas or configs there are not what the plan's digest says."""
    source = fill(names)
    changed = [t for t in names if topic_digest(source, t) != plan.state_digests[t]]
    if changed:
        raise StalePlan(
            f"the plan for cluster {plan.cluster!r} is stale: the cluster changed since it "
            "was made; run `kgitops plan` again and review the new plan",
            [
                f"topic {t}: deleted since the plan was made"
                if t not in source.topics
                else f"topic {t}: its replicas or configs changed since the plan was made"
                for t in changed
            ],
        )
    topics = dict(recorded.topics)
    topics.update((t, source.topics[t]) for t in names)
    return replace(recorded, topics=topics)


def check_recorded_digests(path: str, plan: Plan, recorded: ClusterState) -> None:
    """UnreviewedPlan unless the plan's fingerprint is that of its recorded brokers and its
    digests, and every topic it records has the digest the plan gives it: what can be
    checked of a plan whose unrecorded topics cannot be read here."""
    reasons = []
    if fingerprint_of(recorded.brokers, plan.state_digests) != plan.state_fingerprint:
        reasons.append(
            "the state fingerprint is not the fingerprint of the state the plan recorded "
            "for the topics of its specs"
        )
    for t in sorted(set(plan.state_digests) & set(recorded.topics)):
        if topic_digest(recorded, t) != plan.state_digests[t]:
            reasons.append(f"topic {t}: the recorded state is not the state its digest names")
    if reasons:
        raise UnreviewedPlan(
            f"{path}: the plan's recorded state is not the state it was made on; refusing it "
            "(plan again with `kgitops plan --out` and review that plan)",
            reasons,
        )


def recorded_state(path: str, plan: Plan) -> ClusterState:
    """The state the plan was made on, as ``plan --out`` recorded it."""
    from kgitops.cluster.snapshot import state_from_json

    data = plan.recorded_state
    if data is None:
        raise UnreviewedPlan(
            f"{path}: the plan records no state, so it cannot be checked against its specs; "
            "save it with `kgitops plan DIR --out PLAN`"
        )
    return state_from_json(data, f"{path} (recordedState)")


#: A plan's ``options`` and the apply flag that must allow each (a saved plan decides nothing:
#: its file says how it was made, apply's own flags say what may be done).
OPTION_FLAGS = {
    "rebalance": "--rebalance",
    "leaders": "--leaders",
    "allowRetentionDrop": "--allow-retention-drop",
    "targets": "--allow-targeted",  # a partial plan (plan --target) runs only when asked
}


def _check_targets(path: str, plan: Plan, options: PlanOptions) -> None:
    """The selectors a saved plan was made with (``options.targets``) and the plan's own
    ``targets`` must say the same, so a partial plan never passes for a whole one."""
    wanted = list(options.targets)
    shown = list(plan.targets or ())
    if wanted != shown:
        raise UnreviewedPlan(
            f"{path}: the plan's targets ({', '.join(map(str, shown)) or 'none'}) are not the "
            f"selectors it was made with ({', '.join(map(str, wanted)) or 'none'}); refusing it",
            ["plan again with `kgitops plan --target ... --out` and review that plan"],
        )


def replan_saved(
    path: str,
    plan: Plan,
    directory: str,
    allowed: Mapping[str, bool] | None = None,
    fill: Fill | None = None,
) -> PlanResult | None:
    """Plan ``directory`` again on the plan's recorded state, completed by ``fill`` with the
    topics it does not record (``completed``); UnreviewedPlan naming every action the specs
    do not produce. Returns the re-plan (its ``state`` the state planned on, its
    ``next_lock`` the lock the reviewed plan implies); None when topics are unrecorded and
    there is no ``fill`` (``check-plan`` without ``--state``): then only
    ``check_recorded_digests`` runs, and apply plans again on the live cluster.

    ``allowed``: which of OPTION_FLAGS apply was given (None: a check of the file alone,
    ``github check-plan``, which applies nothing). A plan whose ``options`` use one it was
    not given is refused (a file's ``allowRetentionDrop: true`` never cuts retention at
    once by itself); the re-plan uses only options both the file and the flags have. Every
    fingerprint the re-plan carries (``accessFingerprint``, ``accessParts``) the plan must
    carry with the same value: one deleted from the file would turn its check off."""
    from kgitops.commands._planning import plan_directory
    from kgitops.plan.fields import ACCESS_FINGERPRINT, ACCESS_PARTS_FIELD
    from kgitops.plan.review import state_mismatch, unrequested_actions

    options = plan.options or PlanOptions()
    used = options.used()
    given = used if allowed is None else allowed
    missing = [f for o, f in OPTION_FLAGS.items() if used[o] and not given.get(o)]
    if missing:
        raise UnreviewedPlan(
            f"{path}: the plan was made with {' and '.join(missing)}, which this apply was "
            "not given; refusing it (a plan file's options decide nothing)",
            [f"apply it with {' '.join(missing)} if that is what was reviewed"],
        )
    state = recorded_state(path, plan)
    missing = unrecorded_topics(plan, state)
    if missing:
        unrecorded = set(missing)
        forged = [a for a in plan.actions if a.topic in unrecorded]
        if forged:
            raise UnreviewedPlan(
                f"{path}: the plan holds actions on topics whose state it does not record "
                "(`plan --out` records every topic an action touches); refusing it",
                [
                    f"{a.symbol} {a.kind} {a.name}: its topic is not in recordedState"
                    for a in forged
                ],
            )
        if fill is None:
            check_recorded_digests(path, plan, state)
            return None
        state = completed(plan, state, missing, fill)
    _check_targets(path, plan, options)
    result = plan_directory(directory, options, state=state, analyse_keys=False)
    expected = result.plan
    reasons = state_mismatch(plan, expected) + unrequested_actions(plan, expected)
    for key, mine, theirs in (
        (ACCESS_FINGERPRINT, plan.access_fingerprint, expected.access_fingerprint),
        (ACCESS_PARTS_FIELD, plan.access_parts, expected.access_parts),
    ):
        if mine != theirs:
            had = "lacks" if mine is None else "has another"
            reasons.append(
                f"{key}: the plan {had} {key} than its specs and recorded state give"
                if theirs is not None
                else f"{key}: the plan has {key}, its specs and recorded state give none"
            )
    if reasons:
        raise UnreviewedPlan(
            f"{path}: the plan holds what its specs ({directory}) do not produce; refusing it "
            "(plan again with `kgitops plan --out` and review that plan)",
            reasons,
        )
    return result
