"""Secrets are masked wherever they could be read: a long one (8 characters or more) even
inside other text and in its escaped forms; a short one only where it stands whole, so that
a password ``kafka`` never mangles ``kafka.invalid:9092``."""

from __future__ import annotations

import json

import pytest

from kgitops.errors import scrub_secrets

LONG = "hunter2x"


@pytest.mark.parametrize(
    "text",
    [
        f"alice/{LONG}",
        f"token-{LONG}",
        f"{LONG}...",
        f"pw={LONG}suffix",
        repr(f"pw={LONG}\n"),
        json.dumps({"password": f"{LONG}\t"}),
    ],
)
def test_a_long_secret_is_masked_wherever_it_appears(text: str) -> None:
    masked = scrub_secrets(text, [f"{LONG}\t" if "\\t" in text else LONG])
    assert LONG not in masked and "***" in masked


def test_a_short_secret_stays_out_of_host_names_and_paths() -> None:
    assert scrub_secrets("kafka.invalid:9092 topics/kafka/x", ["kafka"]) == (
        "kafka.invalid:9092 topics/kafka/x"
    )
    assert scrub_secrets("password kafka refused", ["kafka"]) == "password *** refused"
