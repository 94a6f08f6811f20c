"""Connection settings are plan content: what a change to cluster.yaml would make kgitops do.

A pull request that points ``bootstrapServers`` at another host, or names other credential
variables, changes no topic, yet it decides where kgitops sends the cluster's credentials at
merge. ``connection_changes(old, new)`` lists every such difference between the base
branch's cluster.yaml and the pull request's, as CONNECTION_CHANGED findings the plan shows
first::

    connection_changes(old, new)
    -> [Finding("CONNECTION_CHANGED", "bootstrapServers: kafka-1:9092 -> evil:9092",
                {"field": "bootstrapServers", "from": "kafka-1:9092", "to": "evil:9092"})]

A cluster.yaml that is new (or that the base branch cannot parse) changes every setting.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace

from kgitops.errors import CleartextCredentials
from kgitops.model import ClusterSpec
from kgitops.plan.value import Finding, Plan, PlanWarning

CONNECTION_CHANGED = "CONNECTION_CHANGED"


def _path(directory: str, path: str | None) -> str | None:
    if path is None:
        return None
    return os.path.relpath(path, directory) if os.path.isabs(path) else path


TLS_FIELDS = ("caFile", "certFile", "keyFile")


def connection_settings(
    cluster: ClusterSpec, contents: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """Every setting that decides where kgitops connects and with which credentials, as
    text: field path in cluster.yaml -> value (None when unset).

    ``contents``: what each TLS file named holds (``caFile`` -> ``sha256 <hex>``, read by the
    caller), shown as ``security.ssl.caFile content``: the same path with other bytes (another
    CA) is a change of where kgitops' trust goes; ``tokenCommand`` (each file inside the
    repository the command runs or names, with its digest) is shown as
    ``security.sasl.tokenCommand content``: a pull request that edits the committed script
    changes what runs with the credentials."""
    sec = cluster.security
    sasl, ssl, sim = sec.sasl, sec.ssl, cluster.simulated
    d = cluster.directory
    out: dict[str, str | None] = {
        "name": cluster.name,
        "clusterId": cluster.cluster_id,
        "bootstrapServers": ", ".join(cluster.bootstrap_servers) or None,
        "security.protocol": sec.protocol,
        "security.allowPlaintextPassword": "true" if sec.allow_plaintext_password else None,
        "security.allowCleartextCredentials": ("true" if sec.allow_cleartext_credentials else None),
        "security.sasl.mechanism": sasl.mechanism if sasl else None,
        "security.sasl.usernameEnv": sasl.username_env if sasl else None,
        "security.sasl.passwordEnv": sasl.password_env if sasl else None,
        "security.sasl.tokenEnv": sasl.token_env if sasl else None,
        "security.sasl.tokenCommand": (
            json.dumps(list(sasl.token_command)) if sasl and sasl.token_command else None
        ),
        "security.ssl.caFile": _path(d, ssl.ca_file) if ssl else None,
        "security.ssl.certFile": _path(d, ssl.cert_file) if ssl else None,
        "security.ssl.keyFile": _path(d, ssl.key_file) if ssl else None,
        "security.ssl.keyPasswordEnv": ssl.key_password_env if ssl else None,
        "security.ssl.checkHostname": (
            None if ssl is None else ("true" if ssl.check_hostname else "false")
        ),
        "simulated.stateFile": _path(d, sim.state_file) if sim else None,
        "simulated.brokers": (
            ", ".join(
                f"{b.id}" + (f"@{b.rack}" if b.rack else "") + ("" if b.online else " (offline)")
                for b in sim.brokers
            )
            if sim
            else None
        ),
    }
    if contents is not None and ssl is not None:
        for field in TLS_FIELDS:
            if getattr(ssl, _ATTR[field]) is not None:
                out[f"security.ssl.{field} content"] = contents.get(field)
    if contents is not None and sasl is not None and sasl.token_command:
        out["security.sasl.tokenCommand content"] = contents.get("tokenCommand")
    return out


_ATTR = {"caFile": "ca_file", "certFile": "cert_file", "keyFile": "key_file"}


def connection_changes(
    old: ClusterSpec | None,
    new: ClusterSpec,
    *,
    base: str,
    old_contents: Mapping[str, str] | None = None,
    new_contents: Mapping[str, str] | None = None,
) -> list[Finding]:
    """The CONNECTION_CHANGED findings from ``old`` (cluster.yaml at ``base``; None when it
    has none) to ``new``, one per setting that differs, in cluster.yaml order. With
    ``old_contents``/``new_contents`` (the TLS files' digests at ``base`` and now), a TLS
    file whose bytes changed is a change too."""
    after = connection_settings(new, new_contents)
    before = connection_settings(old, old_contents) if old is not None else dict.fromkeys(after)
    out = []
    for field, value in after.items():
        was = before.get(field)
        if was == value:
            continue
        shown_was = "(unset)" if was is None else was
        shown_now = "(unset)" if value is None else value
        out.append(
            Finding(
                CONNECTION_CHANGED,
                f"{field}: {shown_was} -> {shown_now}",
                {"field": field, "from": was, "to": value, "base": base},
            )
        )
    if old is None and out:
        out.insert(
            0,
            Finding(
                CONNECTION_CHANGED,
                f"cluster.yaml is new since {base} (or does not parse there): every connection "
                "setting is new",
                {"field": "cluster.yaml", "from": None, "to": None, "base": base},
            ),
        )
    return out


CLEARTEXT_CREDENTIALS = "CLEARTEXT_CREDENTIALS"


def credentials_in_clear(plan: Plan, cluster: ClusterSpec) -> Plan:
    """The rule on SCRAM credentials and the wire: AlterUserScramCredentials carries the
    salted password, enough to log in as that user, so a plan with ``upsert_user`` actions
    needs a TLS connection (protocol SSL or SASL_SSL). Over PLAINTEXT or SASL_PLAINTEXT it is
    CleartextCredentials, unless cluster.yaml says ``security.allowCleartextCredentials:
    true`` (a connection setting): then the plan carries a CLEARTEXT_CREDENTIALS warning
    saying so. A simulated cluster has no wire: the rule does not apply::

        credentials_in_clear(plan_with_upsert, plaintext_cluster)   # CleartextCredentials
    """
    users = [a for a in plan.actions if a.kind == "upsert_user"]
    sec = cluster.security
    if not users or cluster.simulated is not None or sec.tls:
        return plan
    names = [str(getattr(a, "name", "")) for a in users]
    said = (
        f"upsert_user writes SCRAM credentials (the salted password, enough to log in as the "
        f"user) over protocol {sec.protocol}, without TLS"
    )
    if not sec.allow_cleartext_credentials:
        raise CleartextCredentials(
            f"{said}: use protocol SSL or SASL_SSL, or set security.allowCleartextCredentials: "
            "true in cluster.yaml to say that is intended",
            [f"upsert_user {n}" for n in names],
        )
    warning = PlanWarning(
        "",
        CLEARTEXT_CREDENTIALS,
        f"{said}, as cluster.yaml allows (security.allowCleartextCredentials): " + ", ".join(names),
    )
    return replace(plan, warnings=(*plan.warnings, warning))
