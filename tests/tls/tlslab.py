"""A real TLS listener for the suite: stunnel in front of the local broker (Tansu).

``tls_certs``: certificates made at test time with openssl (never committed), in a session
folder: a throwaway CA (``ca.pem``), the server certificate it signs for 127.0.0.1 and
localhost (``server.pem``), one it signs for another name (``wronghost.pem``), one that
expired in 2020 (``expired.pem``), a server certificate from another CA (``foreign.pem``),
client certificates from the CA (``client.pem``, its key also encrypted in
``client-encrypted.key`` with the password ``CLIENT_KEY_PASSWORD``) and from the other CA
(``stranger.pem``), and the client's certificate expired in 2020 (``expired-client.pem``).

``tls_lab``: two Tansu brokers and one stunnel with a listener per case. Each broker
advertises a TLS port, so every connection after the bootstrap is TLS too:

    tls        server.pem, no client certificate  -> broker A (advertises tls)
    mtls       server.pem, client certificate from the CA required -> broker B (advertises mtls)
    mtls_front server.pem, no client certificate  -> broker B (bootstrap works; then mtls)
    foreign    foreign.pem (another CA)           -> broker A
    wronghost  wronghost.pem (SAN kafka.invalid)  -> broker A
    expired    expired.pem                        -> broker A
    plain      broker A's own plaintext port (Tansu: waits for the rest of a ClientHello)
    kafka_plain  broker A through a plaintext listener that closes a ClientHello, as Kafka's

stunnel is the Debian package ``stunnel4``: ``.ci/run`` installs it. Missing, the tests skip
with the reason, except in CI (``CI`` set), where a missing stunnel or openssl fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CLIENT_KEY_PASSWORD = "tls-test-key-password-1b7e"  # a throwaway test key's


def need(binary: str, package: str) -> str:
    for name in (binary, f"{binary}4"):
        found = shutil.which(name)
        if found:
            return found
    reason = f"the TLS tests need {binary} (Debian package {package}: apt-get install {package})"
    if os.environ.get("CI"):
        pytest.fail(reason + "; in CI it must be installed (.ci/run does)", pytrace=False)
    pytest.skip(reason)


def _openssl(openssl: str, cwd: Path, *args: str) -> None:
    env = dict(os.environ, KEY_PASSWORD=CLIENT_KEY_PASSWORD)
    done = subprocess.run(
        [openssl, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)} failed: {done.stderr}")


def make_certs(openssl: str, d: Path) -> None:
    key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    for ca in ("ca", "otherca"):
        _openssl(
            openssl, d, "req", "-x509", *key, "-keyout", f"{ca}.key", "-out", f"{ca}.pem",
            "-days", "2", "-subj", f"/CN=kgitops test {ca}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        )  # fmt: skip
    leaves = {
        "server": ("ca", "IP:127.0.0.1,DNS:localhost", "serverAuth"),
        "wronghost": ("ca", "DNS:kafka.invalid", "serverAuth"),
        "foreign": ("otherca", "IP:127.0.0.1,DNS:localhost", "serverAuth"),
        "client": ("ca", "DNS:kgitops-client", "clientAuth"),
        "stranger": ("otherca", "DNS:kgitops-client", "clientAuth"),
    }
    for name, (ca, san, usage) in leaves.items():
        _openssl(
            openssl, d, "req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN={name}",
        )  # fmt: skip
        (d / f"{name}.ext").write_text(
            f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage={usage}\n"
        )
        _openssl(
            openssl, d, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem",
            "-CAkey", f"{ca}.key", "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
            "-extfile", f"{name}.ext",
        )  # fmt: skip
    # A certificate valid for one day in 2020: `openssl ca` sets both dates.
    (d / "index.txt").write_text("")
    (d / "serial").write_text("1000\n")
    (d / "ca.cnf").write_text(
        "[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nnew_certs_dir = .\n"
        "serial = serial\ndefault_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n"
        "[leaf]\nsubjectAltName = IP:127.0.0.1,DNS:localhost\nbasicConstraints = CA:FALSE\n"
        "extendedKeyUsage = serverAuth\n"
        "[client_leaf]\nsubjectAltName = DNS:kgitops-client\nbasicConstraints = CA:FALSE\n"
        "extendedKeyUsage = clientAuth\n"
    )
    _openssl(
        openssl, d, "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile",
        "ca.key", "-in", "server.csr", "-out", "expired.pem", "-notext", "-extensions", "leaf",
        "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
    )  # fmt: skip
    _openssl(
        openssl, d, "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile",
        "ca.key", "-in", "client.csr", "-out", "expired-client.pem", "-notext",
        "-extensions", "client_leaf", "-startdate", "20200101000000Z",
        "-enddate", "20200102000000Z",
    )  # fmt: skip
    _openssl(
        openssl, d, "pkey", "-in", "client.key", "-aes256", "-passout", "env:KEY_PASSWORD",
        "-out", "client-encrypted.key",
    )  # fmt: skip
    # the same key under PKCS#12's PBE with 3DES: the encryption Kafka's Java client decrypts
    # (client-encrypted.key is PBES2, openssl's default, which it cannot; see javaconfig)
    _openssl(
        openssl, d, "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", "client.key",
        "-passout", "env:KEY_PASSWORD", "-out", "client-encrypted-pbe1.key",
    )  # fmt: skip


@dataclass(frozen=True)
class TlsLab:
    certs: Path
    tls: str
    mtls: str
    mtls_front: str
    foreign: str
    wronghost: str
    expired: str
    plain: str
    kafka_plain: str  # a plaintext listener that closes an oversized request, as Kafka's does


class KafkaLikePlaintext:
    """A plaintext listener in front of the broker that treats a request's size as Kafka does:
    a request larger than socket.request.max.bytes (100 MiB) closes the connection at once
    (clients/.../NetworkReceive.java, InvalidReceiveException). A TLS ClientHello, read as a
    size, says 369 MB. Tansu instead waits for the 369 MB, so both behaviours are tested.
    Everything else is passed through to the broker."""

    MAX_REQUEST = 104_857_600

    def __init__(self, target_port: int) -> None:
        self._target = target_port
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            head = b""
            while len(head) < 4:
                chunk = conn.recv(4 - len(head))
                if not chunk:
                    return
                head += chunk
            if int.from_bytes(head, "big", signed=True) > self.MAX_REQUEST:
                return  # closed, as Kafka closes it
            with socket.create_connection(("127.0.0.1", self._target), timeout=5) as up:
                up.sendall(head)
                conn.settimeout(None)
                up.settimeout(None)
                back = threading.Thread(target=_pump, args=(up, conn), daemon=True)
                back.start()
                _pump(conn, up)
                back.join(5)

    def close(self) -> None:
        self._sock.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def running_lab(stunnel: str, tls_certs: Path, work: Path) -> Iterator[TlsLab]:
    """Two brokers and the stunnel listeners of the module docstring, stopped on exit."""
    from kgitops.cluster.local import start_broker

    tls, mtls, front, foreign, wronghost, expired = ports = _free_ports(6)
    brokers = []
    proc = None
    kafka_like = None
    try:
        a = start_broker(advertised_port=tls)
        brokers.append(a)
        kafka_like = KafkaLikePlaintext(a.port)
        b = start_broker(advertised_port=mtls)
        brokers.append(b)
        c = tls_certs
        services = {
            "tls": (tls, a.port, "server", ""),
            "mtls": (mtls, b.port, "server", f"verifyChain = yes\nCAfile = {c}/ca.pem\n"),
            "mtls_front": (front, b.port, "server", ""),
            "foreign": (foreign, a.port, "foreign", ""),
            "wronghost": (wronghost, a.port, "wronghost", ""),
            "expired": (expired, a.port, "expired", ""),
        }
        conf = "foreground = yes\npid =\nsyslog = no\ndebug = 4\n"
        for name, (accept, target, cert, extra) in services.items():
            key = "server" if cert == "expired" else cert
            conf += (
                f"[{name}]\naccept = 127.0.0.1:{accept}\nconnect = 127.0.0.1:{target}\n"
                f"cert = {c}/{cert}.pem\nkey = {c}/{key}.key\n{extra}"
            )
        (work / "stunnel.conf").write_text(conf)
        log = open(work / "stunnel.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [stunnel, str(work / "stunnel.conf")],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while not all(_listening(p) for p in ports):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    "stunnel did not start: " + (work / "stunnel.log").read_text()[-2000:]
                )
            time.sleep(0.05)
        addr = "127.0.0.1:{}".format
        yield TlsLab(
            c,
            addr(tls),
            addr(mtls),
            addr(front),
            addr(foreign),
            addr(wronghost),
            addr(expired),
            addr(a.port),
            addr(kafka_like.port),
        )
    finally:
        if kafka_like is not None:
            kafka_like.close()
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            log.close()
        for broker in brokers:
            broker.stop()
