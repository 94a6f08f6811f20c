"""The key analysis as DataFrame transforms: DataFrame in, DataFrame out, no session, no I/O.

The job is three steps, all in Spark SQL, and only aggregates ever reach the driver::

    raw (key, size?)                     one row per message, any size
      → normalize_keys                   key as binary (strings as UTF-8), size as long
      → aggregate_keys                   one row per distinct key: messages, bytes
      → with_hash                        h = Kafka's murmur2(key), NULL for a null key
      → partition_load(counts, base)     one row per (count, partition): messages, bytes,
                                          keys, and what moves when the count goes from base
      → hot_keys(n)                      the n heaviest keys (a bounded top-N)

Hashing after the per-key aggregation hashes each distinct key once, however many messages
carry it. The partition of a key for ``n`` partitions is ``(h & 0x7fffffff) % n``, Kafka's
``toPositive(murmur2(key)) % n``; a null key has a NULL partition and is counted apart (the
producer spreads null keys, Kafka does not hash them).

``with_hash`` has three engines: ``java`` (the compiled UDF ``kafka_murmur2``), ``arrow``
(mapInArrow with the numpy kernel, when no JDK compiler is there) and ``builtin`` (Spark's
own Murmur3 ``hash()``, a wrong hash kept only as the speed floor for the benchmark).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

Engine = Literal["java", "arrow", "builtin"]

KEY = "key"
SIZE = "size"
MESSAGES = "messages"
BYTES = "bytes"
HASH = "h"


def normalize_keys(df: DataFrame, key_column: str, size_column: str | None) -> DataFrame:
    """``(key binary, size long)``: string keys become their UTF-8 bytes (as Kafka's
    StringSerializer sends them), binary keys stay as they are; a missing size is 0.
    The caller checks the column types first (see :func:`key_type_problem`)."""
    from pyspark.sql import functions as F

    key = F.col(f"`{key_column}`").cast("binary").alias(KEY)
    if size_column is None:
        return df.select(key)
    size = F.coalesce(F.col(f"`{size_column}`").cast("long"), F.lit(0)).alias(SIZE)
    return df.select(key, size)


def key_type_problem(df: DataFrame, key_column: str, size_column: str | None) -> str | None:
    """Why these columns cannot be analysed, or None when they can."""
    from pyspark.sql.types import BinaryType, NumericType, StringType

    fields = {f.name: f.dataType for f in df.schema.fields}
    names = ", ".join(sorted(fields)) or "none"
    if key_column not in fields:
        return f"no key column {key_column!r} (columns: {names}); use --key-column"
    if not isinstance(fields[key_column], StringType | BinaryType):
        return (
            f"key column {key_column!r} is {fields[key_column].simpleString()}, "
            "not string or binary: Kafka hashes the serialized key bytes"
        )
    if size_column is not None:
        if size_column not in fields:
            return f"no size column {size_column!r} (columns: {names})"
        if not isinstance(fields[size_column], NumericType | StringType):
            return f"size column {size_column!r} is {fields[size_column].simpleString()}"
    return None


def aggregate_keys(df: DataFrame) -> DataFrame:
    """One row per distinct key (null keys in one row): ``key, messages, bytes``."""
    from pyspark.sql import functions as F

    size = F.sum(SIZE) if SIZE in df.columns else F.lit(0).cast("long")
    return df.groupBy(KEY).agg(F.count(F.lit(1)).alias(MESSAGES), size.alias(BYTES))


def _murmur2_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow body: append Kafka's murmur2 of ``key`` to every Arrow batch, vectorised."""
    import pyarrow as pa

    from kgitops.analytics.kernel import murmur2_arrow

    for batch in batches:
        keys = batch.column(batch.schema.get_field_index(KEY))
        hashes = pa.array(
            murmur2_arrow(keys), type=pa.int32(), mask=keys.is_null().to_numpy(zero_copy_only=False)
        )
        yield pa.RecordBatch.from_arrays(
            [*batch.columns, hashes], names=[*batch.schema.names, HASH]
        )


def with_hash(df: DataFrame, engine: Engine) -> DataFrame:
    """Add ``h``, Kafka's signed murmur2 of ``key`` (NULL for a null key)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    if engine == "java":
        return df.withColumn(HASH, F.call_function("kafka_murmur2", F.col(KEY)))
    if engine == "builtin":
        return df.withColumn(HASH, F.when(F.col(KEY).isNotNull(), F.hash(F.col(KEY))))
    schema = StructType([*df.schema.fields, StructField(HASH, IntegerType(), True)])
    with warnings.catch_warnings():
        # pyspark 4.x warns about pandas 3 when it defines any Arrow function; no pandas here
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        return df.mapInArrow(_murmur2_batches, schema)


def partition_of(h: Column, n: int) -> Column:
    """Kafka's ``toPositive(h) % n`` as a Spark expression."""
    from pyspark.sql import functions as F

    return (h.bitwiseAND(F.lit(0x7FFFFFFF)) % F.lit(n)).cast("int")


def partition_load(hashed: DataFrame, counts: Sequence[int], base: int | None) -> DataFrame:
    """One row per (count ``n``, partition ``p``) from the hashed per-key table::

        n, p, keys, messages, bytes, movedKeys, movedMessages, movedBytes

    ``moved*`` count the keys whose partition for ``n`` differs from their partition for
    ``base`` (0 when there is no base). Null keys form the row with ``p`` NULL. Each key row
    is exploded once per count, then aggregated: the result has sum(counts) + len(counts)
    rows whatever the input size.
    """
    from pyspark.sql import functions as F

    h = F.col(HASH)
    base_p = partition_of(h, base) if base is not None else None
    entries = []
    for n in counts:
        p = partition_of(h, n)
        moved = (p != base_p) if base_p is not None else F.lit(False)
        entries.append(
            F.struct(F.lit(n).alias("n"), p.alias("p"), F.coalesce(moved, F.lit(False)).alias("m"))
        )
    exploded = hashed.select(F.col(MESSAGES), F.col(BYTES), F.explode(F.array(*entries)).alias("e"))
    moved_flag = F.col("e.m")
    return exploded.groupBy(F.col("e.n").alias("n"), F.col("e.p").alias("p")).agg(
        F.count(F.lit(1)).alias("keys"),
        F.sum(MESSAGES).alias("messages"),
        F.sum(BYTES).alias("bytes"),
        F.sum(F.when(moved_flag, 1).otherwise(0)).alias("movedKeys"),
        F.sum(F.when(moved_flag, F.col(MESSAGES)).otherwise(0)).alias("movedMessages"),
        F.sum(F.when(moved_flag, F.col(BYTES)).otherwise(0)).alias("movedBytes"),
    )


def hot_keys(keyed: DataFrame, top: int) -> DataFrame:
    """The ``top + 1`` keys with the most messages (ties by key, the null key last): a
    bounded top-N, Spark keeps that many rows per task and merges them. One more than asked
    so that ``top`` non-null keys remain when the null key is among the heaviest; it is not
    filtered here, since a filter would be pushed below the per-key aggregation and stop
    Spark from sharing that aggregation with :func:`partition_load` (see :func:`analysis`)."""
    from pyspark.sql import functions as F

    return keyed.orderBy(F.col(MESSAGES).desc(), F.col(KEY).asc_nulls_last()).limit(top + 1)


LOAD_COLUMNS = ("n", "p", "keys", "messages", "bytes", "movedKeys", "movedMessages", "movedBytes")


def analysis(
    df: DataFrame, counts: Sequence[int], base: int, top: int, engine: Engine
) -> DataFrame:
    """The whole job as one DataFrame: the partition-load rows (``kind = 'load'``) and the
    hot-key rows (``kind = 'hot'``, with ``key`` and ``h``) in one union. As one query,
    Spark reads the sample and shuffles it by key once, and both branches reuse that
    exchange (ReusedExchange), instead of two actions doing it twice."""
    from pyspark.sql import functions as F

    keyed = aggregate_keys(df)
    load = partition_load(with_hash(keyed, engine), counts, base)
    hot = with_hash(hot_keys(keyed, top), engine)
    no_key = F.lit(None).cast("binary").alias(KEY)
    no_hash = F.lit(None).cast("int").alias(HASH)
    left = load.select(F.lit("load").alias("kind"), *LOAD_COLUMNS, no_key, no_hash)
    nulls = {c: F.lit(None).cast("long" if c != "n" and c != "p" else "int") for c in LOAD_COLUMNS}
    right = hot.select(
        F.lit("hot").alias("kind"),
        *(F.col(c) if c in (MESSAGES, BYTES) else nulls[c].alias(c) for c in LOAD_COLUMNS),
        F.col(KEY),
        F.col(HASH),
    )
    return left.unionByName(right)
