"""The semantic rules a Kafka operator expects of a cluster folder, beyond the schemas.

Each rule reads built specs (positions included) and appends positioned diagnostics; none
stops the others. Broker-dependent rules run only when the brokers are known (a simulated
cluster, a ``--state`` file or the live cluster).

=================================  =======  ==============================================
rule                               level    where
=================================  =======  ==============================================
same topic defined twice           error    the second definition's name
Kafka's internal topic names       error    name
other names starting with '__'     warning  name
the passwordVersionTopic           error    name (kgitops' own topic)
names equal once . and _ alike     error    the later name (Kafka refuses the second)
replicationFactor > brokers        error    replicationFactor
replicationFactor > brokers left   error    replicationFactor (after decommission)
replicationFactor 1                warning  replicationFactor (not on a 1-broker/local cluster)
min.insync.replicas > RF           error    config.min.insync.replicas (Kafka < 3.7)
min.insync.replicas > RF           warning  config.min.insync.replicas (3.7+: capped at RF)
min.insync.replicas == RF > 1      warning  config.min.insync.replicas
min/max.compaction.lag.ms          error    config.min.compaction.lag.ms
tiered storage retention rules     error    the config that breaks Kafka's rule
compression level without type     warning  the level
retention/compaction, no effect    warning  the config (policy lacks delete/compact)
retention.bytes < segment.bytes    warning  config.retention.bytes
placement static / assignment      error    placement, assignment.<p>, assignment.<p>.<i>
static partition on too few racks  warning  assignment.<p>
startIndex out of range            error    startIndex
rack-aware without racks           error    placement
keys.sample missing                error    keys.sample
partitions above limits            error    partitions (limits.partitionsPerTopic)
replicationFactor above limits     error    replicationFactor (limits.replicationFactor)
partitions in all above limits     error    cluster.yaml limits.totalPartitions (or the doc)
keys.sample outside the folder     error    keys.sample (absolute, URI, .., symlink out)
=================================  =======  ==============================================

The cluster document's own rules are in ``clusterrules``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence

from kgitops.errors import Diagnostic
from kgitops.files import path_problem
from kgitops.model import Broker, ClusterSpec, Limits, TopicSpec
from kgitops.names import KAFKA_INTERNAL_TOPICS, is_internal_topic
from kgitops.placement.racks import RackRule
from kgitops.spec.clusterrules import (
    check_cluster,
    error_at,
    id_list,
    loopback_only,
    warning_at,
)
from kgitops.spec.durability import replication_warnings
from kgitops.spec.topic_configs import check_config
from kgitops.spec.yamlload import Document
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion, caps_min_isr, show_version

_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


def control_characters(key: str, value: str) -> str | None:
    """The error for a config value holding a control character (a newline, a tab, an escape)
    or a text-direction override: Kafka would keep it, and every renderer of the plan (a
    terminal, a pull-request comment) would show something other than the value."""
    found = _CONTROL.search(value)
    if found is None:
        return None
    return (
        f"{key}: the value holds the control character U+{ord(found.group()):04X} at "
        f"position {found.start() + 1}; config values are one line of printable text"
    )


_CHECKED: dict[tuple[str, type, object, KafkaVersion], tuple[str | None, str | None]] = {}


def checked_config(key: str, raw: object, version: KafkaVersion) -> tuple[str | None, str | None]:
    """``check_config`` and the control-character rule: ``(normal, None)`` or ``(None, why)``.

    Both are pure, and 10,000 topics repeat the same few values (``retention.ms: 604800000``):
    a scalar's answer is remembered by its key, type (``1``, ``1.0`` and ``true`` are equal
    keys of a dict) and value (a float's by its ``repr``)."""
    cacheable = type(raw) in (str, int, float, bool)
    # a float by its text: -0.0 == 0.0, but ``0.0`` and ``-0.0`` are different values
    cache_key = (key, type(raw), repr(raw) if type(raw) is float else raw, version)
    if cacheable:
        found = _CHECKED.get(cache_key)
        if found is not None:
            return found
    normal, problem = check_config(key, raw, version=version)
    if problem is None and normal is not None:
        problem = control_characters(key, normal)
    if cacheable and len(_CHECKED) < 100_000:
        _CHECKED[cache_key] = (normal, problem)
    return normal, problem


def _are(ids: Sequence[int]) -> str:
    """``broker 7 is`` / ``brokers 5, 7 are``."""
    return f"broker {ids[0]} is" if len(ids) == 1 else f"brokers {id_list(ids)} are"


def check_folder(
    directory: str,
    cluster: ClusterSpec | None,
    cluster_doc: Document | None,
    topic_docs: list[tuple[TopicSpec, Document]],
    brokers: Sequence[Broker] | None,
    out: list[Diagnostic],
    *,
    limits: Limits | None = None,
    partial: Sequence[tuple[TopicSpec, frozenset[str]]] = (),
    cluster_lost: Collection[str] = (),
) -> list[TopicSpec]:
    """Run every rule; return the topics kept (the first definition of each name).
    ``limits``: cluster.yaml's, read also when the cluster document has errors.
    ``partial``: topics whose document failed its schema, each with the fields (``name``,
    ``partitions``, ``replicationFactor``, ``placement`` ...) that hold placeholders: every
    rule that reads none of them runs on them too (never returned). ``cluster_lost``: the
    top-level fields of cluster.yaml its schema refused (the cluster was built without them)."""
    if cluster is not None and cluster_doc is not None:
        check_cluster(cluster, cluster_doc, brokers, out, lost=cluster_lost)
    unknown = {id(t): fields for t, fields in partial}
    named = [(t, None) for t, fields in partial if "name" not in fields]
    kept = _unique_topics([*topic_docs, *named], out)
    topics = [t for t in kept if id(t) not in unknown]
    drained = set(cluster.decommission) if cluster is not None else set()
    if brokers is not None:
        drained &= {b.id for b in brokers}
    local = cluster is not None and loopback_only(cluster)
    if limits is None:
        limits = cluster.limits if cluster is not None else Limits()
    checked = [*kept, *(t for t, fields in partial if "name" in fields)]
    for topic in checked:
        lost = unknown.get(id(topic), frozenset())
        check_topic(
            topic,
            directory,
            brokers,
            drained,
            out,
            local=local,
            unknown=lost,
            version=cluster.kafka_version if cluster is not None else DEFAULT_VERSION,
        )
        _check_limits(topic, limits, out, lost)
        if "name" in lost:
            continue
        if cluster is not None and topic.name in cluster.own_topics:
            out.append(
                error_at(
                    topic.mark_of("name"),
                    f"{topic.name} is {cluster.own_topic_role(topic.name)}; kgitops creates "
                    "and keeps it, a spec may not manage it",
                )
            )
    counted = [t for t in checked if "partitions" not in unknown.get(id(t), ())]
    _check_total(counted, cluster, limits, out)
    return topics


def _check_limits(
    topic: TopicSpec, limits: Limits, out: list[Diagnostic], unknown: Collection[str] = ()
) -> None:
    """cluster.yaml ``limits``: a typo such as ``partitions: 10000000`` stops here, before
    the planner spends minutes and gigabytes on it."""
    if "partitions" not in unknown and topic.partitions > limits.partitions_per_topic:
        out.append(
            error_at(
                topic.mark_of("partitions"),
                f"partitions {topic.partitions:,} is above limits.partitionsPerTopic "
                f"({limits.partitions_per_topic:,}); raise the limit in cluster.yaml if meant",
            )
        )
    if "replicationFactor" not in unknown and topic.replication_factor > limits.replication_factor:
        out.append(
            error_at(
                topic.mark_of("replicationFactor"),
                f"replicationFactor {topic.replication_factor:,} is above "
                f"limits.replicationFactor ({limits.replication_factor}); raise the limit in "
                "cluster.yaml if meant",
            )
        )


def _check_total(
    topics: Sequence[TopicSpec], cluster: ClusterSpec | None, limits: Limits, out: list[Diagnostic]
) -> None:
    if any(t.partitions > limits.partitions_per_topic for t in topics):
        return  # the topic's own error says it
    total = sum(t.partitions for t in topics if not t.delete)
    if total <= limits.total_partitions:
        return
    where = (
        cluster.mark_of("limits.totalPartitions")
        if cluster is not None
        else min(t.mark for t in topics)
    )
    out.append(
        error_at(
            where,
            f"the topics of this folder have {total:,} partitions in all, above "
            f"limits.totalPartitions ({limits.total_partitions:,}); raise the limit in "
            "cluster.yaml if meant",
        )
    )


# ------------------------------------------------------------------ topics


def _unique_topics(
    topic_docs: Sequence[tuple[TopicSpec, Document | None]], out: list[Diagnostic]
) -> list[TopicSpec]:
    ordered = sorted((t for t, _ in topic_docs), key=lambda t: t.mark)
    by_name: dict[str, TopicSpec] = {}
    by_metric: dict[str, TopicSpec] = {}
    kept: list[TopicSpec] = []
    for topic in ordered:
        first = by_name.get(topic.name)
        if first is not None:
            out.append(
                error_at(
                    topic.mark_of("name"),
                    f"topic {topic.name!r} is defined twice (first at {first.mark_of('name')})",
                )
            )
            continue
        metric = topic.name.replace(".", "_")
        other = by_metric.get(metric)
        if other is not None:
            out.append(
                error_at(
                    topic.mark_of("name"),
                    f"topic {topic.name!r} collides with {other.name!r} "
                    f"({other.mark_of('name')}): Kafka treats '.' and '_' alike in metric "
                    "names and refuses the second",
                )
            )
            continue
        by_name[topic.name] = topic
        by_metric[metric] = topic
        kept.append(topic)
    return kept


def check_topic(
    topic: TopicSpec,
    directory: str,
    brokers: Sequence[Broker] | None,
    drained: set[int],
    out: list[Diagnostic],
    *,
    local: bool = False,
    unknown: Collection[str] = (),
    version: KafkaVersion = DEFAULT_VERSION,
) -> None:
    """``unknown``: fields holding placeholders (their schema error says why); the rules
    reading them are skipped, so no error follows from another."""
    rf = topic.replication_factor
    m = topic.mark_of
    rf_known = "replicationFactor" not in unknown
    delete_known = "delete" not in unknown
    if "name" not in unknown:
        _check_internal_name(topic, out)
    if brokers is not None and rf_known:
        n = len(brokers)
        # the brokers left once the drained go (counted only when any is drained: a folder
        # of 10,000 topics on 60 brokers would walk 600,000 brokers for nothing)
        remaining = [b for b in brokers if b.id not in drained] if drained else brokers
        if rf > n:
            out.append(
                error_at(
                    m("replicationFactor"),
                    f"replicationFactor {rf} is larger than the number of brokers ({n})",
                )
            )
        elif rf > len(remaining) and not topic.delete and delete_known:
            out.append(
                error_at(
                    m("replicationFactor"),
                    f"replicationFactor {rf} needs {rf} brokers, but only {len(remaining)} "
                    f"remain once {_are(sorted(drained))} decommissioned",
                )
            )
    single = len(brokers) == 1 if brokers is not None else local
    if not topic.delete and rf_known and delete_known:
        try:
            isr: int | None = int(topic.config["min.insync.replicas"])
        except (KeyError, ValueError):
            isr = None
        for w in replication_warnings(rf, isr, single_broker=single, version=version):
            out.append(warning_at(m(w.field), w.message))
    _check_config_rules(topic, out, version, rf_known)
    if not unknown or not {"placement", "assignment", "startIndex", "delete"} & set(unknown):
        _check_placement(topic, brokers, drained, out, unknown)
    elif topic.assignment is not None and "assignment" not in unknown:
        ids = {b.id for b in brokers} if brokers is not None else None
        _check_assignment(topic, ids, out, unknown)
    if topic.keys is not None:
        sample = topic.keys.sample
        problem = path_problem(directory, sample)
        if problem is not None:
            out.append(error_at(m("keys.sample"), f"keys.sample: {problem}"))
        elif not os.path.exists(os.path.join(directory, sample)):
            out.append(error_at(m("keys.sample"), f"key sample not found: {sample}"))


def _check_internal_name(topic: TopicSpec, out: list[Diagnostic]) -> None:
    if topic.name in KAFKA_INTERNAL_TOPICS:
        out.append(
            error_at(
                topic.mark_of("name"),
                f"{topic.name} is one of Kafka's internal topics; the brokers create and manage it",
            )
        )
    elif is_internal_topic(topic.name):
        out.append(
            warning_at(
                topic.mark_of("name"),
                f"topic names starting with '__' are for internal topics (Kafka's, Connect's, "
                f"Streams'); is {topic.name!r} meant to be managed here?",
            )
        )


def _check_config_rules(
    topic: TopicSpec, out: list[Diagnostic], version: KafkaVersion, rf_known: bool = True
) -> None:
    c = topic.config
    m = topic.mark_of
    rf = topic.replication_factor
    isr = c.get("min.insync.replicas")
    if isr is not None and rf_known:
        need = int(isr)
        if need > rf and not caps_min_isr(version):  # 3.7+: a warning (durability.py)
            out.append(
                error_at(
                    m("config.min.insync.replicas"),
                    f"min.insync.replicas {need} is above replicationFactor {rf}: producers "
                    f"with acks=all could never write (Kafka {show_version(version)}; 3.7 and "
                    "later cap it at the replica count)",
                )
            )
    lo, hi = c.get("min.compaction.lag.ms"), c.get("max.compaction.lag.ms")
    if lo is not None and hi is not None and int(lo) > int(hi):
        out.append(
            error_at(
                m("config.min.compaction.lag.ms"),
                f"min.compaction.lag.ms ({lo}) is above max.compaction.lag.ms ({hi})",
            )
        )
    for codec in ("gzip", "lz4", "zstd"):
        level = f"compression.{codec}.level"
        if level in c and c.get("compression.type") != codec:
            out.append(
                warning_at(
                    m(f"config.{level}"),
                    f"{level} has no effect unless compression.type is {codec}",
                )
            )
    if c.get("remote.storage.enable") == "true":
        _check_tiered(topic, out)
    _check_retention(topic, out)


def _check_retention(topic: TopicSpec, out: list[Diagnostic]) -> None:
    """Settings Kafka accepts that do not do what they say (warnings)."""
    c = topic.config
    m = topic.mark_of
    policies = set(c.get("cleanup.policy", "delete").split(","))
    if "delete" not in policies:
        for name in ("retention.ms", "retention.bytes"):
            if name in c:
                out.append(
                    warning_at(
                        m(f"config.{name}"),
                        f"{name} has no effect with cleanup.policy compact: nothing expires "
                        "(use compact,delete to also expire old data)",
                    )
                )
    if "compact" not in policies:
        for name in ("min.compaction.lag.ms", "max.compaction.lag.ms", "delete.retention.ms"):
            if name in c:
                out.append(
                    warning_at(
                        m(f"config.{name}"),
                        f"{name} has no effect without compaction (cleanup.policy has no compact)",
                    )
                )
    segment = int(c.get("segment.bytes", "1073741824"))
    size = int(c.get("retention.bytes", "-1"))
    if "delete" in policies and 0 <= size < segment:
        out.append(
            warning_at(
                m("config.retention.bytes"),
                f"retention.bytes ({size}) is below segment.bytes ({segment}): Kafka deletes "
                "whole closed segments, so a partition keeps up to segment.bytes more",
            )
        )


def _check_tiered(topic: TopicSpec, out: list[Diagnostic]) -> None:
    """Kafka's LogConfig rules for a topic with remote.storage.enable=true."""
    c = topic.config
    m = topic.mark_of
    policy = c.get("cleanup.policy", "delete")
    if policy not in ("delete", ""):
        out.append(
            error_at(
                m("config.cleanup.policy"),
                "tiered storage (remote.storage.enable) needs cleanup.policy delete",
            )
        )
    for kind, default in (("ms", "604800000"), ("bytes", "-1")):
        total = int(c.get(f"retention.{kind}", default))
        local_name = f"local.retention.{kind}"
        local = int(c.get(local_name, "-2"))
        if total != -1 and local != -2:
            if local == -1:
                out.append(
                    error_at(
                        m(f"config.{local_name}"),
                        f"{local_name} cannot be -1 while retention.{kind} is {total}",
                    )
                )
            elif local > total:
                out.append(
                    error_at(
                        m(f"config.{local_name}"),
                        f"{local_name} ({local}) is above retention.{kind} ({total})",
                    )
                )


def _check_placement(
    topic: TopicSpec,
    brokers: Sequence[Broker] | None,
    drained: set[int],
    out: list[Diagnostic],
    unknown: Collection[str] = (),
) -> None:
    m = topic.mark_of
    if topic.placement == "static":
        if topic.assignment is None:
            out.append(
                error_at(
                    m("placement"), "placement: static needs an assignment (one list per partition)"
                )
            )
        if topic.start_index is not None:
            out.append(
                error_at(m("startIndex"), "startIndex has no meaning with placement: static")
            )
    elif topic.assignment is not None:
        out.append(error_at(m("assignment"), "an assignment is only used with placement: static"))
    if topic.assignment is not None:
        ids = {b.id for b in brokers} if brokers is not None else None
        _check_assignment(topic, ids, out, unknown)
        _check_static_drained(topic, drained, out)
        if brokers is not None:
            _check_static_racks(topic, brokers, drained, out)
    usable = (
        [b for b in brokers or () if b.id not in drained] if topic.start_index is not None else []
    )
    if (
        topic.start_index is not None
        and brokers is not None
        and topic.placement != "static"
        and topic.start_index >= len(usable)
    ):
        after = f" once {_are(sorted(drained))} decommissioned" if drained else ""
        out.append(
            error_at(
                m("startIndex"),
                f"startIndex {topic.start_index} is out of range: placement uses "
                f"{len(usable)} brokers{after}, so it must be below {len(usable)}",
            )
        )
    if topic.placement == "rack-aware" and brokers is not None:
        missing = [b.id for b in brokers if b.rack is None]
        if missing:
            out.append(
                error_at(
                    m("placement"),
                    f"placement rack-aware needs a rack on every broker; brokers "
                    f"{id_list(missing)} have none",
                )
            )


def _check_static_drained(topic: TopicSpec, drained: set[int], out: list[Diagnostic]) -> None:
    """A static assignment that keeps replicas on a decommissioned broker contradicts the
    cluster file: the plan cannot both drain the broker and honour the assignment."""
    assert topic.assignment is not None
    if topic.delete:
        return
    for p, replicas in enumerate(topic.assignment):
        for i, broker in enumerate(replicas):
            if broker in drained:
                out.append(
                    error_at(
                        topic.mark_of(f"assignment.{p}.{i}"),
                        f"broker {broker} (partition {p}) is decommissioned in cluster.yaml; "
                        "move this replica in the static assignment to another broker",
                    )
                )


def _check_assignment(
    topic: TopicSpec, ids: set[int] | None, out: list[Diagnostic], unknown: Collection[str] = ()
) -> None:
    assert topic.assignment is not None
    m = topic.mark_of
    rf = topic.replication_factor
    if "partitions" not in unknown and len(topic.assignment) != topic.partitions:
        out.append(
            error_at(
                m("assignment"),
                f"the assignment has {len(topic.assignment)} replica lists but partitions is "
                f"{topic.partitions}; give one list per partition",
            )
        )
    for p, replicas in enumerate(topic.assignment):
        if "replicationFactor" not in unknown and len(replicas) != rf:
            out.append(
                error_at(
                    m(f"assignment.{p}"),
                    f"partition {p} has {len(replicas)} replicas but replicationFactor is {rf}",
                )
            )
        seen: set[int] = set()
        for i, broker in enumerate(replicas):
            if broker in seen:
                out.append(
                    error_at(m(f"assignment.{p}.{i}"), f"partition {p} lists broker {broker} twice")
                )
            seen.add(broker)
            if ids is not None and broker not in ids:
                out.append(
                    error_at(
                        m(f"assignment.{p}.{i}"),
                        f"broker {broker} (partition {p}) is not a broker of the cluster "
                        f"(brokers: {id_list(sorted(ids))})",
                    )
                )


def _check_static_racks(
    topic: TopicSpec, brokers: Sequence[Broker], drained: set[int], out: list[Diagnostic]
) -> None:
    """A hand-made assignment that puts a partition on fewer racks than it could (warning):
    losing that rack loses more replicas than rack-aware placement ever would."""
    assert topic.assignment is not None
    rule = RackRule.of(brokers, drained)
    if not rule.applies:
        return
    for p, replicas in enumerate(topic.assignment):
        if any(b not in rule.rack_of for b in replicas) or len(set(replicas)) != len(replicas):
            continue  # already an error
        if rule.broken(replicas):
            used = rule.racks(replicas)
            out.append(
                warning_at(
                    topic.mark_of(f"assignment.{p}"),
                    f"partition {p} has its {len(replicas)} replicas in {len(used)} of the "
                    f"{rule.needed(replicas)} racks it could use ({', '.join(sorted(used))}); "
                    "losing one rack loses more than one replica",
                )
            )
