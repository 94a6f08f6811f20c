"""A node of the local Kafka cluster (``kgitops.cluster.kafka.localcluster``) as its
``cluster.json`` records it, and the ``server.properties`` it runs with: KRaft roles and
listeners, the authorizer and the SASL super user, the TLS keystore (and the CA that signs the
client certificates the MTLS listener requires), and the settings that
make a small test cluster fast and small."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kgitops.cluster.kafka.localprobe import HOST
from kgitops.cluster.kafka.localtls import CLIENT_PRINCIPAL
from kgitops.jsonfields import camel
from kgitops.names import INT32_MAX, INT64_MAX

ADMIN_USER = "admin"

# Settings that make a small test cluster fast and small (Kafka's own broker test config,
# TestUtils.createBrokerConfig, marked there); see docs/local-broker.md.
SPEED = {
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "auto.create.topics.enable": "false",
    "log.segment.bytes": "1048576",
    "log.cleaner.dedupe.buffer.size": "2097152",
    "log.initial.task.delay.ms": "100",
    "log.delete.delay.ms": "1000",
    "replica.socket.timeout.ms": "1500",
    "controller.socket.timeout.ms": "1500",
    "replica.lag.time.max.ms": "10000",
    "num.network.threads": "2",
    "background.threads": "2",
    "num.io.threads": "2",
    "group.coordinator.threads": "1",
    "num.recovery.threads.per.data.dir": "1",
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "3000",
    "auto.leader.rebalance.enable": "false",
    "unclean.leader.election.enable": "false",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}


@dataclass
class Node:
    id: int
    role: str  # "controller" or "broker"
    rack: str | None
    port: int  # PLAINTEXT for a broker, CONTROLLER for the controller
    sasl_port: int | None = None
    ssl_port: int | None = None  # None in a folder made before the TLS listener
    mtls_port: int | None = None  # None in a folder made before the MTLS listener
    pid: int | None = None
    start_time: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field, in order, by its camelCase name (``sasl_port``: ``saslPort``)."""
        return {camel(f.name): getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Any) -> Node:
        if not isinstance(data, dict):
            raise ValueError("a node is an object")
        node = cls(
            id=_int(data.get("id")),
            role=str(data.get("role")),
            rack=data.get("rack") if isinstance(data.get("rack"), str) else None,
            port=_int(data.get("port"), 1, 65535),
            sasl_port=_opt_int(data.get("saslPort"), 1, 65535),
            ssl_port=_opt_int(data.get("sslPort"), 1, 65535),
            mtls_port=_opt_int(data.get("mtlsPort"), 1, 65535),
            pid=_opt_int(data.get("pid"), 1, 2**22),  # Linux's pid_max at most
            start_time=_opt_int(data.get("startTime"), 0, INT64_MAX),
        )
        if node.role not in ("controller", "broker"):
            raise ValueError(f"node {node.id}: unknown role")
        return node


def _int(value: Any, low: int = 0, high: int = INT32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{str(value)[:40]!r} is not an integer")
    if not low <= value <= high:
        raise ValueError(f"{str(value)[:40]} is not between {low} and {high}")
    return value


def _opt_int(value: Any, low: int = 0, high: int = INT32_MAX) -> int | None:
    return None if value is None else _int(value, low, high)


def server_properties(
    node: Node,
    controller: Node,
    brokers: int,
    data_dir: str,
    password: str,
    keystore: str | None = None,
    settings: Mapping[str, str] | None = None,
    truststore: str | None = None,
) -> str:
    """The text of ``node``'s ``server.properties``: ``controller`` is the quorum's one voter,
    ``brokers`` the number of brokers (internal topics take RF min(3, brokers)), ``data_dir``
    its ``log.dirs``, ``password`` the super user's (and the keystore's), ``keystore`` the
    TLS listener's PKCS12 file (``localtls``) for a broker with an ``ssl_port``; ``settings``
    are set last, on every node, over the values above (a benchmark's longer session
    timeout). ``truststore``, the CA's PEM certificate, with ``keystore`` gives a broker with an
    ``mtls_port`` the MTLS listener: TLS that requires a client certificate that CA signed."""
    ctrl = controller
    rf = str(min(3, brokers))
    props: dict[str, str] = {
        "node.id": str(node.id),
        "controller.quorum.voters": f"{ctrl.id}@{HOST}:{ctrl.port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,"
            "MTLS:SSL"
        ),
        "log.dirs": data_dir,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:ANONYMOUS;User:{ADMIN_USER};{CLIENT_PRINCIPAL}",
        "allow.everyone.if.no.acl.found": "false",
        "broker.session.timeout.ms": "3000",
    }
    if node.role == "controller":
        props["process.roles"] = "controller"
        props["listeners"] = f"CONTROLLER://{HOST}:{node.port}"
    else:
        props["process.roles"] = "broker"
        listeners = f"PLAINTEXT://{HOST}:{node.port},SASL_PLAINTEXT://{HOST}:{node.sasl_port}"
        if node.ssl_port is not None and keystore is not None:
            listeners += f",SSL://{HOST}:{node.ssl_port}"
            props["ssl.keystore.type"] = "PKCS12"
            props["ssl.keystore.location"] = keystore
            props["ssl.keystore.password"] = password
            props["ssl.key.password"] = password
            props["ssl.client.auth"] = "none"
            if node.mtls_port is not None and truststore is not None:
                # the same keystore; a client certificate required and checked against the CA
                listeners += f",MTLS://{HOST}:{node.mtls_port}"
                props["listener.name.mtls.ssl.client.auth"] = "required"
                props["listener.name.mtls.ssl.truststore.type"] = "PEM"
                props["listener.name.mtls.ssl.truststore.location"] = truststore
        props["listeners"] = listeners
        props["advertised.listeners"] = listeners
        props["inter.broker.listener.name"] = "PLAINTEXT"
        if node.rack is not None:
            props["broker.rack"] = node.rack
        props["sasl.enabled.mechanisms"] = "PLAIN,SCRAM-SHA-512"
        props["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{ADMIN_USER}" password="{password}" user_{ADMIN_USER}="{password}";'
        )
        props["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        )
        props.update(SPEED)
        props["offsets.topic.num.partitions"] = "5"
        props["offsets.topic.replication.factor"] = rf
        props["transaction.state.log.num.partitions"] = "5"
        props["transaction.state.log.replication.factor"] = rf
        props["transaction.state.log.min.isr"] = "1"
        props["default.replication.factor"] = rf
    props.update(settings or {})
    lines = ["# written by kgitops local up --kafka"]
    lines += [f"{k}={_escape(v)}" for k, v in sorted(props.items())]
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\")
