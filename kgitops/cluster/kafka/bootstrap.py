"""The first connection: kafka-python's bootstrap under a guard that ends it early.

kafka-python retries every failed connection until its bootstrap deadline and then reports
only "Unable to bootstrap"; the cause is in what its connections logged. The guard, a thread
beside the bootstrap, reads those as they come and stops the client's IO loop:

* at once on a definitive TLS failure (an untrusted or expired certificate, a hostname
  mismatch, a client certificate missing or refused): ``ClusterTlsError``, no retry;
* on an ambiguous one (the connection ended during or right after the handshake, or was
  reset), or on a TLS handshake that has not finished after ``STALL_SECONDS``, after probing
  the listener (see ``tls.TlsAdvice.diagnose``): a plaintext listener spoken to in TLS, or the
  reverse, is a ``ClusterTlsError`` too; no answer leaves the bootstrap to go on;
* on a connection a SASL listener closed (PLAIN or SCRAM), after asking the broker once why
  (``login.login_refusal``): Kafka closes it right after refusing the password, and
  kafka-python drops that reply; a refusal is a ``ClusterAuthError`` at once, no retry;
* on a connection that failed, when every bootstrap address is definitively unreachable (a
  host name that does not resolve, a port that refuses) and still is a second later
  (``reach.py``): ``ClusterUnreachable`` naming each, in about a second instead of the whole
  connection timeout;
* at the deadline (the connection timeout plus half a second): kafka-python can wait forever
  on a handshake that never ends, so the guard ends it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import kafka.errors as kerr
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.net import KafkaConnectionManager, KafkaNetClient, NetworkSelector
from kafka.net.sasl.oauth import AbstractTokenProvider

from kgitops.cluster.kafka.errors import ExceptionTrap, said, translate
from kgitops.cluster.kafka.login import PASSWORD_MECHANISMS, login_refusal
from kgitops.cluster.kafka.reach import GRACE_SECONDS, all_unreachable
from kgitops.cluster.kafka.settings import client_config, secret_values, tls_advice
from kgitops.cluster.kafka.tls import TlsAdvice, is_ambiguous
from kgitops.cluster.kafka.token import TokenSource
from kgitops.cluster.port import count_sent
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    KgitopsError,
    UnsupportedOperation,
)
from kgitops.model import ClusterSpec

# A TLS bootstrap not done by then gets its listener probed. Kafka's plaintext listener closes
# a connection that opens with a TLS ClientHello (its size field reads 369 MB, over
# socket.request.max.bytes), which is probed at once; this is for listeners that wait for the
# rest instead (Tansu). Long enough for SASL_SSL over a far link (about 7 round trips), so a
# healthy but distant cluster is not probed.
STALL_SECONDS = 1.5
PROBE_SECONDS = 1.0  # each probe's own timeout
# Kafka answers a refused login after connection.failed.authentication.delay.ms (100 ms by
# default), so a login check waits longer than the TLS probes.
LOGIN_PROBE_SECONDS = 3.0


class BearerToken(AbstractTokenProvider):  # type: ignore[misc]
    """kafka-python's OAUTHBEARER token provider over kgitops' ``TokenSource`` (which
    refreshes the token and never shows it)."""

    def __init__(self, source: TokenSource) -> None:
        super().__init__()
        self.source = source

    def token(self) -> str:
        return self.source.token()

    def __repr__(self) -> str:
        return f"BearerToken({self.source!r})"


def kafka_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` as kafka-python takes it: the token source wrapped in its provider type."""
    out = dict(config)
    source = out.get("sasl_oauth_token_provider")
    if isinstance(source, TokenSource):
        out["sasl_oauth_token_provider"] = BearerToken(source)
    return out


class CountedManager(KafkaConnectionManager):  # type: ignore[misc]
    """kafka-python's connection manager, counting each request sent through it
    (``port.count_sent``) once ``counting`` is on: after the bootstrap, whose Metadata is
    connection set-up like each connection's ApiVersions. Every request of the adapter
    passes here, the ones kgitops builds and the ones ``KafkaAdminClient`` sends for it."""

    counting = False

    def send(self, request: Any, node_id: int | None = None, request_timeout_ms: Any = None) -> Any:
        if self.counting:
            count_sent(type(request).__name__.removesuffix("Request"))
        return super().send(request, node_id=node_id, request_timeout_ms=request_timeout_ms)


class Connections:
    """The network of one kafka-python client, built by kgitops and handed to the client
    through its public ``kafka_client`` hook (``KafkaNetClient(net=..., manager=...)``), so
    kgitops holds the selector and the connection manager itself and never reaches into the
    client for them."""

    def __init__(self, **configs: Any) -> None:
        self.net = NetworkSelector(**configs)
        self.manager = CountedManager(self.net, **configs)
        self.client = KafkaNetClient(net=self.net, manager=self.manager, **configs)


def open_admin_client(
    spec: ClusterSpec, config: dict[str, Any], advice: TlsAdvice, secrets: Sequence[str]
) -> tuple[Any, Any]:
    """A bootstrapped ``KafkaAdminClient`` and its connection manager, or the
    ``ClusterError`` saying why not."""
    made: list[Connections] = []
    client = open_client(KafkaAdminClient, spec, config, advice, secrets, made)
    manager = made[-1].manager
    manager.counting = True
    return client, manager


def reader_settings(
    spec: ClusterSpec, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], TlsAdvice, tuple[str, ...]]:
    """The settings of a ``KafkaConsumer`` that reads without a group (it never joins one nor
    commits) from the earliest offset it is sent to, with the TLS advice and the secret values
    to scrub from its errors (``tail``, ``sample-keys``)."""
    config = client_config(spec, environ)
    allowed = set(KafkaConsumer.DEFAULT_CONFIG)
    settings = {k: v for k, v in config.items() if k in allowed}
    settings.update(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
    return settings, tls_advice(spec), secret_values(config)


@contextlib.contextmanager
def reader_client(
    client_class: Any,
    spec: ClusterSpec,
    environ: Mapping[str, str] | None,
    call: str,
    *,
    closing: Mapping[str, Any] | None = None,
    **extra: Any,
) -> Iterator[tuple[Any, Callable[[BaseException], ClusterError]]]:
    """A bootstrapped ``client_class`` (``KafkaConsumer``, ``KafkaProducer``) on
    ``reader_settings`` (those it takes) plus ``extra``, and how its errors are translated.
    Any library error, in the block too, is one ``ClusterError`` naming ``call`` (a
    ``KgitopsError`` passes as it is). Every request is counted (``port.count_sent``) as the
    admin client's are. The client is closed at the end (``closing``: close's arguments)."""
    settings, tls, secrets = reader_settings(spec, environ)
    allowed = set(client_class.DEFAULT_CONFIG)
    settings = {k: v for k, v in settings.items() if k in allowed} | extra
    made: list[Connections] = []
    client: Any = None
    try:
        client = open_client(client_class, spec, settings, tls, secrets, made)
        made[-1].manager.counting = True
        yield client, lambda exc: translate(exc, call, secrets=secrets, tls=tls)
    except KgitopsError:
        raise
    except Exception as exc:
        raise translate(exc, call, secrets=secrets, tls=tls) from None
    finally:
        if client is not None:
            with contextlib.suppress(Exception):  # never mask the real error
                client.close(**(closing or {}))


@contextlib.contextmanager
def topic_consumer(
    spec: ClusterSpec,
    topic: str,
    call: str,
    environ: Mapping[str, str] | None,
    *,
    absent: str,
) -> Iterator[tuple[Any, set[int]]]:
    """A group-less ``KafkaConsumer`` (``reader_client``) and the partition ids of ``topic``
    (``tail``, ``sample-keys``). A topic the cluster does not know is
    ``ClusterRequestError(absent)``; any library error, in the block too, is one
    ``ClusterError`` naming ``call``. The consumer is closed at the end."""
    with reader_client(KafkaConsumer, spec, environ, call) as (consumer, _):
        ids = consumer.partitions_for_topic(topic)
        if not ids:
            raise ClusterRequestError(absent, code="UNKNOWN_TOPIC")
        yield consumer, ids


def open_client(
    client_class: Any,
    spec: ClusterSpec,
    config: dict[str, Any],
    advice: TlsAdvice,
    secrets: Sequence[str],
    made: list[Connections] | None = None,
) -> Any:
    """``client_class(**config)`` (a kafka-python client that bootstraps in its constructor:
    ``KafkaAdminClient``, ``KafkaConsumer``) under the guard, or the ``ClusterError`` saying
    why it could not connect. ``made`` receives the ``Connections`` the client was given."""
    servers = ", ".join(spec.bootstrap_servers)
    timeout = int(config["bootstrap_timeout_ms"])
    trap = ExceptionTrap()
    kafka_log = logging.getLogger("kafka")
    kafka_log.addHandler(trap)
    started: list[Connections] = [] if made is None else made

    def client_factory(**kw: Any) -> Any:
        started.append(Connections(**kw))
        return started[-1].client

    guard = _Guard(spec, config, advice, trap, started)
    guard.start()
    try:
        client = client_class(**kafka_settings(config), kafka_client=client_factory)
    except Exception as exc:
        guard.finish()
        for connections in started:  # its tasks end now, not at garbage collection
            with contextlib.suppress(Exception):
                connections.client.close()
        if guard.verdict is not None:
            raise guard.verdict from None
        cause: BaseException = exc
        if guard.fired:
            cause = kerr.KafkaTimeoutError("the connection never completed its handshake")
        raise connect_error(spec, cause, trap.seen, servers, advice, secrets, timeout) from None
    finally:
        kafka_log.removeHandler(trap)
    guard.finish()
    if guard.fired:  # it stopped the IO loop as the bootstrap finished: the client is dead
        client.close()
        raise guard.verdict or connect_error(
            spec, kerr.KafkaTimeoutError(), trap.seen, servers, advice, secrets, timeout
        )
    return client


def broker_addresses(manager: Any, bootstrap: Sequence[str]) -> list[str]:
    """Where a connection may have failed: the brokers Metadata named (after the bootstrap
    these are the addresses connected to), then the bootstrap servers."""
    try:
        named = [f"{b.host}:{b.port}" for b in manager.cluster.brokers()]
    except Exception:  # no metadata yet
        named = []
    return list(dict.fromkeys([*named, *bootstrap]))


class _Guard(threading.Thread):
    def __init__(
        self,
        spec: ClusterSpec,
        config: dict[str, Any],
        advice: TlsAdvice,
        trap: ExceptionTrap,
        started: list[Connections],
    ) -> None:
        super().__init__(name="kgitops-bootstrap-guard", daemon=True)
        self._advice = advice
        self._context = config.get("ssl_context")
        self._trap = trap
        self._clients = started
        self._addresses = list(spec.bootstrap_servers)
        self._spec = spec
        self._config = config
        self._done = threading.Event()
        self._deadline = time.monotonic() + config["bootstrap_timeout_ms"] / 1000 + 0.5
        self.verdict: ClusterError | None = None
        self.fired = False

    def finish(self) -> None:
        self._done.set()
        self._trap.changed.set()
        self.join()

    def run(self) -> None:
        stall_at: float | None = time.monotonic() + STALL_SECONDS if self._advice.tls else None
        checked = 0
        probed = False
        login_probed = self._config.get("sasl_mechanism") not in PASSWORD_MECHANISMS
        reach_checked = False
        while not self._done.is_set():
            now = time.monotonic()
            if now >= self._deadline:
                self._abort(None)
                return
            until = min(self._deadline, stall_at) if stall_at is not None else self._deadline
            self._trap.changed.wait(max(until - now, 0.0))
            self._trap.changed.clear()
            if self._done.is_set():
                return
            seen = list(self._trap.seen)
            fresh, checked = seen[checked:], len(seen)
            for exc in fresh:
                err = self._advice.explain(exc)
                if err is not None:
                    self._abort(err)
                    return
            if not reach_checked and any(isinstance(e, kerr.KafkaConnectionError) for e in fresh):
                reach_checked = True
                unreachable = self._unreachable()
                if unreachable is not None:
                    self._abort(unreachable)
                    return
            stalled = stall_at is not None and time.monotonic() >= stall_at
            if not probed and (stalled or any(is_ambiguous(e) for e in fresh)):
                probed = True
                stall_at = None
                managers = [c.manager for c in self._clients[:1]]
                addresses = (
                    broker_addresses(managers[0], self._addresses) if managers else self._addresses
                )
                err = self._advice.diagnose(
                    addresses, self._context, PROBE_SECONDS, deadline=self._deadline
                )
                if err is not None:
                    self._abort(err)
                    return
            if not login_probed and any(is_ambiguous(e) for e in fresh):
                login_probed = True
                refused = self._login_verdict()
                if refused is not None:
                    self._abort(refused)
                    return

    def _unreachable(self) -> ClusterUnreachable | None:
        """Every bootstrap address definitively unreachable, now and a moment later (a broker
        that is starting binds its port meanwhile), or None."""
        if all_unreachable(self._addresses) is None:
            return None
        if self._done.wait(GRACE_SECONDS):  # the bootstrap ended meanwhile
            return None
        reasons = all_unreachable(self._addresses)
        if reasons is None:
            return None
        servers = ", ".join(self._addresses)
        return ClusterUnreachable(
            f"cannot reach cluster {self._spec.name!r} at {servers}: {'; '.join(reasons)}; "
            "check the host names and ports in bootstrapServers and that the brokers are up"
        )

    def _login_verdict(self) -> ClusterAuthError | None:
        """The broker's refusal of kgitops' SASL login, asked once (module doc), or None."""
        for address in self._addresses:
            left = self._deadline - time.monotonic()
            if left <= 0.05:
                return None
            refused = login_refusal(address, self._config, min(LOGIN_PROBE_SECONDS, left))
            if refused is not None:
                return login_error(self._spec, address, refused[0], secret_values(self._config))
        return None

    def _abort(self, verdict: ClusterError | None) -> None:
        if self._done.is_set():
            return
        self.verdict = verdict
        self.fired = True
        for client in self._clients:
            client.net.stop(timeout_ms=1000)


def login_error(
    spec: ClusterSpec, address: str, reason: str, secrets: Sequence[str]
) -> ClusterAuthError:
    """A refused SASL login in one line: the broker's reason (scrubbed, quoted) and the
    settings that hold the credentials, never their values."""
    sasl = spec.security.sasl
    assert sasl is not None
    return ClusterAuthError(
        f"cluster {spec.name!r} at {address}: SASL {sasl.mechanism.upper()} authentication "
        f"failed (the broker said {said(reason or 'no reason given', secrets)}); check the "
        f"user name and password in ${sasl.username_env} and ${sasl.password_env} "
        "(usernameEnv and passwordEnv in cluster.yaml)"
    )


def connect_error(
    spec: ClusterSpec,
    exc: BaseException,
    seen: Sequence[BaseException],
    servers: str,
    advice: TlsAdvice,
    secrets: Sequence[str],
    timeout_ms: int,
) -> ClusterError:
    """Why bootstrap failed. kafka-python reports only a timeout; the cause (refused,
    authentication, TLS) is in what its connections logged, so that is what is named."""
    op = f"connect to cluster {spec.name!r} at {servers}"
    for e in seen:
        tls = advice.explain(e)
        if tls is not None:
            return tls
    causes = [translate(e, op, secrets=secrets) for e in seen]
    for kind in (ClusterAuthError, UnsupportedOperation):
        for cause in causes:
            if isinstance(cause, kind):
                return cause
    err = translate(exc, op, secrets=secrets)
    if isinstance(err, ClusterTimeout | ClusterUnreachable):
        real = [e for e in seen if not isinstance(e, kerr.KafkaTimeoutError)] or list(seen)
        last = f" (last error: {said(str(real[-1]), secrets)})" if real else ""
        return ClusterUnreachable(
            f"cannot reach cluster {spec.name!r} at {servers} within {timeout_ms} ms{last}; "
            "check that the brokers are up and reachable and the security settings match "
            "the listener"
        )
    return err
