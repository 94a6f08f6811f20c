"""On keys of every kind the Spark job puts each key where Kafka's producer does, on the Java
UDF path and on the Arrow fallback path, and the whole job's aggregates are exact."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgitops.analytics import javaudf
from kgitops.analytics.job import JobSpec, register_java_udf, run_job
from kgitops.analytics.transforms import normalize_keys, partition_of, with_hash
from kgitops.placement.partitioner import partition_for
from tests.analytics.conftest import keys_of_every_kind
from tests.analytics.reference import expected

pytestmark = pytest.mark.spark

COUNTS = (1, 2, 3, 6, 7, 12, 24, 100, 1000)


def _partitions(spark: Any, df: Any, engine: str) -> list[tuple[bytes, list[int]]]:
    from pyspark.sql import functions as F

    hashed = with_hash(normalize_keys(df, "key", None), engine)  # type: ignore[arg-type]
    cols = [partition_of(F.col("h"), n).alias(f"p{n}") for n in COUNTS]
    return [
        (bytes(r["key"]), [r[f"p{n}"] for n in COUNTS])
        for r in hashed.select("key", *cols).collect()
    ]


def test_the_java_udf_is_built_and_registered(spark: Any) -> None:
    jar = javaudf.udf_jar()
    assert jar is not None and jar.is_file()
    assert register_java_udf(spark, jar)


@pytest.mark.parametrize("engine", ["java", "arrow"])
def test_binary_keys_of_every_kind_land_where_kafka_puts_them(spark: Any, engine: str) -> None:
    assert javaudf.udf_jar() is not None and register_java_udf(spark, javaudf.udf_jar())  # type: ignore[arg-type]
    keys = keys_of_every_kind()
    df = spark.createDataFrame([(k,) for k in keys], "key binary")
    got = _partitions(spark, df, engine)
    assert len(got) == len(keys)
    for key, parts in got:
        assert parts == [partition_for(key, n) for n in COUNTS], key


@pytest.mark.parametrize("engine", ["java", "arrow"])
def test_string_keys_are_hashed_as_their_utf8_bytes(spark: Any, engine: str) -> None:
    texts = [k.decode() for k in keys_of_every_kind() if _is_utf8(k)]
    assert any(len(t.encode()) > len(t) for t in texts)  # multi-byte characters are in
    df = spark.createDataFrame([(t,) for t in texts], "key string")
    for key, parts in _partitions(spark, df, engine):
        assert parts == [partition_for(key.decode(), n) for n in COUNTS]


def test_builtin_hash_is_not_kafkas_so_it_is_only_a_speed_floor(spark: Any) -> None:
    df = spark.createDataFrame([(k,) for k in keys_of_every_kind()], "key binary")
    got = _partitions(spark, df, "builtin")
    assert any(parts != [partition_for(k, n) for n in COUNTS] for k, parts in got)


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _sample(path: Path, n_rows: int = 3000, seed: int = 3) -> list[tuple[bytes | None, int]]:
    rng = random.Random(seed)
    kinds = keys_of_every_kind()
    rows: list[tuple[bytes | None, int]] = []
    for i in range(n_rows):
        r = rng.random()
        if r < 0.03:
            key = None
        elif r < 0.2:
            key = b"hot-key"
        elif r < 0.5:
            key = rng.choice(kinds)
        else:
            key = f"user-{rng.randrange(400)}".encode()
        rows.append((key, rng.randrange(1, 2000) if i % 11 else 0))
    table = pa.table(
        {
            "key": pa.array([k for k, _ in rows], pa.binary()),
            "size": pa.array([s for _, s in rows], pa.int32()),
        }
    )
    pq.write_table(table, path)
    return rows


@pytest.mark.parametrize("engine", ["java", "arrow"])
def test_the_whole_job_is_exact_and_brings_back_only_aggregates(
    spark: Any, tmp_path: Path, engine: str
) -> None:
    sample = tmp_path / "keys.parquet"
    rows = _sample(sample)
    counts = (6, 12, 24, 5)
    result = run_job(spark, JobSpec(str(sample), counts, size_column="size", engine=engine))  # type: ignore[arg-type]
    assert result.engine == engine
    want = expected(rows, counts, base=6)
    # bounded: one row per (count, partition) at most, plus one null-key row per count
    assert len(result.rows) <= sum(counts) + len(counts)
    for n in counts:
        msgs = [0] * n
        sizes = [0] * n
        for r in result.rows:
            if r.n == n and r.p is not None:
                msgs[r.p], sizes[r.p] = r.messages, r.bytes
        assert msgs == want["messages"][n]
        assert sizes == want["bytes"][n]
        assert sum(r.moved_keys for r in result.rows if r.n == n) == want["moves"][n][0]
        assert sum(r.moved_messages for r in result.rows if r.n == n) == want["moves"][n][1]
        nulls = [r.messages for r in result.rows if r.n == n and r.p is None]
        assert nulls == [want["nullKeys"]]
    assert result.hot[0].key == b"hot-key"
    assert result.hot[0].partitions == {n: partition_for(b"hot-key", n) for n in counts}
    assert len(result.hot) == 10
    assert [h.messages for h in result.hot] == sorted(
        (h.messages for h in result.hot), reverse=True
    )
