"""The ``server.properties`` a node of the local Kafka cluster runs with
(``kgitops.cluster.kafka.localcluster``): KRaft roles and listeners, the authorizer and the
SASL super user, and the settings that make a small test cluster fast and small."""

from __future__ import annotations

from typing import Protocol

from kgitops.cluster.kafka.localprobe import HOST

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


class NodeSettings(Protocol):
    """What the properties read of a node (``localcluster.Node``)."""

    @property
    def id(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def rack(self) -> str | None: ...
    @property
    def port(self) -> int: ...
    @property
    def sasl_port(self) -> int | None: ...


def server_properties(
    node: NodeSettings, controller: NodeSettings, brokers: int, data_dir: str, password: str
) -> str:
    """The text of ``node``'s ``server.properties``: ``controller`` is the quorum's one voter,
    ``brokers`` the number of brokers (internal topics take RF min(3, brokers)), ``data_dir``
    its ``log.dirs``, ``password`` the super user's."""
    ctrl = controller
    rf = str(min(3, brokers))
    props: dict[str, str] = {
        "node.id": str(node.id),
        "controller.quorum.voters": f"{ctrl.id}@{HOST}:{ctrl.port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
        ),
        "log.dirs": data_dir,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:ANONYMOUS;User:{ADMIN_USER}",
        "allow.everyone.if.no.acl.found": "false",
        "broker.session.timeout.ms": "3000",
    }
    if node.role == "controller":
        props["process.roles"] = "controller"
        props["listeners"] = f"CONTROLLER://{HOST}:{node.port}"
    else:
        props["process.roles"] = "broker"
        listeners = f"PLAINTEXT://{HOST}:{node.port},SASL_PLAINTEXT://{HOST}:{node.sasl_port}"
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
    lines = ["# written by kgitops local up --kafka"]
    lines += [f"{k}={_escape(v)}" for k, v in sorted(props.items())]
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\")
