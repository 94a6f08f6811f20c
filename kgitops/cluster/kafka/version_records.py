"""The passwordVersion topic's records, layout and requests, pure (no I/O): what
kgitops/cluster/kafka/versions.py reads and writes, as functions of kafka-python's protocol
and record classes, so each is tested without a broker.

::

    record_key / record_value / version_records   what a record holds (never a secret)
    latest / join                                  which record counts for a credential
    topic_layout / min_isr                         the topic kgitops creates
    shape_problems / missing_operations            an existing topic, the principal's rights
    build_describe_configs / read_describe_configs the configs ``shape_problems`` needs

The records are read and written by kgitops/cluster/kafka/topiclog.py (``KafkaConsumer``,
``KafkaProducer``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafka import codec
from kafka.protocol.admin import DescribeConfigsRequest

from kgitops.access import ScramCredential, version_topic_problems
from kgitops.cluster.kafka.errors import item_error
from kgitops.cluster.port import ScramUpsert
from kgitops.model import Broker
from kgitops.placement.assignment import assign_replicas

#: A key or value larger than this is not one kgitops wrote (a key is ~60 bytes plus the user
#: name: at most 1,000 characters, at most 12 bytes each in ASCII JSON).
MAX_RECORD_BYTES = 16 * 1024
#: Kafka's record batch codecs (the low 3 bits of a v2 batch's attributes): name, whether
#: kafka-python can decode it here, and what to install when it cannot.
CODECS = {
    1: ("gzip", codec.has_gzip, "gzip"),
    2: ("snappy", codec.has_snappy, "python-snappy"),
    3: ("lz4", codec.has_lz4, "lz4"),
    4: ("zstd", codec.has_zstd, "zstandard"),
}

Raw = tuple[int, bytes | None, bytes | None]  # (offset, key, value) as the topic holds it


@dataclass(frozen=True)
class VersionRecord:
    """One credential's record: the version written and the iterations it was written with;
    ``problem`` when the latest record of the key is not one kgitops could have written."""

    version: int = 0
    iterations: int = 0
    offset: int = -1
    problem: str = ""


@dataclass(frozen=True)
class Undecoded:
    """A record batch of the topic that cannot be decoded here (its codec's library is not
    installed, or its records do not decode): offsets ``first``..``last``, and why."""

    first: int
    last: int
    reason: str

    @property
    def problem(self) -> str:
        return (
            f"the batch at offsets {self.first}-{self.last} cannot be decoded ({self.reason}) "
            "and may hold a newer record of it"
        )


# ------------------------------------------------------------------ records (pure)


def record_key(name: str, mechanism: str) -> bytes:
    """``{"mechanism":"SCRAM-SHA-256","user":"a"}``: any user name, quotes and newlines
    included, round-trips (JSON escapes them)."""
    key = {"mechanism": mechanism, "user": name}
    return json.dumps(key, sort_keys=True, separators=(",", ":")).encode()


def record_value(version: int, iterations: int) -> bytes:
    value = {"iterations": iterations, "passwordVersion": version}
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _parse_key(raw: bytes | None) -> tuple[str, str] | None:
    if raw is None or len(raw) > MAX_RECORD_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(data, dict) or set(data) != {"mechanism", "user"}:
        return None
    user, mechanism = data["user"], data["mechanism"]
    if not isinstance(user, str) or not isinstance(mechanism, str):
        return None
    return user, mechanism


def _parse_value(offset: int, raw: bytes | None) -> VersionRecord | None:
    """The record, None for a tombstone, or a VersionRecord with ``problem``."""
    if raw is None:
        return None
    if len(raw) > MAX_RECORD_BYTES:
        return VersionRecord(offset=offset, problem=f"{len(raw)} bytes, not a kgitops record")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return VersionRecord(offset=offset, problem="not JSON")
    version = data.get("passwordVersion") if isinstance(data, dict) else None
    iterations = data.get("iterations") if isinstance(data, dict) else None
    if not _positive(version) or not _positive(iterations):
        return VersionRecord(
            offset=offset, problem="passwordVersion and iterations are not positive integers"
        )
    assert isinstance(version, int) and isinstance(iterations, int)
    return VersionRecord(version, iterations, offset)


def _positive(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def latest(
    records: Iterable[Raw], undecoded: Sequence[Undecoded] = ()
) -> dict[tuple[str, str], VersionRecord]:
    """The last record of each (user, mechanism) key, as compaction keeps it; a tombstone
    removes the key; a record whose key is not kgitops' is skipped. A batch that cannot be
    decoded (``undecoded``) may hold a newer record of any key recorded before it: each such
    key gets that batch as its ``problem`` (no known version, so it counts as version 1 and
    a rotation may be planned again), until a later record of the key."""
    out: dict[tuple[str, str], VersionRecord] = {}
    pending = sorted(undecoded, key=lambda u: u.first)
    for offset, key, value in records:
        while pending and pending[0].first < offset:
            _cannot_tell(out, pending.pop(0))
        k = _parse_key(key)
        if k is None:
            continue
        rec = _parse_value(offset, value)
        if rec is None:
            out.pop(k, None)
        else:
            out[k] = rec
    for batch in pending:
        _cannot_tell(out, batch)
    return out


def _cannot_tell(out: dict[tuple[str, str], VersionRecord], batch: Undecoded) -> None:
    for k in out:
        out[k] = VersionRecord(offset=batch.first, problem=batch.problem)


def join(
    creds: Mapping[tuple[str, str], ScramCredential],
    records: Mapping[tuple[str, str], VersionRecord],
    topic: str,
) -> dict[tuple[str, str], ScramCredential]:
    """Each credential with the version its record says, when the record counts (see the
    module doc); else ``password_version`` None and the reason in ``version_note``, and
    ``version_unrecorded`` when the topic holds no record at all."""
    out: dict[tuple[str, str], ScramCredential] = {}
    for k, cred in creds.items():
        rec = records.get(k)
        if rec is None:
            note = f"no record in {topic}"
        elif rec.problem:
            note = f"unreadable record at offset {rec.offset} of {topic}: {rec.problem}"
        elif rec.iterations != cred.iterations:
            note = (
                f"the record is for {rec.iterations} iterations, the credential has "
                f"{cred.iterations}: rewritten outside kgitops"
            )
        else:
            out[k] = replace(cred, password_version=rec.version, version_note="")
            continue
        out[k] = replace(
            cred, password_version=None, version_note=note, version_unrecorded=not records
        )
    return out


def version_records(upserts: Sequence[ScramUpsert]) -> list[tuple[bytes, bytes | None]]:
    """(key, value) to write for credentials just written; a tombstone without a version."""
    return [
        (
            record_key(u.name, u.mechanism),
            None if u.password_version is None else record_value(u.password_version, u.iterations),
        )
        for u in upserts
    ]


def min_isr(rf: int) -> int:
    """Kafka's usual pairing: RF 3 -> 2, so one broker down still takes writes; below RF 3,
    1 (RF 2 with min.insync.replicas 2 stops every record write while one broker restarts:
    the layout MIN_ISR_EQUALS_RF warns about)."""
    return max(1, min(2, rf - 1))


def topic_layout(
    brokers: Sequence[Broker], drained: Collection[int] = ()
) -> tuple[tuple[int, ...], dict[str, str]]:
    """The version topic's one partition (Kafka's placement rule, start index 0, rack-aware
    when every broker has a rack) and its configs. ``brokers`` are the live ones (Metadata
    lists no other); the ``drained`` ones (cluster.yaml ``decommission``) are left out, so
    the next plan's drain has nothing of kgitops' own to move, unless no other is left."""
    brokers = [b for b in brokers if b.id not in drained] or list(brokers)
    rf = min(3, len(brokers))
    racks = all(b.rack is not None for b in brokers)
    replicas = assign_replicas(brokers, 1, rf, start_index=0, rack_aware=racks)[0]
    configs = {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",  # never the broker's codec: see topiclog
        "min.insync.replicas": str(min_isr(rf)),
    }
    return tuple(replicas), configs


#: The configs of an existing topic that say whether it is kgitops' (see ``shape_problems``).
SHAPE_CONFIGS = ("cleanup.policy", "compression.type")


def shape_problems(partitions: int, configs: Mapping[str, str], *, writing: bool) -> list[str]:
    """Why an existing topic is not kgitops' passwordVersion topic (empty when it is): more
    than one partition (another program's topic; kgitops reads only partition 0), a cleanup
    policy without ``compact`` (its records would expire, and every credential count as
    version 1 again). Before a write also a ``compression.type`` whose library is not
    installed here: every record written would be recompressed into a batch kgitops cannot
    read back. A config the broker does not report is not held against the topic."""
    out = version_topic_problems(partitions, configs.get("cleanup.policy"))
    codec = configs.get("compression.type")
    by_name = {name: (installed, package) for name, installed, package in CODECS.values()}
    if writing and codec in by_name and not by_name[codec][0]():
        out.append(
            f"compression.type {codec}, which kgitops cannot read back here (pip install "
            f"{by_name[codec][1]}, or set compression.type=uncompressed on the topic)"
        )
    return out


def missing_operations(granted: Collection[str] | None) -> list[str]:
    """What the principal may not do on the version topic that apply needs: ``write`` (the
    records) and ``read`` (the next plan), from the operations Metadata v8+ reports on it
    (Kafka's AclOperation names, as ``KafkaAdminClient.describe_topics`` gives them). Empty
    when the broker did not report them (None: Metadata before v8, or a broker such as the
    local Tansu one) or reports none (Kafka lists a topic only to a principal with
    ``describe``, so a real answer always has it)."""
    if granted is None or "DESCRIBE" not in granted:
        return []
    return [op for op in ("write", "read") if op.upper() not in granted]


# ------------------------------------------------------------------ requests (pure)


def build_describe_configs(topic: str) -> Any:
    """Every config of the topic (the effective values; the reader keeps ``SHAPE_CONFIGS``).
    No key list: the local Tansu broker closes the connection on one."""
    R = DescribeConfigsRequest
    return R(
        resources=[
            R.DescribeConfigsResource(resource_type=2, resource_name=topic, configuration_keys=None)
        ],
        include_synonyms=False,
    )


def read_describe_configs(resp: Any, topic: str) -> dict[str, str]:
    """The effective values of ``SHAPE_CONFIGS`` the broker reports for the topic."""
    out: dict[str, str] = {}
    for r in resp.results:
        if r.resource_name != topic:
            continue
        if r.error_code:
            err = item_error("DescribeConfigs", topic, r.error_code, r.error_message)
            if err is not None:
                raise err
        for e in r.configs:
            if e.name in SHAPE_CONFIGS and e.value is not None:
                out[e.name] = str(e.value)
    return out
