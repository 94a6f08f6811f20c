"""Review = apply, the shell side: check a saved plan file before anything runs it.

1. The file must match ``kgitops/schemas/plan.json`` (``check_schema``).
2. It must carry the state it was planned on (``recordedState``, written by ``plan --out``).
3. Planning again from the same specs (the plan's ``clusterDir``) and that recorded state
   must give the same fingerprint and hold every action of the file
   (``kgitops.plan.review``); anything else is refused, naming each action.

Apply then checks the live cluster against the plan's digests (``Plan.raise_if_stale``), so
what runs is what the specs ask for, on the state the reviewer saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kgitops.errors import UnreviewedPlan
from kgitops.model import ClusterState
from kgitops.plan.value import Plan

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


def recorded_state(path: str, plan: Plan) -> ClusterState:
    """The state the plan was made on, as ``plan --out`` recorded it."""
    from kgitops.cluster.snapshot import state_from_json

    data = plan.extra.get("recordedState")
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


def _targets(path: str, plan: Plan, options: Mapping[str, Any]) -> list[str]:
    """The selectors a saved plan was made with (``options.targets``); the plan's own
    ``targets`` must say the same, so a partial plan never passes for a whole one."""
    from kgitops.plan.targets import TARGETS_FIELD

    wanted = options.get("targets") or []
    shown = plan.extra.get(TARGETS_FIELD) or []
    if wanted != shown:
        raise UnreviewedPlan(
            f"{path}: the plan's targets ({', '.join(map(str, shown)) or 'none'}) are not the "
            f"selectors it was made with ({', '.join(map(str, wanted)) or 'none'}); refusing it",
            ["plan again with `kgitops plan --target ... --out` and review that plan"],
        )
    return [str(t) for t in wanted]


def verify_saved_plan(
    path: str, plan: Plan, directory: str, allowed: Mapping[str, bool] | None = None
) -> ClusterState:
    """Plan ``directory`` again on the plan's recorded state; UnreviewedPlan naming every
    action the specs do not produce. Returns the recorded state."""
    return replan_saved(path, plan, directory, allowed).state


def replan_saved(
    path: str, plan: Plan, directory: str, allowed: Mapping[str, bool] | None = None
) -> PlanResult:
    """``verify_saved_plan``, returning the re-plan (its ``state`` is the recorded state, its
    ``next_lock`` the lock the reviewed plan implies).

    ``allowed``: which of OPTION_FLAGS apply was given (None: a check of the file alone,
    ``github check-plan``, which applies nothing). A plan whose ``options`` use one it was
    not given is refused (a file's ``allowRetentionDrop: true`` never cuts retention at
    once by itself); the re-plan uses only options both the file and the flags have. Every
    fingerprint the re-plan carries (``accessFingerprint``, ``accessParts``) the plan must
    carry with the same value: one deleted from the file would turn its check off."""
    from kgitops.commands._planning import plan_directory
    from kgitops.plan.review import state_mismatch, unrequested_actions
    from kgitops.plan.value import ACCESS_FINGERPRINT, ACCESS_PARTS_FIELD

    options = plan.extra.get("options") or {}
    given = options if allowed is None else allowed
    missing = [f for o, f in OPTION_FLAGS.items() if options.get(o) and not given.get(o)]
    if missing:
        raise UnreviewedPlan(
            f"{path}: the plan was made with {' and '.join(missing)}, which this apply was "
            "not given; refusing it (a plan file's options decide nothing)",
            [f"apply it with {' '.join(missing)} if that is what was reviewed"],
        )
    state = recorded_state(path, plan)
    result = plan_directory(
        directory,
        state=state,
        rebalance=bool(options.get("rebalance")),
        leaders=bool(options.get("leaders")),
        allow_retention_drop=bool(options.get("allowRetentionDrop")),
        analyse_keys=False,
        targets=_targets(path, plan, options),
    )
    expected = result.plan
    reasons = state_mismatch(plan, expected) + unrequested_actions(plan, expected)
    for key in (ACCESS_FINGERPRINT, ACCESS_PARTS_FIELD):
        if plan.extra.get(key) != expected.extra.get(key):
            had = "lacks" if key not in plan.extra else "has another"
            reasons.append(
                f"{key}: the plan {had} {key} than its specs and recorded state give"
                if key in expected.extra
                else f"{key}: the plan has {key}, its specs and recorded state give none"
            )
    if reasons:
        raise UnreviewedPlan(
            f"{path}: the plan holds what its specs ({directory}) do not produce; refusing it "
            "(plan again with `kgitops plan --out` and review that plan)",
            reasons,
        )
    return result
