"""A cluster folder of YAML -> ``Specs``: the cluster, its topics, and every problem found.

Loading never stops at the first problem and never raises on bad input: each YAML document
is composed with its positions (``yamlload``), checked against its JSON Schema
(``schemacheck``), turned into a ``TopicSpec`` or ``ClusterSpec``, and then the whole folder
goes through the rules a Kafka operator expects (``specrules``). A document that fails its
schema is still checked: the parts the schema refused are taken out (``schemacheck.salvage``)
and every rule that reads none of them runs on the rest, so one run reports every problem;
a broken cluster.yaml keeps its valid ``defaults:`` and profiles for the topics, and nothing
follows from a refused part but its own error. What comes out is sorted::

    topics/prod/payments.yaml:14:5: error: partitions must be at least 1, not 0
    topics/prod/payments.yaml:20:3: warning: replicationFactor 1: ...

Layout of a cluster folder: every ``*.yaml`` / ``*.yml`` below it (recursively; hidden files
and folders, and sub-folders that have their own ``cluster.yaml``, are skipped), several
documents per file. Exactly one document is ``kind: Cluster`` (normally ``cluster.yaml``).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from kgitops.access import NO_ACCESS, AccessSpecs
from kgitops.errors import Diagnostic, KgitopsError, Mark, SpecError
from kgitops.gitrepo import checkout_root
from kgitops.model import (
    Broker,
    ClusterSpec,
    KeySample,
    Limits,
    Placement,
    TopicSpec,
    labels_of,
)
from kgitops.names import (
    CLUSTER_FILES,
    THROTTLED_REPLICAS_CONFIGS,
)
from kgitops.spec import rules as specrules
from kgitops.spec import schemacheck
from kgitops.spec.access import ACCESS_KINDS, build_access, check_own_login
from kgitops.spec.celrules import Rule, compile_rules, evaluate
from kgitops.spec.cluster_doc import build_cluster, check_drop_step, limits_of
from kgitops.spec.clusterrules import own_variables
from kgitops.spec.folders import cluster_dirs, spec_files
from kgitops.spec.include import included_topics
from kgitops.spec.layers import layered, unused_overrides
from kgitops.spec.owns import check_owned
from kgitops.spec.policies import check_policies
from kgitops.spec.teamaccess import check_team_access
from kgitops.spec.topic_configs import CONFIGS
from kgitops.spec.yamlload import Document, Marks, load_file, load_text
from kgitops.versionrules import DEFAULT_VERSION, KafkaVersion

KINDS = ("Topic", "Cluster", *ACCESS_KINDS)
_OptionalPlacement = Placement | None


@dataclass(frozen=True)
class Specs:
    """Everything one cluster folder says, and every problem found in it."""

    directory: str  # the cluster folder
    cluster: ClusterSpec | None  # from cluster.yaml (kind: Cluster)
    topics: tuple[TopicSpec, ...]  # sorted by name
    diagnostics: tuple[Diagnostic, ...]  # every problem found, sorted
    access: AccessSpecs = NO_ACCESS  # ACL, User, Quota documents and topic access
    policy: tuple[tuple[str, Diagnostic], ...] = ()  # (topic, finding) of cluster.yaml policies
    rules: tuple[Rule, ...] = ()  # policies.rules, compiled (plan checks those reading old)
    written: Mapping[str, Any] = field(default_factory=dict)  # topic -> its document as written

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]

    def topic(self, name: str) -> TopicSpec | None:
        for t in self.topics:
            if t.name == name:
                return t
        return None


# ------------------------------------------------------------------ building


def _layer_configs(
    cluster: Document, diags: list[Diagnostic], version: KafkaVersion = DEFAULT_VERSION
) -> None:
    """The configs of cluster.yaml's ``defaults:`` and ``profiles:``, checked where they are
    written, whether or not a topic uses them."""
    v = cluster.value
    prefixes = ["defaults"] if isinstance(v.get("defaults"), dict) else []
    profiles = v.get("profiles")
    if isinstance(profiles, dict):
        prefixes.extend(f"profiles.{name}" for name in profiles)
    overrides = v.get("overrides")
    if isinstance(overrides, dict):
        prefixes.extend(f"overrides.{key}" for key in overrides)
    for prefix in prefixes:
        _topic_config(cluster, diags, prefix + ".config", version)


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _topic_config(
    doc: Document,
    diags: list[Diagnostic],
    where: str = "config",
    version: KafkaVersion = DEFAULT_VERSION,
) -> dict[str, str]:
    """The topic's configs, normalised; a diagnostic for each bad name or value.

    Runs even when the rest of the document fails its schema, so every error shows at once.
    ``where``: the mapping's path (a profile's ``profiles.critical.config`` in cluster.yaml).
    """
    raw_config = doc.value.get("config") if where == "config" else _at(doc.value, where)
    config: dict[str, str] = {}
    if not isinstance(raw_config, dict):
        return config
    for key, raw in raw_config.items():
        path = f"{where}.{key}"
        if key in THROTTLED_REPLICAS_CONFIGS:
            diags.append(
                Diagnostic(
                    doc.key_mark(path),
                    "error",
                    f"{key} is set by kgitops apply while replicas move; remove it from the spec",
                )
            )
            continue
        if key not in CONFIGS:
            hint = schemacheck.did_you_mean(key, sorted(CONFIGS))
            diags.append(
                Diagnostic(doc.key_mark(path), "error", f"unknown topic config {key!r}{hint}")
            )
            continue
        normal, problem = specrules.checked_config(key, raw, version)
        if problem is not None or normal is None:
            diags.append(Diagnostic(doc.mark(path), "error", problem or f"invalid {key}"))
            continue
        removed = CONFIGS[key].removed_in
        if removed:
            diags.append(
                Diagnostic(
                    doc.key_mark(path),
                    "warning",
                    f"{key} is deprecated and was removed in Kafka {removed}",
                )
            )
        config[key] = normal
    return config


#: The fields of a topic document a TopicSpec is built from.
TOPIC_FIELDS = (
    "name",
    "partitions",
    "replicationFactor",
    "placement",
    "startIndex",
    "assignment",
    "delete",
    "keys",
    "expectedWriteBytesPerSec",
    "profile",
    "config",
)
#: The placeholders of a partial topic's missing required fields (no rule reads them).
_PLACEHOLDERS = {"name": "", "partitions": 0, "replicationFactor": 0}


def _salvaged(
    doc: Document, kind: str, *, refused: bool
) -> tuple[Document, schemacheck.Salvage] | None:
    """``doc`` with the parts its schema ``refused`` taken out (``doc`` itself when none
    was), so the rest of it is still checked; None when nothing of it can be trusted."""
    if not refused:
        return doc, schemacheck.Salvage(doc.value, frozenset(), frozenset())
    kept = schemacheck.salvage(doc.value, kind)
    if kept is None:
        return None
    return replace(doc, value=kept.value), kept


def _lost_fields(kept: schemacheck.Salvage) -> frozenset[str]:
    """The top-level fields a salvage took out (or found missing)."""
    return frozenset(p.split(".", 1)[0] for p in kept.pruned) | kept.missing


def _layer_lost(topic: Document, pruned: frozenset[str] | None) -> bool:
    """Whether the part of cluster.yaml that could give ``topic`` its replicationFactor
    (``defaults:``, its profile) was refused (``pruned``: the paths taken out of cluster.yaml;
    None: none of it could be read): its absence is then no error of the topic's own."""
    if not pruned:
        return pruned is None
    profile = topic.value.get("profile") if isinstance(topic.value, dict) else None
    parts: tuple[str, ...] = ("defaults",)
    if isinstance(profile, str):
        parts += ("profiles", f"profiles.{profile}")
    inside = tuple(f"{part}." for part in parts if part != "profiles")
    return any(p in parts or p.startswith(inside) for p in pruned)


def _build_topic(doc: Document, config: dict[str, str], *, placeholders: bool = False) -> TopicSpec:
    v = {**_PLACEHOLDERS, **doc.value} if placeholders else doc.value
    keys = v.get("keys")
    assignment = v.get("assignment")
    return TopicSpec(
        name=v["name"],
        partitions=int(v["partitions"]),
        replication_factor=int(v["replicationFactor"]),
        placement=cast(_OptionalPlacement, v.get("placement")),
        start_index=int(v["startIndex"]) if v.get("startIndex") is not None else None,
        assignment=(
            tuple(tuple(int(b) for b in replicas) for replicas in assignment)
            if assignment is not None
            else None
        ),
        config=config,
        delete=bool(v.get("delete", False)),
        keys=(
            KeySample(
                sample=keys["sample"],
                column=keys.get("column", "key"),
                size_column=keys.get("sizeColumn"),
            )
            if keys is not None
            else None
        ),
        mark=doc.key_mark("name"),
        marks=Marks(doc.path, doc.positions, doc.files),
        origins=doc.origins,
        profile=v.get("profile"),
        labels=labels_of(v),
        expected_write_rate=(
            int(v["expectedWriteBytesPerSec"])
            if v.get("expectedWriteBytesPerSec") is not None
            else None
        ),
    )


def _kind_of(doc: Document, diags: list[Diagnostic]) -> str | None:
    v = doc.value
    if not isinstance(v, dict):
        diags.append(
            Diagnostic(
                doc.mark(""),
                "error",
                "a document must be a mapping with apiVersion, kind and its fields, "
                f"not {schemacheck.type_word(v)}",
            )
        )
        return None
    kind = v.get("kind")
    if kind is None:
        diags.append(
            Diagnostic(
                doc.mark(""),
                "error",
                "missing required field 'kind' (Topic, Cluster, ACL, User or Quota)",
            )
        )
        return None
    if kind not in KINDS:
        hint = schemacheck.did_you_mean(kind, list(KINDS)) if isinstance(kind, str) else ""
        diags.append(
            Diagnostic(
                doc.mark("kind"),
                "error",
                f"unknown kind {schemacheck.shown(kind)}: expected {', '.join(KINDS)}{hint}",
            )
        )
        return None
    return str(kind)


# ------------------------------------------------------------------ loading


@contextmanager
def _no_gc() -> Iterator[None]:
    """Loading allocates hundreds of thousands of small acyclic objects; the cyclic GC would
    walk everything alive (a planner may already hold a million-partition state) again and
    again for nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def own_principal(cluster: ClusterSpec) -> str | None:
    """The user name kgitops logs in as: the value of security.sasl.usernameEnv, when the
    environment has it (CI holds it; a laptop may not)."""
    sasl = cluster.security.sasl
    if sasl is None or not sasl.username_env:
        return None
    return os.environ.get(sasl.username_env) or None


def load_specs(directory: str, *, brokers: Sequence[Broker] | None = None) -> Specs:
    """Load and check one cluster folder. Never raises on bad input: every problem is in
    ``diagnostics``. ``brokers`` are the known brokers (from a ``--state`` file or the live
    cluster) for the replication-factor, assignment and decommission checks; when None, the
    simulated brokers of cluster.yaml are used, if any."""
    with _no_gc():
        return _load(directory, brokers)


def _load(directory: str, brokers: Sequence[Broker] | None) -> Specs:
    diags: list[Diagnostic] = []
    if not os.path.isdir(directory):
        what = (
            f"a file, not a cluster folder (give {os.path.dirname(directory) or '.'})"
            if os.path.isfile(directory)
            else "no such folder"
        )
        diags.append(Diagnostic(Mark(directory), "error", what))
        return Specs(directory, None, (), tuple(diags))
    topic_docs: list[tuple[TopicSpec, Document]] = []
    partial: list[tuple[TopicSpec, frozenset[str]]] = []
    partial_docs: list[Document] = []
    cluster: ClusterSpec | None = None
    cluster_doc: Document | None = None
    layers: Document | None = None  # cluster.yaml as written: its defaults and profiles
    cluster_found: list[Diagnostic] = []  # its schema errors
    cluster_lost: frozenset[str] = frozenset()
    cluster_pruned: frozenset[str] | None = frozenset()  # None: cluster.yaml unreadable
    cluster_seen: Mark | None = None
    cluster_unread = False
    kindless = False
    access_docs: list[tuple[str, Document]] = []
    topic_sources: list[Document] = []
    limits = Limits()
    for filename in spec_files(directory, diags):
        documents, problems = load_file(filename, root=directory)
        diags.extend(problems)
        if problems and os.path.basename(filename) in CLUSTER_FILES:
            cluster_unread = True  # its own error says why; no second one for the folder
            cluster_pruned = None
        for doc in documents:
            kind = _kind_of(doc, diags)
            if kind is None:
                # cluster.yaml's document without a kind it knows: its own error says it
                kindless = kindless or os.path.basename(filename) in CLUSTER_FILES
                continue
            if kind == "Topic":
                topic_sources.append(doc)  # after cluster.yaml: its defaults and profiles
                continue
            found = schemacheck.check(doc, kind)
            if kind == "Cluster":
                if cluster_seen is not None:
                    diags.append(
                        Diagnostic(
                            doc.mark("kind"),
                            "error",
                            f"a second Cluster document (the first is at {cluster_seen}); "
                            "a folder describes one cluster",
                        )
                    )
                    continue
                cluster_seen = doc.mark("kind")
                limits = limits_of(doc.value.get("limits"))
                diags.extend(found)
                layers, cluster_found = doc, found
                kept = _salvaged(doc, "Cluster", refused=bool(found))
                cluster_pruned = kept[1].pruned if kept is not None else None
                if kept is not None and "name" not in kept[1].missing:
                    cluster_doc = kept[0]
                    cluster_lost = _lost_fields(kept[1])
                    cluster = build_cluster(cluster_doc, directory)
                    _layer_configs(cluster_doc, diags, cluster.kafka_version)
                    check_drop_step(cluster_doc, diags)
                continue
            diags.extend(found)
            kept = _salvaged(doc, kind, refused=bool(found))
            if kept is not None and not kept[1].missing:
                access_docs.append((kind, kept[0]))
    if cluster_seen is None and kindless:
        cluster_unread, cluster_pruned = True, None
    if cluster_doc is not None:
        topic_sources.extend(included_topics(directory, cluster_doc, diags))
    refused = {d.mark for d in cluster_found}
    for source in topic_sources:
        doc = layered(source, layers, diags)
        excused = ("replicationFactor",) if _layer_lost(source, cluster_pruned) else ()
        found = schemacheck.check(doc, "Topic", excused=excused)
        # a value inherited from cluster.yaml that its own check refused: said there, once
        diags.extend(d for d in found if d.mark not in refused)
        config = _topic_config(
            doc, diags, version=cluster.kafka_version if cluster else DEFAULT_VERSION
        )
        if not found and all(k in doc.value for k in excused):
            topic_docs.append((_build_topic(doc, config), doc))
            continue
        kept = _salvaged(doc, "Topic", refused=True)
        if kept is None:
            continue
        unknown = frozenset(f for f in TOPIC_FIELDS if kept[1].lost(f))
        if unknown:
            partial.append((_build_topic(kept[0], config, placeholders=True), unknown))
            if "name" not in unknown:
                partial_docs.append(kept[0])
        else:
            topic_docs.append((_build_topic(kept[0], config), kept[0]))
    if cluster_seen is None and not cluster_unread:
        diags.append(
            Diagnostic(
                Mark(os.path.normpath(directory)),
                "error",
                "no Cluster document in this folder (expected cluster.yaml with kind: Cluster)",
            )
        )
    known = list(brokers) if brokers is not None else None
    if known is None and cluster is not None and cluster.simulated is not None:
        known = list(cluster.simulated.brokers)
    topics = specrules.check_folder(
        directory,
        cluster,
        cluster_doc,
        topic_docs,
        known,
        diags,
        limits=limits,
        partial=partial,
        cluster_lost=cluster_lost,
    )
    policy: list[tuple[str, Diagnostic]] = []
    named_docs = [*(d for _, d in topic_docs), *partial_docs]
    rules: tuple[Rule, ...] = ()
    written = {
        d.value["name"]: d.value
        for d in topic_sources
        if isinstance(d.value, dict) and isinstance(d.value.get("name"), str)
    }
    if cluster_doc is not None:
        # a policies: part refused: its own errors say so, and no topic is held to the rest
        # (a refused mode would turn warnings into errors)
        held = topics if "policies" not in cluster_lost else []
        policy = check_policies(cluster_doc, directory, held, diags)
        if "policies" not in cluster_lost:
            rules = compile_rules(cluster_doc, diags)
        findings = evaluate(rules, held, written)
        diags.extend(d for _, d in findings)
        policy += [(t, d) for t, d in findings if not d.is_error]
        check_team_access(cluster_doc, directory, access_docs, named_docs, diags)
        names = [t.name for t, _ in topic_docs] + [t.name for t, f in partial if "name" not in f]
        if "include" not in cluster_lost and all("name" not in f for _, f in partial):
            diags.extend(unused_overrides(cluster_doc, names))
    access = build_access(access_docs, named_docs, diags)
    if cluster is not None:
        check_own_login(access_docs, own_variables(cluster), own_principal(cluster), diags)
        check_owned(cluster, topics, access, diags)
    return Specs(
        directory=directory,
        cluster=cluster,
        topics=tuple(sorted(topics, key=lambda t: t.name)),
        diagnostics=tuple(sorted(set(diags))),
        access=access,
        policy=tuple(policy),
        rules=rules,
        written=written,
    )


def cluster_from_text(text: str, shown_as: str, directory: str) -> ClusterSpec | None:
    """The Cluster document in ``text`` (an old cluster.yaml, read from git), built as if it
    lived in ``directory``; None when there is none or it does not match its schema. Only
    parsed: no file it names is read, nothing it names is contacted."""
    documents, problems = load_text(text, shown_as)
    if any(d.is_error for d in problems):
        return None
    diags: list[Diagnostic] = []
    for doc in documents:
        if _kind_of(doc, diags) == "Cluster" and not schemacheck.check(doc, "Cluster"):
            return build_cluster(doc, directory)
    return None


def repository_clusters(folder: str) -> list[ClusterSpec]:
    """The cluster.yaml of every cluster folder in ``folder``'s repository, the git checkout
    it is in (only parsed: nothing it names is read or contacted; one that does not parse is
    left to its own validate); none outside a checkout, where no folder but the one given
    is known to belong with it."""
    from kgitops.files import read_bytes

    root = checkout_root(folder)
    if root is None:  # not in a git checkout: no repository, so no other folder to compare
        return []
    out = []
    for directory in cluster_dirs(root):
        for name in CLUSTER_FILES:
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            try:
                text = read_bytes(path, root=directory).decode("utf-8")
            except (OSError, ValueError, KgitopsError):
                continue
            cluster = cluster_from_text(text, path, directory)
            if cluster is not None:
                out.append(cluster)
            break
    return out


def load_specs_or_raise(directory: str, *, brokers: Sequence[Broker] | None = None) -> Specs:
    """``load_specs``, raising ``SpecError`` (with every diagnostic) if any is an error."""
    specs = load_specs(directory, brokers=brokers)
    if specs.errors:
        raise SpecError(specs.diagnostics)
    return specs
