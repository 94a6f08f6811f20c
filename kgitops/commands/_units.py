"""Argument types shared by commands (sizes and durations are parsed by kgitops/units.py)."""

from __future__ import annotations


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


#: The most partitions ``assign``, ``partition`` and ``consumers`` work out (per topic, and in
#: all for ``consumers``): more than any real topic has, and still well under a second.
MAX_PARTITIONS = 1_000_000
#: Kafka's replication factor is a 16-bit integer.
MAX_REPLICATION_FACTOR = 32_767


def check_count(value: int, flag: str, limit: int = MAX_PARTITIONS) -> int:
    """``value`` when it is 1..``limit``; else KgitopsError, one line, before any work."""
    from kgitops.errors import KgitopsError

    if value < 1:
        raise KgitopsError(f"{flag} must be at least 1, not {value}")
    if value > limit:
        shown = f"{value:,}" if value < 10**30 else f"a {len(str(value))}-digit number"
        raise KgitopsError(f"{flag}: {shown} is more than kgitops computes (at most {limit:,})")
    return value
