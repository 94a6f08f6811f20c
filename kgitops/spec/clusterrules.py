"""The semantic rules of a ``kind: Cluster`` document, beyond its schema.

How to reach the cluster (host:port endpoints), security settings that match the protocol,
the simulated brokers, and ``decommission`` against the known brokers. Each rule appends a
positioned diagnostic; none stops the others.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kgitops.errors import Diagnostic, Mark
from kgitops.files import path_problem, repository_path_problem
from kgitops.model import RACK_RULE, Broker, ClusterSpec, SaslSpec, legal_rack
from kgitops.names import KAFKA_INTERNAL_TOPICS
from kgitops.spec.include import repository_root
from kgitops.spec.yamlload import Document


def error_at(mark: Mark, message: str) -> Diagnostic:
    return Diagnostic(mark, "error", message)


def warning_at(mark: Mark, message: str) -> Diagnostic:
    return Diagnostic(mark, "warning", message)


def id_list(ids: Sequence[int]) -> str:
    """``[3, 1, 2]`` → ``"1, 2, 3"``: broker ids as the cluster and topic rules list them."""
    return ", ".join(str(i) for i in sorted(ids))


def loopback_only(cluster: ClusterSpec) -> bool:
    """A cluster reached only on this machine (a development broker, usually one)."""
    hosts = [s.rsplit(":", 1)[0].strip("[]") for s in cluster.bootstrap_servers]
    return bool(hosts) and all(
        h == "localhost" or h.startswith("127.") or h == "::1" for h in hosts
    )


RESERVED_ENV = re.compile(r"^(GITHUB_|ACTIONS_|RUNNER_)|^GITHUB_TOKEN$", re.IGNORECASE)
"""Environment variables of the runner and GitHub: never a credential kgitops reads. A cluster
file naming one (``usernameEnv: github_token``) would send that value to the brokers it names."""


def is_runner_variable(name: str) -> bool:
    """True for a variable of the GitHub runner or GitHub itself (``GITHUB_*``, ``ACTIONS_*``,
    ``RUNNER_*``, ``github_token``; any case): never a credential kgitops may read."""
    return bool(RESERVED_ENV.search(name)) or name.lower() == "github_token"


def runner_variable_error(field: str, name: str) -> str:
    return (
        f"{field}: {name} is a variable of the GitHub runner, not a Kafka credential; name "
        "the variable that holds the credential (e.g. KGITOPS_KAFKA_PASSWORD)"
    )


def own_variables(cluster: ClusterSpec) -> list[tuple[str, str]]:
    """(path in cluster.yaml, variable name) of every variable kgitops logs in with."""
    return _env_fields(cluster)


def _env_fields(cluster: ClusterSpec) -> list[tuple[str, str]]:
    """(path in cluster.yaml, variable name) of every ``*Env`` the cluster file names."""
    sec = cluster.security
    out = []
    if sec.sasl is not None:
        out += [
            (f"security.sasl.{field}", name)
            for field, name in (
                ("usernameEnv", sec.sasl.username_env),
                ("passwordEnv", sec.sasl.password_env),
                ("tokenEnv", sec.sasl.token_env),
            )
            if name
        ]
    if sec.ssl is not None and sec.ssl.key_password_env:
        out.append(("security.ssl.keyPasswordEnv", sec.ssl.key_password_env))
    return out


def _check_secrets(cluster: ClusterSpec, doc: Document, out: list[Diagnostic]) -> None:
    for path, name in _env_fields(cluster):
        if is_runner_variable(name):
            out.append(
                error_at(doc.mark(path), runner_variable_error(path.rsplit(".", 1)[-1], name))
            )
    sec = cluster.security
    if (
        sec.protocol == "SASL_PLAINTEXT"
        and sec.sasl is not None
        and sec.sasl.mechanism == "PLAIN"
        and not sec.allow_plaintext_password
    ):
        out.append(
            error_at(
                doc.mark("security.sasl.mechanism"),
                "SASL PLAIN over SASL_PLAINTEXT sends the password unencrypted to the brokers: "
                "use protocol SASL_SSL, or set security.allowPlaintextPassword: true to say "
                "that is intended",
            )
        )


def _port_ok(server: str) -> int | None:
    port = server.rsplit(":", 1)[-1]
    return int(port) if port.isdigit() else None


def check_cluster(
    cluster: ClusterSpec,
    doc: Document,
    brokers: Sequence[Broker] | None,
    out: list[Diagnostic],
    *,
    lost: Collection[str] = (),
) -> None:
    """``lost``: the top-level fields the schema refused (``cluster`` was built without them);
    a rule that would read one is skipped, so no error follows from another."""
    m = cluster.mark_of
    reach_lost = "bootstrapServers" in lost or "simulated" in lost
    if not cluster.bootstrap_servers and cluster.simulated is None and not reach_lost:
        out.append(
            error_at(
                cluster.mark,
                "a Cluster needs bootstrapServers (a real cluster) or simulated (a simulated one)",
            )
        )
    if cluster.bootstrap_servers and cluster.simulated is not None:
        out.append(
            error_at(
                doc.key_mark("simulated"),
                "bootstrapServers and simulated exclude each other: a cluster is real or simulated",
            )
        )
    seen: set[str] = set()
    for i, server in enumerate(cluster.bootstrap_servers):
        port = _port_ok(server)
        if port is None or not 1 <= port <= 65535:
            out.append(
                error_at(
                    m(f"bootstrapServers.{i}"),
                    f"bootstrap server {server!r}: port must be 1..65535",
                )
            )
        if server in seen:
            out.append(
                warning_at(
                    m(f"bootstrapServers.{i}"), f"bootstrap server {server!r} is listed twice"
                )
            )
        seen.add(server)
    _check_secrets(cluster, doc, out)
    _check_version_topic(cluster, doc, out)
    if "security" not in lost:
        _check_security(cluster, doc, out)
    if cluster.simulated is not None:
        _check_simulated(cluster, doc, out)
    if brokers is not None:
        ids = {b.id for b in brokers}
        for i, broker in enumerate(cluster.decommission):
            if broker not in ids:
                out.append(
                    error_at(
                        m(f"decommission.{i}"),
                        f"broker {broker} in decommission is not a broker of the cluster "
                        f"(brokers: {id_list(sorted(ids))})",
                    )
                )
        if ids and ids <= set(cluster.decommission):
            out.append(
                error_at(
                    doc.key_mark("decommission"), "decommission lists every broker of the cluster"
                )
            )


def _check_security(cluster: ClusterSpec, doc: Document, out: list[Diagnostic]) -> None:
    """The protocol, SASL and TLS settings agree with each other; TLS files stay inside."""
    m = cluster.mark_of
    sec = cluster.security
    sasl_protocol = sec.protocol.startswith("SASL_")
    ssl_protocol = sec.protocol in ("SSL", "SASL_SSL")
    if sasl_protocol and sec.sasl is None:
        out.append(
            error_at(
                m("security.protocol"),
                f"protocol {sec.protocol} needs security.sasl "
                "(mechanism, usernameEnv, passwordEnv)",
            )
        )
    if sec.sasl is not None and not sasl_protocol:
        out.append(
            error_at(
                doc.key_mark("security.sasl"),
                f"security.sasl needs protocol SASL_PLAINTEXT or SASL_SSL, not {sec.protocol}",
            )
        )
    if sec.sasl is not None:
        _check_login(sec.sasl, sec.protocol, doc, out)
    if sec.ssl is not None and not ssl_protocol:
        out.append(
            error_at(
                doc.key_mark("security.ssl"),
                f"security.ssl needs protocol SSL or SASL_SSL, not {sec.protocol}",
            )
        )
    if sec.ssl is not None and (sec.ssl.cert_file is None) != (sec.ssl.key_file is None):
        out.append(
            error_at(
                doc.key_mark("security.ssl"),
                "security.ssl: certFile and keyFile go together (mutual TLS needs both)",
            )
        )
    if sec.ssl is not None:
        for field, path in (
            ("caFile", sec.ssl.ca_file),
            ("certFile", sec.ssl.cert_file),
            ("keyFile", sec.ssl.key_file),
        ):
            problem = None if path is None else path_problem(cluster.directory, path)
            if problem is not None:
                out.append(error_at(m(f"security.ssl.{field}"), f"security.ssl.{field}: {problem}"))


def _check_version_topic(cluster: ClusterSpec, doc: Document, out: list[Diagnostic]) -> None:
    """``passwordVersionTopic`` never names an internal topic: kgitops appends its records
    there and reads the whole topic on every plan (kgitops/cluster/kafka/versions.py)."""
    name = cluster.password_version_topic
    if "passwordVersionTopic" not in doc.value:
        return
    if name in KAFKA_INTERNAL_TOPICS or name.startswith("__"):
        out.append(
            error_at(
                cluster.mark_of("passwordVersionTopic"),
                f"passwordVersionTopic: {name} is an internal topic (Kafka's, or a framework's: "
                "a name starting with __); kgitops would write its records into it. Name a "
                "topic of kgitops' own, e.g. _kgitops-password-versions (the default)",
            )
        )


def _check_simulated(cluster: ClusterSpec, doc: Document, out: list[Diagnostic]) -> None:
    assert cluster.simulated is not None
    raw = doc.value["simulated"]["stateFile"]
    problem = repository_path_problem(cluster.directory, raw, repository_root(cluster.directory))
    if problem is not None:
        out.append(error_at(doc.mark("simulated.stateFile"), f"stateFile: {problem}"))
    first: dict[int, int] = {}
    for i, broker in enumerate(cluster.simulated.brokers):
        if broker.rack is not None and not legal_rack(broker.rack):
            out.append(
                error_at(
                    doc.mark(f"simulated.brokers.{i}.rack"),
                    f"an illegal rack id (allowed: {RACK_RULE})",
                )
            )
        if broker.id in first:
            out.append(
                error_at(
                    doc.mark(f"simulated.brokers.{i}.id"),
                    f"broker id {broker.id} is listed twice (first at simulated.brokers."
                    f"{first[broker.id]})",
                )
            )
        first.setdefault(broker.id, i)
    racked = [b for b in cluster.simulated.brokers if b.rack is not None]
    if racked and len(racked) != len(cluster.simulated.brokers):
        bare = [b.id for b in cluster.simulated.brokers if b.rack is None]
        out.append(
            warning_at(
                doc.key_mark("simulated.brokers"),
                f"only some brokers have a rack (none on {id_list(bare)}): Kafka then places "
                "replicas without racks",
            )
        )


_PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def _check_login(sasl: SaslSpec, protocol: str, doc: Document, out: list[Diagnostic]) -> None:
    """Each mechanism takes its own fields: PLAIN/SCRAM a user name and password, OAUTHBEARER
    exactly one token source, AWS_MSK_IAM nothing (and TLS, as MSK requires)."""
    mech = sasl.mechanism
    given = {
        "usernameEnv": bool(sasl.username_env),
        "passwordEnv": bool(sasl.password_env),
        "tokenEnv": sasl.token_env is not None,
        "tokenCommand": sasl.token_command is not None,
    }
    allowed = {
        "OAUTHBEARER": ("tokenEnv", "tokenCommand"),
        "AWS_MSK_IAM": (),
    }.get(mech, ("usernameEnv", "passwordEnv"))
    for field, present in given.items():
        if present and field not in allowed:
            takes = ", ".join(allowed) or "no credential field (the AWS environment has them)"
            out.append(
                error_at(
                    doc.key_mark(f"security.sasl.{field}"),
                    f"security.sasl.{field} does not apply to {mech}, which takes {takes}",
                )
            )
    program = sasl.token_command[0] if sasl.token_command else None
    if program is not None and "/" in program and not program.startswith("/"):
        out.append(
            error_at(
                doc.mark("security.sasl.tokenCommand.0"),
                f"security.sasl.tokenCommand: {program!r} is a relative path; the command runs "
                "from a folder outside the repository, so give a program on PATH or an "
                "absolute path (a script inside the repository counts by its content as a "
                "connection setting)",
            )
        )
    if mech == "OAUTHBEARER" and given["tokenEnv"] == given["tokenCommand"]:
        out.append(
            error_at(
                doc.mark("security.sasl"),
                "OAUTHBEARER needs exactly one of security.sasl.tokenEnv (a variable holding "
                "the token) or security.sasl.tokenCommand (a command printing it)",
            )
        )
    if mech == "AWS_MSK_IAM" and protocol != "SASL_SSL":
        out.append(
            error_at(
                doc.mark("security.protocol"),
                f"AWS_MSK_IAM needs protocol SASL_SSL (MSK's IAM listener is TLS), not {protocol}",
            )
        )
