"""kafka-python failures as kgitops errors: translation, item error codes, what is retriable."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence

import kafka.errors as kerr

from kgitops.cluster.kafka.tls import TlsAdvice, is_definitive
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    UnsupportedOperation,
    scrub_secrets,
)

logging.getLogger("kafka").addHandler(logging.NullHandler())
logging.getLogger("kafka").propagate = False


UNKNOWN_TOPIC_OR_PARTITION = 3


# ------------------------------------------------------------------ translation


def api_name(operation: str) -> str:
    return operation.removesuffix("Request")


def translate(
    exc: BaseException,
    operation: str,
    *,
    secrets: Sequence[str] = (),
    tls: TlsAdvice | None = None,
) -> ClusterError:
    """The kgitops error for anything kafka-python (or the socket under it) raised.

    ``operation`` is the Kafka API or step ("CreatePartitions", "connect to prod"); it is
    named in the message. ``secrets`` are scrubbed from the message, should a library ever
    echo one. ``tls``: how to word a definitive TLS failure (a certificate refused).
    """
    if isinstance(exc, ClusterError):
        return exc
    if tls is not None:
        verdict = tls.explain(exc)
        if verdict is not None:
            return verdict
    detail = said(str(exc) or type(exc).__name__, secrets, quote=False)
    op = api_name(operation)
    if isinstance(exc, kerr.UnsupportedVersionError | kerr.UnrecognizedBrokerVersion):
        return UnsupportedOperation(op)
    if isinstance(
        exc,
        kerr.AuthorizationError
        | kerr.SaslAuthenticationFailedError
        | kerr.UnsupportedSaslMechanismError
        | kerr.IllegalSaslStateError
        | kerr.DelegationTokenAuthDisabledError,
    ):
        return ClusterAuthError(
            f"{op}: authentication or authorisation failed (the broker said "
            f"{said(str(exc) or type(exc).__name__, secrets)}); check the security "
            "settings of cluster.yaml, the credentials in the environment and the ACLs"
        )
    if isinstance(exc, kerr.KafkaTimeoutError | kerr.RequestTimedOutError):
        return ClusterTimeout(
            f"{op}: the cluster did not answer in time ({detail}); it may be overloaded or "
            "down, or requestTimeoutMs may be too short"
        )
    if isinstance(
        exc,
        kerr.KafkaConnectionError
        | kerr.NodeNotReadyError
        | kerr.BrokerNotAvailableError
        | kerr.NetworkExceptionError
        | kerr.UnknownBrokerIdError
        | kerr.MetadataEmptyBrokerList
        | kerr.StaleMetadata
        | kerr.Cancelled
        | kerr.TooManyInFlightRequests
        | ConnectionError
        | OSError,
    ):
        return ClusterUnreachable(
            f"{op}: cannot reach the cluster ({detail}); check bootstrapServers, that the "
            "brokers are up, and the network between"
        )
    if isinstance(exc, kerr.BrokerResponseError):
        name = exc.message or type(exc).__name__
        text = exc.description or ""
        extra = said(", ".join(str(a) for a in exc.args if a), secrets) if exc.args else ""
        return ClusterRequestError(
            f"{op}: the broker refused the request: {name}"
            + (f" ({text})" if text else "")
            + (f": {extra}" if extra else ""),
            code=name,
        )
    if isinstance(exc, kerr.KafkaConfigurationError):
        return ClusterError(f"{op}: invalid client settings: {detail}")
    return ClusterError(f"{op}: the Kafka client failed: {type(exc).__name__}: {detail}")


def item_error(operation: str, item: str, code: int, message: str | None) -> ClusterError | None:
    """The error one item of a batched response got, or None for NO_ERROR."""
    if code == 0:
        return None
    cls = kerr.for_code(code)
    err = translate(cls(message) if message else cls(), operation)
    if isinstance(err, ClusterRequestError):
        name = getattr(cls, "message", None) or cls.__name__
        desc = getattr(cls, "description", None) or ""
        text = f"{item}: {name}" + (f": {said(message)}" if message and message != desc else "")
        if desc:
            text += f" ({desc})"
        return ClusterRequestError(text, code=name, item=item)
    return err


def retriable_code(code: int) -> bool:
    """Retry the item? Kafka's retriable codes, except UNKNOWN_TOPIC_OR_PARTITION: for an
    admin request it is the answer (the topic is not there), not a metadata hiccup."""
    if code in (0, -2, UNKNOWN_TOPIC_OR_PARTITION):
        return False
    return bool(getattr(kerr.for_code(code), "retriable", False))


class ExceptionTrap(logging.Handler):
    """Collects the exceptions kafka-python logs while it connects (it retries them away);
    ``changed`` is set each time one comes, for whoever watches (the bootstrap guard)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[BaseException] = []
        self.changed = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        found = [a for a in args if isinstance(a, BaseException)]
        if record.exc_info and record.exc_info[1] is not None:
            found.append(record.exc_info[1])
        if found:
            self.seen.extend(found)
            self.changed.set()


BROKER_TEXT_LIMIT = 300


def said(text: str, secrets: Sequence[str] = (), *, quote: bool = True) -> str:
    """Text a broker (or the library relaying it) supplied, fit for a log that is posted to a
    pull request: secrets scrubbed, cut to BROKER_TEXT_LIMIT characters, control characters
    escaped, and (``quote``) in double quotes so it reads as a quotation, never as kgitops'
    own words: ``said('bad\\nthing')`` -> ``"bad\\nthing"``."""
    text = scrub(text, secrets)
    if len(text) > BROKER_TEXT_LIMIT:
        text = text[:BROKER_TEXT_LIMIT] + "..."
    quoted = json.dumps(text)
    return quoted if quote else quoted[1:-1].replace('\\"', '"')


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` without ``secrets`` nor any credential this process has read."""
    return scrub_secrets(scrub_secrets(text, secrets))


def retriable_exc(exc: BaseException) -> bool:
    """Worth sending again? Not a definitive TLS failure (a certificate refused, by either
    side), which kafka-python wraps in a retriable connection error."""
    return (
        bool(getattr(exc, "retriable", False))
        and not isinstance(exc, kerr.UnsupportedVersionError)
        and not is_definitive(exc)
    )
