"""A topic's values from cluster.yaml: ``defaults:`` for every topic, and the ``profiles:`` a
topic selects with ``profile:``. Precedence: topic > profile > defaults > broker.

The layers are merged into the topic's document before it is checked, so every rule sees the
effective value, and the position of an inherited value is the line of cluster.yaml that set
it (``Document.files``), with who set it (``Document.origins``)::

    # cluster.yaml                              # orders.yaml
    defaults:                                   name: orders
      replicationFactor: 3                      partitions: 12
      config: {retention.ms: 7d}                profile: critical
    profiles:                                   config: {retention.ms: 30d}
      critical:
        config: {min.insync.replicas: 2}

    -> replicationFactor 3 (defaults, cluster.yaml:3), min.insync.replicas 2 (profile
       critical, cluster.yaml:7), retention.ms 30d (the topic, orders.yaml:4); every other
       config is the broker's.

Pure: documents in, a document (and diagnostics) out.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kgitops.errors import Diagnostic, Mark
from kgitops.model import TopicSpec
from kgitops.names import THROTTLED_REPLICAS_CONFIGS
from kgitops.spec.config_table import CONFIGS
from kgitops.spec.topic_configs import readable_config
from kgitops.spec.yamlload import Document

#: The topic fields a layer may set (besides ``config``, merged key by key).
LAYERED_FIELDS = ("replicationFactor", "placement")
#: What ``overrides:`` may change of a topic, per cluster.
OVERRIDDEN_FIELDS = ("partitions", "replicationFactor")
TOPIC = "topic"
DEFAULTS = "defaults"


def layers_of(
    topic: Document, cluster: Document | None, diags: list[Diagnostic]
) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(origin, path in cluster.yaml, layer)``, lowest precedence first; an unknown
    ``profile:`` is an error at the topic's ``profile`` value."""
    cv = cluster.value if cluster is not None and isinstance(cluster.value, dict) else {}
    out: list[tuple[str, str, Mapping[str, Any]]] = []
    defaults = cv.get("defaults")
    if isinstance(defaults, dict):
        out.append((DEFAULTS, "defaults", defaults))
    name = topic.value.get("profile")
    if not isinstance(name, str):
        return out  # absent; a wrong type is the schema's error
    profiles = cv.get("profiles")
    if profiles is not None and not isinstance(profiles, dict):
        return out  # cluster.yaml's own error: its profiles are not a mapping
    profiles = profiles or {}
    chosen = profiles.get(name)
    if isinstance(chosen, dict):
        out.append((f"profile {name}", f"profiles.{name}", chosen))
    elif cluster is not None and name not in profiles:  # else: cluster.yaml's own error
        known = sorted(profiles)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = f"cluster.yaml defines {', '.join(known)}" if known else "cluster.yaml has none"
        diags.append(
            Diagnostic(topic.mark("profile"), "error", f"unknown profile {name!r}{hint}; {where}")
        )
    return out


def overrides_for(name: object, cluster: Document | None) -> list[tuple[str, Mapping[str, Any]]]:
    """The ``overrides:`` entries of cluster.yaml that match topic ``name``, weakest first:
    globs in file order, then the exact name (which wins)."""
    if cluster is None or not isinstance(name, str) or not isinstance(cluster.value, dict):
        return []
    raw = cluster.value.get("overrides")
    if not isinstance(raw, dict):
        return []
    globs: list[tuple[str, Mapping[str, Any]]] = [
        (k, v)
        for k, v in raw.items()
        if k != name and isinstance(v, dict) and fnmatch.fnmatchcase(name, k)
    ]
    exact: list[tuple[str, Mapping[str, Any]]] = (
        [(name, raw[name])] if isinstance(raw.get(name), dict) else []
    )
    return globs + exact


def unused_overrides(cluster: Document, names: list[str]) -> list[Diagnostic]:
    """A warning at every ``overrides:`` key that matches no topic (a typo, or a topic gone)."""
    raw = cluster.value.get("overrides") if isinstance(cluster.value, dict) else None
    if not isinstance(raw, dict):
        return []
    return [
        Diagnostic(
            cluster.key_mark(f"overrides.{key}"),
            "warning",
            f"override {key!r} matches no topic of this cluster",
        )
        for key in raw
        if not any(fnmatch.fnmatchcase(n, key) for n in names)
    ]


def layered(topic: Document, cluster: Document | None, diags: list[Diagnostic]) -> Document:
    """``topic`` with the values of ``defaults:`` and its profile filled in where it says
    nothing; the document itself when no layer applies."""
    if not isinstance(topic.value, dict):
        return topic
    layers = layers_of(topic, cluster, diags)
    overrides = overrides_for(topic.value.get("name"), cluster)
    if (not layers and not overrides) or cluster is None:
        return topic
    value = dict(topic.value)
    positions = dict(topic.positions)
    keys = dict(topic.key_positions)
    files: dict[str, str] = {}
    origins: dict[str, str] = {}

    def inherit(path: str, source: str, origin: str) -> None:
        for own, theirs in ((positions, cluster.positions), (keys, cluster.key_positions)):
            pos = theirs.get(source)
            if pos is not None:
                own[path] = pos
            else:
                own.pop(path, None)
        files[path] = cluster.path
        origins[path] = origin

    for name in LAYERED_FIELDS:
        if name in value:
            continue
        for origin, prefix, layer in reversed(layers):
            if name in layer:
                value[name] = layer[name]
                inherit(name, f"{prefix}.{name}", origin)
                break
    own_config = value.get("config")
    if own_config is None or isinstance(own_config, dict):  # else the schema says it is bad
        own = own_config or {}
        merged: dict[str, Any] = {}
        for origin, prefix, layer in layers:
            config = layer.get("config")
            if not isinstance(config, dict):
                continue
            for key, raw in config.items():
                if key not in own:
                    merged[key] = raw
                    inherit(f"config.{key}", f"{prefix}.config.{key}", origin)
        if merged:
            merged.update(own)
            value["config"] = merged
    for key, override in overrides:  # the cluster's word on a shared topic: over the topic
        origin = f"override {key}"
        for name in OVERRIDDEN_FIELDS:
            if name in override:
                value[name] = override[name]
                inherit(name, f"overrides.{key}.{name}", origin)
        config = override.get("config")
        current = value.get("config")
        if isinstance(config, dict) and (current is None or isinstance(current, dict)):
            value["config"] = {**(current or {}), **config}
            for k in config:
                inherit(f"config.{k}", f"overrides.{key}.config.{k}", origin)
    return replace(
        topic, value=value, positions=positions, key_positions=keys, files=files, origins=origins
    )


@dataclass(frozen=True)
class Effective:
    """One effective value of a topic and where it came from (``kgitops explain``)."""

    path: str  # "replicationFactor", "config.retention.ms"
    value: str  # as a person reads it: "7d", "rack-aware"
    origin: str  # topic | profile NAME | defaults | broker | kgitops
    where: Mark | None  # the file:line:col that set it; None for broker and kgitops defaults


def effective_values(topic: TopicSpec, *, every_config: bool = False) -> list[Effective]:
    """Every value the topic ends up with, in spec order, configs sorted; ``every_config``
    adds the configs nobody sets (the broker's, shown with Kafka's default)."""

    def row(path: str, value: str) -> Effective:
        return Effective(
            path, value, topic.origins.get(path, TOPIC), topic.marks.get(path, topic.mark)
        )

    out = [row("partitions", str(topic.partitions))]
    out.append(row("replicationFactor", str(topic.replication_factor)))
    if topic.placement is not None:
        out.append(row("placement", topic.placement))
    else:
        out.append(
            Effective(
                "placement",
                "rack-aware if every broker has a rack, else rack-unaware",
                "kgitops",
                None,
            )
        )
    if topic.start_index is not None:
        out.append(row("startIndex", str(topic.start_index)))
    for name, held in sorted(topic.config.items()):
        readable = readable_config(name, held)
        out.append(row(f"config.{name}", held if readable == held else f"{readable} ({held})"))
    if every_config:
        for name, spec in sorted(CONFIGS.items()):
            if name not in topic.config and name not in THROTTLED_REPLICAS_CONFIGS:
                shown = readable_config(name, spec.default) or '""'
                out.append(
                    Effective(f"config.{name}", f"{shown} (Kafka's default)", "broker", None)
                )
    return out
