"""`kgitops local up|down|status|stop-broker|start-broker`: a cluster on 127.0.0.1 to try
kgitops on.

Two engines. Without ``--kafka``: the embedded Tansu broker (one in-memory broker, port 19092
by default, which topics/local/cluster.yaml uses). With ``--kafka``: a real Apache Kafka KRaft
cluster, one controller and N brokers in their own JVMs (jars from Maven Central through
``mvn``, cached per version), which topics/kafka/cluster.yaml uses; ``stop-broker`` and
``start-broker`` crash (``--kill``: SIGKILL), stop and restart one of its brokers.

``status`` and ``down`` act on both engines' default folders unless ``--dir`` or ``--kafka``
says which one; ``status`` exits 1 when nothing recorded runs and answers.
"""

from __future__ import annotations

import argparse

from kgitops.commands._units import integer

NAME = "local"
HELP = "start, stop or check a local cluster: the embedded Tansu broker, or real Kafka (--kafka)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kgitops.cluster.localdefaults import KAFKA_BASE_PORT as DEFAULT_BASE_PORT
    from kgitops.cluster.localdefaults import KAFKA_BROKERS as DEFAULT_BROKERS
    from kgitops.cluster.localdefaults import KAFKA_DIR
    from kgitops.cluster.localdefaults import KAFKA_VERSION as DEFAULT_VERSION
    from kgitops.cluster.localdefaults import TANSU_DIR as DEFAULT_DIR
    from kgitops.cluster.localdefaults import TANSU_PORT as DEFAULT_PORT

    sub = parser.add_subparsers(dest="local_command", metavar="ACTION", required=True)
    up = sub.add_parser(
        "up",
        help="start a local cluster in the background",
        description="Start the embedded Tansu broker, or with --kafka a real Apache Kafka "
        "KRaft cluster (one controller, N brokers), and wait until it answers.",
    )
    up.add_argument(
        "--kafka", action="store_true", help="a real Apache Kafka cluster instead of Tansu"
    )
    up.add_argument(
        "--dir",
        default=None,
        help=f"where the record, data and logs live (default: {DEFAULT_DIR}; "
        f"with --kafka: {KAFKA_DIR})",
    )
    up.add_argument(
        "--port",
        type=integer,
        default=None,
        help=f"loopback port (default: {DEFAULT_PORT}); with --kafka the base port "
        f"(default: {DEFAULT_BASE_PORT}): the controller on it, broker i on base+i "
        "(PLAINTEXT), base+50+i (SASL_PLAINTEXT), base+100+i (SSL) and base+150+i (SSL "
        "requiring a client certificate)",
    )
    up.add_argument(
        "--brokers",
        type=integer,
        default=None,
        help=f"--kafka: how many brokers (default: {DEFAULT_BROKERS})",
    )
    up.add_argument(
        "--racks",
        default=None,
        help="--kafka: one rack per broker, comma-separated (default: az1,az2,az3 in turn; "
        "'' for none)",
    )
    up.add_argument(
        "--kafka-version",
        default=None,
        help=f"--kafka: the Apache Kafka release (default: {DEFAULT_VERSION})",
    )
    for name, text in (
        ("down", "stop the local cluster(s) and delete their data"),
        ("status", "report whether the local cluster(s) run and answer"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--kafka", action="store_true", help="only the real Kafka cluster")
        p.add_argument("--dir", default=None, help="the folder given to `up --dir`")
    for name, text in (
        ("stop-broker", "stop one broker of the local Kafka cluster (--kill: a crash)"),
        ("start-broker", "start a stopped broker of the local Kafka cluster on its data"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("broker_id", type=integer, metavar="ID", help="the broker's id")
        p.add_argument(
            "--dir", default=KAFKA_DIR, help=f"the cluster's folder (default: {KAFKA_DIR})"
        )
        if name == "stop-broker":
            p.add_argument(
                "--kill",
                action="store_true",
                help="SIGKILL: a crash (default: SIGTERM, a controlled shutdown)",
            )


def run(args: argparse.Namespace) -> int:
    command = args.local_command
    if command == "up":
        return _up_kafka(args) if args.kafka else _up_tansu(args)
    if command in ("stop-broker", "start-broker"):
        return _one_broker(args)
    if command == "down":
        return _down(args)
    return _status(args)


def _up_tansu(args: argparse.Namespace) -> int:
    from kgitops.cluster import local
    from kgitops.errors import KgitopsError

    for flag, value in (
        ("--brokers", args.brokers),
        ("--racks", args.racks),
        ("--kafka-version", args.kafka_version),
    ):
        if value is not None:
            raise KgitopsError(f"{flag} is for a real Kafka cluster: add --kafka")
    port = local.DEFAULT_PORT if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise KgitopsError(f"--port {port}: a port is between 1 and 65535")
    directory = args.dir or local.DEFAULT_DIR
    st = local.up(directory, port)
    print(f"local broker running at {st.bootstrap} (pid {st.pid}); log: {st.log_path}")
    print("stop it with: kgitops local down" + _dir_flag(args.dir))
    return 0


def _up_kafka(args: argparse.Namespace) -> int:
    import time

    from kgitops.cluster.kafka import localcluster as kc
    from kgitops.cluster.kafka.runtime import DEFAULT_VERSION, cached

    version = args.kafka_version or DEFAULT_VERSION
    racks = None if args.racks is None else [r for r in args.racks.split(",") if r]
    directory = args.dir or kc.DEFAULT_DIR
    if not cached(version):
        print(f"fetching Apache Kafka {version}'s jars from Maven Central (once per version)...")
    started = time.monotonic()
    cluster = kc.up(
        directory,
        brokers=kc.DEFAULT_BROKERS if args.brokers is None else args.brokers,
        racks=racks,
        version=version,
        base_port=kc.DEFAULT_BASE_PORT if args.port is None else args.port,
    )
    took = time.monotonic() - started
    print(
        f"Apache Kafka {cluster.version} running: {len(cluster.brokers)} broker(s) unfenced "
        f"in {took:.1f} s"
    )
    _print_kafka(cluster)
    print("stop it with: kgitops local down --kafka" + _dir_flag(args.dir, kafka=True))
    return 0


def _print_kafka(cluster: object) -> None:
    from kgitops.cluster.kafka.localcluster import KafkaCluster
    from kgitops.cluster.kafka.localsecrets import KEY_PASSWORD_VAR

    assert isinstance(cluster, KafkaCluster)
    print(f"  PLAINTEXT:      {cluster.bootstrap}")
    print(f"  SASL_PLAINTEXT: {cluster.sasl_bootstrap} (PLAIN, SCRAM-SHA-512)")
    if cluster.ssl_bootstrap is not None:
        print(f"  SSL:            {cluster.ssl_bootstrap} (CA: {cluster.ca_file})")
    if cluster.mtls_bootstrap is not None:
        print(
            f"  MTLS:           {cluster.mtls_bootstrap} (SSL requiring a client certificate: "
            f"{cluster.client_cert_file}, its key {cluster.client_key_file}, the key's password "
            f"{KEY_PASSWORD_VAR} in the admin credentials)"
        )
    print(f"  admin credentials: {cluster.credentials_path} (source it; the super user)")
    for node in cluster.nodes:
        state = "running" if cluster.running(node) else "stopped"
        rack = f", rack {node.rack}" if node.rack else ""
        print(f"  {node.role} {node.id}{rack}: {state}; log: {cluster.log_path(node)}")


def _one_broker(args: argparse.Namespace) -> int:
    from kgitops.cluster.kafka import localcluster as kc
    from kgitops.cluster.kafka.localprobe import HOST
    from kgitops.errors import KgitopsError

    cluster = kc.load(args.dir)
    if cluster is None:
        raise KgitopsError(
            f"no local Kafka cluster recorded in {args.dir}; start one with: "
            "kgitops local up --kafka"
        )
    node = cluster.node(args.broker_id)
    if args.local_command == "stop-broker":
        how = "killed (SIGKILL)" if args.kill else "stopped"
        if cluster.stop_node(node, kill=args.kill):
            print(f"broker {node.id} {how}")
        else:
            print(f"broker {node.id} was not running")
        return 0
    if cluster.running(node):
        print(f"broker {node.id} already runs")
        return 0
    cluster.start_node(node)
    print(f"broker {node.id} started and unfenced at {HOST}:{node.port}")
    return 0


def _targets(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The Tansu folders and the Kafka folders ``down``/``status`` act on."""
    from kgitops.cluster import local
    from kgitops.cluster.kafka import localcluster as kc

    if args.dir is not None:
        return ([], [args.dir]) if args.kafka else ([args.dir], [args.dir])
    return ([], [kc.DEFAULT_DIR]) if args.kafka else ([local.DEFAULT_DIR], [kc.DEFAULT_DIR])


def _down(args: argparse.Namespace) -> int:
    from kgitops.cluster import local
    from kgitops.cluster.kafka import localcluster as kc

    tansu_dirs, kafka_dirs = _targets(args)
    said = False
    for directory in tansu_dirs:
        if _has(directory, local.STATE_FILE):
            stopped = local.down(directory)
            if stopped is not None:
                print(f"stopped local broker at {stopped.bootstrap} (pid {stopped.pid})")
                said = True
    for directory in kafka_dirs:
        if _has(directory, kc.STATE_FILE):
            cluster = kc.down(directory)
            if cluster is not None:
                print(
                    f"stopped the local Kafka cluster in {directory} "
                    f"({len(cluster.brokers)} broker(s) and the controller); its data is deleted"
                )
                said = True
    if not said:
        print("no local broker running")
    return 0


def _has(directory: str, name: str) -> bool:
    import os

    return os.path.lexists(os.path.join(directory, name))


def _status(args: argparse.Namespace) -> int:
    from kgitops.cluster import local
    from kgitops.cluster.kafka import localcluster as kc

    tansu_dirs, kafka_dirs = _targets(args)
    healthy_any, found = False, False
    for directory in tansu_dirs:
        if not _has(directory, local.STATE_FILE):
            continue
        st = local.status(directory)
        if not st.running:
            continue
        found = True
        health = "answering" if st.healthy else "NOT answering Metadata requests"
        print(f"Tansu running at {st.bootstrap} (pid {st.pid}), {health}; log: {st.log_path}")
        healthy_any = healthy_any or st.healthy
    for directory in kafka_dirs:
        if not _has(directory, kc.STATE_FILE):
            continue
        cluster = kc.load(directory)
        if cluster is None:
            continue
        found = True
        unfenced = cluster.unfenced_brokers()
        running = [n.id for n in cluster.brokers if cluster.running(n)]
        print(
            f"Apache Kafka {cluster.version} in {directory}: {len(running)} of "
            f"{len(cluster.brokers)} broker(s) running, {len(unfenced)} unfenced"
        )
        _print_kafka(cluster)
        healthy_any = healthy_any or bool(unfenced)
    if not found:
        print("not running; start one with: kgitops local up [--kafka]")
        return 1
    return 0 if healthy_any else 1


def _dir_flag(directory: str | None, kafka: bool = False) -> str:
    return "" if directory is None else f" --dir {directory}"
