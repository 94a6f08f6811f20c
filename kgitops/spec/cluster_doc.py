"""A ``kind: Cluster`` document (cluster.yaml) -> ``ClusterSpec``, and the check of the fields
that say which cluster it is and how to reach it (``connection_errors``).

``build_cluster`` reads a document its schema accepted (``load.py`` has checked it);
``check_drop_step`` and ``limits_of`` are the parts ``load.py`` also reads on their own, from
a cluster.yaml whose other fields are broken.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, cast

from kgitops.errors import Diagnostic
from kgitops.model import (
    PASSWORD_VERSION_TOPIC,
    Broker,
    ClusterSpec,
    Limits,
    Owns,
    ReassignmentSettings,
    SaslSpec,
    SecuritySpec,
    SimulatedSpec,
    SslSpec,
    UnmanagedAclPolicy,
    UnmanagedPolicy,
)
from kgitops.names import INT32_MAX, INT64_MAX
from kgitops.spec import schemacheck
from kgitops.spec.clusterrules import check_cluster
from kgitops.spec.dropstep import DropStep
from kgitops.spec.yamlload import Document, Marks, load_file
from kgitops.versionrules import DEFAULT_VERSION, elr_default, parse_version


def build_cluster(doc: Document, directory: str) -> ClusterSpec:
    v = doc.value
    sec = v.get("security") or {}
    sasl = sec.get("sasl")
    ssl = sec.get("ssl")
    security = SecuritySpec(
        protocol=sec.get("protocol", "PLAINTEXT"),
        sasl=(
            SaslSpec(
                sasl["mechanism"],
                sasl.get("usernameEnv", ""),
                sasl.get("passwordEnv", ""),
                token_env=sasl.get("tokenEnv"),
                token_command=(
                    tuple(sasl["tokenCommand"]) if sasl.get("tokenCommand") is not None else None
                ),
                token_refresh_seconds=int(sasl.get("tokenRefreshSeconds", 300)),
            )
            if sasl is not None
            else None
        ),
        ssl=(
            SslSpec(
                # as written: relative to the cluster folder (resolved and checked by
                # spec.paths where they are used, so the folder is joined exactly once)
                ca_file=ssl.get("caFile"),
                cert_file=ssl.get("certFile"),
                key_file=ssl.get("keyFile"),
                key_password_env=ssl.get("keyPasswordEnv"),
                check_hostname=bool(ssl.get("checkHostname", True)),
            )
            if ssl is not None
            else None
        ),
        allow_plaintext_password=bool(sec.get("allowPlaintextPassword", False)),
        allow_cleartext_credentials=bool(sec.get("allowCleartextCredentials", False)),
    )
    re = v.get("reassignment") or {}
    defaults = ReassignmentSettings()
    reassignment = ReassignmentSettings(
        throttle_bytes_per_sec=re.get("throttleBytesPerSec"),
        max_concurrent_moves=int(re.get("maxConcurrentMoves", defaults.max_concurrent_moves)),
        timeout_seconds=float(re.get("timeoutSeconds", defaults.timeout_seconds)),
    )
    version = parse_version(str(v.get("kafkaVersion", ""))) or DEFAULT_VERSION
    sim = v.get("simulated")
    simulated = None
    if sim is not None:
        balance = sim.get("autoLeaderRebalance", True)
        if not isinstance(balance, dict):
            balance = {"enabled": bool(balance)}
        simulated = SimulatedSpec(
            state_file=os.path.abspath(os.path.join(directory, sim["stateFile"])),
            brokers=tuple(
                Broker(int(b["id"]), b.get("rack"), bool(b.get("online", True)))
                for b in sim["brokers"]
            ),
            auto_leader_rebalance=bool(balance.get("enabled", True)),
            leader_imbalance_check_seconds=float(balance.get("intervalSeconds", 300)),
            eligible_leader_replicas=bool(sim.get("eligibleLeaderReplicas", elr_default(version))),
            kafka_version=version,
        )
    return ClusterSpec(
        name=v["name"],
        directory=directory,
        bootstrap_servers=tuple(v.get("bootstrapServers") or ()),
        security=security,
        reassignment=reassignment,
        decommission=tuple(int(b) for b in v.get("decommission") or ()),
        unmanaged_topics=cast(UnmanagedPolicy, v.get("unmanagedTopics", "warn")),
        simulated=simulated,
        request_timeout_ms=int(v.get("requestTimeoutMs", 30_000)),
        access_probe_timeout_ms=int(v.get("accessProbeTimeoutMs", 3_000)),
        limits=limits_of(v.get("limits")),
        unmanaged_acls=cast(UnmanagedAclPolicy, v.get("unmanagedAcls", "warn")),
        cluster_id=v.get("clusterId"),
        password_version_topic=str(v.get("passwordVersionTopic", PASSWORD_VERSION_TOPIC)),
        retention_drop_step=_drop_step(v.get("retentionDropStep", 0.5)),
        owns=_owns(v.get("owns")),
        kafka_version=version,
        folder_owners=tuple(
            (str(rule["folder"]), tuple(rule.get("owners", ())))
            for rule in (v.get("policies") or {}).get("names", ())
        ),
        mark=doc.mark(""),
        marks=Marks(doc.path, doc.positions, doc.files),
    )


def _owns(raw: Any) -> Owns:
    """cluster.yaml ``owns:`` (schema-checked): a kind it leaves out is owned by nobody here."""
    if not isinstance(raw, dict):
        return Owns()
    return Owns(
        topics=tuple(raw.get("topics", ())),
        principals=tuple(raw.get("principals", ())),
        groups=tuple(raw.get("groups", ())),
        transactional_ids=tuple(raw.get("transactionalIds", ())),
        declared=True,
        owner=raw.get("owner"),
    )


def _drop_step(raw: Any) -> float | int | str:
    """retentionDropStep as written when it reads as one, else the default (the error is
    reported by ``check_drop_step``)."""
    try:
        DropStep.parse(raw)
    except ValueError:
        return 0.5
    return cast(float | int | str, raw)


def check_drop_step(doc: Document, diags: list[Diagnostic]) -> None:
    raw = doc.value.get("retentionDropStep")
    if raw is None:
        return
    try:
        DropStep.parse(raw)
    except ValueError as exc:
        diags.append(Diagnostic(doc.mark("retentionDropStep"), "error", str(exc)))


def limits_of(raw: object) -> Limits:
    """cluster.yaml's ``limits:``, also when the cluster document has errors, so the topics are
    measured against what it says: a limit left out is the default; one that is wrong (its
    own error at its line) is no limit here, never the default quoted as if it were set."""
    default = Limits()
    given = raw if isinstance(raw, dict) else {}

    def limit(key: str, fallback: int, most: int) -> int:
        if key not in given:
            return fallback
        value = given[key]
        ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most
        return int(value) if ok else NO_LIMIT

    return Limits(
        partitions_per_topic=limit("partitionsPerTopic", default.partitions_per_topic, INT32_MAX),
        total_partitions=limit("totalPartitions", default.total_partitions, INT32_MAX),
        replication_factor=limit("replicationFactor", default.replication_factor, 32767),
    )


NO_LIMIT = INT64_MAX  # above any count a spec can reach


#: The fields of cluster.yaml that say which cluster this is and how to reach it: an error in
#: one stops even a command that only reads (``kgitops get``); an error elsewhere does not.
CONNECTION_FIELDS = (
    "apiVersion",
    "kind",
    "name",
    "bootstrapServers",
    "security",
    "simulated",
    "clusterId",
    "requestTimeoutMs",
    "accessProbeTimeoutMs",
    "passwordVersionTopic",
)


def connection_errors(cluster: ClusterSpec) -> list[Diagnostic]:
    """The errors of the connection fields of ``cluster``'s document, checked as if it held
    nothing else (its schema, then the cluster rules: TLS files and the state file inside
    the folder, credentials named by variable, the protocol and SASL settings agreeing)."""
    documents, problems = load_file(cluster.mark.path, root=cluster.directory)
    errors = [d for d in problems if d.is_error]
    if errors:
        return errors
    for doc in documents:
        if not isinstance(doc.value, dict) or doc.value.get("kind") != "Cluster":
            continue
        kept = {k: v for k, v in doc.value.items() if k in CONNECTION_FIELDS}
        reduced = replace(doc, value=kept)
        found = schemacheck.check(reduced, "Cluster")
        if found:
            return found
        out: list[Diagnostic] = []
        check_cluster(build_cluster(reduced, cluster.directory), reduced, None, out)
        return [d for d in out if d.is_error]
    return [Diagnostic(cluster.mark, "error", "no Cluster document in this file")]
