"""The local Kafka cluster's TLS listeners: a throwaway CA, the brokers' certificate and a
client's, made at ``up`` with the JDK's own ``keytool`` (Kafka needs the JDK anyway; no
openssl)::

    tls/ca.pem      the CA's certificate: a cluster folder's ``security.ssl.caFile``
    tls/broker.p12  the brokers' key and certificate (PKCS12, the super user's password),
                    signed by the CA for 127.0.0.1 and localhost
    tls/client.pem  a client's certificate, signed by the CA for ``CN=kgitops-local-client``
                    (``security.ssl.certFile``)
    tls/client.key  its key: PKCS#8 PEM, encrypted with the password ``admin.env`` holds as
                    KGITOPS_LOCAL_KAFKA_KEY_PASSWORD (``keyFile``, ``keyPasswordEnv``)

The CA's own key is deleted once it has signed, so nothing else can be signed with it. The
SSL listener asks no client certificate (``ssl.client.auth=none``): its principal is
``User:ANONYMOUS``, a super user, as on the PLAINTEXT listener. The MTLS listener requires one
signed by the CA (``ssl.client.auth=required``): its principal is the certificate's subject,
``User:CN=kgitops-local-client``, also a super user.

keytool never writes a key as PEM, but a PKCS12 keystore holds it as a PKCS#8
``EncryptedPrivateKeyInfo`` (a ``pkcs8ShroudedKeyBag``, RFC 7292): ``client.key`` is that
structure as it stands, taken out of the keystore, never decrypted. keytool encrypts it with
PBEWithSHA1AndDESede (PKCS#12's PBE with 3DES) rather than its default PBES2: Kafka's Java
client reads an encrypted PEM key by the name ``EncryptedPrivateKeyInfo.getAlgName()`` gives
(``DefaultSslEngineFactory.PemStore.privateKey``), and the JDK's ``SecretKeyFactory`` knows no
"PBES2" (JDK-8231581). OpenSSL, and so kafka-python, reads both."""

from __future__ import annotations

import base64
import os
from concurrent.futures import ThreadPoolExecutor

from kgitops.cluster.kafka.der import elements, oid
from kgitops.cluster.kafka.runtime import run_tool
from kgitops.errors import LocalBrokerError
from kgitops.files import write_private

TLS_DIR = "tls"
CA_FILE = "ca.pem"
KEYSTORE = "broker.p12"
CLIENT_CERT = "client.pem"
CLIENT_KEY = "client.key"
CLIENT_DN = "CN=kgitops-local-client"
CLIENT_PRINCIPAL = f"User:{CLIENT_DN}"  # Kafka's default principal mapping: the subject
_PASSWORD_VAR = "KGITOPS_KEYTOOL_PASSWORD"  # keytool reads it with -storepass:env
_CLIENT_VAR = "KGITOPS_KEYTOOL_CLIENT_PASSWORD"
_PBE_3DES = "-J-Dkeystore.pkcs12.keyProtectionAlgorithm=PBEWithSHA1AndDESede"
_FAST = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto")
_KEY = ("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "3650")


def keytool(java: str) -> str:
    """``keytool`` of the JDK whose ``java`` runs the brokers."""
    path = os.path.join(os.path.dirname(os.path.realpath(java)), "keytool")
    if not os.access(path, os.X_OK):
        raise LocalBrokerError(f"no keytool beside {java}: the TLS listener needs a full JDK")
    return path


def make_keystore(
    directory: str, java: str, password: str, client_password: str | None = None
) -> str:
    """The CA and the brokers' keystore in ``directory/tls``; with ``client_password`` also
    the client's certificate and its key, encrypted with that password. Returns the
    keystore's path."""
    folder = os.path.join(directory, TLS_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tool = keytool(java)
    ca_store, store = os.path.join(folder, "ca.p12"), os.path.join(folder, KEYSTORE)
    request, signed = os.path.join(folder, "broker.csr"), os.path.join(folder, "broker.pem")
    client_store, client_request = (
        os.path.join(folder, "client.p12"),
        os.path.join(folder, "client.csr"),
    )
    ca = os.path.join(folder, CA_FILE)
    for path in (ca_store, store, client_store):
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
    cpw = ("-storepass:env", _CLIENT_VAR)
    client = [  # the client's key (its keystore's password is the key's), its request
        (_PBE_3DES, "-genkeypair", "-alias", "client", "-dname", CLIENT_DN, *_KEY,
         "-keystore", client_store, "-storetype", "PKCS12", *cpw),
        ("-certreq", "-alias", "client", "-keystore", client_store, "-file", client_request,
         *cpw),
    ]  # fmt: skip
    # the CA signs the client's certificate beside the brokers'
    client_signed: list[tuple[str, ...]] = [
        ("-gencert", "-rfc", "-alias", "ca", "-keystore", ca_store, "-infile", client_request,
         "-outfile", os.path.join(folder, CLIENT_CERT), "-validity", "3650",
         "-ext", "ku:c=digitalSignature", "-ext", "eku=clientAuth", *pw),
    ]  # fmt: skip
    env = {**os.environ, _PASSWORD_VAR: password, _CLIENT_VAR: client_password or ""}

    def run(steps: list[tuple[str, ...]]) -> None:
        for step in steps:
            secret = client_password if cpw[1] in step and client_password else password
            _keytool(tool, step, env, secret)

    def together(*chains: list[tuple[str, ...]]) -> None:
        with ThreadPoolExecutor(max_workers=len(chains)) as pool:  # each step is a JVM start
            for done in [pool.submit(run, chain) for chain in chains]:
                done.result()

    try:
        if client_password is None:
            together(authority, broker)
            run(then)
        else:
            together(authority, broker, client)
            together(then, client_signed)
            _write_key(os.path.join(folder, CLIENT_KEY), _shrouded_key(client_store))
    finally:
        for path in (ca_store, request, signed, client_store, client_request):
            if os.path.exists(path):
                os.unlink(path)
    return store


_DATA = "1.2.840.113549.1.7.1"  # PKCS#7 data
_SHROUDED_KEY_BAG = "1.2.840.113549.1.12.10.1.2"  # PKCS#12 pkcs8ShroudedKeyBag


def _shrouded_key(path: str) -> bytes:
    """The DER ``EncryptedPrivateKeyInfo`` of the one key in the PKCS12 file ``path``, as
    keytool writes it: PFX { version, authSafe: data { AuthenticatedSafe: [ContentInfo] } };
    the key's bag stands in a ``data`` ContentInfo (keytool encrypts the certificates' bag,
    never the key's, which is itself encrypted)."""
    try:
        with open(path, "rb") as f:
            pfx = elements(f.read())
        _version, auth_safe, *_mac = elements(pfx[0][1])
        content_type, content = elements(auth_safe[1])
        if oid(content_type[1]) != _DATA:
            raise ValueError("the keystore's content is not PKCS#7 data")
        for info in elements(elements(elements(content[1])[0][1])[0][1]):
            kind, *body = elements(info[1])
            if oid(kind[1]) != _DATA or not body:
                continue
            for bag in elements(elements(elements(body[0][1])[0][1])[0][1]):
                bag_id, value, *_attributes = elements(bag[1])
                if oid(bag_id[1]) == _SHROUDED_KEY_BAG:
                    return value[1]  # [0] EXPLICIT: the whole EncryptedPrivateKeyInfo
    except (OSError, ValueError, IndexError) as exc:
        raise LocalBrokerError(f"cannot read the client's key from {path}: {exc}") from None
    raise LocalBrokerError(f"cannot read the client's key from {path}: no key in it")


def _write_key(path: str, der: bytes) -> None:
    """``der`` as an ``ENCRYPTED PRIVATE KEY`` PEM file, mode 0600."""
    text = base64.b64encode(der).decode("ascii")
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    pem = "\n".join(
        ["-----BEGIN ENCRYPTED PRIVATE KEY-----", *lines, "-----END ENCRYPTED PRIVATE KEY-----"]
    )
    write_private(path, pem + "\n")


def _keytool(tool: str, step: tuple[str, ...], env: dict[str, str], password: str) -> None:
    late = "keytool took over 120 s making the TLS listener's keys"
    code, last = run_tool([tool, *_FAST, *step], late, password, env)
    if code != 0:
        raise LocalBrokerError(f"keytool {step[0]} failed: {last or f'exit {code}'}")
