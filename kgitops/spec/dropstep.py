"""cluster.yaml ``retentionDropStep``: how far one apply may cut a topic's retention.

Read here (the spec layer checks it at load); used by ``kgitops.plan.retention``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgitops.units import spec_millis

#: A smaller share would take thousands of applies to cut retention at all.
MIN_SHARE = 0.01


@dataclass(frozen=True)
class DropStep:
    """At most ``share`` of the current retention, or at most ``millis``, per step."""

    share: float | None = 0.5
    millis: int | None = None

    @classmethod
    def parse(cls, value: object) -> DropStep:
        """``0.5`` (a share, 0 < x <= 1), ``"1d"`` (a duration) or an integer of milliseconds
        (> 1); ValueError otherwise."""
        if isinstance(value, bool):
            raise ValueError("retentionDropStep must be a share (0.5) or a duration (1d)")
        if isinstance(value, int | float) and MIN_SHARE <= value <= 1:
            return cls(share=float(value))
        if isinstance(value, int) and value > 1:
            return cls(share=None, millis=value)
        if isinstance(value, str):
            try:
                ms = spec_millis(value)
            except ValueError as exc:  # AmountTooLarge
                raise ValueError(f"retentionDropStep: {exc}") from None
            if ms is not None and ms > 0:
                return cls(share=None, millis=ms)
        raise ValueError(
            f"retentionDropStep must be a share of the retention ({MIN_SHARE} .. 1, e.g. 0.5) or a "
            f"duration (1d, 12h), not {value!r}"
        )

    def next(self, current: int, target: int) -> int:
        """The retention one step down from ``current`` towards ``target``."""
        if target >= current:
            return target
        cut = int(current * self.share) if self.share is not None else int(self.millis or 0)
        return max(target, current - max(cut, 1))
