"""One SparkSession for every Spark test (local[2], the UDF jar on spark.jars), started
only when a test marked ``spark`` asks for it."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest


def keys_of_every_kind(seed: int = 7) -> list[bytes]:
    """ASCII, multi-byte UTF-8, empty, and random binary keys of every length 0..100."""
    rng = random.Random(seed)
    text = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "user-42",
        "payments.orders/2024",
        "héllo",
        "日本語のキー",
        "emoji-😀-🚀",
        "Ωmega-ß-ç",
        "x" * 100,
        "ü" * 33,
    ]
    keys = [t.encode("utf-8") for t in text]
    keys += [bytes(rng.randrange(256) for _ in range(n)) for n in range(101)]
    keys += [b"\x00", b"\xff\xfe\xfd", b"\x80" * 7]
    return keys


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kgitops.analytics import javaudf
    from kgitops.analytics.job import get_session

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = get_session("local[2]", jar=javaudf.udf_jar(), app_name="kgitops-tests")
    session.conf.set("spark.sql.shuffle.partitions", "4")
    yield session
    session.stop()
