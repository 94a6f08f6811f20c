"""Safe retention cuts: a large ``retention.ms`` decrease is applied in steps across applies.

Cutting retention from 30 days to 1 hour deletes almost all of a topic's data at the next log
cleanup, in one go. As topicctl does, the plan instead moves retention down by at most one
``retentionDropStep`` per apply, and says which step it is and how much data falls out of
retention with it. The cluster's ``retentionDropStep`` is either a share of the current
retention (default 0.5: a step goes to no less than half) or a duration (``1d``: at most
one day less per step)::

    30d -> 1h, step 0.5:   30d, 15d, 7.5d, 3.75d, ... -> 1h      (10 applies)
    30d -> 20d, step 0.5:  one step: 20d is not below half of 30d
    30d -> 27d, step 1d:   30d, 29d, 28d, 27d                    (3 applies)

The data that falls out of retention is estimated from the partitions' sizes (where the
cluster reports them) as if writes were even over the retention window: going from ``old`` to
``new`` drops ``size * (old - new) / old``. From ``infinite`` (-1) there is no window to
halve: the cut is held back until ``--allow-retention-drop``.

Pure: numbers in, numbers out.
"""

from __future__ import annotations

from kgitops.plan.value import PlanWarning
from kgitops.spec.dropstep import DropStep
from kgitops.spec.topic_configs import readable_config
from kgitops.units import human_bytes

__all__ = ["RETENTION", "DropStep", "bytes_out", "count_steps", "retention_cut", "steps"]

RETENTION = "retention.ms"


def steps(current: int, target: int, step: DropStep) -> list[int]:
    """Every value on the way down, ``target`` last: ``steps(30d, 1h, 0.5)`` has 10."""
    out = []
    while current > target:
        current = step.next(current, target)
        out.append(current)
    return out


def count_steps(current: int, target: int, step: DropStep) -> int:
    """``len(steps(...))`` without listing them: a duration step of ``1s`` from 30 days is
    2.6 million steps, counted by division (a share of at least 1% takes a few thousand at
    most, even from Long.MAX_VALUE)."""
    if target >= current:
        return 0
    if step.share is None:
        millis = max(step.millis or 1, 1)
        return -(-(current - target) // millis)
    return len(steps(current, target, step))


def bytes_out(size: int | None, current: int, new: int) -> int | None:
    """The bytes older than ``new`` of ``size`` bytes written evenly over ``current``."""
    if size is None or current <= 0 or new >= current:
        return None if size is None else 0
    return size * (current - max(new, 0)) // current


def _ms(value: int) -> str:
    return readable_config(RETENTION, str(value))


def retention_cut(
    topic: str,
    current_text: str,
    target_text: str,
    step: DropStep,
    size: int | None,
    *,
    allow: bool = False,
) -> tuple[str | None, PlanWarning] | None:
    """What this plan sets for a ``retention.ms`` change, and the warning that says why:
    None for no cut (a raise, or values that are not numbers); ``(None, warning)`` to hold a
    cut from infinite back; else ``(value, warning)``: the target, or the next step to it."""
    try:
        current, target = int(current_text), int(target_text)
    except ValueError:
        return None
    if target == -1 or (current != -1 and target >= current):
        return None
    data: dict[str, object] = {"from": current, "target": target, "sizeBytes": size}
    if current == -1 and not allow:
        data.update(step=0, steps=0)
        return None, PlanWarning(
            topic,
            "RETENTION_STEP",
            f"retention.ms infinite -> {_ms(target)} held back: from infinite there is no "
            "window to cut in steps, and everything older than the new retention would be "
            "deleted at once; plan and apply with --allow-retention-drop to cut it",
            data,
        )
    count = 1 if allow or current == -1 else count_steps(current, target, step)
    new = target if count == 1 else step.next(current, target)
    out = bytes_out(size, current, new) if current != -1 else size
    gone = "an unknown amount of data" if out is None else human_bytes(out)
    of = "" if size is None else f" of {human_bytes(size)}"
    data.update(to=new, step=1, steps=count, bytesOut=out)
    if count == 1:
        return str(new), PlanWarning(
            topic,
            "RETENTION_CUT",
            f"retention.ms {_ms(current)} -> {_ms(new)}: {gone}{of} falls out of retention "
            "and is deleted at the next log cleanup",
            data,
        )
    return str(new), PlanWarning(
        topic,
        "RETENTION_STEP",
        f"retention.ms {_ms(current)} -> {_ms(target)} in {count} steps (retentionDropStep):"
        f" this apply is step 1 of {count}, to {_ms(new)}; {gone}{of} falls out of "
        "retention now; --allow-retention-drop cuts it in one apply",
        data,
    )
