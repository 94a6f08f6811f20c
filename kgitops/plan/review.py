"""Review = apply: a saved plan may only hold what its specs produce.

``apply --plan`` and ``github check-plan`` plan again from the same specs and the state the
plan recorded, and compare. A plan file edited after review (an appended ``alter_config`` on
an unmanaged topic, a ``create_topic`` of a topic in no spec, a create whose assignment has
fewer partitions than ``partitions``) is refused, naming each action::

    ~ alter_config payments.events: no spec asks for it
    + create_topic orders: not what the specs produce (assignment: 3 partitions, the specs
      give 6)

Only what apply sends is compared: sizes, reasons and warnings may differ (they are figures
for a reader); replicas, counts, configs and the state fingerprint may not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from kgitops.plan.actions import Action
from kgitops.plan.value import Plan

_SHOWN = 5


def _essence(action: Action) -> dict[str, Any]:
    """What apply sends for ``action``: its JSON without the figures for readers."""
    data = action.to_json()
    data.pop("bytesToMove", None)
    data.pop("sizeBytes", None)
    data.pop("origins", None)  # where a value was written: for readers, not sent
    if isinstance(data.get("moves"), Mapping):
        data["moves"] = {p: {"from": m["from"], "to": m["to"]} for p, m in data["moves"].items()}
    return data


def _label(action: Action) -> str:
    return f"{action.symbol} {action.kind} {action.name}"


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:_SHOWN])
    return shown + (f" and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")


def _differences(got: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    out = []
    for field in sorted(set(got) | set(want)):
        a, b = got.get(field), want.get(field)
        if a == b:
            continue
        if field in ("assignment", "moves") and isinstance(a, Mapping) and isinstance(b, Mapping):
            if set(a) != set(b):
                out.append(f"{field}: {len(a)} partition(s), the specs give {len(b)}")
            else:
                out.append(
                    f"{field} of partition(s) {_names(sorted(k for k in a if a[k] != b[k]))}"
                )
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            out.append(f"{field}: {_names(keys)}")
        else:
            out.append(f"{field}: {a!r}, the specs give {b!r}")
    return out


def unrequested_actions(saved: Plan, expected: Plan) -> list[str]:
    """Every action of ``saved`` that ``expected`` (the plan the specs produce from the same
    state) does not hold exactly, one line each; empty when the saved plan is what the specs
    ask for, and one line for each action the specs produce that the saved plan leaves out:
    a plan cut down by hand is a partial plan no review asked for (``plan --target`` makes
    partial plans, and records its selectors so that the re-plan is cut down the same way)."""
    want = {a.sort_key: a for a in expected.actions}  # unique: a broker's kinds name it
    seen: Counter[tuple[int, str]] = Counter()
    out = []
    for action in saved.actions:
        key = action.sort_key
        seen[key] += 1
        if seen[key] > 1:
            out.append(f"{_label(action)}: listed twice")
            continue
        other = want.get(key)
        if other is None:
            out.append(f"{_label(action)}: no spec asks for it")
            continue
        diff = _differences(_essence(action), _essence(other))
        if diff:
            out.append(f"{_label(action)}: not what the specs produce ({'; '.join(diff)})")
    for key, other in want.items():
        if key not in seen:
            out.append(f"{_label(other)}: the specs produce it, the plan leaves it out")
    return out


def state_mismatch(saved: Plan, expected: Plan) -> list[str]:
    """Why the state the saved plan recorded is not the one its fingerprint names (a plan
    whose recorded state was edited, or whose specs name other topics now)."""
    out = []
    if saved.state_fingerprint != expected.state_fingerprint:
        out.append(
            "the state fingerprint is not the fingerprint of the state the plan recorded "
            "for the topics of its specs"
        )
    for topic in sorted(set(saved.state_digests) ^ set(expected.state_digests)):
        where = "the plan" if topic in saved.state_digests else "the specs"
        out.append(f"topic {topic}: only {where} name(s) it")
    return out
