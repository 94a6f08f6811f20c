"""How kgitops prints quantities: one home for byte counts and durations.

Plan, apply, status and simulate print the same quantities; they all use these functions so
a size reads the same everywhere::

    human_bytes(1536)        -> "1.5 KiB"
    human_seconds(3725)      -> "1h 2m 5s"
"""

from __future__ import annotations


def human_bytes(n: int | float | None) -> str:
    """``1536`` -> ``1.5 KiB``; None -> ``unknown size``."""
    if n is None:
        return "unknown size"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def human_seconds(s: float | None) -> str:
    """``3725`` -> ``1h 2m 5s``; None -> ``unthrottled``."""
    if s is None:
        return "unthrottled"
    total = round(s)
    h, rest = divmod(total, 3600)
    m, sec = divmod(rest, 60)
    parts = [f"{h}h"] if h else []
    if m or h:
        parts.append(f"{m}m")
    parts.append(f"{sec}s")
    return " ".join(parts)
