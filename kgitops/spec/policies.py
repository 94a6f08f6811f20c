"""cluster.yaml ``policies:``: what a platform team allows in this cluster's topics.

Checked by ``validate`` (and so by ``plan`` and ``apply``) on every topic's effective values
(after defaults and profiles), each finding at the value that breaks the policy and citing the
policy's own line; ``mode: warn`` makes them warnings::

    policies:
      maxPartitions: 100            # also minPartitions
      minReplicationFactor: 2       # also minInsyncReplicas, maxRetention (units allowed)
      requiredConfigs: [min.insync.replicas]
      forbiddenConfigs: [unclean.leader.election.enable]
      names:
        - {folder: team-a/, pattern: '^team-a\\.', owners: ['@acme/team-a']}
      mode: error

    topics/prod/team-a/big.yaml:4:13: error: partitions 200 is above the policy
      maxPartitions 100 (topics/prod/cluster.yaml:9:18)

A topic marked ``delete: true`` is exempt: removing a topic never breaks a policy. A config
nobody sets counts as Kafka's default (``min.insync.replicas`` 1, ``retention.ms`` 7d): the
broker may say otherwise, so a policy on it wants the value written down.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgitops.errors import Diagnostic, Mark, Severity, printable
from kgitops.model import TopicSpec
from kgitops.spec.config_table import CONFIGS
from kgitops.spec.topic_configs import check_config, readable_config
from kgitops.spec.userregex import UserPattern, UserPatternError, compile_user_pattern
from kgitops.spec.yamlload import Document


@dataclass(frozen=True)
class NameRule:
    """``names:`` entry: topics in ``folder`` must match ``pattern``; ``owners`` review it."""

    folder: str  # relative to the cluster folder, "team-a/"
    pattern: UserPattern  # RE2: linear time in the name (kgitops.spec.userregex)
    owners: tuple[str, ...]
    mark: Mark  # of the rule in cluster.yaml


def folder_of(rule_folder: str) -> str:
    """``./team-a`` and ``team-a/`` are both ``team-a/``; ``""`` or ``.`` is the whole folder."""
    norm = posixpath.normpath(rule_folder.strip() or ".")
    return "" if norm == "." else norm + "/"


def name_rules(cluster: Document, out: list[Diagnostic]) -> list[NameRule]:
    """The ``names:`` rules of cluster.yaml; a pattern that is no regular expression or a
    folder that leaves the cluster folder is an error at its position."""
    policies = cluster.value.get("policies")
    raw = policies.get("names") if isinstance(policies, dict) else None
    rules: list[NameRule] = []
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        base = f"policies.names.{i}"
        folder = folder_of(str(entry.get("folder", "")))
        if folder.startswith("../") or folder.startswith("/") or folder == "../":
            out.append(
                Diagnostic(
                    cluster.mark(f"{base}.folder"),
                    "error",
                    f"folder {entry.get('folder')!r} is not inside the cluster folder",
                )
            )
            continue
        try:
            pattern = compile_user_pattern(str(entry.get("pattern", "")))
        except UserPatternError as exc:
            out.append(
                Diagnostic(
                    cluster.mark(f"{base}.pattern"),
                    "error",
                    f"pattern {entry.get('pattern')!r} {exc}",
                )
            )
            continue
        owners = tuple(str(o) for o in entry.get("owners", ()))
        rules.append(NameRule(folder, pattern, owners, cluster.mark(base)))
    return rules


def check_policies(
    cluster: Document, directory: str, topics: Sequence[TopicSpec], out: list[Diagnostic]
) -> list[tuple[str, Diagnostic]]:
    """Every policy of cluster.yaml against every topic not marked for deletion. Each finding
    goes to ``out`` and is returned with its topic's name (the plan shows them too)."""
    policies = cluster.value.get("policies")
    findings: list[tuple[str, Diagnostic]] = []
    if not isinstance(policies, dict):
        return findings
    severity: Severity = "warning" if policies.get("mode") == "warn" else "error"
    rules = name_rules(cluster, out)
    max_retention = _max_retention(cluster, policies, out)
    for key in ("requiredConfigs", "forbiddenConfigs"):
        for i, name in enumerate(policies.get(key, ())):
            if name not in CONFIGS:
                close = difflib.get_close_matches(name, list(CONFIGS), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                out.append(
                    Diagnostic(
                        cluster.mark(f"policies.{key}.{i}"),
                        "error",
                        f"unknown topic config {name!r}{hint}",
                    )
                )
    _contradictions(cluster, policies, out)

    for topic in topics:
        if topic.delete:
            continue
        found: list[tuple[Mark, str]] = []
        p = topic.partitions
        if "maxPartitions" in policies and p > policies["maxPartitions"]:
            found.append(
                (
                    topic.mark_of("partitions"),
                    f"partitions {p} is above the policy maxPartitions {policies['maxPartitions']}"
                    f" ({cluster.mark('policies.maxPartitions')})",
                )
            )
        if "minPartitions" in policies and p < policies["minPartitions"]:
            found.append(
                (
                    topic.mark_of("partitions"),
                    f"partitions {p} is below the policy minPartitions {policies['minPartitions']}"
                    f" ({cluster.mark('policies.minPartitions')})",
                )
            )
        rf = topic.replication_factor
        if "minReplicationFactor" in policies and rf < policies["minReplicationFactor"]:
            found.append(
                (
                    topic.mark_of("replicationFactor"),
                    f"replicationFactor {rf} is below the policy minReplicationFactor "
                    f"{policies['minReplicationFactor']} "
                    f"({cluster.mark('policies.minReplicationFactor')})",
                )
            )
        if "minInsyncReplicas" in policies:
            found.extend(_min_isr(topic, policies["minInsyncReplicas"], cluster))
        if max_retention is not None:
            found.extend(_retention(topic, max_retention, cluster))
        for name in policies.get("requiredConfigs", ()):
            if name not in topic.config and not _refused(topic, name):
                found.append(
                    (
                        topic.mark,
                        f"{name} must be set (policy requiredConfigs at "
                        f"{cluster.mark('policies.requiredConfigs')}): here, in the topic's "
                        "profile or in defaults:",
                    )
                )
        for name in policies.get("forbiddenConfigs", ()):
            if name in topic.config:
                found.append(
                    (
                        topic.marks.get(f"config.{name}", topic.mark),
                        f"{name} may not be set in this cluster (policy forbiddenConfigs at "
                        f"{cluster.mark('policies.forbiddenConfigs')})",
                    )
                )
        found.extend(_names(topic, directory, rules))
        for mark, message in found:
            diagnostic = Diagnostic(mark, severity, message)
            out.append(diagnostic)
            findings.append((topic.name, diagnostic))
    return findings


def _contradictions(cluster: Document, policies: dict[str, Any], out: list[Diagnostic]) -> None:
    """Policies no topic can meet, each an error at the second of the pair (whatever
    ``mode``): without it every topic of the folder would be flagged and none could be fixed."""
    low, high = policies.get("minPartitions"), policies.get("maxPartitions")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        out.append(
            Diagnostic(
                cluster.mark("policies.minPartitions"),
                "error",
                f"minPartitions {low} is above maxPartitions {high} "
                f"({cluster.mark('policies.maxPartitions')}): no topic can meet both",
            )
        )
    required = policies.get("requiredConfigs")
    required_at = {name: i for i, name in enumerate(required if isinstance(required, list) else [])}
    forbidden = policies.get("forbiddenConfigs")
    for i, name in enumerate(forbidden if isinstance(forbidden, list) else []):
        if name in required_at:
            out.append(
                Diagnostic(
                    cluster.mark(f"policies.forbiddenConfigs.{i}"),
                    "error",
                    f"{name} is both forbidden and required (requiredConfigs at "
                    f"{cluster.mark(f'policies.requiredConfigs.{required_at[name]}')}): "
                    "no topic can meet both",
                )
            )


def _refused(topic: TopicSpec, name: str) -> bool:
    """Whether the topic sets config ``name`` to a value refused (its own error says so): the
    policy does not count it as unset."""
    return name not in topic.config and f"config.{name}" in topic.marks


def _min_isr(topic: TopicSpec, minimum: int, cluster: Document) -> list[tuple[Mark, str]]:
    if _refused(topic, "min.insync.replicas"):
        return []
    held = topic.config.get("min.insync.replicas")
    value = int(held) if held is not None else int(CONFIGS["min.insync.replicas"].default)
    if value >= minimum:
        return []
    policy = cluster.mark("policies.minInsyncReplicas")
    if held is None:
        return [
            (
                topic.mark,
                f"min.insync.replicas is not set (Kafka's default is {value}); the policy "
                f"minInsyncReplicas wants at least {minimum} ({policy})",
            )
        ]
    return [
        (
            topic.mark_of("config.min.insync.replicas"),
            f"min.insync.replicas {value} is below the policy minInsyncReplicas {minimum} "
            f"({policy})",
        )
    ]


def _max_retention(
    cluster: Document, policies: dict[str, Any], out: list[Diagnostic]
) -> int | None:
    if "maxRetention" not in policies:
        return None
    held, problem = check_config("retention.ms", policies["maxRetention"])
    if problem is not None or held is None:
        out.append(
            Diagnostic(
                cluster.mark("policies.maxRetention"),
                "error",
                "maxRetention: " + (problem or "not a duration").replace("retention.ms ", "", 1),
            )
        )
        return None
    return int(held)


def _retention(topic: TopicSpec, maximum: int, cluster: Document) -> list[tuple[Mark, str]]:
    if maximum == -1 or _refused(topic, "retention.ms"):
        return []  # infinite allows everything
    held = topic.config.get("retention.ms")
    value = int(held) if held is not None else int(CONFIGS["retention.ms"].default)
    if value != -1 and value <= maximum:
        return []
    policy = cluster.mark("policies.maxRetention")
    shown = readable_config("retention.ms", str(value))
    limit = readable_config("retention.ms", str(maximum))
    if held is None:
        return [
            (
                topic.mark,
                f"retention.ms is not set (Kafka's default is {shown}); the policy "
                f"maxRetention is {limit} ({policy})",
            )
        ]
    return [
        (
            topic.mark_of("config.retention.ms"),
            f"retention.ms {shown} is above the policy maxRetention {limit} ({policy})",
        )
    ]


def _names(topic: TopicSpec, directory: str, rules: list[NameRule]) -> list[tuple[Mark, str]]:
    if not rules:
        return []
    rel = os.path.relpath(topic.mark.path, directory).replace(os.sep, "/")
    out = []
    for rule in rules:
        if rel.startswith(rule.folder) and not rule.pattern.search(topic.name):
            folder = rule.folder or "this cluster folder"
            out.append(
                (
                    topic.mark_of("name"),
                    f"topic {topic.name!r} in {folder} must match {rule.pattern.pattern} "
                    f"(policy names at {rule.mark})",
                )
            )
    return out


def owner_lines(folder_owners: Sequence[tuple[str, Sequence[str]]], cluster_path: str) -> list[str]:
    """CODEOWNERS lines for the ``names`` rules with owners: ``/topics/prod/team-a/ @acme/a``.
    ``cluster_path``: the cluster folder from the repository's root (``topics/prod``)."""
    out = []
    for folder, owners in folder_owners:
        if not owners:
            continue
        path = posixpath.join("/", cluster_path, folder_of(folder))
        path = path if path.endswith("/") else path + "/"
        # a space, '#' or '\\' escaped as CODEOWNERS reads them; a control character (a
        # newline would start a rule of the folder's choosing) shown as \\xNN, one line
        escaped = printable(re.sub(r"([\\ #])", r"\\\1", path))
        out.append(f"{escaped} {' '.join(printable(o) for o in owners)}")
    return out
