"""A real Apache Kafka KRaft cluster on 127.0.0.1: one controller and N brokers, each its own
JVM, so stopping a broker with SIGKILL is a real crash (``kgitops local up --kafka``, the
``kafka`` tests and the benchmarks).

Layout of the cluster folder (default ``.kgitops/kafka``, mode 0700):

* ``cluster.json``: Kafka version, cluster id, ports, racks, and per node its pid and the
  process's start time (``/proc/<pid>/stat``). Like the Tansu broker's ``broker.json`` it may
  come from a repository, so a pid is signalled only when its command line is exactly the one
  kgitops runs for that node and its start time is the one recorded;
* ``admin.env``: the super user's SASL name and password, and the password of the client
  key in ``tls/`` (mode 0600), made at ``up``;
* ``nodes/<id>/``: ``server.properties``, ``data/`` and ``node.log``.

Node ids: the controller is 100 (or 1000 with more than 99 brokers is not offered), brokers
1..N. Ports from ``base`` (default 19100): the controller listens on ``base``, broker ``i`` on
``base + i`` (PLAINTEXT), ``base + 50 + i`` (SASL_PLAINTEXT: PLAIN and SCRAM-SHA-512) and
``base + 100 + i`` (SSL, its CA in ``tls/ca.pem``: ``localtls``) and ``base + 150 + i``
(MTLS: SSL that requires a client certificate the CA signed, ``tls/client.pem``). Every node
runs the StandardAuthorizer; the super users are ``User:admin``, ``User:ANONYMOUS`` (the
PLAINTEXT and SSL listeners; the brokers use PLAINTEXT among themselves) and
``User:CN=kgitops-local-client`` (the client certificate's subject, on the MTLS listener),
so access rules are enforced on the SASL listener only. Ready means every broker is unfenced in
DescribeCluster, never a sleep.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kgitops.cluster.kafka import localsecrets
from kgitops.cluster.kafka.localprobe import (
    HOST,
    MTLS_OFFSET,
    SASL_OFFSET,
    SSL_OFFSET,
    alive,
    describe_cluster_ids,
    port_open,
    port_taken,
)
from kgitops.cluster.kafka.localprops import ADMIN_USER, Node, server_properties
from kgitops.cluster.kafka.localsecrets import CREDENTIALS_FILE
from kgitops.cluster.kafka.localtls import (
    CA_FILE,
    CLIENT_CERT,
    CLIENT_KEY,
    KEYSTORE,
    TLS_DIR,
    make_keystore,
)
from kgitops.cluster.kafka.runtime import DEFAULT_VERSION, Runtime, ensure_runtime, run_tool
from kgitops.cluster.local import log_tail, proc_cmdline, proc_start_time, symlinked_folder
from kgitops.cluster.localdefaults import KAFKA_BASE_PORT, KAFKA_BROKERS, KAFKA_DIR
from kgitops.errors import FileRefused, LocalBrokerError
from kgitops.files import read_json, write_atomic, write_private

DEFAULT_DIR = KAFKA_DIR
DEFAULT_BASE_PORT = KAFKA_BASE_PORT
DEFAULT_BROKERS = KAFKA_BROKERS
DEFAULT_RACKS = ("az1", "az2", "az3")
MAX_BROKERS = 49
CONTROLLER_ID = 100
STATE_FILE = "cluster.json"
START_TIMEOUT = 120.0
CONTROLLER_HEAP = "-Xmx192m"
MIN_HEAP_MB, MAX_HEAP_MB = 64, 16384
BROKER_HEAP_MB = 320  # ~9,000 replicas a broker (1,000s of topics) want more: up(broker_heap_mb=)

_JVM = ["-XX:+UseSerialGC", "-Djava.awt.headless=true", "-XX:TieredStopAtLevel=1"]


@dataclass
class KafkaCluster:
    """A cluster folder and what it records; ``start``/``stop`` act on its nodes."""

    directory: str
    version: str
    cluster_id: str
    nodes: list[Node]
    runtime: Runtime | None = field(default=None, repr=False)
    broker_heap_mb: int = BROKER_HEAP_MB  # recorded when not the default

    # ------------------------------------------------------------ addresses

    @property
    def brokers(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "broker"]

    @property
    def controller(self) -> Node:
        return next(n for n in self.nodes if n.role == "controller")

    def node(self, node_id: int) -> Node:
        for n in self.brokers:
            if n.id == node_id:
                return n
        ids = ", ".join(str(n.id) for n in self.brokers)
        raise LocalBrokerError(f"no broker {node_id} in the local Kafka cluster (brokers: {ids})")

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{HOST}:{n.port}" for n in self.brokers)

    @property
    def sasl_bootstrap(self) -> str:
        return ",".join(f"{HOST}:{n.sasl_port}" for n in self.brokers)

    @property
    def ssl_bootstrap(self) -> str | None:
        """The TLS listeners (CA: ``ca_file``); None for a folder made without them."""
        if any(n.ssl_port is None for n in self.brokers):
            return None
        return ",".join(f"{HOST}:{n.ssl_port}" for n in self.brokers)

    @property
    def mtls_bootstrap(self) -> str | None:
        """The listeners that require a client certificate (``client_cert_file``, signed by
        ``ca_file``'s CA); None for a folder made without them."""
        if any(n.mtls_port is None for n in self.brokers):
            return None
        return ",".join(f"{HOST}:{n.mtls_port}" for n in self.brokers)

    @property
    def ca_file(self) -> str:
        return os.path.join(self.directory, TLS_DIR, CA_FILE)

    @property
    def client_cert_file(self) -> str:
        return os.path.join(self.directory, TLS_DIR, CLIENT_CERT)

    @property
    def client_key_file(self) -> str:
        """PKCS#8 PEM, encrypted with ``client_key_password()``."""
        return os.path.join(self.directory, TLS_DIR, CLIENT_KEY)

    def ports(self) -> list[int]:
        return [p for n in self.nodes for p in (n.port, n.sasl_port, n.ssl_port, n.mtls_port) if p]

    @property
    def credentials_path(self) -> str:
        return os.path.join(self.directory, CREDENTIALS_FILE)

    def credentials(self) -> tuple[str, str]:
        """The super user's name and password, from ``admin.env``."""
        return localsecrets.credentials(self.credentials_path)

    def client_key_password(self) -> str:
        """The password of ``client_key_file``, from ``admin.env``."""
        return localsecrets.key_password(self.credentials_path)

    def node_dir(self, node: Node) -> str:
        return os.path.join(self.directory, "nodes", str(node.id))

    def log_path(self, node: Node) -> str:
        return os.path.join(self.node_dir(node), "node.log")

    # ------------------------------------------------------------ processes

    def _runtime(self) -> Runtime:
        if self.runtime is None:
            self.runtime = ensure_runtime(self.version)
        return self.runtime

    def command(self, node: Node) -> list[str]:
        runtime = self._runtime()
        heap = CONTROLLER_HEAP if node.role == "controller" else f"-Xmx{self.broker_heap_mb}m"
        return [
            runtime.java,
            heap,
            *_JVM,
            *runtime.logging_options(),
            "-cp",
            runtime.classpath,
            "kafka.Kafka",
            self.properties_path(node),
        ]

    def properties_path(self, node: Node) -> str:
        return os.path.join(os.path.realpath(self.node_dir(node)), "server.properties")

    def running(self, node: Node) -> bool:
        """Whether the process recorded for ``node`` runs and is that node's JVM: a
        ``kafka.Kafka`` process started on this folder's ``server.properties`` of that node, at
        the start time recorded (whichever kgitops install or Java started it)."""
        self.refresh()
        if node.pid is None or node.pid <= 1 or node.start_time is None:
            return False
        if not alive(node.pid):
            return False
        cmd = proc_cmdline(node.pid)
        return (
            cmd is not None
            and len(cmd) >= 2
            and cmd[-2] == "kafka.Kafka"
            and cmd[-1] == self.properties_path(node)
            and proc_start_time(node.pid) == node.start_time
        )

    def launch(self, node: Node) -> subprocess.Popen[bytes]:
        """Start ``node``'s JVM in its own session (it outlives this process)."""
        self.refresh()
        path = self.log_path(node)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            log = os.fdopen(os.open(path, flags, 0o600), "ab")
        except OSError as exc:
            raise LocalBrokerError(f"cannot open {path}: {exc}") from None
        try:
            proc = subprocess.Popen(
                self.command(node),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=self.node_dir(node),
            )
        except OSError as exc:
            raise LocalBrokerError(f"cannot run java: {exc}") from None
        finally:
            log.close()
        node.pid = proc.pid
        node.start_time = proc_start_time(proc.pid)
        self.save()
        return proc

    def stop_node(self, node: Node, *, kill: bool = False, timeout: float = 30.0) -> bool:
        """SIGKILL (a crash) or SIGTERM (a controlled shutdown, waited for). False when the
        node was not running."""
        if not self.running(node):
            return False
        assert node.pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(node.pid, signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while alive(node.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive(node.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(node.pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while alive(node.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        node.pid = node.start_time = None
        self.save()
        return True

    def start_node(self, node: Node, timeout: float = START_TIMEOUT) -> None:
        """Start a stopped broker on its data and wait until it is unfenced again."""
        if self.running(node):
            return
        proc = self.launch(node)
        self.wait_ready(timeout, procs={node.id: proc})

    def wait_ready(
        self,
        timeout: float = START_TIMEOUT,
        procs: dict[int, subprocess.Popen[bytes]] | None = None,
    ) -> float:
        """Wait until DescribeCluster lists every running broker (unfenced); the seconds it took."""
        started = time.monotonic()
        deadline = started + timeout
        wanted = {n.id for n in self.brokers if self.running(n)}
        seen: set[int] = set()
        while True:
            for node_id, proc in (procs or {}).items():
                if proc.poll() is not None:
                    node = self._node_any(node_id)
                    raise LocalBrokerError(
                        f"Kafka node {node_id} exited at start (exit code {proc.returncode}); "
                        f"its log ends with: {log_tail(self.log_path(node), 400)}"
                    )
            seen = self.unfenced_brokers()
            if wanted <= seen:
                return time.monotonic() - started
            if time.monotonic() > deadline:
                missing = ", ".join(str(i) for i in sorted(wanted - seen))
                raise LocalBrokerError(
                    f"Kafka broker(s) {missing} not unfenced within {timeout:.0f} s; see "
                    f"{os.path.join(self.directory, 'nodes')}/<id>/node.log"
                )
            time.sleep(0.2)

    def unfenced_brokers(self) -> set[int]:
        """The unfenced broker ids of a DescribeCluster answer; empty when no broker answers.
        kafka-python sends the request to a broker of its choosing, which may be one that has
        just died (the metadata lists it until the controller fences it, about 3 s later): a
        failed request is asked again through the next broker, the brokers twice round."""
        for node in [*self.brokers, *self.brokers]:  # one at a time: a dying one must not stall it
            if port_open(node.port):
                ids = describe_cluster_ids(f"{HOST}:{node.port}")
                if ids:
                    return ids
        return set()

    def _node_any(self, node_id: int) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    # ------------------------------------------------------------ the record

    def refresh(self) -> None:
        """Take each node's pid and start time from ``cluster.json`` as it is now: another
        process (``kgitops local start-broker``, another object over the same folder) may have
        restarted a node since this object read it, and a save from a stale view would leave
        a running JVM unrecorded."""
        try:
            current = load(self.directory)
        except LocalBrokerError:
            return
        if current is None or current.cluster_id != self.cluster_id:
            return
        recorded = {n.id: n for n in current.nodes}
        for node in self.nodes:
            if node.id in recorded:
                node.pid = recorded[node.id].pid
                node.start_time = recorded[node.id].start_time

    def save(self) -> None:
        data: dict[str, Any] = {
            "engine": "kafka",
            "version": self.version,
            "clusterId": self.cluster_id,
            "nodes": [n.to_json() for n in self.nodes],
        }
        if self.broker_heap_mb != BROKER_HEAP_MB:
            data["brokerHeapMb"] = self.broker_heap_mb
        try:
            write_atomic(
                os.path.join(self.directory, STATE_FILE),
                json.dumps(data, indent=2, sort_keys=True) + "\n",
            )
        except (OSError, FileRefused) as exc:
            raise LocalBrokerError(
                f"cannot record the cluster in {self.directory}: {exc}"
            ) from None


# ---------------------------------------------------------------- racks


def _racks(brokers: int, racks: Sequence[str] | None) -> list[str | None]:
    if racks is None:
        return [DEFAULT_RACKS[i % len(DEFAULT_RACKS)] for i in range(brokers)]
    if len(racks) == 0:
        return [None] * brokers
    if len(racks) != brokers:
        raise LocalBrokerError(
            f"--racks names {len(racks)} rack(s) for {brokers} broker(s): give one per broker"
        )
    for rack in racks:
        if not rack or not all(c.isalnum() or c in "-_." for c in rack):
            raise LocalBrokerError(
                f"--racks: {rack!r} is not a rack name (letters, digits, '-', '_', '.')"
            )
    return list(racks)


def _cluster_id() -> str:
    """A random cluster id. Like Kafka's ``Uuid.randomUuid``, never one starting with ``-``:
    the formatter's argument parser would read ``-t -x...`` as a missing id (1 start in 64)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cid.startswith("-"):
            return cid


# ---------------------------------------------------------------- up / status / down


def _refuse_symlink(directory: str) -> None:
    """A cluster folder reached through a symlink (a committed ``.kgitops -> /elsewhere``) is
    refused by every subcommand: its data would be written, or deleted, wherever it points."""
    linked = symlinked_folder(directory)
    if linked is not None:
        raise LocalBrokerError(
            f"{linked} is a symlink: the local Kafka cluster's folder {directory} must be a real "
            "folder (remove the link, or pass --dir)"
        )


def load(directory: str = DEFAULT_DIR) -> KafkaCluster | None:
    """The cluster recorded in ``directory``; None when there is none."""
    _refuse_symlink(directory)
    path = os.path.join(directory, STATE_FILE)
    try:
        data = read_json(path)
    except FileNotFoundError:
        return None
    except (FileRefused, OSError) as exc:
        raise LocalBrokerError(f"{path}: unreadable ({exc}); delete it and try again") from None
    try:
        if not isinstance(data, dict) or data.get("engine") != "kafka":
            raise ValueError("not a kgitops Kafka cluster record")
        version, cluster_id = data.get("version"), data.get("clusterId")
        if not isinstance(version, str) or not isinstance(cluster_id, str):
            raise ValueError("no version or cluster id")
        raw_nodes = data.get("nodes")
        if not isinstance(raw_nodes, list) or len(raw_nodes) > MAX_BROKERS + 1:
            raise ValueError("nodes is not a list of at most 50 nodes")
        nodes = [Node.from_json(n) for n in raw_nodes]
        if sum(n.role == "controller" for n in nodes) != 1 or not any(
            n.role == "broker" for n in nodes
        ):
            raise ValueError("one controller and at least one broker expected")
        heap = data.get("brokerHeapMb", BROKER_HEAP_MB)
        if type(heap) is not int or not MIN_HEAP_MB <= heap <= MAX_HEAP_MB:
            raise ValueError(
                f"brokerHeapMb is not a whole number of MB, {MIN_HEAP_MB}-{MAX_HEAP_MB}"
            )
    except ValueError as exc:
        raise LocalBrokerError(f"{path}: {exc}; delete the folder and try again") from None
    return KafkaCluster(directory, version, cluster_id, nodes, broker_heap_mb=heap)


def up(
    directory: str = DEFAULT_DIR,
    *,
    brokers: int = DEFAULT_BROKERS,
    racks: Sequence[str] | None = None,
    version: str = DEFAULT_VERSION,
    base_port: int = DEFAULT_BASE_PORT,
    timeout: float = START_TIMEOUT,
    settings: Mapping[str, str] | None = None,
    broker_heap_mb: int = BROKER_HEAP_MB,
) -> KafkaCluster:
    """Format (the first time) and start a cluster in ``directory``; wait until every broker
    is unfenced. A cluster already recorded there is started again on its data (and its
    properties: ``settings``, written over every node's defaults, and ``broker_heap_mb``, each
    broker JVM's -Xmx, apply to a new one only)."""
    current = load(directory)
    if current is not None:
        return _restart(current, timeout)
    if not 1 <= brokers <= MAX_BROKERS:
        raise LocalBrokerError(f"--brokers {brokers}: between 1 and {MAX_BROKERS}")
    if not 1024 <= base_port <= 65535 - MTLS_OFFSET - brokers:
        raise LocalBrokerError(
            f"--port {base_port}: a base port between 1024 and {65535 - MTLS_OFFSET - brokers}"
        )
    if not MIN_HEAP_MB <= broker_heap_mb <= MAX_HEAP_MB:
        raise LocalBrokerError(f"broker heap {broker_heap_mb} MB: {MIN_HEAP_MB}-{MAX_HEAP_MB} MB")
    rack_list = _racks(brokers, racks)
    runtime = ensure_runtime(version)
    nodes = [Node(CONTROLLER_ID, "controller", None, base_port)]
    nodes += [
        Node(
            i,
            "broker",
            rack_list[i - 1],
            *(base_port + o + i for o in (0, SASL_OFFSET, SSL_OFFSET, MTLS_OFFSET)),
        )
        for i in range(1, brokers + 1)
    ]
    cluster = KafkaCluster(directory, version, _cluster_id(), nodes, runtime, broker_heap_mb)
    busy = [p for p in cluster.ports() if port_taken(p)]
    if busy:
        raise LocalBrokerError(
            f"port(s) {', '.join(map(str, busy))} on {HOST} already in use; stop what holds "
            "them or choose another base with --port"
        )
    password, key_password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    _prepare(cluster, password, key_password, settings)
    with ThreadPoolExecutor(max_workers=1) as pool:  # keytool's JVMs beside the format's
        keys = pool.submit(make_keystore, cluster.directory, runtime.java, password, key_password)
        _format(cluster, password)
        keys.result()
    cluster.save()
    return _start_all(cluster, timeout)


def _prepare(
    cluster: KafkaCluster,
    password: str,
    key_password: str,
    settings: Mapping[str, str] | None = None,
) -> None:
    tls = os.path.join(os.path.abspath(cluster.directory), TLS_DIR)
    try:
        os.makedirs(cluster.directory, mode=0o700, exist_ok=True)
        os.chmod(cluster.directory, 0o700)
        for node in cluster.nodes:
            os.makedirs(os.path.join(cluster.node_dir(node), "data"), exist_ok=True)
            write_private(
                os.path.join(cluster.node_dir(node), "server.properties"),
                server_properties(
                    node,
                    cluster.controller,
                    len(cluster.brokers),
                    os.path.join(os.path.abspath(cluster.node_dir(node)), "data"),
                    password,
                    os.path.join(tls, KEYSTORE),
                    settings,
                    os.path.join(tls, CA_FILE),
                ),
            )
        write_private(cluster.credentials_path, localsecrets.admin_env(password, key_password))
    except OSError as exc:
        raise LocalBrokerError(f"cannot prepare {cluster.directory}: {exc}") from None


def _format(cluster: KafkaCluster, password: str) -> None:
    """``kafka-storage format`` for every node, in parallel, with the super user's SCRAM
    credential in the bootstrap records."""
    runtime = cluster._runtime()

    def one(node: Node) -> tuple[Node, int, str]:
        command = [
            runtime.java,
            "-Xmx128m",
            *_JVM,
            *runtime.logging_options(),
            "-cp",
            runtime.classpath,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster.cluster_id,
            "-c",
            os.path.join(cluster.node_dir(node), "server.properties"),
            "--add-scram",
            f"SCRAM-SHA-512=[name={ADMIN_USER},password={password}]",
        ]
        late = f"formatting Kafka node {node.id} took over 120 s"
        return (node, *run_tool(command, late, password))

    with ThreadPoolExecutor(max_workers=len(cluster.nodes)) as pool:
        results = list(pool.map(one, cluster.nodes))
    for node, code, last in results:
        if code != 0:
            raise LocalBrokerError(f"formatting Kafka node {node.id} failed: {last}")


def _start_all(cluster: KafkaCluster, timeout: float) -> KafkaCluster:
    procs: dict[int, subprocess.Popen[bytes]] = {}
    try:
        for node in cluster.nodes:
            if not cluster.running(node):
                procs[node.id] = cluster.launch(node)
        cluster.wait_ready(timeout, procs)
    except BaseException:
        for node in cluster.nodes:
            with contextlib.suppress(LocalBrokerError):
                cluster.stop_node(node, kill=True)
        raise
    return cluster


def _restart(cluster: KafkaCluster, timeout: float) -> KafkaCluster:
    return _start_all(cluster, timeout)


def down(directory: str = DEFAULT_DIR, *, keep_data: bool = False) -> KafkaCluster | None:
    """Stop every node this folder records (brokers first, then the controller) and, unless
    ``keep_data``, delete the folder's nodes and record. None when nothing is recorded."""
    cluster = load(directory)
    if cluster is None:
        return None
    for node in [*cluster.brokers, cluster.controller]:
        cluster.stop_node(node, timeout=20.0)
    answering = [p for p in cluster.ports() if port_open(p)]
    if answering:
        raise LocalBrokerError(
            f"something still answers on port(s) {', '.join(map(str, answering))} of the cluster "
            f"recorded in {directory}, and it is no process kgitops recorded there; its data is "
            "kept (stop that process first)"
        )
    if not keep_data:
        import shutil

        for folder in ("nodes", TLS_DIR):
            shutil.rmtree(os.path.join(directory, folder), ignore_errors=True)
        for name in (STATE_FILE, CREDENTIALS_FILE):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, name))
    return cluster
