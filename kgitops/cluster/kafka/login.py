"""Why a SASL login failed, asked of the broker itself.

Kafka refuses a wrong PLAIN or SCRAM password with a SaslAuthenticate response carrying
SASL_AUTHENTICATION_FAILED and its reason, then closes the connection at once
(``SaslServerAuthenticator.handleSaslToken`` builds the response, ``Selector`` closes the
channel after sending it). kafka-python 3.0 reads the reply and the close in one go and
reports only ``socket disconnected``, dropping the reply, so it retries until its bootstrap
deadline and the cause is lost. The bootstrap guard then asks once, on a connection of its
own, with kafka-python's request classes and SASL mechanisms::

    SaslHandshake v1 (mechanism)  -> error 0, the mechanisms enabled
    SaslAuthenticate v1 (token)   -> error 58 "Authentication failed: Invalid username or password"

Only such an answer is a verdict: an accepted login, no answer or an unreadable one says
nothing (the failure was something else), and the bootstrap goes on as before.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Mapping
from typing import Any

from kafka.net.sasl import get_sasl_mechanism
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from kgitops.cluster.kafka.tls import split_address

PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_CLIENT = "kgitops-login-check"
_HANDSHAKE_VERSION = 1
_AUTHENTICATE_VERSION = 1  # not yet flexible: the simplest framing Kafka 2.2+ takes
_MAX_REPLY = 1 << 20


class _NoAnswer(Exception):
    """The broker closed, timed out or sent something unreadable: no verdict."""


def login_refusal(
    address: str, config: Mapping[str, Any], timeout: float
) -> tuple[str, int] | None:
    """(the broker's reason, its error code) when the broker at ``address`` refuses the login
    ``config`` (kafka-python settings) describes; None when it accepts it, or gives no answer
    within ``timeout`` seconds."""
    mechanism = str(config.get("sasl_mechanism", ""))
    if mechanism not in PASSWORD_MECHANISMS:
        return None
    host, port = split_address(address)
    deadline = time.monotonic() + timeout
    try:
        with _connect(host, port, config, timeout) as conn:
            return _login(conn, mechanism, config, deadline)
    except (_NoAnswer, OSError, ValueError, struct.error):
        return None
    except Exception:  # a mechanism that cannot go on (a bad server signature): no verdict
        return None


@contextlib.contextmanager
def _connect(host: str, port: int, config: Mapping[str, Any], timeout: float) -> Any:
    raw = socket.create_connection((host, port), timeout=timeout)
    try:
        raw.settimeout(timeout)
        context = config.get("ssl_context")
        if str(config.get("security_protocol", "")).endswith("SSL") and context is not None:
            with context.wrap_socket(raw, server_hostname=host) as tls:
                yield tls
        else:
            yield raw
    finally:
        raw.close()


def _login(
    conn: socket.socket, mechanism: str, config: Mapping[str, Any], deadline: float
) -> tuple[str, int] | None:
    handshake = SaslHandshakeRequest(mechanism=mechanism)
    reply = _ask(conn, handshake, SaslHandshakeResponse, _HANDSHAKE_VERSION, 1, deadline)
    if reply.error_code != 0:
        return None  # an unsupported mechanism: kafka-python names that one itself
    settings = {k: v for k, v in config.items() if k.startswith(("sasl_", "security_"))}
    sasl = get_sasl_mechanism(mechanism)(**settings)
    correlation = 2
    while not sasl.is_done():
        request = SaslAuthenticateRequest(auth_bytes=sasl.auth_bytes())
        answer = _ask(
            conn, request, SaslAuthenticateResponse, _AUTHENTICATE_VERSION, correlation, deadline
        )
        correlation += 1
        if answer.error_code != 0:
            return str(answer.error_message or ""), int(answer.error_code)
        sasl.receive(answer.auth_bytes)
    return None


def _ask(
    conn: socket.socket,
    request: Any,
    response_class: Any,
    version: int,
    correlation: int,
    deadline: float,
) -> Any:
    request.with_header(correlation_id=correlation, client_id=_CLIENT)
    conn.sendall(request.encode(version=version, header=True, framed=True))
    size = struct.unpack(">i", _read(conn, 4, deadline))[0]
    if not 4 <= size <= _MAX_REPLY:
        raise _NoAnswer
    body = _read(conn, size, deadline)
    if struct.unpack(">i", body[:4])[0] != correlation:
        raise _NoAnswer
    return response_class.decode(body, version=version, header=True)


def _read(conn: socket.socket, n: int, deadline: float) -> bytes:
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _NoAnswer
        conn.settimeout(left)
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise _NoAnswer
        buf += chunk
    return buf
