"""Kafka's topic-level configs (3.x and 4.x): name, type, default, valid values, and meaning.

This table is the one source of truth: the ``config`` part of ``schemas/topic.json`` is
generated from it (``kgitops.spec.config_schema``; ``python -m kgitops.spec.config_schema``
rewrites it; a test checks they agree), validation uses it (``kgitops.spec.topic_configs``:
``check_config``), and the diff compares values through ``normalize_config``.

Types are Kafka's ``ConfigDef.Type``; ranges and enums are those of Kafka's ``LogConfig``
(``storage/.../log/LogConfig.java``). Values are held as Kafka holds them, as strings.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kgitops.names import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

ConfigType = Literal["long", "int", "double", "boolean", "string", "list"]

INT_MAX, INT_MIN, LONG_MAX, LONG_MIN = INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """One topic-level config as Kafka's ``LogConfig`` defines it."""

    name: str
    type: ConfigType
    default: str  # Kafka's default, as the string it reports
    doc: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()  # enum for strings; allowed items for lists
    removed_in: str | None = None  # e.g. "4.0": the config is gone in that version
    since: str | None = None  # the first Kafka version that has it
    extra_values: tuple[int, ...] = ()  # single values allowed outside [minimum, maximum]
    infinite: bool = False  # -1 means "no limit", so ``infinite`` may be written for it

    @property
    def unit(self) -> Literal["ms", "bytes"] | None:
        """The quantity Kafka holds: ``ms`` for ``*.ms``, ``bytes`` for ``*.bytes``."""
        if self.type not in ("int", "long"):
            return None
        if self.name.endswith(".ms"):
            return "ms"
        if self.name.endswith(".bytes"):
            return "bytes"
        return None

    @property
    def bounds(self) -> tuple[int | float, int | float] | None:
        """The inclusive range of a number, including the limits of Kafka's int and long."""
        if self.type == "int":
            lo: int | float = INT_MIN if self.minimum is None else self.minimum
            hi: int | float = INT_MAX if self.maximum is None else self.maximum
            return lo, hi
        if self.type == "long":
            lo = LONG_MIN if self.minimum is None else self.minimum
            hi = LONG_MAX if self.maximum is None else self.maximum
            return lo, hi
        if self.type == "double":
            lo = -math.inf if self.minimum is None else self.minimum
            hi = math.inf if self.maximum is None else self.maximum
            return lo, hi
        return None


def _c(name: str, type_: ConfigType, default: str, doc: str, **kw: Any) -> TopicConfig:
    return TopicConfig(name, type_, default, doc, **kw)


_LONG_MAX_S = str(LONG_MAX)

CONFIGS: Mapping[str, TopicConfig] = {
    c.name: c
    for c in (
        _c(
            "cleanup.policy",
            "list",
            "delete",
            "How old log segments are discarded: delete (by retention time or size), compact "
            "(keep the latest value per key), or both (compact,delete).",
            choices=("compact", "delete"),
        ),
        _c(
            "compression.type",
            "string",
            "producer",
            "The final compression of the topic's data; producer keeps what the producer sent.",
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _c(
            "compression.gzip.level",
            "int",
            "-1",
            "The gzip level when compression.type is gzip: 1..9, or -1 for the default.",
            minimum=1,
            maximum=9,
            extra_values=(-1,),
            since="3.8",
        ),
        _c(
            "compression.lz4.level",
            "int",
            "9",
            "The lz4 level when compression.type is lz4.",
            minimum=1,
            maximum=17,
            since="3.8",
        ),
        _c(
            "compression.zstd.level",
            "int",
            "3",
            "The zstd level when compression.type is zstd.",
            minimum=-131072,
            maximum=22,
            since="3.8",
        ),
        _c(
            "delete.retention.ms",
            "long",
            "86400000",
            "How long delete tombstones are kept on a compacted topic.",
            minimum=0,
        ),
        _c(
            "file.delete.delay.ms",
            "long",
            "60000",
            "How long a deleted segment file waits before it is removed from disk.",
            minimum=0,
        ),
        _c(
            "flush.messages",
            "long",
            _LONG_MAX_S,
            "Force an fsync after this many messages (normally left to the OS and replication).",
            minimum=1,
        ),
        _c(
            "flush.ms",
            "long",
            _LONG_MAX_S,
            "Force an fsync after this many milliseconds (normally left to the OS).",
            minimum=0,
        ),
        _c(
            "follower.replication.throttled.replicas",
            "list",
            "",
            "Replicas throttled on the follower side (partition:broker,... or *). Set by "
            "kgitops apply during reassignments; do not set it in a spec.",
        ),
        _c(
            "index.interval.bytes",
            "int",
            "4096",
            "How often an entry is added to the offset index, in bytes.",
            minimum=0,
        ),
        _c(
            "leader.replication.throttled.replicas",
            "list",
            "",
            "Replicas throttled on the leader side (partition:broker,... or *). Set by "
            "kgitops apply during reassignments; do not set it in a spec.",
        ),
        _c(
            "local.retention.bytes",
            "long",
            "-2",
            "With tiered storage: the most bytes kept on local disk; -2 means retention.bytes, "
            "-1 no limit.",
            minimum=-2,
            since="3.6",
            infinite=True,
        ),
        _c(
            "local.retention.ms",
            "long",
            "-2",
            "With tiered storage: how long data stays on local disk; -2 means retention.ms, "
            "-1 forever.",
            minimum=-2,
            since="3.6",
            infinite=True,
        ),
        _c(
            "max.compaction.lag.ms",
            "long",
            _LONG_MAX_S,
            "The longest a message may stay ineligible for compaction.",
            minimum=1,
        ),
        _c(
            "max.message.bytes",
            "int",
            "1048588",
            "The largest record batch the topic accepts, in bytes.",
            minimum=0,
        ),
        _c(
            "message.downconversion.enable",
            "boolean",
            "true",
            "Whether brokers down-convert messages for old consumers.",
            removed_in="4.0",
        ),
        _c(
            "message.format.version",
            "string",
            "3.0-IV1",
            "The message format version (deprecated; ignored since 3.0).",
            removed_in="4.0",
        ),
        _c(
            "message.timestamp.after.max.ms",
            "long",
            "3600000",
            "How far in the future a message timestamp may be (Kafka 3.6..3.9 default: "
            "Long.MAX_VALUE).",
            minimum=0,
            since="3.6",
        ),
        _c(
            "message.timestamp.before.max.ms",
            "long",
            _LONG_MAX_S,
            "How far in the past a message timestamp may be.",
            minimum=0,
            since="3.6",
        ),
        _c(
            "message.timestamp.difference.max.ms",
            "long",
            _LONG_MAX_S,
            "The largest difference between a message timestamp and the broker's clock "
            "(deprecated: use message.timestamp.before/after.max.ms).",
            minimum=0,
            removed_in="4.0",
        ),
        _c(
            "message.timestamp.type",
            "string",
            "CreateTime",
            "Whose timestamp a message keeps: the producer's (CreateTime) or the broker's "
            "(LogAppendTime).",
            choices=("CreateTime", "LogAppendTime"),
        ),
        _c(
            "min.cleanable.dirty.ratio",
            "double",
            "0.5",
            "The share of the log that must be uncompacted before the cleaner runs.",
            minimum=0,
            maximum=1,
        ),
        _c(
            "min.compaction.lag.ms",
            "long",
            "0",
            "The shortest a message stays uncompacted.",
            minimum=0,
        ),
        _c(
            "min.insync.replicas",
            "int",
            "1",
            "How many in-sync replicas must acknowledge a write with acks=all.",
            minimum=1,
        ),
        _c(
            "preallocate",
            "boolean",
            "false",
            "Preallocate the file when a new segment is created.",
        ),
        _c(
            "remote.copy.lag.bytes",
            "long",
            "0",
            "With tiered storage: how many bytes may wait before being copied to remote "
            "storage; -1 means local.retention.bytes. Kafka's trunk only (KIP-1241): Kafka 4.1 "
            "refuses it.",
            minimum=-1,
        ),
        _c(
            "remote.copy.lag.ms",
            "long",
            "0",
            "With tiered storage: how long data may wait before being copied to remote "
            "storage; -1 means local.retention.ms. Kafka's trunk only (KIP-1241): Kafka 4.1 "
            "refuses it.",
            minimum=-1,
        ),
        _c(
            "remote.log.copy.disable",
            "boolean",
            "false",
            "With tiered storage: stop copying segments to remote storage (read-only remote).",
            since="3.9",
        ),
        _c(
            "remote.log.delete.on.disable",
            "boolean",
            "false",
            "Delete the remote data when remote.storage.enable is turned off.",
            since="3.9",
        ),
        _c(
            "remote.storage.enable",
            "boolean",
            "false",
            "Keep older segments in remote (tiered) storage.",
            since="3.6",
        ),
        _c(
            "retention.bytes",
            "long",
            "-1",
            "The most bytes a partition keeps before old segments are deleted; -1: no limit.",
            infinite=True,
        ),
        _c(
            "retention.ms",
            "long",
            "604800000",
            "How long messages are kept; -1: forever.",
            minimum=-1,
            infinite=True,
        ),
        _c(
            "segment.bytes",
            "int",
            "1073741824",
            "The size of one log segment file (Kafka 4.0 refuses less than 1 MiB).",
            minimum=1048576,
        ),
        _c(
            "segment.index.bytes",
            "int",
            "10485760",
            "The size of the index that maps offsets to file positions.",
            minimum=4,
        ),
        _c(
            "segment.jitter.ms",
            "long",
            "0",
            "The largest random jitter subtracted from segment.ms, to avoid rolling all at once.",
            minimum=0,
        ),
        _c(
            "segment.ms",
            "long",
            "604800000",
            "Roll a new segment after this long even if it is not full.",
            minimum=1,
        ),
        _c(
            "unclean.leader.election.enable",
            "boolean",
            "false",
            "Allow an out-of-sync replica to become leader (may lose data).",
        ),
    )
}


def suggest(name: str, candidates: list[str] | None = None) -> str | None:
    """The closest known config name, for "did you mean" (None when nothing is close)."""
    pool = candidates if candidates is not None else list(CONFIGS)
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return matches[0] if matches else None


# The text forms Kafka's ConfigDef parses (it trims spaces first); the schema uses the same
# patterns, read as an editor reads them (ECMA-262, kgitops.spec.ecmaregex). Only a space is
# trimmed: a tab or a newline is a control character (refused in any config value), and
# ECMA's and Python's \s disagree (U+FEFF, U+001C..U+001F), so no pattern uses \s.
INT_PATTERN = r"^ *[+-]?[0-9]+ *$"
DOUBLE_PATTERN = r"^ *[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? *$"
BOOLEAN_PATTERN = r"^ *([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]) *$"
