"""A live topic as the key analysis' input, read by Spark's own Kafka source.

``spark.read.format("kafka")`` reads each topic partition as one Spark partition (more with
``minPartitions``), on the executors, between offsets fixed before the job starts, so the
read is a batch over a known set of records::

    key    binary   the exact bytes the producer hashed (NULL for a null key)
    bytes  long     serialized key + value size, as ``kgitops sample-keys`` writes it

The connection comes from the cluster folder (``cluster.kafka.javaconfig``) with every
property prefixed ``kafka.`` as the source wants it. ``SourceOptions`` never shows a secret
value in its ``repr`` and the session redacts them from Spark's plans.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgitops.cluster.kafka.javaconfig import SECRET_PROPERTIES, java_client_properties
from kgitops.model import ClusterSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KEY_COLUMN = "key"
SIZE_COLUMN = "bytes"
# Spark redacts the source options matching this from its plans and UI (the default covers
# only "url"): the JAAS line holds the SASL password, and the PEM key is a secret.
REDACTION_REGEX = r"(?i)url|jaas|password|keystore\.key|secret|token"


class SourceOptions(Mapping[str, str]):
    """The Kafka source's ``kafka.*`` options; ``repr`` shows secret values as ``***``."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        secret = {"kafka." + k for k in SECRET_PROPERTIES}
        shown = {k: "***" if k in secret else v for k, v in sorted(self._values.items())}
        return f"SourceOptions({shown!r})"

    __str__ = __repr__


def source_options(spec: ClusterSpec, environ: Mapping[str, str] | None = None) -> SourceOptions:
    """The cluster file's connection as the Kafka source's options: every Java client
    property of ``javaconfig.java_client_properties`` with a ``kafka.`` prefix."""
    props = java_client_properties(spec, environ)
    return SourceOptions({f"kafka.{k}": v for k, v in props.items()})


@dataclass(frozen=True)
class TopicSource:
    """What to read: ``ranges`` maps each partition to its ``(start, end)`` offsets."""

    topic: str
    cluster: str
    ranges: Mapping[int, tuple[int, int]]
    options: SourceOptions = field(repr=False)
    min_partitions: int | None = None

    @property
    def records(self) -> int:
        """The offsets in range: the records read, fewer on a compacted or transactional
        topic (removed records and commit markers hold offsets too)."""
        return sum(end - start for start, end in self.ranges.values())

    def describe(self) -> str:
        return f"topic {self.topic} of cluster {self.cluster}"

    def reader_options(self) -> dict[str, str]:
        """Every option of the batch read, connection included."""
        parts = sorted(self.ranges)
        out = dict(self.options)
        out["assign"] = json.dumps({self.topic: parts})
        out["startingOffsets"] = offsets_json(self.topic, self.ranges, 0)
        out["endingOffsets"] = offsets_json(self.topic, self.ranges, 1)
        if self.min_partitions is not None:
            out["minPartitions"] = str(self.min_partitions)
        return out


def offsets_json(topic: str, ranges: Mapping[int, tuple[int, int]], which: int) -> str:
    """``{"T": {"0": 12, "1": 40}}``: the start (``which`` 0) or end (1) offsets."""
    return json.dumps({topic: {str(p): ranges[p][which] for p in sorted(ranges)}})


def read_topic(spark: SparkSession, source: TopicSource) -> DataFrame:
    """``key, bytes`` of every record in the source's ranges."""
    from pyspark.sql import functions as F

    df = spark.read.format("kafka").options(**source.reader_options()).load()
    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    return df.select(F.col("key").alias(KEY_COLUMN), size.cast("long").alias(SIZE_COLUMN))
