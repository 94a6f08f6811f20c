"""``Transport``: how the Kafka adapter talks to brokers (sending, deadlines, retries, errors).

One object owns every request the adapter sends, whether a protocol request kgitops builds
(client quotas, the access probes, configs read per broker...) or a call of kafka-python's
public ``KafkaAdminClient``:

* **sending**: one request (:meth:`Transport.send`), one per broker at once
  (:meth:`Transport.send_each`), to the controller (:meth:`Transport.send_controller`), one
  batched request per item list (:meth:`Transport.batched`), or a library call
  (:meth:`Transport.call`); every request sent is counted (``port.count_sent``, by the
  connection manager kgitops gives the client: ``bootstrap.CountedManager``);
* **deadlines**: ``request_timeout_ms`` of the cluster file bounds each attempt, and no retry
  starts after it has passed since the operation began: an attempt started just before runs
  to its own timeout, so an operation ends within about twice that time (plus, for a library
  call, kafka-python's own controller look-up, up to 30 s), never a hang;
* **one retry policy**: :class:`Backoff` (0.1 s doubling up to 2 s, never past the deadline)
  for transport errors, retriable item codes and passing states alike;
* **the error mapping**: every exception leaves as a kgitops ``ClusterError``
  (``errors.translate``); a definitive TLS failure is never retried.

Routing to the controller: on KRaft the "controller" Metadata names is a random live broker,
which forwards the request to the quorum's controller (KIP-590:
``KRaftMetadataCache.getControllerId`` returns ``getRandomAliveBroker``). The broker learned
may die while kgitops runs (an apply of hours, a broker killed): the request then goes to the
broker Metadata names now, never to the dead one until the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka.protocol.metadata import MetadataRequest

from kgitops.cluster.kafka.bootstrap import PROBE_SECONDS, broker_addresses
from kgitops.cluster.kafka.errors import (
    api_name,
    item_error,
    retriable_code,
    retriable_exc,
    translate,
)
from kgitops.cluster.kafka.tls import TlsAdvice, is_ambiguous
from kgitops.errors import (
    ClusterError,
    ClusterRequestError,
    ClusterUnreachable,
    UnsupportedOperation,
)

_Item = TypeVar("_Item")
_Key = TypeVar("_Key", bound=Hashable)
_T = TypeVar("_T")

NOT_CONTROLLER = 41


class Backoff:
    """kgitops' one retry policy: wait ``first`` seconds, doubling up to ``cap``, and never
    past the deadline, ``seconds`` from now.

    >>> b = Backoff(10.0)      # waits 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0 ... s
    >>> b.remaining_ms() > 0
    True
    """

    def __init__(self, seconds: float, *, first: float = 0.1, cap: float = 2.0) -> None:
        self.deadline = time.monotonic() + seconds
        self.delay = first
        self.cap = cap

    def remaining_ms(self) -> int:
        """What is left of the deadline (at least 1 ms: a request always gets a chance)."""
        return max(int((self.deadline - time.monotonic()) * 1000), 1)

    def allows(self) -> bool:
        """Is there time for one more wait and attempt?"""
        return time.monotonic() + self.delay < self.deadline

    def wait(self) -> bool:
        """Wait before the next attempt and say True, or say False at once when the wait
        would pass the deadline (the caller gives up)."""
        if not self.allows():
            return False
        time.sleep(self.delay)
        self.delay = min(self.delay * 2, self.cap)
        return True


class Transport:
    """The sending half of ``KafkaAdmin``: a kafka-python connection manager (the one kgitops
    built for its ``KafkaAdminClient``, ``bootstrap.Connections``), the request timeout, the
    secrets to scrub and the TLS advice; it remembers the controller and the live brokers
    Metadata last named."""

    def __init__(
        self,
        manager: Any,
        *,
        timeout_ms: int,
        tls: TlsAdvice | None,
        tls_context: Any = None,
        bootstrap: Sequence[str] = (),
        secrets: Callable[[], tuple[str, ...]] = tuple,
        library: Any = None,
    ) -> None:
        self.manager = manager
        self.library = library  # the KafkaAdminClient over ``manager`` (public methods only)
        self.timeout_ms = timeout_ms
        self.tls = tls
        self.tls_context = tls_context
        self.bootstrap = tuple(bootstrap)
        self.secrets = secrets
        self.controller: int | None = None
        self.live_brokers: tuple[int, ...] | None = None
        self.diagnosed = False

    # ---- errors

    def error(self, exc: BaseException, operation: str) -> ClusterError:
        """``exc`` as the kgitops error it is (``errors.translate``)."""
        return translate(exc, operation, secrets=self.secrets(), tls=self.tls)

    def tls_verdict(self, exc: BaseException) -> ClusterError | None:
        """A definitive TLS failure behind ``exc`` (never worth a retry), or, the first time a
        connection ends in a way that may hide one, what probing the brokers finds."""
        if self.tls is None:
            return None
        verdict = self.tls.explain(exc)
        if verdict is not None or self.diagnosed or not is_ambiguous(exc):
            return verdict
        self.diagnosed = True
        addresses = broker_addresses(self.manager, self.bootstrap)
        return self.tls.diagnose(addresses, self.tls_context, PROBE_SECONDS)

    # ---- what the brokers serve

    def supports(self, request_class: Any) -> bool:
        """Whether the broker advertises this API (ApiVersions, answered at connect)."""
        try:
            self.manager.broker_version_data.api_version(request_class)
        except kerr.UnsupportedVersionError:
            return False
        return True

    def require(self, request_class: Any) -> None:
        if not self.supports(request_class):
            raise UnsupportedOperation(api_name(request_class.__name__))

    # ---- sending

    def send(
        self,
        request: Any,
        node_id: int | None = None,
        *,
        timeout_ms: int | None = None,
        to_controller: bool = False,
    ) -> Any:
        """Send one request, retrying transport and retriable errors until the deadline
        (``timeout_ms``, requestTimeoutMs by default). ``to_controller``: the node is the
        controller last learned, asked again before each attempt; a node that cannot be
        reached, or that kafka-python no longer knows (UnknownBrokerIdError: it left the
        Metadata), is forgotten, so the next attempt goes to the one Metadata names now."""
        op = type(request).__name__
        backoff = Backoff((timeout_ms or self.timeout_ms) / 1000)
        while True:
            if to_controller:
                node_id = self.controller_id()
            try:
                return self.manager.run(self._send_async, request, node_id, backoff.remaining_ms())
            except Exception as exc:
                verdict = self.tls_verdict(exc)
                if verdict is not None:
                    raise verdict from None
                gone = to_controller and (
                    retriable_exc(exc) or isinstance(exc, kerr.UnknownBrokerIdError)
                )
                if gone:
                    self.controller = None
                if (retriable_exc(exc) or gone) and backoff.wait():
                    continue
                raise self.error(exc, op) from None

    async def _send_async(self, request: Any, node_id: int | None, timeout_ms: int) -> Any:
        future = self.manager.send(request, node_id=node_id, request_timeout_ms=timeout_ms)
        return await self.manager.wait_for(future, timeout_ms)

    def send_each(self, requests: Mapping[int, Any]) -> dict[int, Any]:
        """One request per broker, all sent at once; each value is the response or the
        ClusterError that broker's request ended with (retriable failures are retried with
        backoff until the deadline, so N slow brokers cost one timeout, not N)."""
        backoff = Backoff(self.timeout_ms / 1000)
        pending = dict(requests)
        out: dict[int, Any] = {}
        while pending:
            try:
                got = self.manager.run(self._gather, list(pending.items()), backoff.remaining_ms())
            except Exception as exc:
                raise self.error(exc, "send") from None
            retry: dict[int, Any] = {}
            for b, res in got.items():
                verdict = self.tls_verdict(res) if isinstance(res, BaseException) else None
                if not isinstance(res, BaseException):
                    out[b] = res
                elif verdict is not None:
                    raise verdict
                elif retriable_exc(res) and backoff.allows():
                    retry[b] = pending[b]
                else:
                    out[b] = self.error(res, type(pending[b]).__name__)
            pending = retry
            if pending:
                backoff.wait()
        return out

    async def _gather(self, items: Sequence[tuple[int, Any]], timeout_ms: int) -> dict[int, Any]:
        # a broker kafka-python no longer knows (it left the Metadata: UnknownBrokerIdError
        # at send) is that broker's answer, never the loss of the others'
        futures: list[tuple[int, Any]] = []
        out: dict[int, Any] = {}
        for b, req in items:
            try:
                futures.append(
                    (b, self.manager.send(req, node_id=b, request_timeout_ms=timeout_ms))
                )
            except Exception as exc:
                out[b] = exc
        for b, future in futures:
            try:
                out[b] = await self.manager.wait_for(future, timeout_ms)
            except Exception as exc:
                out[b] = exc
        return out

    def send_controller(self, request: Any, codes: Callable[[Any], Iterable[int]]) -> Any:
        """To the controller; on NOT_CONTROLLER, learn the new one and send again (once)."""
        resp = self.send(request, to_controller=True)
        if NOT_CONTROLLER in set(codes(resp)):
            self.controller = None
            resp = self.send(request, to_controller=True)
        return resp

    def call(self, operation: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """A public ``KafkaAdminClient`` method, under the same policy as a request kgitops
        builds: transport errors and retriable ones are tried again until the deadline; any
        exception leaves as its kgitops error (``operation`` names the Kafka API)."""
        backoff = Backoff(self.timeout_ms / 1000)
        while True:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                verdict = self.tls_verdict(exc)
                if verdict is not None:
                    raise verdict from None
                if retriable_exc(exc) and backoff.wait():
                    continue
                raise self.error(exc, operation) from None

    def controller_call(
        self, operation: str, fn: Callable[[], _T], *, on_retry: Callable[[], None] | None = None
    ) -> _T:
        """A ``KafkaAdminClient`` method that routes to the controller, under the same policy
        as :meth:`send` with ``to_controller``: a transport failure (the broker it had learned
        as the controller died) forgets the controller, so the next attempt asks Metadata
        again, and is retried until the deadline; so is the library's "Failed to find active
        controller id!" (NOT_CONTROLLER twice in a row: the controller is moving).
        ``on_retry()`` is called before each new attempt: the request may have reached the
        controller already (its answer lost), so a write's second answer can be about what
        the first did (a deleted topic is unknown, added partitions are there)."""
        backoff = Backoff(self.timeout_ms / 1000)
        while True:
            try:
                return fn()
            except Exception as exc:
                verdict = self.tls_verdict(exc)
                if verdict is not None:
                    raise verdict from None
                gone = retriable_exc(exc) or isinstance(
                    exc, kerr.UnknownBrokerIdError | RuntimeError
                )
                if gone:
                    self.forget_controller()
                if gone and backoff.wait():
                    if on_retry is not None:
                        on_retry()
                    continue
                raise self.error(exc, operation) from None

    def forget_controller(self) -> None:
        """The controller is asked of Metadata again before the next request to it, by
        kgitops and by ``KafkaAdminClient``. The library caches the controller id and offers
        no public way to forget it (its own ``_send_request_to_controller`` refreshes it on
        NOT_CONTROLLER only): that one private attribute is set here, and nowhere else
        (tests/test_quality.py allows it here alone)."""
        self.controller = None
        if self.library is not None:
            self.library._controller_id = None

    # ---- Metadata: the controller and the live brokers

    def metadata(self, topics: Sequence[str] | None) -> Any:
        """One Metadata request (``None``: every topic); it names the controller and the
        live brokers, both remembered."""
        T = MetadataRequest.MetadataRequestTopic
        req = MetadataRequest(
            topics=None if topics is None else [T(name=t) for t in topics],
            allow_auto_topic_creation=False,
        )
        md = self.send(req)
        if md.controller_id is not None and md.controller_id >= 0:
            self.controller = md.controller_id
        self.live_brokers = tuple(sorted(b.node_id for b in md.brokers))
        return md

    def controller_id(self) -> int:
        if self.controller is None:
            self.metadata([])
        if self.controller is None:
            raise ClusterUnreachable("the cluster reports no active controller; try again later")
        return self.controller

    def live(self) -> tuple[int, ...]:
        if self.live_brokers is None:
            self.metadata([])
        assert self.live_brokers is not None
        return self.live_brokers

    # ---- batches with per-item errors

    def batched(
        self,
        operation: str,
        items: Sequence[_Item],
        key: Callable[[_Item], _Key],
        call: Callable[[Sequence[_Item]], Mapping[_Key, tuple[int, str | None]]],
        *,
        done_on_retry: frozenset[int] = frozenset(),
    ) -> dict[_Key, ClusterError | None]:
        """Send ``items`` in one request; send again only the items whose error code is
        retriable (with backoff, until the deadline). ``done_on_retry`` are codes that mean
        success when an earlier attempt may have gone through (TOPIC_ALREADY_EXISTS after a
        create that timed out). Items the broker does not mention are errors (NO_RESPONSE)."""
        backoff = Backoff(self.timeout_ms / 1000)
        raw: dict[_Key, tuple[int, str | None]] = {}
        pending = list(items)
        retried: set[_Key] = set()
        while pending:
            got = call(pending)
            for item in pending:
                k = key(item)
                code, message = got.get(k, (-2, None))
                if k in retried and code in done_on_retry:
                    code = 0
                raw[k] = (code, message)
            if any(code == NOT_CONTROLLER for code, _ in got.values()):
                self.forget_controller()
            pending = [i for i in pending if retriable_code(raw[key(i)][0])]
            if not pending or not backoff.wait():
                break
            retried.update(key(i) for i in pending)
        out: dict[_Key, ClusterError | None] = {}
        for item in items:
            k = key(item)
            code, message = raw[k]
            if code == -2:
                out[k] = ClusterRequestError(
                    f"{k}: the broker did not answer for this item", code="NO_RESPONSE", item=str(k)
                )
            else:
                out[k] = item_error(operation, str(k), code, message)
        return out
