"""Human sizes and durations, both ways: ``1.5GB`` <-> 1500000000, ``2m30s`` <-> 150.0.

Sizes are decimal (kB = 1000) as Kafka's byte rates are, with the binary ``KiB``/``MiB``/
``GiB``/``TiB`` also understood.
"""

from __future__ import annotations

import re

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_size(text: str) -> int:
    """``"1.5GB"`` -> 1500000000; ValueError with a readable message otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise ValueError(f"{text!r} is not a size (e.g. 500MB, 1.5GB, 1073741824)")
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def parse_duration(text: str) -> float:
    """``"90"``, ``"90s"``, ``"2m30s"``, ``"1h"`` -> seconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?", text.strip())
    joined = "".join(n + (u or "") for n, u in parts)
    if not parts or joined != text.strip().replace(" ", ""):
        raise ValueError(f"{text!r} is not a duration (e.g. 90, 90s, 2m30s, 1h)")
    return sum(float(n) * _DURATION_UNITS[u or "s"] for n, u in parts)


def format_size(n: float) -> str:
    """1500000000 -> ``1.5 GB`` (decimal units, three significant digits)."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def format_duration(seconds: float) -> str:
    """150 -> ``2m30s``; 0.5 -> ``0.5s``."""
    if seconds < 60:
        return f"{seconds:.3g}s"
    total = round(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    out = "".join(
        f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")) if v
    )
    return out or "0s"


def positive_int(text: str) -> int:
    """An argparse ``type`` for counts: an integer of at least 1, or a usage error."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value
