"""kafka-python's settings for a cluster file: servers, timeouts, TLS and SASL (no kafka
import, so it is testable and importable without the client; the TLS files are read here, so
a bad one is named before any connection).

Secrets come only from the environment variables cluster.yaml names::

    security:
      protocol: SASL_SSL
      sasl: {mechanism: SCRAM-SHA-512, usernameEnv: KAFKA_USERNAME, passwordEnv: KAFKA_PASSWORD}
      ssl: {caFile: certs/ca.pem}

gives ``security_protocol="SASL_SSL"``, ``sasl_mechanism="SCRAM-SHA-512"``, the username and
password read from ``$KAFKA_USERNAME`` / ``$KAFKA_PASSWORD``, and the TLS context built from
``certs/ca.pem`` in the cluster folder (``topics/prod/certs/ca.pem`` when kgitops runs from the
repository root, whatever the working folder; never outside the folder). An unset variable is
an error naming it, never its value.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from kgitops import __version__
from kgitops.cluster.kafka.tls import TlsAdvice, TlsFile, client_context
from kgitops.cluster.kafka.token import TokenSource
from kgitops.errors import ClusterError, ClusterTlsError, remember_secrets
from kgitops.files import path_problem, read_bytes
from kgitops.model import ClusterSpec, SslSpec

CONNECT_TIMEOUT_MS = 10_000  # the first connection gives up sooner than a slow request
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM")
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def client_config(spec: ClusterSpec, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """kafka-python's settings for a cluster file: servers, timeouts, TLS and SASL.

    Secrets are read from the environment variables cluster.yaml names; an unset one is an
    error naming the variable (never its value). Paths are relative to the cluster folder.
    """
    env = os.environ if environ is None else environ
    where = str(spec.mark_of("bootstrapServers"))
    if not spec.bootstrap_servers:
        raise ClusterError(f"{where}: cluster {spec.name!r} has no bootstrapServers to connect to")
    timeout = max(int(spec.request_timeout_ms), 1000)
    config: dict[str, Any] = {
        "bootstrap_servers": list(spec.bootstrap_servers),
        "client_id": f"kgitops-{__version__}",
        "request_timeout_ms": timeout,
        "bootstrap_timeout_ms": min(timeout, CONNECT_TIMEOUT_MS),
        "retry_backoff_ms": 100,
        "reconnect_backoff_ms": 50,
        "reconnect_backoff_max_ms": 1000,
    }
    sec = spec.security
    protocol = sec.protocol.upper()
    if protocol not in PROTOCOLS:
        raise ClusterError(
            f"{spec.mark_of('security.protocol')}: unknown security protocol {sec.protocol!r}; "
            f"use one of {', '.join(PROTOCOLS)}"
        )
    config["security_protocol"] = protocol
    if protocol.startswith("SASL"):
        if sec.sasl is None:
            raise ClusterError(
                f"{spec.mark_of('security')}: protocol {protocol} needs security.sasl "
                "(mechanism, usernameEnv, passwordEnv)"
            )
        mech = sec.sasl.mechanism.upper()
        if mech not in SASL_MECHANISMS:
            raise ClusterError(
                f"{spec.mark_of('security.sasl.mechanism')}: unsupported SASL mechanism "
                f"{sec.sasl.mechanism!r}; use one of {', '.join(SASL_MECHANISMS)}"
            )
        if (
            protocol == "SASL_PLAINTEXT"
            and mech in ("PLAIN", "OAUTHBEARER")
            and not sec.allow_plaintext_password
        ):
            what = "password" if mech == "PLAIN" else "bearer token"
            raise ClusterError(
                f"{spec.mark_of('security.sasl.mechanism')}: SASL {mech} over SASL_PLAINTEXT "
                f"would send the {what} unencrypted; use SASL_SSL or set "
                "security.allowPlaintextPassword: true"
            )
        config["sasl_mechanism"] = mech
        if mech == "OAUTHBEARER":
            config["sasl_oauth_token_provider"] = _token_source(spec, env)
        elif mech == "AWS_MSK_IAM":
            _check_msk(spec, protocol)
        else:
            user = _variable(env, sec.sasl.username_env, spec, "usernameEnv")
            config["sasl_plain_username"] = user
            config["sasl_plain_password"] = _secret(env, sec.sasl.password_env, spec, "passwordEnv")
    if protocol.endswith("SSL"):
        ssl = sec.ssl or SslSpec()
        files = {f.field: f for f in tls_files(spec)}
        password = None
        if ssl.key_password_env:
            password = _secret(env, ssl.key_password_env, spec, "keyPasswordEnv")
            config["ssl_password"] = password
        for key, field in (
            ("ssl_cafile", "caFile"),
            ("ssl_certfile", "certFile"),
            ("ssl_keyfile", "keyFile"),
        ):
            if field in files:
                config[key] = files[field].path
        config["ssl_check_hostname"] = ssl.check_hostname
        config["ssl_context"] = client_context(
            files.get("caFile"),
            files.get("certFile"),
            files.get("keyFile"),
            password,
            check_hostname=ssl.check_hostname,
            where=spec.mark_of("security.ssl"),
        )
    return config


SECRET_SETTINGS = ("sasl_plain_password", "ssl_password")


def secret_values(config: Mapping[str, object]) -> tuple[str, ...]:
    """The secret values in a client config, to scrub from every message: the SASL password,
    the TLS key password and every OAUTHBEARER token handed out so far. Not the SASL user
    name: it is no secret (ACLs, quotas and broker logs show it), and masking it would
    hide the host names and paths that contain it."""
    out = tuple(str(config[k]) for k in SECRET_SETTINGS if config.get(k))
    source = config.get("sasl_oauth_token_provider")
    if isinstance(source, TokenSource):
        out += source.seen
    remember_secrets(out)
    return out


def _token_source(spec: ClusterSpec, env: Mapping[str, str]) -> TokenSource:
    """The OAUTHBEARER token source; its first token is fetched now, so a missing variable
    or a failing command is named before any connection."""
    sasl = spec.security.sasl
    assert sasl is not None
    where = str(spec.mark_of("security.sasl"))
    if (sasl.token_env is None) == (sasl.token_command is None):
        raise ClusterError(
            f"{where}: OAUTHBEARER needs exactly one of security.sasl.tokenEnv or tokenCommand"
        )
    source = TokenSource(
        env_name=sasl.token_env,
        command=sasl.token_command,
        refresh_seconds=sasl.token_refresh_seconds,
        where=where,
        environ=env,
    )
    source.token()
    return source


def _check_msk(spec: ClusterSpec, protocol: str) -> None:
    """AWS_MSK_IAM signs with the AWS credentials, role and region botocore finds in the
    environment (AWS_REGION, AWS_PROFILE, AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE, an
    instance or task role); kgitops holds none of them."""
    where = spec.mark_of("security.sasl.mechanism")
    if protocol != "SASL_SSL":
        raise ClusterError(f"{where}: AWS_MSK_IAM needs protocol SASL_SSL, not {protocol}")
    if importlib.util.find_spec("botocore") is None:
        raise ClusterError(
            f"{where}: AWS_MSK_IAM needs the botocore package to sign in with IAM; "
            "install it (pip install 'kgitops[aws]' or pip install botocore)"
        )


def tls_files(spec: ClusterSpec) -> list[TlsFile]:
    """The files of ``security.ssl``, each resolved against the cluster folder (whatever the
    working folder) and refused unless it stays inside it and is a file."""
    ssl = spec.security.ssl
    if ssl is None:
        return []
    out = []
    for field, path in (
        ("caFile", ssl.ca_file),
        ("certFile", ssl.cert_file),
        ("keyFile", ssl.key_file),
    ):
        if path is None:
            continue
        where = spec.mark_of(f"security.ssl.{field}")
        problem = path_problem(spec.directory, path)
        if problem is not None:
            raise ClusterTlsError(f"{where}: security.ssl.{field}: {problem}")
        shown = in_folder(spec.directory, path)
        try:  # a regular file under the size cap, still inside the folder (never a FIFO)
            read_bytes(shown, root=spec.directory)
        except FileNotFoundError:
            raise ClusterTlsError(f"{where}: security.ssl.{field}: no such file: {shown}") from None
        except OSError as exc:
            raise ClusterTlsError(
                f"{where}: security.ssl.{field}: cannot read {shown}: {exc.strerror or exc}"
            ) from None
        out.append(TlsFile(field, shown, os.path.abspath(shown)))
    return out


def in_folder(directory: str, path: str) -> str:
    """A path of cluster.yaml joined to the cluster folder, as the user reads it
    (``topics/tls/certs/ca.pem`` when the folder was given as ``topics/tls``)."""
    return os.path.normpath(os.path.join(directory, path))


def tls_advice(spec: ClusterSpec) -> TlsAdvice:
    """How this cluster's TLS failures are worded (the files as the user reads them)."""
    ssl = spec.security.ssl or SslSpec()

    def shown(path: str | None) -> str | None:
        return None if path is None else in_folder(spec.directory, path)

    return TlsAdvice(
        cluster=spec.name,
        servers=", ".join(spec.bootstrap_servers),
        protocol=spec.security.protocol.upper(),
        ca_file=shown(ssl.ca_file),
        cert_file=shown(ssl.cert_file),
    )


def _variable(env: Mapping[str, str], name: str, spec: ClusterSpec, field: str) -> str:
    value = env.get(name)
    if not value:
        raise ClusterError(
            f"{spec.mark_of('security')}: the environment variable {name} ({field} in "
            f"cluster.yaml) is not set; export it before running kgitops"
        )
    return value


def _secret(env: Mapping[str, str], name: str, spec: ClusterSpec, field: str) -> str:
    value = _variable(env, name, spec, field)
    remember_secrets([value])
    return value
