"""A cluster file's connection as Apache Kafka's Java client properties, for clients kgitops
does not run itself (Spark's Kafka source): ``bootstrap.servers``, ``security.protocol``,
SASL and TLS. No kafka import: a pure mapping over ``settings.client_config``, which checks
the file, reads the secrets from the environment variables it names and the TLS files from
the cluster folder, exactly as for kgitops' own connections::

    security: {protocol: SASL_SSL, sasl: {mechanism: SCRAM-SHA-512, usernameEnv: U,
               passwordEnv: P}, ssl: {caFile: certs/ca.pem}}

gives ``security.protocol=SASL_SSL``, ``sasl.mechanism=SCRAM-SHA-512``, ``sasl.jaas.config``
(ScramLoginModule with the user and password of ``$U``/``$P``), ``ssl.truststore.type=PEM``
and ``ssl.truststore.certificates`` (the CA file's text). The TLS files travel as text, not
paths, so executors on other machines need no copy of them. Kafka's PEM support reads PKCS#8
keys only (``BEGIN PRIVATE KEY``, or ``BEGIN ENCRYPTED PRIVATE KEY`` with a key password),
and of the encrypted ones none that PBES2 (openssl's default) or a scheme the JDK lacks
encrypts: both are refused here with the ``openssl`` line that converts the key.
The values of ``SECRET_PROPERTIES`` are secrets: Kafka's Java client types them as passwords
and logs them as ``[hidden]``; kgitops never prints them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from pathlib import Path

from kgitops.cluster.kafka.der import elements, oid
from kgitops.cluster.kafka.settings import client_config
from kgitops.errors import ClusterError, ClusterTlsError, remember_secrets
from kgitops.model import ClusterSpec

SECRET_PROPERTIES = ("sasl.jaas.config", "ssl.keystore.key", "ssl.key.password")
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL)


def _jaas_quote(value: str) -> str:
    """A JAAS option value: double-quoted, backslash and quote escaped (JaasConfig reads it
    with a StreamTokenizer, which undoes exactly these escapes)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Kafka's DefaultSslEngineFactory.PemStore.privateKey passes EncryptedPrivateKeyInfo.getAlgName()
# to SecretKeyFactory.getInstance. For PKCS#5 v2 (RFC 8018) the name is "PBES2", which the JDK's
# providers do not offer (JDK-8231581), nor do they offer the two PBE schemes below that openssl
# can still write (Kafka 4.1.2 on OpenJDK 17.0.15 here: "... SecretKeyFactory not available").
# PKCS#12's PBE with 3-key 3DES (PBEWithSHA1AndDESede), RC2 and RC4, and PBEWithMD5AndDES it reads.
_UNREADABLE = {
    "1.2.840.113549.1.5.13": "PBES2 (openssl's default)",
    "1.2.840.113549.1.12.1.4": "PKCS#12's PBE with 2-key 3DES (openssl's PBE-SHA1-2DES)",
    "1.2.840.113549.1.5.10": "PBES1 with SHA-1 and DES (openssl's PBE-SHA1-DES)",
}
_CONVERT = "openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in KEY -out KEY.pk8"


def _scheme(block: str) -> str | None:
    """The encryption scheme (an OID) of an ``ENCRYPTED PRIVATE KEY`` PEM block:
    EncryptedPrivateKeyInfo { AlgorithmIdentifier { algorithm, ... }, encryptedData }; None
    when the block is not that structure (Kafka's client then says what is wrong)."""
    lines = block.strip().splitlines()[1:-1]
    try:
        (info,) = elements(base64.b64decode("".join(lines), validate=True))
        algorithm = elements(info[1])[0]
        return oid(elements(algorithm[1])[0][1])
    except (ValueError, IndexError):  # binascii.Error is a ValueError
        return None


def _pem_blocks(path: str) -> list[tuple[str, str]]:
    text = Path(path).read_text(encoding="ascii", errors="replace")
    return [(m.group(1), m.group(0)) for m in _PEM.finditer(text)]


def java_client_properties(
    spec: ClusterSpec, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The Java client's properties for ``spec`` (see the module docstring). A mechanism the
    Java client cannot be given from a cluster file (OAUTHBEARER's token command, AWS IAM)
    is a ``ClusterError`` naming it."""
    config = client_config(spec, environ)
    props = {
        "bootstrap.servers": ",".join(config["bootstrap_servers"]),
        "security.protocol": str(config["security_protocol"]),
    }
    mechanism = config.get("sasl_mechanism")
    if mechanism is not None:
        module = _LOGIN_MODULES.get(str(mechanism))
        if module is None:
            raise ClusterError(
                f"{spec.mark_of('security.sasl.mechanism')}: SASL {mechanism} cannot be handed "
                "to Spark's Kafka source (its Java client takes PLAIN or SCRAM from kgitops); "
                "read a sample with `kgitops sample-keys` and analyse the file"
            )
        user = str(config["sasl_plain_username"])
        password = str(config["sasl_plain_password"])
        props["sasl.mechanism"] = str(mechanism)
        props["sasl.jaas.config"] = (
            f"{module} required username={_jaas_quote(user)} password={_jaas_quote(password)};"
        )
    if str(config["security_protocol"]).endswith("SSL"):
        props.update(_tls_properties(spec, config))
    remember_secrets(props[k] for k in SECRET_PROPERTIES if k in props)
    return props


def _tls_properties(spec: ClusterSpec, config: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    where = spec.mark_of("security.ssl")
    if not config.get("ssl_check_hostname", True):
        out["ssl.endpoint.identification.algorithm"] = ""
    ca = config.get("ssl_cafile")
    if ca:
        certs = [block for kind, block in _pem_blocks(str(ca)) if kind == "CERTIFICATE"]
        out["ssl.truststore.type"] = "PEM"
        out["ssl.truststore.certificates"] = "\n".join(certs)
    cert = config.get("ssl_certfile")
    if cert:
        blocks = _pem_blocks(str(cert))
        key_file = config.get("ssl_keyfile")
        chain = [block for kind, block in blocks if kind == "CERTIFICATE"]
        # the key OpenSSL loads (load_cert_chain): keyFile's first when it is given, never a
        # key that certFile also holds (a bundle), so Spark gets the key kgitops checked
        key_blocks = _pem_blocks(str(key_file)) if key_file else blocks
        keys = [(kind, block) for kind, block in key_blocks if kind.endswith("PRIVATE KEY")]
        if not keys:
            raise ClusterTlsError(f"{where}: no private key in security.ssl.certFile or keyFile")
        kind, key = keys[0]
        if kind not in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
            raise ClusterTlsError(
                f"{where}: the client key is {kind.lower()} (PKCS#1/SEC1); Kafka's Java client "
                f"reads PKCS#8 keys only: convert it with `{_CONVERT}` (or `openssl pkcs8 "
                "-topk8 -nocrypt -in KEY -out KEY.pk8` for an unencrypted key)"
            )
        unreadable = _UNREADABLE.get(_scheme(key) or "") if kind.startswith("ENC") else None
        if unreadable is not None:
            raise ClusterTlsError(
                f"{where}: the client key is encrypted with {unreadable}, which "
                "Kafka's Java client cannot decrypt (the JDK offers no key factory for it): "
                f"convert it with `{_CONVERT}` (or -nocrypt for an unencrypted key)"
            )
        out["ssl.keystore.type"] = "PEM"
        out["ssl.keystore.certificate.chain"] = "\n".join(chain)
        out["ssl.keystore.key"] = key
        password = config.get("ssl_password")
        if password:
            out["ssl.key.password"] = str(password)
    return out
