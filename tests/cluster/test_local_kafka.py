"""`kgitops local up --kafka`: a real Apache Kafka cluster on loopback, its record trusted only
for the processes it started, and one clear line for every way it cannot start."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.kafka import localcluster, localprobe
from kgitops.cluster.kafka.runtime import maven_properties
from kgitops.cluster.local import log_tail


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_a_log_tail_is_the_last_bytes_of_the_log_line_by_line(tmp_path: Path) -> None:
    log = tmp_path / "broker.log"
    log.write_bytes(b"x" * 1000 + b"\n  started  \n\n\xff failed: port taken\n")
    assert log_tail(str(log), 30) == "arted | \ufffd failed: port taken"  # bytes, not lines
    assert log_tail(str(log)) == "x" * 265 + " | started | \ufffd failed: port taken"
    assert log_tail(str(tmp_path / "none.log")) == ""


def test_a_log_tail_stays_within_its_bytes_while_the_broker_still_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Tansu broker that did not turn healthy in time is still running (and logging) when
    its tail is read: what it writes after the tail's start is chosen stays out."""
    from kgitops.cluster import local

    log = tmp_path / "broker.log"
    log.write_bytes(b"starting\n" * 100)

    class Growing:
        """The log opened for reading; the broker appends 1 MB once the tail has sought."""

        def __init__(self, path: str, mode: str) -> None:
            self.f = open(path, mode)  # noqa: SIM115 - closed by __exit__

        def __enter__(self) -> Growing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
            at = self.f.seek(offset, whence)
            if whence == os.SEEK_SET:
                with open(log, "ab") as w:
                    w.write(b"spam\n" * 200_000)
            return at

        def tell(self) -> int:
            return self.f.tell()

        def read(self, size: int = -1) -> bytes:
            return self.f.read(size)

    monkeypatch.setattr(local, "open", Growing, raising=False)
    tail = log_tail(str(log), 30)
    assert tail == "ng | starting | starting | starting"  # its last 30 bytes, no 1 MB more


def test_without_java_one_line_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["local", "up", "--kafka", "--dir", str(tmp_path / "k")]) == 1
    line = _one_error_line(capsys)
    assert "Java 17 or later" in line and "apt-get install openjdk-17-jdk-headless" in line
    assert not (tmp_path / "k").exists()


def test_an_old_java_is_named_with_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["local", "up", "--kafka", "--dir", str(tmp_path / "k")]) == 1
    assert "found Java 11" in _one_error_line(capsys)


def test_without_maven_and_no_cached_jars_one_line_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    java = os.path.realpath(localcluster.ensure_runtime.__globals__["find_java"]())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(java)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("KGITOPS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["local", "up", "--kafka", "--dir", str(tmp_path / "k")]) == 1
    line = _one_error_line(capsys)
    assert "no `mvn` was found" in line and "apt-get install maven" in line


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--brokers", "0"], "--brokers 0: between 1 and 49"),
        (["--brokers", "3", "--racks", "a,b"], "--racks names 2 rack(s) for 3 broker(s)"),
        (["--racks", "a,b;rm,c,d"], "'b;rm' is not a rack name"),
        (["--port", "80"], "--port 80: a base port between 1024"),
        (["--kafka-version", "2.8.0"], "KRaft mode, which needs 3.3 or later"),
        (["--kafka-version", "4.1.2;x"], "a Kafka release such as 4.1.2"),
    ],
)
def test_bad_options_are_one_line_and_start_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert main(["local", "up", "--kafka", "--dir", str(tmp_path / "k"), *args]) == 1
    assert says in _one_error_line(capsys)
    assert not (tmp_path / "k" / localcluster.STATE_FILE).exists()


def test_tansu_refuses_the_kafka_only_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["local", "up", "--brokers", "3", "--dir", str(tmp_path)]) == 1
    assert "--brokers is for a real Kafka cluster: add --kafka" in _one_error_line(capsys)


def test_a_symlinked_cluster_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert main(["local", "up", "--kafka", "--dir", str(tmp_path / "link")]) == 1
    assert "link is a symlink" in _one_error_line(capsys)
    assert list((tmp_path / "real").iterdir()) == []


def test_a_committed_record_never_gets_a_foreign_process_signalled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cluster.json from a repository may name any pid: `down` signals only the JVM kgitops
    started for that node (its exact command line and recorded start time)."""
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = tmp_path / "k"
        folder.mkdir()
        node = {"id": 100, "role": "controller", "rack": None, "port": 19999, "saslPort": None}
        broker = {"id": 1, "role": "broker", "rack": "a", "port": 19998, "saslPort": 19997}
        (folder / localcluster.STATE_FILE).write_text(
            json.dumps(
                {
                    "engine": "kafka",
                    "version": "4.1.2",
                    "clusterId": "x",
                    "nodes": [
                        {**node, "pid": victim.pid, "startTime": 1},
                        {**broker, "pid": os.getpid(), "startTime": None},
                    ],
                }
            )
        )
        assert main(["local", "down", "--kafka", "--dir", str(folder)]) == 0
        time.sleep(0.2)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize(
    "nodes",
    [
        3,
        [{"id": 100, "role": "controller", "port": 99999999}],
        [{"id": 1, "role": "broker", "port": 19001, "pid": 99999999999999999999}],
        [{"id": 1, "role": "broker", "port": 19001, "startTime": -1}],
        [{"id": 1, "role": "queen", "port": 19001}],
        [{"id": "1", "role": "broker", "port": 19001}],
    ],
)
def test_a_record_that_is_not_a_cluster_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: object
) -> None:
    record = {"engine": "kafka", "version": "4.1.2", "clusterId": "x", "nodes": nodes}
    (tmp_path / localcluster.STATE_FILE).write_text(json.dumps(record))
    assert main(["local", "status", "--kafka", "--dir", str(tmp_path)]) == 1
    assert "delete the folder and try again" in _one_error_line(capsys)


def test_a_committed_symlink_never_leads_down_to_another_folders_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repository that commits ``.kgitops -> /elsewhere``: no `local` subcommand follows
    it (``down`` would delete the data it points at)."""
    victim = tmp_path / "victim" / "kafka"
    (victim / "nodes" / "1" / "data").mkdir(parents=True)
    (victim / "nodes" / "1" / "data" / "keep").write_text("x")
    node = {"id": 1, "role": "broker", "port": 19001, "saslPort": 19051}
    ctrl = {"id": 100, "role": "controller", "port": 19000}
    (victim / localcluster.STATE_FILE).write_text(
        json.dumps({"engine": "kafka", "version": "4.1.2", "clusterId": "x", "nodes": [ctrl, node]})
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".kgitops").symlink_to(tmp_path / "victim")
    monkeypatch.chdir(repo)
    for argv in (
        ["local", "down"],
        ["local", "down", "--kafka"],
        ["local", "status", "--kafka"],
        ["local", "stop-broker", "1"],
        ["local", "start-broker", "1"],
        ["local", "up", "--kafka"],
    ):
        assert main(argv) == 1, argv
        assert ".kgitops is a symlink" in _one_error_line(capsys)
    assert (victim / "nodes" / "1" / "data" / "keep").exists()
    assert (victim / localcluster.STATE_FILE).exists()


def test_maven_is_told_the_logging_binding_of_each_kafka_line() -> None:
    assert maven_properties("4.1.2") == ["-Dkafka.version=4.1.2", "-Dlog4j2.version=2.25.3"]
    assert maven_properties("4.1.1") == ["-Dkafka.version=4.1.1", "-Dlog4j2.version=2.24.3"]
    assert maven_properties("3.9.1") == ["-Dkafka.version=3.9.1", "-Dkafka.reload4j=true"]


def test_the_session_cluster_runs_every_broker_unfenced_in_its_rack(
    kafka_cluster: localcluster.KafkaCluster,
) -> None:
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap.split(","))
    try:
        answer = admin.describe_cluster()
    finally:
        admin.close()
    # is_fenced: DescribeCluster v2 (Kafka 4); 3.9 lists only unfenced brokers without it
    brokers = {b["broker_id"]: (b["rack"], b.get("is_fenced", False)) for b in answer["brokers"]}
    # each JVM is recognised as its node's (kafka.Kafka on that node's server.properties, at
    # the recorded start time), whichever checkout or install of kgitops asks
    assert all(kafka_cluster.running(n) for n in kafka_cluster.nodes)
    assert brokers == {n.id: (n.rack, False) for n in kafka_cluster.brokers}


def test_status_prints_both_listeners_and_where_the_credentials_are(
    kafka_cluster: localcluster.KafkaCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["local", "status", "--kafka", "--dir", kafka_cluster.directory]) == 0
    out = capsys.readouterr().out
    assert kafka_cluster.bootstrap in out and kafka_cluster.sasl_bootstrap in out
    assert kafka_cluster.credentials_path in out
    _user, password = kafka_cluster.credentials()
    assert password not in out
    if kafka_cluster.mtls_bootstrap is not None or os.environ.get("CI"):
        assert f"MTLS:           {kafka_cluster.mtls_bootstrap} (SSL requiring" in out
        assert kafka_cluster.client_cert_file in out and kafka_cluster.client_key_file in out
        assert kafka_cluster.client_key_password() not in out
    mode = os.stat(kafka_cluster.credentials_path).st_mode
    assert stat.S_IMODE(mode) == 0o600


@pytest.mark.slow
def test_stop_broker_kill_is_a_crash_and_start_broker_brings_it_back(
    kafka_crash_cluster: localcluster.KafkaCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    d = kafka_crash_cluster.directory
    node = kafka_crash_cluster.brokers[-1]
    pid = node.pid
    assert main(["local", "stop-broker", str(node.id), "--kill", "--dir", d]) == 0
    assert f"broker {node.id} killed (SIGKILL)" in capsys.readouterr().out
    assert pid is not None and not localprobe.alive(pid)
    cluster = localcluster.load(d)
    assert cluster is not None
    try:
        # fenced after broker.session.timeout.ms (3 s). An empty answer is no answer (every
        # broker's DescribeCluster failed: the client may pick the dead broker to ask), not
        # a fenced broker: taken for one, it ended the wait before the session timed out
        killed = time.monotonic()
        answered = cluster.unfenced_brokers()
        while (not answered or node.id in answered) and time.monotonic() < killed + 30:
            time.sleep(0.5)
            answered = cluster.unfenced_brokers()
        waited = time.monotonic() - killed
        controller_log = log_tail(cluster.log_path(cluster.controller), 4000)
        assert answered, f"no broker answered DescribeCluster in {waited:.1f} s"
        assert node.id not in answered, (
            f"still unfenced after {waited:.1f} s: {answered}; controller: {controller_log}"
        )
    finally:  # a failure here must not leave the next tests' cluster a broker short
        if not kafka_crash_cluster.running(node):
            assert main(["local", "start-broker", str(node.id), "--dir", d]) == 0
    assert "started and unfenced" in capsys.readouterr().out
    # the fixture's own view of the folder follows what another process recorded: a save
    # from it can never leave the restarted JVM unrecorded (down would then not stop it)
    assert kafka_crash_cluster.running(node)
    cluster = localcluster.load(d)
    assert cluster is not None
    assert cluster.unfenced_brokers() == {n.id for n in cluster.brokers}


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-storage's parser reads ``-t -x...`` as a missing id: CI met one (1 start in 64)."""
    import uuid

    dashed = uuid.UUID(bytes=b"\xfb" + bytes(15))  # urlsafe base64 '-' first
    fresh = iter([dashed, uuid.UUID(bytes=bytes(16))])
    monkeypatch.setattr(localcluster.uuid, "uuid4", lambda: next(fresh))
    assert not localcluster._cluster_id().startswith("-")


def test_settings_are_written_last_on_every_node_over_the_test_speed_values() -> None:
    from kgitops.cluster.kafka.localprops import Node, server_properties

    controller = Node(100, "controller", None, 19000)
    broker = Node(1, "broker", "az1", 19001, 19051)
    longer = {"broker.session.timeout.ms": "30000", "broker.heartbeat.interval.ms": "2000"}
    for node in (controller, broker):
        lines = server_properties(node, controller, 1, "/d", "pw", settings=longer).splitlines()
        assert "broker.session.timeout.ms=30000" in lines, node.role
        assert "broker.session.timeout.ms=3000" not in lines
        plain = server_properties(node, controller, 1, "/d", "pw").splitlines()
        assert "broker.session.timeout.ms=3000" in plain
    assert (
        "broker.heartbeat.interval.ms=2000"
        in server_properties(broker, controller, 1, "/d", "pw", settings=longer).splitlines()
    )


def test_a_broker_heap_other_than_the_default_is_recorded_and_read_back(tmp_path: Path) -> None:
    from kgitops.cluster.kafka.localprops import Node
    from kgitops.cluster.kafka.runtime import Runtime

    nodes = [Node(100, "controller", None, 19000), Node(1, "broker", "az1", 19001, 19051)]
    runtime = Runtime("4.1.2", "java", tmp_path)
    big = localcluster.KafkaCluster(str(tmp_path), "4.1.2", "id", nodes, runtime, 1024)
    assert "-Xmx1024m" in big.command(nodes[1]) and "-Xmx1024m" not in big.command(nodes[0])
    big.save()
    again = localcluster.load(str(tmp_path))
    assert again is not None and again.broker_heap_mb == 1024
    localcluster.KafkaCluster(str(tmp_path), "4.1.2", "id", nodes, runtime).save()
    record = json.loads((tmp_path / "cluster.json").read_text())
    assert "brokerHeapMb" not in record  # the default is not written: older records read alike
    loaded = localcluster.load(str(tmp_path))
    assert loaded is not None and loaded.broker_heap_mb == localcluster.BROKER_HEAP_MB
    for bad in (True, "1g", 10, 10**6):
        (tmp_path / "cluster.json").write_text(json.dumps({**record, "brokerHeapMb": bad}))
        with pytest.raises(localcluster.LocalBrokerError, match="brokerHeapMb"):
            localcluster.load(str(tmp_path))


def test_a_free_base_port_keeps_every_port_of_the_cluster_below_the_ephemeral_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an outgoing connection may take a port of the ephemeral range while its broker is
    # stopped, and the broker's restart then cannot bind it (seen in the suite at load 10)
    monkeypatch.setattr(localprobe, "port_taken", lambda port: False)
    for brokers in (1, 4, 9):
        for _ in range(300):
            base = localprobe.free_base_port(brokers)
            assert base >= 20000 and base + localprobe.MTLS_OFFSET + brokers < 32768


def test_the_tls_folder_holds_no_key_of_the_ca_and_a_private_encrypted_client_key(
    kafka_cluster: localcluster.KafkaCluster,
) -> None:
    """What ``up`` leaves in ``tls/``: the CA's certificate (its key deleted once it signed),
    the brokers' keystore, the client's certificate and its key (0600, encrypted PKCS#8)."""
    if kafka_cluster.mtls_bootstrap is None and not os.environ.get("CI"):
        pytest.skip("this Kafka cluster folder was made before the MTLS listener: down, up")
    tls = Path(kafka_cluster.directory) / "tls"
    assert sorted(p.name for p in tls.iterdir()) == [
        "broker.p12", "ca.pem", "client.key", "client.pem"
    ]  # fmt: skip
    assert stat.S_IMODE(os.stat(kafka_cluster.client_key_file).st_mode) == 0o600
    key = Path(kafka_cluster.client_key_file).read_text()
    assert key.startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----\n")
    assert key.endswith("-----END ENCRYPTED PRIVATE KEY-----\n")
    assert kafka_cluster.client_key_password() not in key
    for node in kafka_cluster.brokers:  # one MTLS port a broker, the listener in its properties
        assert node.mtls_port == node.port + localprobe.MTLS_OFFSET
        props = Path(kafka_cluster.properties_path(node)).read_text().splitlines()
        assert "listener.name.mtls.ssl.client.auth=required" in props
        assert "ssl.client.auth=none" in props  # the SSL listener still asks none
        assert (
            f"listener.name.mtls.ssl.truststore.location={os.path.abspath(kafka_cluster.ca_file)}"
            in props
        )
        supers = next(p for p in props if p.startswith("super.users="))
        assert "User:CN=kgitops-local-client" in supers.split("=", 1)[1].split(";")


def test_a_record_made_before_the_mtls_listener_loads_without_it(tmp_path: Path) -> None:
    from kgitops.cluster.kafka.localprops import Node
    from kgitops.cluster.kafka.runtime import Runtime

    nodes = [Node(100, "controller", None, 19000), Node(1, "broker", "az1", 19001, 19051, 19101)]
    localcluster.KafkaCluster(
        str(tmp_path), "4.1.2", "id", nodes, Runtime("4.1.2", "java", tmp_path)
    ).save()
    record = json.loads((tmp_path / "cluster.json").read_text())
    assert record["nodes"][1]["mtlsPort"] is None
    for node in record["nodes"]:
        del node["mtlsPort"]
    (tmp_path / "cluster.json").write_text(json.dumps(record))
    old = localcluster.load(str(tmp_path))
    assert old is not None and old.mtls_bootstrap is None and old.ssl_bootstrap is not None
    assert old.ports() == [19000, 19001, 19051, 19101]


def test_a_keystore_keytool_did_not_write_is_one_line_naming_it(tmp_path: Path) -> None:
    from kgitops.cluster.kafka import der, localtls

    assert der.oid(bytes.fromhex("2a864886f70d010c0a0102")) == "1.2.840.113549.1.12.10.1.2"
    for name, data in (("empty", b""), ("cut", b"\x30\x82\x01"), ("text", b"not a keystore")):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(localcluster.LocalBrokerError) as caught:
            localtls._shrouded_key(str(path))
        assert str(caught.value).startswith(f"cannot read the client's key from {path}: ")
        assert "\n" not in str(caught.value)


def test_the_secrets_are_written_0600_over_a_file_left_with_another_mode(tmp_path: Path) -> None:
    """A folder checked out of git (mode 0644) or left by a failed ``up``: ``open``'s mode
    applies to a new file only, so the new password landed in a world-readable file."""
    from kgitops.cluster.kafka import localsecrets, localtls
    from kgitops.files import write_private

    env, key = tmp_path / "admin.env", tmp_path / "client.key"
    for path in (env, key):
        path.write_text("stale\n")
        path.chmod(0o644)
    write_private(str(env), localsecrets.admin_env("pw-1", "pw-2"))
    localtls._write_key(str(key), b"\x30\x00")
    for path in (env, key):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert "pw-2" in env.read_text() and "stale" not in key.read_text()


def test_unfenced_brokers_asks_again_when_every_broker_failed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kafka-python sends DescribeCluster to a broker of its choosing: right after a broker
    dies (until it is fenced) the metadata still lists it, and about one request in four
    fails on it whichever broker it was bootstrapped from (measured on a local cluster with
    broker 4 killed). One failed round is no answer: the brokers are asked once more."""
    from kgitops.cluster.kafka.localprops import Node

    nodes = [Node(100, "controller", None, 19000)]
    nodes += [Node(i, "broker", "az1", 19000 + i, 19050 + i) for i in (1, 2, 3)]
    cluster = localcluster.KafkaCluster(str(tmp_path), "4.1.2", "id", nodes)
    asked: list[str] = []
    answers = iter([set(), set(), set(), {1, 2, 3}])

    def describe(bootstrap: str) -> set[int]:
        asked.append(bootstrap)
        return next(answers)

    monkeypatch.setattr(localcluster, "port_open", lambda port: True)
    monkeypatch.setattr(localcluster, "describe_cluster_ids", describe)
    assert cluster.unfenced_brokers() == {1, 2, 3}
    assert [b.rsplit(":", 1)[1] for b in asked] == ["19001", "19002", "19003", "19001"]
    answers = iter([set()] * 6)
    assert cluster.unfenced_brokers() == set()  # no answer in two rounds: none


def test_the_command_lines_parser_imports_no_launcher() -> None:
    """Every command builds the whole parser, ``local``'s help with its defaults included: they
    come from cluster/localdefaults.py, so no command pays at start-up for the launchers and
    what they import (subprocess, uuid, socket, concurrent.futures, logging)."""
    code = (
        "import sys\n"
        "from kgitops.cli import build_parser\n"
        "build_parser().format_help()\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('kgitops.cluster.')"
        " or m in ('subprocess', 'uuid', 'socket', 'concurrent.futures', 'logging'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["kgitops.cluster.localdefaults"], done.stdout
