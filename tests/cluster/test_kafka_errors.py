"""The kafka-python boundary: every exception it can raise becomes a kgitops error, settings
come from cluster.yaml and the environment, and the topic-config rule. No broker needed."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import ssl
from types import SimpleNamespace
from typing import Any

import kafka
import kafka.errors as kerr
import pytest

from kgitops.cluster.kafka.describe import (
    SOURCE_DEFAULT,
    SOURCE_DYNAMIC_BROKER,
    SOURCE_DYNAMIC_TOPIC,
    response_enumerates,
    topic_configs_from,
)
from kgitops.cluster.kafka.errors import item_error, translate
from kgitops.cluster.kafka.settings import client_config
from kgitops.errors import (
    ClusterAuthError,
    ClusterError,
    ClusterRequestError,
    ClusterTimeout,
    ClusterUnreachable,
    UnsupportedOperation,
)
from kgitops.model import ClusterSpec, SaslSpec, SecuritySpec


def _kafka_exception_classes() -> list[type[BaseException]]:
    """Every exception class defined anywhere in the kafka package the adapter loads."""
    for info in pkgutil.walk_packages(kafka.__path__, "kafka."):
        if any(part in info.name for part in ("vendor", "benchmarks", "cli", "__main__")):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # optional dependencies (gssapi, crc32c, ...) may be missing
            continue
    seen: dict[str, type[BaseException]] = {}
    import sys

    for name, module in list(sys.modules.items()):
        if not name.startswith("kafka") or module is None:
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("kafka"):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [seen[k] for k in sorted(seen)]


def _instance(cls: type[BaseException]) -> BaseException:
    attempts: tuple[tuple[object, ...], ...] = ((), ("something went wrong",), ({}, "x"))
    for args in attempts:
        try:
            return cls(*args)
        except TypeError:
            continue
    raise AssertionError(f"cannot build {cls}")


KAFKA_EXCEPTIONS = _kafka_exception_classes()


def test_the_enumeration_finds_kafka_pythons_exceptions() -> None:
    names = {c.__name__ for c in KAFKA_EXCEPTIONS}
    assert len(KAFKA_EXCEPTIONS) > 150
    assert {"KafkaTimeoutError", "TopicAlreadyExistsError", "NodeNotReadyError"} <= names


@pytest.mark.parametrize("cls", KAFKA_EXCEPTIONS, ids=lambda c: c.__name__)
def test_every_kafka_python_exception_becomes_a_kgitops_cluster_error(
    cls: type[BaseException],
) -> None:
    err = translate(_instance(cls), "DescribeConfigs")
    assert isinstance(err, ClusterError)
    assert "DescribeConfigs" in str(err)
    assert "Traceback" not in str(err)
    if issubclass(cls, kerr.BrokerResponseError) and not isinstance(
        err, UnsupportedOperation | ClusterAuthError | ClusterTimeout | ClusterUnreachable
    ):
        assert isinstance(err, ClusterRequestError)
        assert err.code == (getattr(cls, "message", None) or cls.__name__)


@pytest.mark.parametrize("code", [*range(-1, 140), 9999])
def test_every_kafka_error_code_in_a_response_becomes_an_item_error(code: int) -> None:
    err = item_error("CreateTopics", "orders", code, "detail from the broker")
    if code == 0:
        assert err is None
    else:
        assert isinstance(err, ClusterError)
        assert "orders" in str(err) or "CreateTopics" in str(err)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (kerr.IncompatibleBrokerVersion("no"), UnsupportedOperation),
        (kerr.UnsupportedVersionError(), UnsupportedOperation),
        (kerr.TopicAuthorizationFailedError(), ClusterAuthError),
        (kerr.ClusterAuthorizationFailedError(), ClusterAuthError),
        (kerr.SaslAuthenticationFailedError("bad"), ClusterAuthError),
        (kerr.KafkaTimeoutError(), ClusterTimeout),
        (kerr.RequestTimedOutError(), ClusterTimeout),
        (kerr.KafkaConnectionError("refused"), ClusterUnreachable),
        (kerr.NodeNotReadyError(1), ClusterUnreachable),
        (ConnectionRefusedError(111, "Connection refused"), ClusterUnreachable),
        (ssl.SSLError("certificate verify failed"), ClusterUnreachable),
        (kerr.TopicAlreadyExistsError(), ClusterRequestError),
        (ValueError("odd"), ClusterError),
    ],
)
def test_each_failure_kind_maps_to_the_error_a_person_can_act_on(
    exc: BaseException, kind: type[ClusterError]
) -> None:
    assert isinstance(translate(exc, "CreatePartitionsRequest"), kind)


def test_an_unsupported_api_is_named() -> None:
    err = translate(kerr.IncompatibleBrokerVersion("x"), "CreatePartitionsRequest")
    assert str(err) == "the broker does not support CreatePartitions"


def test_a_refused_item_carries_kafkas_error_name() -> None:
    err = item_error("CreateTopics", "orders", 36, "Topic 'orders' already exists.")
    assert isinstance(err, ClusterRequestError)
    assert err.code == "TOPIC_ALREADY_EXISTS"
    assert err.item == "orders"
    assert str(err).startswith("orders: TOPIC_ALREADY_EXISTS")


def test_secrets_are_scrubbed_from_messages() -> None:
    err = translate(
        kerr.SaslAuthenticationFailedError("user bob pw hunter2"), "x", secrets=["hunter2"]
    )
    assert "hunter2" not in str(err)


# ---------------------------------------------------------------- client settings


def spec(**kw: Any) -> ClusterSpec:
    base: dict[str, Any] = {"name": "prod", "directory": "/clusters/prod"}
    base.update(kw)
    return ClusterSpec(bootstrap_servers=("k1:9092", "k2:9092"), **base)


SCRAM = SecuritySpec(
    protocol="SASL_SSL",
    sasl=SaslSpec(mechanism="SCRAM-SHA-512", username_env="KU", password_env="KP"),
)


def test_plaintext_settings_carry_servers_and_the_timeout() -> None:
    cfg = client_config(spec(request_timeout_ms=5000), environ={})
    assert cfg["bootstrap_servers"] == ["k1:9092", "k2:9092"]
    assert cfg["request_timeout_ms"] == 5000
    assert cfg["bootstrap_timeout_ms"] == 5000
    assert client_config(spec(), environ={})["bootstrap_timeout_ms"] == 10_000
    assert cfg["security_protocol"] == "PLAINTEXT"
    assert "sasl_mechanism" not in cfg


def test_sasl_credentials_come_from_the_named_environment_variables() -> None:
    cfg = client_config(spec(security=SCRAM), environ={"KU": "bob", "KP": "s3cret"})
    assert cfg["security_protocol"] == "SASL_SSL"
    assert cfg["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (cfg["sasl_plain_username"], cfg["sasl_plain_password"]) == ("bob", "s3cret")


def test_an_unset_secret_variable_is_named_and_no_value_is_shown() -> None:
    with pytest.raises(ClusterError, match="environment variable KP") as info:
        client_config(spec(security=SCRAM), environ={"KU": "bob"})
    assert "bob" not in str(info.value)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_plain_and_scram_mechanisms_are_accepted(mechanism: str) -> None:
    sec = SecuritySpec(
        protocol="SASL_PLAINTEXT",
        sasl=SaslSpec(mechanism, username_env="U", password_env="P"),
        allow_plaintext_password=mechanism == "PLAIN",  # PLAIN in clear: only when said
    )
    assert client_config(spec(security=sec), environ={"U": "u", "P": "p"})["sasl_mechanism"] == (
        mechanism
    )


def test_an_unknown_sasl_mechanism_is_refused() -> None:
    sec = SecuritySpec(protocol="SASL_SSL", sasl=SaslSpec("GSSAPI", "U", "P"))
    with pytest.raises(ClusterError, match="unsupported SASL mechanism 'GSSAPI'"):
        client_config(spec(security=sec), environ={"U": "u", "P": "p"})


def test_sasl_without_credentials_settings_is_refused() -> None:
    with pytest.raises(ClusterError, match=r"needs security\.sasl"):
        client_config(spec(security=SecuritySpec(protocol="SASL_SSL")), environ={})


# The TLS settings (files inside the cluster folder, keys, passwords) are specified with real
# certificates in tests/tls/test_tls_settings.py.


def test_a_cluster_without_servers_is_refused() -> None:
    with pytest.raises(ClusterError, match="no bootstrapServers"):
        client_config(ClusterSpec(name="x", directory="."), environ={})


# ---------------------------------------------------------------- the topic-config rule


def entry(name: str, value: str | None, source: int, synonyms: int = 0) -> SimpleNamespace:
    return SimpleNamespace(
        name=name, value=value, config_source=source, synonyms=[object()] * synonyms
    )


def result(*entries: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(configs=list(entries))


def test_on_kafka_only_configs_set_on_the_topic_count() -> None:
    r = result(
        entry("cleanup.policy", "delete", SOURCE_DEFAULT, synonyms=1),
        entry("retention.ms", "1000", SOURCE_DYNAMIC_TOPIC, synonyms=2),
        entry("min.insync.replicas", "2", 4, synonyms=1),  # STATIC_BROKER_CONFIG
        entry("compression.type", "lz4", SOURCE_DYNAMIC_BROKER, synonyms=1),
    )
    assert response_enumerates([r])
    assert topic_configs_from(r.configs, enumerating=True) == {"retention.ms": "1000"}


def test_on_kafka_a_topic_without_overrides_has_no_configs() -> None:
    r = result(
        entry("cleanup.policy", "delete", SOURCE_DEFAULT, synonyms=1),
        entry("segment.jitter.ms", "0", SOURCE_DEFAULT),
    )
    assert response_enumerates([r])
    assert topic_configs_from(r.configs, enumerating=True) == {}


def test_a_broker_that_lists_only_the_topics_own_configs_has_them_all_set() -> None:
    # Tansu: only what the topic carries, all marked DEFAULT_CONFIG, no synonyms.
    r = result(entry("retention.ms", "1000", SOURCE_DEFAULT), entry("cleanup.policy", "compact", 5))
    assert not response_enumerates([r, result()])
    assert topic_configs_from(r.configs, enumerating=False) == {
        "retention.ms": "1000",
        "cleanup.policy": "compact",
    }


def test_sensitive_values_are_never_compared() -> None:
    r = result(entry("secret.thing", None, SOURCE_DYNAMIC_TOPIC))
    assert topic_configs_from(r.configs, enumerating=True) == {}


def test_only_the_adapter_imports_kafka_python() -> None:
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "kgitops"
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n == "kafka" or n.startswith("kafka.") for n in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers and all(p.startswith("cluster/kafka/") for p in importers), importers
