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
