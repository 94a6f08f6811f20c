"""TLS for the Kafka adapter: the client's context, built and checked before any connection;
which handshake failures are definitive; and the probes that tell a plaintext listener from a
TLS one. (Only the standard ``ssl`` module here; no kafka-python.)

A definitive failure is one no retry can fix: the broker's certificate is signed by a CA the
client does not trust, names another host or has expired; the broker wants a client
certificate and none was sent, or refuses the one sent; the listener does not speak the
protocol the client speaks. Each becomes one ``ClusterTlsError`` line naming the cause and
what to check, at the first failed handshake::

    cluster 'tls' at 127.0.0.1:9093: TLS: the broker's certificate has expired; renew the
    broker's certificate (or check this machine's clock)

Some failures look like a broker going away (the connection ends mid-handshake or right
after it). Those are diagnosed, never guessed: a fresh handshake with the same context that
waits for the broker's alert, a Kafka request in plaintext (does a plaintext listener answer?)
or a bare TLS handshake (does a TLS listener answer?). Only an answer is a verdict.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass

from kgitops.cluster.local import metadata_answers
from kgitops.errors import ClusterTlsError, Mark

# OpenSSL's X509_V_ERR_* codes (x509_vfy.h) for a broker certificate the client refused.
_UNTRUSTED = {2, 18, 19, 20, 21, 27}
_NOT_YET_VALID = 9
_EXPIRED = 10
_REVOKED = 23
_NAME_MISMATCH = {62, 63, 64}

# Alerts the broker sends about the client's certificate.
_CLIENT_CERT_REFUSED = {
    "TLSV1_ALERT_UNKNOWN_CA",
    "SSLV3_ALERT_BAD_CERTIFICATE",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED",
    "SSLV3_ALERT_CERTIFICATE_REVOKED",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
    "TLSV1_ALERT_ACCESS_DENIED",
    "TLSV1_ALERT_DECRYPT_ERROR",
}
_VERSION = {
    "TLSV1_ALERT_PROTOCOL_VERSION",
    "UNSUPPORTED_PROTOCOL",
    "NO_PROTOCOLS_AVAILABLE",
    "TLSV1_ALERT_INSUFFICIENT_SECURITY",
    "NO_SHARED_CIPHER",
    "SSLV3_ALERT_HANDSHAKE_FAILURE",
}
_NOT_TLS = {"WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG", "HTTP_REQUEST"}


# ------------------------------------------------------------------ the client's context


@dataclass(frozen=True)
class TlsFile:
    """A file of ``security.ssl``: the field, the path as the user reads it, the absolute one."""

    field: str
    shown: str
    path: str


def client_context(
    ca: TlsFile | None,
    cert: TlsFile | None,
    key: TlsFile | None,
    password: str | None,
    *,
    check_hostname: bool,
    where: Mark,
) -> ssl.SSLContext:
    """The context every connection uses, built now so a bad file is named before any
    connection: a CA file with no certificate, a key that does not decrypt with the password
    (or needs one and none is configured: OpenSSL would otherwise ask on the terminal), a
    certificate and key that do not belong together."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = check_hostname
    if ca is None:
        ctx.load_default_certs()
    else:
        try:
            ctx.load_verify_locations(cafile=ca.path)
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ClusterTlsError(
                f"{where}: security.ssl.caFile {ca.shown}: not a PEM file of CA certificates "
                f"({_reason(exc)})"
            ) from None
    if cert is not None and key is not None:
        asked: list[bool] = []

        def give_password() -> str:
            asked.append(True)
            return password or ""

        try:
            ctx.load_cert_chain(cert.path, key.path, password=give_password)
        except (ssl.SSLError, OSError, ValueError) as exc:
            reason = _reason(exc)
            if "KEY_VALUES_MISMATCH" in reason.upper():
                why = f"the key does not belong to the certificate {cert.shown}"
            elif asked and not password:
                why = "the key is encrypted and no keyPasswordEnv names its password"
            elif asked:  # OpenSSL says only "PEM lib" for a wrong password
                why = "the key does not decrypt with the password keyPasswordEnv names"
            else:
                why = f"cannot load the certificate or the key ({reason})"
            raise ClusterTlsError(f"{where}: security.ssl.keyFile {key.shown}: {why}") from None
    return ctx


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


# ------------------------------------------------------------------ what a failure means


def ssl_errors(exc: BaseException) -> Iterator[ssl.SSLError]:
    """The ``ssl.SSLError``s behind an exception: kafka-python wraps them in its own
    (``KafkaConnectionError(SSLError)``, "Handshake failed: ..." raised while handling one)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 32:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ssl.SSLError):
            yield e
        todo.extend(a for a in e.args if isinstance(a, BaseException))
        todo.extend(c for c in (e.__cause__, e.__context__) if c is not None)


def is_definitive(exc: BaseException) -> bool:
    """A TLS failure that retrying cannot fix (the broker's verdict, or the client's)."""
    return any(_definitive(e) for e in ssl_errors(exc))


def _definitive(e: ssl.SSLError) -> bool:
    if isinstance(e, ssl.SSLCertVerificationError):
        return True
    if isinstance(e, ssl.SSLEOFError | ssl.SSLZeroReturnError | ssl.SSLSyscallError):
        return False
    reason = (e.reason or "").upper()
    if reason in _CLIENT_CERT_REFUSED | _VERSION | _NOT_TLS:
        return True
    return "ALERT" in reason and "INTERNAL_ERROR" not in reason  # the broker's verdict


def is_ambiguous(exc: BaseException) -> bool:
    """A connection that ended during or right after the handshake, or was reset: a broker
    going away looks the same as a listener speaking the other protocol. Worth a probe."""
    if any(isinstance(e, ssl.SSLEOFError | ssl.SSLZeroReturnError) for e in ssl_errors(exc)):
        return True
    text = " ".join(str(a) for a in (exc, *exc.args)).lower()
    return any(
        s in text
        for s in ("eof occurred", "socket disconnected", "connection reset", "broken pipe")
    )


@dataclass(frozen=True)
class TlsAdvice:
    """What a TLS failure of this cluster means, in one line naming what to check."""

    cluster: str
    servers: str
    protocol: str
    ca_file: str | None = None  # as the user reads it
    cert_file: str | None = None

    @property
    def tls(self) -> bool:
        return self.protocol.endswith("SSL")

    def _error(self, cause: str, check: str, at: str | None = None) -> ClusterTlsError:
        where = at or self.servers
        return ClusterTlsError(f"cluster {self.cluster!r} at {where}: TLS: {cause}; {check}")

    def explain(self, exc: BaseException) -> ClusterTlsError | None:
        """The error for a definitive TLS failure behind ``exc``; None for any other."""
        for e in ssl_errors(exc):
            if _definitive(e):
                return self._explain(e)
        return None

    def _explain(self, e: ssl.SSLError, at: str | None = None) -> ClusterTlsError:
        cause, check = self._why(e)
        return self._error(cause, check, at)

    def _why(self, e: ssl.SSLError) -> tuple[str, str]:
        """(the cause, what to check) for a definitive failure."""
        if isinstance(e, ssl.SSLCertVerificationError):
            return self._verification(e)
        reason = (e.reason or "").upper()
        words = reason.split("ALERT_", 1)[-1].replace("_", " ").lower()
        # A Java broker (JSSE, JDK 17) answers an empty client certificate with bad_certificate
        # ("Empty client certificate chain"), not TLS 1.3's certificate_required: with no
        # certificate sent, any alert about the client's certificate means it wants one.
        if reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED" or (
            self.cert_file is None
            and (reason == "SSLV3_ALERT_HANDSHAKE_FAILURE" or reason in _CLIENT_CERT_REFUSED)
        ):
            return (
                "the broker requires a client certificate (mutual TLS) and none was sent"
                + (
                    " (or no TLS version is shared)" if reason.endswith("HANDSHAKE_FAILURE") else ""
                ),
                "set security.ssl.certFile and keyFile to the client certificate and its key",
            )
        if reason in _CLIENT_CERT_REFUSED or (
            reason == "SSLV3_ALERT_HANDSHAKE_FAILURE" and self.cert_file is not None
        ):
            return (
                f"the broker refused the client certificate {self.cert_file} ({words})",
                "check that certFile is signed by a CA the broker trusts and is still valid",
            )
        if reason in _VERSION:
            return (
                f"the broker and this client share no TLS version or cipher ({words})",
                "kgitops speaks TLS 1.2 and 1.3; check the listener's ssl.enabled.protocols",
            )
        if reason in _NOT_TLS:
            return (
                f"the listener does not speak TLS ({words})",
                "check that bootstrapServers names the brokers' TLS port",
            )
        return (
            f"the broker ended the handshake ({words})",
            "check the listener's TLS settings against security.ssl of cluster.yaml",
        )

    def _verification(self, e: ssl.SSLCertVerificationError) -> tuple[str, str]:
        code = e.verify_code
        message = (e.verify_message or str(e)).rstrip(".")
        if code in _UNTRUSTED:
            trusted = (
                f"the CA in security.ssl.caFile ({self.ca_file})"
                if self.ca_file
                else "this machine's default CAs (no security.ssl.caFile given)"
            )
            return (
                f"the broker's certificate is not signed by {trusted}: {message}",
                "set caFile to the CA that signed the brokers' certificates",
            )
        if code == _EXPIRED:
            return (
                "the broker's certificate has expired",
                "renew the broker's certificate (or check this machine's clock)",
            )
        if code == _NOT_YET_VALID:
            return (
                "the broker's certificate is not valid yet",
                "check the clocks of this machine and of the CA that signed it",
            )
        if code in _NAME_MISMATCH:
            return (
                f"the broker's certificate does not name the host connected to ({message})",
                "use in bootstrapServers (and in the brokers' advertised listeners) a host "
                "name or IP address that the certificate's subjectAltName lists",
            )
        if code == _REVOKED:
            return ("the broker's certificate has been revoked", "ask for a new broker certificate")
        return (
            f"the broker's certificate failed verification: {message}",
            "check security.ssl.caFile and the brokers' certificates",
        )

    def plaintext_listener(self, address: str) -> ClusterTlsError:
        return self._error(
            f"{address} is a plaintext listener (it answered a Kafka request without TLS) but "
            f"security.protocol is {self.protocol}",
            "put the brokers' TLS port in bootstrapServers, or set security.protocol to "
            + ("SASL_PLAINTEXT" if self.protocol.startswith("SASL") else "PLAINTEXT"),
            at=address,
        )

    def tls_listener(self, address: str) -> ClusterTlsError:
        return self._error(
            f"{address} is a TLS listener (it answered a TLS handshake) but security.protocol "
            f"is {self.protocol}",
            "set security.protocol to "
            + ("SASL_SSL" if self.protocol.startswith("SASL") else "SSL")
            + " (with security.ssl.caFile), or put the plaintext port in bootstrapServers",
            at=address,
        )

    def diagnose(
        self,
        addresses: list[str],
        context: ssl.SSLContext | None,
        timeout: float,
        deadline: float | None = None,
    ) -> ClusterTlsError | None:
        """Probe each address for the cause of an ambiguous failure; None when no probe
        gives an answer (the failure is then not a TLS one, or not yet known). Each probe
        waits at most ``timeout``; probing stops after about twice that, however many
        brokers there are, and by ``deadline`` (a ``time.monotonic()`` value) at the latest."""
        end = time.monotonic() + 2 * timeout
        if deadline is not None:
            end = min(end, deadline)
        for address in addresses:
            timeout = min(timeout, end - time.monotonic())
            if timeout <= 0.05:
                break
            host, port = split_address(address)
            if not self.tls:
                if tls_answers(host, port, timeout):
                    return self.tls_listener(address)
                continue
            if metadata_answers(host, port, timeout):
                return self.plaintext_listener(address)
            timeout = min(timeout, end - time.monotonic())
            if context is not None and timeout > 0.05:
                err = handshake_error(host, port, context, timeout)
                if err is not None and _definitive(err):
                    return self._explain(err, at=address)
        return None


# ------------------------------------------------------------------ probes


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port) if port.isdigit() else 9092


def handshake_error(
    host: str, port: int, context: ssl.SSLContext, timeout: float
) -> ssl.SSLError | None:
    """The TLS error a careful handshake with ``context`` meets, waiting ``timeout`` after it
    for the broker's alert (a TLS 1.3 server checks the client's certificate only after the
    client has finished its handshake); None when nothing TLS went wrong."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            with context.wrap_socket(raw, server_hostname=host) as s:
                s.recv(1)
    except ssl.SSLError as exc:
        return exc
    except OSError:
        return None
    return None


def tls_answers(host: str, port: int, timeout: float) -> bool:
    """Whether a TLS server listens at host:port: it completes a handshake that checks no
    certificate, or answers one with a TLS alert."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            with ctx.wrap_socket(raw, server_hostname=host):
                return True
    except ssl.SSLError as exc:
        return "ALERT" in (exc.reason or "").upper()
    except OSError:
        return False
