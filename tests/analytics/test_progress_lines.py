"""``sample-keys`` says how far it has read on stderr, never more often than its interval,
and nothing on stdout; ``--quiet`` is accepted by both long-running key commands."""

from __future__ import annotations

import pytest

from kgitops.cli import build_parser
from kgitops.commands.sample_keys import _Counter


def test_the_read_counter_prints_at_most_once_per_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    every = _Counter("orders", every=0.0)
    every(120_000, 1_000_000)
    every(250_000, 1_000_000)
    rare = _Counter("orders", every=3600.0)
    rare(10, 20)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "read 120,000 of 1,000,000 messages of orders\n"
        "read 250,000 of 1,000,000 messages of orders\n"
    )


def test_quiet_is_a_flag_of_sample_keys_and_analyze_keys() -> None:
    parser = build_parser()
    assert parser.parse_args(["sample-keys", "d", "--topic", "t", "--quiet"]).quiet
    args = parser.parse_args(["analyze", "keys", "--input", "k", "--partitions", "6", "-q"])
    assert args.quiet
