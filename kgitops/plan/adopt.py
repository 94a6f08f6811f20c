"""Adopting live topics into git (``kgitops import``): topic documents and lock entries that
describe each topic exactly as it is, so the first plan after an import moves nothing. Pure.

Placement is recovered when it can be: if a topic's live assignment is exactly what Kafka's
``AdminUtils`` gives for the current brokers with some fixed start index (rack-aware, or
rack-unaware), that index and placement are recorded in the lock, so a later replication
factor raise or partition increase extends Kafka's own placement (pure appends). Only one
start index can match: partition 0's first replica sits at position ``startIndex`` of the
broker list Kafka walks (ids sorted, or rack-alternated).

Otherwise the topic is ``adopted``: its assignment stays as it is and the lock records only
its partition count and replication factor. If the planner would still move an adopted
topic (its replicas break the rack rule of the default rack-aware placement), it is written
with ``placement: rack-unaware``, and as a last resort ``placement: static`` with the live
assignment listed: ``settle`` checks this by planning with the adopted topics and escalates
each one the plan would still move, until the plan moves none of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kgitops.errors import KgitopsError
from kgitops.model import Broker, ClusterSpec, ClusterState, Placement, TopicSpec, TopicState
from kgitops.names import THROTTLED_REPLICAS_CONFIGS
from kgitops.placement.assignment import assign_replicas, rack_alternated_brokers
from kgitops.plan.actions import AddPartitions, CreateTopic, DeleteTopic, Reassign
from kgitops.plan.diff import compute_plan
from kgitops.plan.value import Plan
from kgitops.spec.config_table import CONFIGS
from kgitops.spec.lock import Lock, LockEntry
from kgitops.spec.topic_configs import check_config, readable_config

#: The order in which ``escalate`` tries placements for a topic the planner would move.
ESCALATION: tuple[str, ...] = ("recovered", "adopted", "rack-unaware", "static")


@dataclass(frozen=True)
class Adoption:
    """One live topic as a spec and a lock entry. ``stage`` is its place in ESCALATION."""

    spec: TopicSpec
    entry: LockEntry
    stage: str
    notes: tuple[str, ...] = ()


def recover_start_index(
    assignment: Mapping[int, tuple[int, ...]], brokers: Sequence[Broker], rack_aware: bool
) -> int | None:
    """The fixed start index for which Kafka's placement gives exactly ``assignment``, or None.

    >>> bs = [Broker(i) for i in range(5)]
    >>> recover_start_index(assign_replicas(bs, 10, 3, start_index=2), bs, False)
    2
    """
    if not assignment or not brokers or 0 not in assignment:
        return None
    ordered = sorted(brokers, key=lambda b: b.id)
    if rack_aware:
        if any(b.rack is None for b in ordered):
            return None
        walk = rack_alternated_brokers({b.id: b.rack for b in ordered if b.rack is not None})
    else:
        walk = [b.id for b in ordered]
    leader = assignment[0][0]
    if leader not in walk:
        return None
    start = walk.index(leader)
    rf = len(assignment[0])
    if rf > len(ordered):
        return None
    try:
        expected = assign_replicas(
            ordered, len(assignment), rf, start_index=start, rack_aware=rack_aware
        )
    except KgitopsError:
        return None
    return start if expected == dict(assignment) else None


def yaml_value(name: str, value: str) -> object:
    """A live config string as the YAML scalar a person would write: durations and sizes in
    units (``7d``, ``1GiB``, ``infinite``), other ints as ints, booleans as booleans."""
    spec = CONFIGS.get(name)
    readable = readable_config(name, value)
    if readable != value:
        return readable
    if spec is not None and spec.type in ("int", "long"):
        try:
            return int(value)
        except ValueError:
            return value
    if spec is not None and spec.type == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def live_config(topic: TopicState) -> tuple[dict[str, str], list[str]]:
    """The configs to write for ``topic`` and notes on the ones left out (throttles, which
    apply manages, and names or values kgitops' config table does not accept)."""
    keep: dict[str, str] = {}
    notes: list[str] = []
    for name, value in sorted(topic.config.items()):
        if name in THROTTLED_REPLICAS_CONFIGS:
            continue
        if name not in CONFIGS:
            notes.append(
                f"config {name}={value} is not a topic config kgitops knows; left out of "
                "the file, and left as it is on the cluster"
            )
            continue
        normal, problem = check_config(name, value)
        if problem is not None or normal is None:
            notes.append(f"config {name}={value} left out: {problem}")
            continue
        keep[name] = normal
    return keep, notes


def adopt(topic: TopicState, brokers: Sequence[Broker], *, stage: str = "recovered") -> Adoption:
    """The spec and lock entry for ``topic`` at escalation ``stage`` (see the docstring)."""
    assignment = {p: ps.replicas for p, ps in topic.partitions.items()}
    rf = topic.replication_factor
    config, notes = live_config(topic)
    if len({len(r) for r in assignment.values()}) > 1:
        stage = "static"  # mixed replication factors: only a static assignment says it
        notes.append("partitions have different replication factors; written as static")
    ordered = tuple(sorted(brokers, key=lambda b: b.id))
    all_racks = bool(ordered) and all(b.rack is not None for b in ordered)
    placement: Placement | None = None
    start: int | None = None
    lock_placement = "adopted"
    if stage == "recovered":
        for rack_aware in (True, False) if all_racks else (False,):
            start = recover_start_index(assignment, ordered, rack_aware)
            if start is not None:
                lock_placement = "rack-aware" if rack_aware else "rack-unaware"
                if all_racks and not rack_aware:
                    placement = "rack-unaware"
                break
        else:
            stage = "adopted"
    if stage == "rack-unaware":
        placement = "rack-unaware"
    static = None
    if stage == "static":
        placement = "static"
        lock_placement = "static"
        static = tuple(assignment[p] for p in sorted(assignment))
    spec = TopicSpec(
        name=topic.name,
        partitions=topic.partition_count,
        replication_factor=rf,
        placement=placement,
        assignment=static,
        config=config,
    )
    entry = LockEntry(topic.name, start, ordered, topic.partition_count, rf, lock_placement)
    return Adoption(spec, entry, stage, tuple(notes))


def escalate(adoption: Adoption, topic: TopicState, brokers: Sequence[Broker]) -> Adoption | None:
    """The next, more literal way to write a topic the planner would otherwise move, or None
    when it is already written as a static assignment."""
    later = ESCALATION[ESCALATION.index(adoption.stage) + 1 :]
    if adoption.spec.placement == "rack-unaware":
        later = tuple(s for s in later if s == "static")
    for stage in later:
        candidate = adopt(topic, brokers, stage=stage)
        if candidate.stage == stage:
            return candidate
    return None


def adopt_topics(state: ClusterState, names: Sequence[str]) -> dict[str, Adoption]:
    """``adopt`` for each named live topic; a topic being reassigned gets a note saying the
    file records its replicas as they are now."""
    out = {}
    for n in names:
        adoption = adopt(state.topics[n], state.brokers)
        moving = state.reassignments.get(n)
        if moving:
            note = (
                f"{len(moving)} partition(s) are being reassigned: the file records the "
                "replicas as they are now; import again once the move is done"
            )
            adoption = replace(adoption, notes=(*adoption.notes, note))
        out[n] = adoption
    return out


def written_entry(
    spec: TopicSpec, topic: TopicState, brokers: Sequence[Broker]
) -> LockEntry | None:
    """The lock entry ``import`` would have written with ``spec``'s file: the first stage of
    ESCALATION whose spec says what ``spec`` says (partitions, replication factor, placement,
    assignment); None when none does (a file a person wrote: the planner records it).

    So an import stopped between its files and its lock (by an older version, which wrote
    the lock last) is completed by the next one."""
    for stage in ESCALATION:
        candidate = adopt(topic, brokers, stage=stage)
        c = candidate.spec
        if candidate.stage == stage and (
            c.partitions,
            c.replication_factor,
            c.placement,
            c.assignment,
        ) == (spec.partitions, spec.replication_factor, spec.placement, spec.assignment):
            return candidate.entry
    return None


#: The action kinds that move data: an adopted topic must get none of them.
MOVES = (CreateTopic, AddPartitions, Reassign, DeleteTopic)


@dataclass(frozen=True)
class _Desired:
    """What ``compute_plan`` reads of the specs: the managed topics plus the adopted ones."""

    cluster: ClusterSpec | None
    topics: tuple[TopicSpec, ...]


def settle(
    adoptions: Mapping[str, Adoption],
    managed: Sequence[TopicSpec],
    cluster: ClusterSpec,
    state: ClusterState,
    lock: Lock | None,
) -> tuple[dict[str, Adoption], Plan]:
    """Plan with the adopted topics; escalate each one the plan would still move (``escalate``)
    and plan again, until no adopted topic moves or none can be written more literally.
    Returns the settled adoptions and the last plan (what the next ``kgitops plan`` shows)."""
    settled = dict(adoptions)
    base = dict(lock.entries) if lock is not None else {}
    cluster = replace(cluster, unmanaged_topics="ignore")  # topics left out are not our concern
    while True:
        desired = _Desired(cluster, (*managed, *(a.spec for a in settled.values())))
        entries = {**base, **{n: a.entry for n, a in settled.items()}}
        plan, _ = compute_plan(desired, state, Lock(entries=entries))
        moving = {a.topic for a in plan.actions if isinstance(a, MOVES) and a.topic in settled}
        changed = False
        for name in sorted(moving):
            better = escalate(settled[name], state.topics[name], state.brokers)
            if better is not None:
                settled[name] = better
                changed = True
        if not changed:
            return settled, plan


def topic_yaml(adoption: Adoption, cluster: str, values: Mapping[str, str] | None = None) -> str:
    """The topic document, deterministic; strings JSON-quoted (valid YAML) so a name such as
    ``1e3`` or ``true`` stays a string."""
    spec = adoption.spec
    lines = [
        f"# imported from cluster {cluster} by `kgitops import`: this is the topic as it was",
        "apiVersion: kgitops/v1",
        "kind: Topic",
        f"name: {json.dumps(spec.name)}",
        f"partitions: {spec.partitions}",
        f"replicationFactor: {spec.replication_factor}",
    ]
    if spec.placement is not None:
        lines.append(f"placement: {spec.placement}")
    if spec.assignment is not None:
        lines.append("assignment:")
        lines.extend(f"  - {json.dumps(list(r))}" for r in spec.assignment)
    config = values if values is not None else spec.config
    if config:
        lines.append("config:")
        for name, value in sorted(config.items()):
            lines.append(f"  {name}: {json.dumps(yaml_value(name, value))}")
    for note in adoption.notes:
        lines.append(f"# note: {note}")
    return "\n".join(lines) + "\n"


def file_name(topic: str) -> str:
    """The file ``import`` writes a topic to, one the loader reads back.

    Kafka's topic names are file-name safe, but one starting with ``.`` would be a hidden
    file, which the loader skips; its leading dot is written ``%2E``, as in a URL (``%`` is not
    in Kafka's topic alphabet, so no other topic's file can have that name).

    >>> file_name("payments.orders"), file_name(".x"), file_name("..y")
    ('payments.orders.yaml', '%2Ex.yaml', '%2E.y.yaml')
    """
    if topic.startswith("."):
        topic = "%2E" + topic[1:]
    return f"{topic}.yaml"
