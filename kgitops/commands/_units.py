"""Argument types shared by commands (sizes and durations are parsed by kgitops/units.py)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

from kgitops.names import INT32_MAX, INT64_MAX

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?", re.ASCII)
#: The longest wait a SECONDS flag takes: Kafka's Long.MAX_VALUE milliseconds.
MAX_SECONDS = INT64_MAX // 1000


def is_digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` says yes to ``٣`` and ``²`` too)."""
    return text.isascii() and text.isdigit()


def integer(text: str) -> int:
    """An argparse ``type`` for ids and counts: ASCII digits with an optional sign (``int()``
    reads other scripts' digits, ``٣`` as 3, and underscores); else a usage error."""
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """An argparse ``type`` for a wait in seconds: ``5``, ``0.5``; not ``nan``, ``inf``,
    ``1e400`` or a negative number, and at most MAX_SECONDS."""
    if not _SECONDS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    value = float(text)
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"too long: {text} seconds (at most {MAX_SECONDS})")
    return value


def duration_above_zero(noun: str) -> Callable[[str], float]:
    """An argparse ``type`` for a duration (``90``, ``90s``, ``2m30s``, ``7d``) in seconds,
    above zero; ``noun`` ("the timeout") names it when it is not."""

    def parse(text: str) -> float:
        from kgitops.units import parse_duration

        try:
            value = parse_duration(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: {noun} must be above zero")
        return value

    return parse


def positive_int(text: str) -> int:
    """An argparse ``type`` for counts: an integer of at least 1, or a usage error."""
    value = integer(text)
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
        if limit >= INT32_MAX:
            raise KgitopsError(f"{flag}: {shown} is more than Kafka allows (at most {limit:,})")
        raise KgitopsError(f"{flag}: {shown} is more than kgitops computes (at most {limit:,})")
    return value
