"""Sizes and durations, both ways, for every command: one home, so a quantity reads the same
in ``plan``, ``apply``, ``status`` and ``simulate``.

Printed sizes are binary (KiB = 1024), as Kafka sizes its segments and as the plan has always
shown them; durations are ``1h 2m 5s``, with decimals under a minute::

    human_bytes(1536)        -> "1.5 KiB"          parse_size("1.5GB")     -> 1500000000
    human_bytes(10**9)       -> "953.7 MiB"        parse_size("2GiB")      -> 2147483648
    human_seconds(3725)      -> "1h 2m 5s"         parse_duration("2m30s") -> 150.0
    human_seconds(6.666)     -> "6.67s"

Sizes typed by people are decimal (kB = 1000) as Kafka's byte rates are, with the binary
``KiB``/``MiB``/``GiB``/``TiB`` also understood.
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


def human_bytes(n: float | None) -> str:
    """``1536`` -> ``1.5 KiB``; None -> ``unknown size``."""
    if n is None:
        return "unknown size"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def human_seconds(seconds: float) -> str:
    """``3725`` -> ``1h 2m 5s``; ``150`` -> ``2m 30s``; ``6.666`` -> ``6.67s``."""
    if seconds < 60:
        return f"{max(seconds, 0):.3g}s"
    total = round(seconds)
    h, rest = divmod(total, 3600)
    m, sec = divmod(rest, 60)
    parts = [f"{h}h"] if h else []
    parts.append(f"{m}m")
    parts.append(f"{sec}s")
    return " ".join(parts)


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
