"""Owner records: what each cluster folder with ``owns:`` claims on a shared cluster, kept on
the cluster itself, so a second repository's overlapping claim is refused at plan time.

``validate`` compares the folders of one repository (kgitops/spec/owns.py); folders of two
repositories never see each other's files, so each apply of a folder with ``owns:`` writes
down what it owns on the cluster (topic ``_kgitops-owners``, compacted: the last record of an
owner counts), and every plan and apply of such a folder reads every record first::

    key     {"owner":"team-b"}                  owns.owner, or the repository and folder
    value   {"from":"github.com/acme/b topics/b",
             "owns":{"groups":[],"principals":["User:b-*"],"topics":["b.*"],
                     "transactionalIds":[]}}
    release a tombstone (no value): the owner claims nothing any more

A record of another owner that can own one name this folder owns (the same glob overlap
``validate`` uses) stops the plan, in one line at this folder's ``owns``::

    topics/a/cluster.yaml:8:3: error: owns overlaps what "github.com/acme/b topics/b" owns
      on this cluster (record in _kgitops-owners): topics payments.* and *.refunds; ...

This module is pure: the record's bytes, and the check. The adapters keep the records
(cluster/simulated.py in its state file, cluster/kafka/owners.py in the topic).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kgitops.errors import Diagnostic
from kgitops.model import OWNED_KINDS, OWNER_TOPIC, ClusterSpec, Owns
from kgitops.spec.owns import overlap

#: A key or value larger than this is not one kgitops wrote.
MAX_OWNER_RECORD_BYTES = 256 * 1024


@dataclass(frozen=True)
class OwnerRecord:
    """One owner's claim: its globs per kind (``Owns``, declared) and where it was written
    from (``source``: repository and folder, for people); ``problem`` when the latest
    record of the owner is not one kgitops could have written (it then claims nothing
    known, and the plan says so)."""

    owns: Owns
    source: str = ""
    problem: str = ""


def record_key(owner: str) -> bytes:
    return json.dumps({"owner": owner}, sort_keys=True, separators=(",", ":")).encode()


def record_value(record: OwnerRecord) -> bytes:
    owns = {kind: list(record.owns.patterns(kind)) for kind, _ in OWNED_KINDS}
    value = {"from": record.source, "owns": owns}
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def parse_key(raw: bytes | None) -> str | None:
    """The owner a record's key names, or None when the key is not kgitops'."""
    if raw is None or len(raw) > MAX_OWNER_RECORD_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or set(data) != {"owner"} or not isinstance(data["owner"], str):
        return None
    return data["owner"] or None


def parse_value(raw: bytes) -> OwnerRecord:
    """The record a value holds; ``problem`` set when it is not kgitops'."""
    if len(raw) > MAX_OWNER_RECORD_BYTES:
        return OwnerRecord(Owns(), problem=f"{len(raw)} bytes, not a kgitops owner record")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return OwnerRecord(Owns(), problem="not JSON")
    return record_from_json(data)


def record_from_json(data: object) -> OwnerRecord:
    """The record of a decoded value (the simulated cluster's state file holds it as JSON)."""
    owns = data.get("owns") if isinstance(data, dict) else None
    source = data.get("from", "") if isinstance(data, dict) else None
    if not isinstance(owns, dict) or not isinstance(source, str):
        return OwnerRecord(Owns(), problem='not {"from": ..., "owns": {...}}')
    kinds: dict[str, tuple[str, ...]] = {}
    for kind, _ in OWNED_KINDS:
        globs = owns.get(kind, [])
        if not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs):
            return OwnerRecord(Owns(), problem=f"owns.{kind} is not a list of names")
        kinds[kind] = tuple(globs)
    return OwnerRecord(
        Owns(
            topics=kinds["topics"],
            principals=kinds["principals"],
            groups=kinds["groups"],
            transactional_ids=kinds["transactionalIds"],
            declared=True,
        ),
        source,
    )


def record_json(record: OwnerRecord) -> dict[str, object]:
    """The record as the simulated cluster's state file keeps it (``record_value``'s JSON)."""
    data: dict[str, object] = json.loads(record_value(record))
    return data


def latest(records: Iterable[tuple[bytes | None, bytes | None]]) -> dict[str, OwnerRecord]:
    """The last record of each owner, in log order, as compaction keeps it; a tombstone
    releases the owner; a record whose key is not kgitops' is skipped."""
    out: dict[str, OwnerRecord] = {}
    for key, value in records:
        owner = parse_key(key)
        if owner is None:
            continue
        if value is None:
            out.pop(owner, None)
        else:
            out[owner] = parse_value(value)
    return out


def same_claim(a: OwnerRecord | None, b: OwnerRecord) -> bool:
    """Whether record ``a`` already says what ``b`` would (no need to write ``b``)."""
    return (
        a is not None
        and not a.problem
        and a.source == b.source
        and all(
            sorted(a.owns.patterns(kind)) == sorted(b.owns.patterns(kind))
            for kind, _ in OWNED_KINDS
        )
    )


def shown(owner: str, record: OwnerRecord) -> str:
    """``"team-b" (github.com/acme/b topics/b)``, or the owner alone when it is its source."""
    if not record.source or record.source == owner:
        return json.dumps(owner)
    return f"{json.dumps(owner)} ({record.source})"


def conflicts(
    cluster: ClusterSpec, me: str, records: Mapping[str, OwnerRecord]
) -> list[Diagnostic]:
    """An error at ``cluster``'s ``owns`` for each other owner whose record can own a name
    this folder owns (``me``: this folder's owner), and for each other owner's record that
    cannot be read (it may claim anything)."""
    out: list[Diagnostic] = []
    mark = cluster.mark_of("owns")
    for owner, record in sorted(records.items()):
        if owner == me:
            continue
        if record.problem:
            out.append(
                Diagnostic(
                    mark,
                    "error",
                    f"the owner record of {json.dumps(owner)} on this cluster (topic "
                    f"{OWNER_TOPIC}) is not kgitops' ({record.problem}), so what it owns is "
                    f"unknown; release it (kgitops owners DIR --release {json.dumps(owner)})",
                )
            )
            continue
        found = overlap(cluster.owns, record.owns)
        if found is None:
            continue
        kind, mine, theirs = found
        both = mine if mine == theirs else f"{mine} and {theirs}"
        out.append(
            Diagnostic(
                mark,
                "error",
                f"owns of {json.dumps(me)} overlaps what {shown(owner, record)} owns on this "
                f"cluster (its record in topic {OWNER_TOPIC}): both can own {kind} {both}; "
                "give each name one owner, or release a record no folder keeps any more "
                f"(kgitops owners DIR --release {json.dumps(owner)})",
            )
        )
    return out
