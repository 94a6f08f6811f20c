"""Fixtures of the GitHub tests: a local fake of GitHub's comments API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
