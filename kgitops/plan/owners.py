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
from dataclasses import dataclass, field, replace

from kgitops.errors import Diagnostic, Mark
from kgitops.model import OWNED_KINDS, OWNER_TOPIC, ClusterSpec, Owns
from kgitops.plan.access_actions import AlterQuota, CreateAcl, DeleteAcl, UpsertUser
from kgitops.plan.action_base import Action
from kgitops.plan.actions import ElectLeaders, Reassign, RemoveThrottles
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
    #: its place in the log (Kafka's offset; the simulated cluster counts): of two
    #: overlapping claims written at once, the lower one stands (``lost_to``)
    offset: int = field(default=-1, compare=False)


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
    return latest_at((i, k, v) for i, (k, v) in enumerate(records))


def latest_at(
    records: Iterable[tuple[int, bytes | None, bytes | None]],
) -> dict[str, OwnerRecord]:
    """``latest`` of (offset, key, value) records: each record knows its offset."""
    out: dict[str, OwnerRecord] = {}
    for offset, key, value in records:
        owner = parse_key(key)
        if owner is None:
            continue
        if value is None:
            out.pop(owner, None)
        else:
            out[owner] = replace(parse_value(value), offset=offset)
    return out


def lost_to(cluster: ClusterSpec, me: str, records: Mapping[str, OwnerRecord]) -> list[str]:
    """After this folder wrote its record (``records[me]``, read back): the other owners
    whose overlapping record came first (a lower offset). Two applies that passed the check
    at once both find the overlap here; only the later writer gives way, so exactly one
    goes ahead."""
    mine = records.get(me)
    if mine is None:
        return []
    return [
        owner
        for owner, record in sorted(records.items())
        if owner != me
        and not record.problem
        and record.offset < mine.offset
        and overlap(cluster.owns, record.owns) is not None
    ]


def plan_names(actions: Iterable[Action]) -> tuple[set[str], set[str]]:
    """(topics, principals) a plan's actions touch: a topic action's topic; an ACL's
    principal, a SCRAM user's and a user quota's ``User:`` name. Moves (reassign, leader
    election, throttles) do not count: a drain moves every replica off its brokers, whoever
    owns the topic (a declared topic counts as declared)."""
    topics: set[str] = set()
    principals: set[str] = set()
    for action in actions:
        if isinstance(action, Reassign | ElectLeaders | RemoveThrottles):
            continue
        if isinstance(action, CreateAcl | DeleteAcl):
            principals.add(action.acl.principal)
        elif isinstance(action, UpsertUser):
            principals.add(f"User:{action.name}")
        elif isinstance(action, AlterQuota):
            if action.entity.user:
                principals.add(f"User:{action.entity.user}")
        else:
            topics.add(action.topic)
    return topics, principals


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
    cluster: ClusterSpec,
    me: str,
    records: Mapping[str, OwnerRecord],
    *,
    source: str = "",
    take_over: bool = False,
) -> list[Diagnostic]:
    """An error at ``cluster``'s ``owns`` for each other owner whose record can own a name
    this folder owns (``me``: this folder's owner), and for each other owner's record that
    cannot be read (it may claim anything). And one when the record of ``me`` was written
    from another folder (``source``: where this folder lives) unless ``take_over``: two
    folders given one ``owns.owner`` would replace each other's record."""
    out: list[Diagnostic] = []
    mark = cluster.mark_of("owns")
    for owner, record in sorted(records.items()):
        if owner == me:
            if source and record.source and record.source != source and not take_over:
                out.append(
                    Diagnostic(
                        mark,
                        "error",
                        f"the owner {json.dumps(me)} is recorded on this cluster (topic "
                        f"{OWNER_TOPIC}) from {json.dumps(record.source)}, not from this "
                        f"folder ({json.dumps(source)}): give this folder another "
                        "owns.owner, or pass --take-over-owner if it now stands for that "
                        "owner (its apply replaces the record)",
                    )
                )
            continue
        if record.problem:
            out.append(_unreadable(mark, owner, record))
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
                f"{_ADVICE}",
            )
        )
    return out


#: What a refusal suggests: the owner first; ``--release`` only for an owner that is gone.
_ADVICE = (
    "give each name one owner (ask that owner to give it up), or, only when that owner's "
    "folder no longer exists, release its record (kgitops owners DIR --release OWNER)"
)


def _unreadable(mark: Mark, owner: str, record: OwnerRecord) -> Diagnostic:
    return Diagnostic(
        mark,
        "error",
        f"the owner record of {json.dumps(owner)} on this cluster (topic "
        f"{OWNER_TOPIC}) is not kgitops' ({record.problem}), so what it owns is "
        f"unknown; release it (kgitops owners DIR --release {json.dumps(owner)})",
    )


def unowned_conflicts(
    cluster: ClusterSpec,
    me: str,
    records: Mapping[str, OwnerRecord],
    topics: Iterable[str],
    principals: Iterable[str],
    *,
    source: str = "",
) -> list[Diagnostic]:
    """For a folder without ``owns:`` (it owns everything): an error at its cluster.yaml for
    each other owner whose record owns a topic or principal the folder declares or its plan
    touches (``topics``, ``principals``), and for each unreadable record of another owner. A
    record written from this folder (``source``: before its ``owns:`` was removed) is its own."""
    out: list[Diagnostic] = []
    mark = cluster.mark
    names = {"topics": sorted(set(topics)), "principals": sorted(set(principals))}
    for owner, record in sorted(records.items()):
        if owner == me or (source and record.source == source):
            continue
        if record.problem:
            out.append(_unreadable(mark, owner, record))
            continue
        hit = next(
            (
                (kind, n)
                for kind, listed in names.items()
                for n in listed
                if record.owns.owns(kind, n)
            ),
            None,
        )
        if hit is None:
            continue
        kind, name = hit
        out.append(
            Diagnostic(
                mark,
                "error",
                f"this folder has no owns: (it owns everything), but {kind[:-1]} {name} of "
                f"its plan is owned by {shown(owner, record)} (its record in topic "
                f"{OWNER_TOPIC}); give this folder an owns: without it, {_ADVICE}",
            )
        )
    return out
