"""The local Kafka cluster's TLS listener: a throwaway CA and the brokers' certificate, made at
``up`` with the JDK's own ``keytool`` (Kafka needs the JDK anyway; no openssl)::

    tls/ca.pem      the CA's certificate: a cluster folder's ``security.ssl.caFile``
    tls/broker.p12  the brokers' key and certificate (PKCS12, the super user's password),
                    signed by the CA for 127.0.0.1 and localhost

The CA's own key is deleted once it has signed, so nothing else can be signed with it. The
listener asks no client certificate (``ssl.client.auth=none``): its principal is
``User:ANONYMOUS``, a super user, as on the PLAINTEXT listener."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from kgitops.cluster.kafka.runtime import run_tool
from kgitops.errors import LocalBrokerError

TLS_DIR = "tls"
CA_FILE = "ca.pem"
KEYSTORE = "broker.p12"
_PASSWORD_VAR = "KGITOPS_KEYTOOL_PASSWORD"  # keytool reads it with -storepass:env
_FAST = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto")
_KEY = ("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "3650")


def keytool(java: str) -> str:
    """``keytool`` of the JDK whose ``java`` runs the brokers."""
    path = os.path.join(os.path.dirname(os.path.realpath(java)), "keytool")
    if not os.access(path, os.X_OK):
        raise LocalBrokerError(f"no keytool beside {java}: the TLS listener needs a full JDK")
    return path


def make_keystore(directory: str, java: str, password: str) -> str:
    """The CA and the brokers' keystore in ``directory/tls``; returns the keystore's path."""
    folder = os.path.join(directory, TLS_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tool = keytool(java)
    ca_store, store = os.path.join(folder, "ca.p12"), os.path.join(folder, KEYSTORE)
    request, signed = os.path.join(folder, "broker.csr"), os.path.join(folder, "broker.pem")
    ca = os.path.join(folder, CA_FILE)
    for path in (ca_store, store):
        if os.path.exists(path):
            os.unlink(path)
    pw = ("-storepass:env", _PASSWORD_VAR)
    authority = [  # the CA, and its certificate as PEM
        ("-genkeypair", "-alias", "ca", "-dname", "CN=kgitops local Kafka CA", *_KEY,
         "-ext", "bc:c=ca:true", "-keystore", ca_store, "-storetype", "PKCS12", *pw),
        ("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca_store, "-file", ca, *pw),
    ]  # fmt: skip
    broker = [  # meanwhile the brokers' key, and its signing request
        ("-genkeypair", "-alias", "broker", "-dname", "CN=localhost", *_KEY,
         "-keystore", store, "-storetype", "PKCS12", *pw),
        ("-certreq", "-alias", "broker", "-keystore", store, "-file", request, *pw),
    ]  # fmt: skip
    then = [  # the CA signs; the keystore takes the CA, then the signed certificate
        ("-gencert", "-rfc", "-alias", "ca", "-keystore", ca_store, "-infile", request,
         "-outfile", signed, "-validity", "3650", "-ext", "san=ip:127.0.0.1,dns:localhost",
         "-ext", "ku:c=digitalSignature,keyEncipherment", "-ext", "eku=serverAuth", *pw),
        ("-importcert", "-noprompt", "-alias", "ca", "-keystore", store, "-file", ca, *pw),
        ("-importcert", "-alias", "broker", "-keystore", store, "-file", signed, *pw),
    ]  # fmt: skip
    env = {**os.environ, _PASSWORD_VAR: password}

    def run(steps: list[tuple[str, ...]]) -> None:
        for step in steps:
            _keytool(tool, step, env, password)

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:  # each step is a JVM start
            for done in [pool.submit(run, authority), pool.submit(run, broker)]:
                done.result()
        run(then)
    finally:
        for path in (ca_store, request, signed):
            if os.path.exists(path):
                os.unlink(path)
    return store


def _keytool(tool: str, step: tuple[str, ...], env: dict[str, str], password: str) -> None:
    late = "keytool took over 120 s making the TLS listener's keys"
    code, last = run_tool([tool, *_FAST, *step], late, password, env)
    if code != 0:
        raise LocalBrokerError(f"keytool {step[0]} failed: {last or f'exit {code}'}")
