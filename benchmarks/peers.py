"""kgitops against its peers on one real Apache Kafka cluster, in one run: each tool's command
run as a process, as its users run it, timed by wall clock, and the ratios printed.

Set-up (all inside the benchmark): a real Kafka 4.1.2 cluster of its own
(``kgitops.cluster.kafka.localcluster``: 1 controller + 4 brokers, one rack each, so every
explicit assignment below is rack-valid; a free base port, a temporary folder; ``down`` at
the end, also on an error, Ctrl-C or SIGTERM);
topicctl built by ``go install github.com/segmentio/topicctl/cmd/topicctl@v1.23.1`` into a
benchmark-owned GOBIN (``~/.cache/kgitops/peers/bin``, kept between runs); Kafka's own tools
from the same jars as the brokers (``ensure_runtime``), run with kafka-run-class.sh's JVM
options. Without ``go``, or when the install fails, the output says so and topicctl's rows
say it did not run.

The peers:

* ``kgitops``: ``kgitops apply DIR --yes`` and ``kgitops plan DIR``;
* topicctl: ``topicctl apply`` (static placement), ``topicctl rebalance --to-remove``,
  ``topicctl apply --dry-run``, all with ``--sleep-loop-duration`` at the benchmark's poll
  interval (topicctl's default 10 s sleeps 2 s after each new topic);
* Kafka's own ``kafka-topics --create`` (one JVM per topic, ``--replica-assignment``) and
  ``kafka-reassign-partitions`` (``--generate``, ``--execute``, then ``--verify`` until done);
* kafka-python's ``KafkaAdminClient.create_topics``, one topic per call.

The steps (each tool on its own topics, same shapes, same explicit assignments):

1. create N topics (3 partitions, RF 3, an explicit assignment, ``retention.ms`` 1 day).
   The tools that create one topic at a time (``kafka-topics``: a JVM each; topicctl: a
   placement check and a leader check each) are timed on a sample of ``--sample`` topics and
   the time extrapolated to N, printed as such; ``--all`` times every topic. The rest of
   their topics are then created untimed in one batch, so every tool's set is complete;
2. drain broker 4 of data (``--data-mb`` per tool, produced untimed before the step into
   ``--data-topics`` topics of 6 partitions, RF 3, the same assignment for each tool, broker
   4 holding 3 of every 4 partitions): ``kgitops apply`` with ``decommission: [4]`` vs
   ``kafka-reassign-partitions`` with a plan from ``--generate`` over brokers 1-3 vs
   ``topicctl rebalance --to-remove 4``, each throttled at ``--throttle-mb``. Bytes moved
   are computed from the partition sizes (DescribeLogDirs) and the replica sets before and
   after; the result is read back with kafka-python (no replica of the tool's topics left on
   broker 4, every replica in sync);
3. re-plan with nothing to do: ``kgitops plan`` vs ``topicctl apply --dry-run`` over the N
   topics of step 1 (run right after step 1, before the data of step 2 exists).

Wall time is what a user waits (the brokers' work included); CPU is user + system time of
the tool's own processes (``RUSAGE_CHILDREN``), steadier on a shared machine. Requests:
kgitops and kafka-python processes count every request on the wire (a hook on
kafka-python's connection, connection set-up included); kgitops apply's own report (set-up
aside) is shown beside it. The JVM and Go tools' requests are not counted ("—").

    python3 benchmarks/peers.py [--quick] [--topics 1000] [--sample 20] [--all]
        [--data-mb 240] [--throttle-mb 120] [--poll-interval 1] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOPICCTL_MODULE = "github.com/segmentio/topicctl"
TOPICCTL_VERSION = "v1.23.1"
BROKERS = 4
RACKS = ("az1", "az2", "az3", "az4")  # one per broker: every explicit assignment is rack-valid
DRAIN_BROKER = 4
RF = 3
DATA_PARTITIONS = 6
RETENTION_MS = 86_400_000
CLUSTER_NAME = "peers"
VALUE_BYTES = 100_000
# kafka-run-class.sh's defaults (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS): what
# `kafka-topics.sh` and `kafka-reassign-partitions.sh` start the JVM with
KAFKA_RUN_CLASS_JVM = (
    "-Xmx256M",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
)
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
REASSIGN_COMMAND = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
PREFIXES = {"kgitops": "kg", "topicctl": "tc", "kafka-topics": "kt", "kafka-python": "kp"}
DRAINERS = {"kgitops": "kgd", "kafka-reassign-partitions": "krd", "topicctl": "tcd"}

# Run as `python -c COUNTING_MAIN ARGS`: kgitops' own `python -m kgitops ARGS`, with every
# request sent on a kafka-python connection counted by API and written at exit to the file
# named by PEERS_COUNT_FILE.
COUNTING_MAIN = """
import atexit, collections, json, os, runpy, sys
from kafka.net.connection import KafkaConnection
counts = collections.Counter()
_send = KafkaConnection._send_request
def _counting(self, request, *args, **kwargs):
    counts[type(request).__name__.removesuffix("Request")] += 1
    return _send(self, request, *args, **kwargs)
KafkaConnection._send_request = _counting
def _write():
    with open(os.environ["PEERS_COUNT_FILE"], "w") as f:
        json.dump(counts, f)
atexit.register(_write)
sys.argv = ["kgitops", *sys.argv[1:]]
runpy.run_module("kgitops", run_name="__main__", alter_sys=True)
"""


# ------------------------------------------------------------------ pure helpers


def step_assignment(index: int, partitions: int, brokers: int = BROKERS) -> list[list[int]]:
    """The explicit assignment of topic ``index``: partition ``p`` on ``RF`` consecutive
    brokers from ``(index + p) % brokers + 1``, so leaders and replicas rotate over the
    brokers and a topic differs from its neighbour. With one rack per broker (RACKS) every
    partition is in three racks."""
    return [[(index + p + r) % brokers + 1 for r in range(RF)] for p in range(partitions)]


def kgitops_cluster_yaml(
    bootstrap: str, *, throttle: int | None = None, decommission: Sequence[int] = ()
) -> str:
    lines = [
        "apiVersion: kgitops/v1",
        "kind: Cluster",
        f"name: {CLUSTER_NAME}",
        f"bootstrapServers: {json.dumps(bootstrap.split(','))}",
        "unmanagedTopics: ignore",
    ]
    if throttle:
        lines.append(f"reassignment: {{throttleBytesPerSec: {throttle}, timeoutSeconds: 3600}}")
    if decommission:
        lines.append(f"decommission: [{', '.join(map(str, decommission))}]")
    return "\n".join(lines) + "\n"


def kgitops_topic_doc(
    name: str, partitions: int, assignment: list[list[int]] | None, retention_ms: int
) -> str:
    """One Topic document: ``placement: static`` with the assignment when given, else
    kgitops' default placement (an existing topic keeps its live assignment)."""
    doc = (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: {partitions}\n"
        f"replicationFactor: {RF}\n"
    )
    if assignment is not None:
        rows = "".join(f"  - {json.dumps(r)}\n" for r in assignment)
        doc += f"placement: static\nassignment:\n{rows}"
    return doc + f'config:\n  retention.ms: "{retention_ms}"\n'


def topicctl_cluster_yaml(bootstrap: str) -> str:
    """topicctl's cluster config (README, "Clusters"): broker APIs only, no ZooKeeper."""
    addrs = "".join(f"    - {a}\n" for a in bootstrap.split(","))
    return (
        f"meta:\n  name: {CLUSTER_NAME}\n  environment: local\n  region: local\n"
        "  description: kgitops peers benchmark\n"
        f"spec:\n  bootstrapAddrs:\n{addrs}"
    )


def topicctl_topic_yaml(
    name: str, partitions: int, assignment: list[list[int]] | None, retention_ms: int
) -> str:
    """topicctl's topic config (README, "Topics"): ``static`` placement with the assignment
    when given, else ``cross-rack`` (the data topics' replicas are in three racks, and
    ``rebalance`` needs a strategy it can re-place by). ``retentionMinutes`` is the only
    retention topicctl's ``rebalance`` accepts (it compares it with ``retention.ms``)."""
    if retention_ms % 60_000:
        raise ValueError(f"topicctl holds retention in whole minutes, not {retention_ms} ms")
    if assignment is not None:
        if len(assignment) != partitions:
            raise ValueError(f"{name}: {len(assignment)} rows for {partitions} partitions")
        rows = "".join(f"      - {json.dumps(r)}\n" for r in assignment)
        placement = f"    strategy: static\n    staticAssignments:\n{rows}"
    else:
        placement = "    strategy: cross-rack\n"
    return (
        f"meta:\n  name: {name}\n  cluster: {CLUSTER_NAME}\n  environment: local\n"
        f"  region: local\nspec:\n  partitions: {partitions}\n  replicationFactor: {RF}\n"
        f"  retentionMinutes: {retention_ms // 60_000}\n  placement:\n{placement}"
    )


def replica_assignment_arg(assignment: list[list[int]]) -> str:
    """``kafka-topics --replica-assignment``: partitions by commas, replicas by colons."""
    return ",".join(":".join(str(b) for b in row) for row in assignment)


def bytes_moved(
    before: dict[tuple[str, int], list[int]],
    after: dict[tuple[str, int], list[int]],
    sizes: dict[tuple[str, int], int],
) -> tuple[int, int]:
    """(bytes copied, replicas added): every replica in ``after`` that was not in ``before``
    copies its whole partition from the leader."""
    total = added = 0
    for tp, replicas in after.items():
        new = set(replicas) - set(before.get(tp, ()))
        added += len(new)
        total += len(new) * sizes.get(tp, 0)
    return total, added


def parse_generate(text: str) -> dict[str, Any]:
    """The proposed reassignment of ``kafka-reassign-partitions --generate``: the JSON line
    after ``Proposed partition reassignment configuration``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Proposed partition reassignment configuration"):
            for candidate in lines[i + 1 :]:
                if candidate.strip().startswith("{"):
                    value = json.loads(candidate)
                    if not isinstance(value, dict):
                        break
                    return value
    raise ValueError("no proposed reassignment in the --generate output")


_VERIFY = re.compile(r"^Reassignment of partition \S+ is (completed|still in progress)")


def parse_verify(text: str) -> tuple[int, int]:
    """(partitions completed, partitions still in progress) in ``--verify``'s output."""
    done = moving = 0
    for line in text.splitlines():
        match = _VERIFY.match(line.strip())
        if match:
            if match.group(1) == "completed":
                done += 1
            else:
                moving += 1
    return done, moving


_KGITOPS_REQUESTS = re.compile(r"([0-9][0-9,]*) request\(s\) sent to the brokers")


def kgitops_reported_requests(text: str) -> int | None:
    """The request count kgitops apply's report ends with, or None."""
    match = _KGITOPS_REQUESTS.search(text)
    return int(match.group(1).replace(",", "")) if match else None


def ratio(peer: float | None, kgitops: float | None) -> str:
    if peer is None or kgitops is None or kgitops <= 0:
        return "—"
    x = peer / kgitops
    return f"{x:.2f}x" if x < 0.1 else f"{x:.1f}x"


# ------------------------------------------------------------------ running things


@dataclass
class Row:
    tool: str
    seconds: float | None = None
    requests: int | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    cpu: float | None = None  # user + system CPU of the tool's processes, seconds


class Bench:
    def __init__(self, tmp: Path, poll: float) -> None:
        self.tmp = tmp
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.poll = poll
        self._n = 0
        self.cpu = 0.0  # CPU of every process run so far (marks and differences time a row)

    def run(
        self, name: str, argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None
    ) -> tuple[float, subprocess.CompletedProcess[str]]:
        """Run ``argv`` as a process; its wall time; its output kept in logs/NNN-name.log."""
        self._n += 1
        c0 = children_cpu()
        t0 = time.perf_counter()
        proc = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            cwd=self.tmp,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - t0
        self.cpu += children_cpu() - c0
        (self.logs / f"{self._n:03d}-{name}.log").write_text(
            f"$ {' '.join(argv)[:2000]}\nexit {proc.returncode}, {seconds:.2f} s\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
        return seconds, proc

    def kgitops(
        self, name: str, *args: str, timeout: float = 3600
    ) -> tuple[float, Any, Counter[str]]:
        """``kgitops ARGS`` as a process, its wire requests counted (COUNTING_MAIN)."""
        count_file = self.tmp / f"count-{self._n + 1}.json"
        seconds, proc = self.run(
            name,
            [sys.executable, "-c", COUNTING_MAIN, *args],
            timeout=timeout,
            env={"PYTHONPATH": str(ROOT), "PEERS_COUNT_FILE": str(count_file)},
        )
        counts: Counter[str] = Counter()
        if count_file.exists():
            counts = Counter(json.loads(count_file.read_text()))
        return seconds, proc, counts


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tail(proc: subprocess.CompletedProcess[str], lines: int = 3) -> str:
    text = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return " | ".join(text[-lines:])[:400]


def ensure_topicctl(cache: Path) -> tuple[str | None, str]:
    """topicctl at the pinned version in ``cache/bin``: (path or None, how it was had)."""
    binary = cache / "bin" / "topicctl"
    go = shutil.which("go")
    if binary.exists() and go:
        info = subprocess.run([go, "version", "-m", str(binary)], capture_output=True, text=True)
        if f"{TOPICCTL_MODULE}\t{TOPICCTL_VERSION}" in info.stdout:
            return str(binary), f"topicctl {TOPICCTL_VERSION} (cached in {binary.parent})"
    if go is None:
        return None, "go is not installed: topicctl cannot be built, its rows are left out"
    (cache / "bin").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(cache / "bin")}
    target = f"{TOPICCTL_MODULE}/cmd/topicctl@{TOPICCTL_VERSION}"
    print(f"building topicctl: go install {target} (minutes, once)", flush=True)
    first = subprocess.run(
        [go, "install", target], capture_output=True, text=True, env=env, timeout=1800
    )
    if first.returncode == 0:
        return str(binary), f"topicctl {TOPICCTL_VERSION} (go install {target})"
    if "loading deprecation" in first.stderr:
        reason = "it reads the module's version list for a deprecation notice, which was refused"
    else:
        reason = (first.stderr.strip().splitlines() or ["?"])[0][:200]
    # `go install pkg@version` also reads the module's version list to check for a
    # deprecation notice; a proxy that refuses the list refuses the install. The same pinned
    # version, required from a throwaway module, is built without that look-up.
    module = cache / "module"
    module.mkdir(parents=True, exist_ok=True)
    (module / "go.mod").write_text(
        f"module kgitops.local/peers\n\ngo 1.24\n\nrequire {TOPICCTL_MODULE} {TOPICCTL_VERSION}\n"
    )
    flags = " ".join(filter(None, [os.environ.get("GOFLAGS", ""), "-mod=mod"]))
    second = subprocess.run(
        [go, "install", f"{TOPICCTL_MODULE}/cmd/topicctl"],
        capture_output=True,
        text=True,
        env={**env, "GOFLAGS": flags},
        cwd=module,
        timeout=1800,
    )
    if second.returncode == 0 and binary.exists():
        return str(binary), (
            f"topicctl {TOPICCTL_VERSION} (`go install {target}` failed: {reason}; built "
            f"the same version as a requirement of a throwaway module)"
        )
    why = (second.stderr.strip().splitlines() or ["?"])[-1][:200]
    return None, f"topicctl could not be installed ({reason}; then {why}): its rows are left out"


# ------------------------------------------------------------------ cluster reads


# The test cluster's 3 s broker session (kgitops local up --kafka, made to notice a killed
# broker fast) fenced brokers whose heartbeats a machine at load 13 delayed, and CreateTopics
# then failed ("All brokers specified in the manual partition assignment ... are fenced"):
# nothing is killed here, so the brokers get a session 10x as long.
LOADED_MACHINE = {"broker.session.timeout.ms": "30000", "broker.heartbeat.interval.ms": "2000"}
# ~9,000 replicas a broker at 1,000 topics a tool: at the test cluster's 320 MB the brokers
# stopped answering after step 1 (no bootstrap for minutes), so they get 1 GB here
BROKER_HEAP_MB = 1024


def admin_client(bootstrap: str) -> Any:
    from kafka import KafkaAdminClient

    # a cluster holding 12,000 partitions on a loaded machine answers slowly: wait for it
    return KafkaAdminClient(
        bootstrap_servers=bootstrap.split(","), client_id="peers-bench", request_timeout_ms=120_000
    )


def assignments(bootstrap: str, topics: Sequence[str]) -> dict[tuple[str, int], list[int]]:
    admin = admin_client(bootstrap)
    out: dict[tuple[str, int], list[int]] = {}
    try:
        for start in range(0, len(topics), 500):
            for t in admin.describe_topics(list(topics[start : start + 500])):
                for p in t["partitions"]:
                    out[(t["name"], p["partition_index"])] = list(p["replica_nodes"])
    finally:
        admin.close()
    return out


def partition_state(bootstrap: str, topics: Sequence[str]) -> dict[tuple[str, int], dict[str, Any]]:
    admin = admin_client(bootstrap)
    try:
        return {
            (t["name"], p["partition_index"]): p
            for t in admin.describe_topics(list(topics))
            for p in t["partitions"]
        }
    finally:
        admin.close()


def sizes(bootstrap: str, topics: Sequence[str]) -> dict[tuple[str, int], int]:
    """Each partition's size: the largest of its replicas' (DescribeLogDirs on every broker)."""
    wanted = set(topics)
    admin = admin_client(bootstrap)
    out: dict[tuple[str, int], int] = {}
    try:
        for broker in admin.describe_log_dirs(brokers=list(range(1, BROKERS + 1))):
            for log_dir in broker["log_dirs"]:
                for t in log_dir["topics"]:
                    if t["name"] not in wanted:
                        continue
                    for p in t["partitions"]:
                        tp = (t["name"], p["partition_index"])
                        out[tp] = max(out.get(tp, 0), p["partition_size"])
    finally:
        admin.close()
    return out


def create_batch(bootstrap: str, topics: Sequence[tuple[str, list[list[int]]]]) -> None:
    """Untimed set-up: create ``topics`` in batched CreateTopics requests. On a loaded machine
    a broker can drop out of the metadata for a moment (kafka-python then raises
    UnknownBrokerIdError for the cached controller): a fresh client tries again with the
    topics still missing, five times at most."""
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    todo = list(topics)
    for attempt in range(5):
        admin = None
        try:
            admin = admin_client(bootstrap)  # connecting can fail too on a loaded machine
            if attempt:
                listed = set(admin.list_topics())
                todo = [(t, a) for t, a in todo if t not in listed]
            for start in range(0, len(todo), 200):
                admin.create_topics(
                    [
                        NewTopic(
                            name,
                            replica_assignments=dict(enumerate(a)),
                            topic_configs={"retention.ms": str(RETENTION_MS)},
                        )
                        for name, a in todo[start : start + 200]
                    ]
                )
            return
        except KafkaError as exc:
            print(f"  set-up: creating {len(todo)} topics failed ({exc}); again", flush=True)
            time.sleep(2)
        finally:
            if admin is not None:
                admin.close()
    raise SystemExit("set-up: the untimed batch create failed five times")


def wait_for(what: str, check: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        problem = check()
        if not problem:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: {problem}")
        time.sleep(1.0)


def produce(bootstrap: str, topics: Sequence[str], partitions: int, total_bytes: int) -> int:
    """Untimed set-up: ``total_bytes`` of incompressible values spread evenly over every
    partition of ``topics``; returns the bytes acknowledged."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap.split(","),
        acks=1,
        linger_ms=20,
        batch_size=1_000_000,
        max_request_size=1_048_000,
    )
    value = os.urandom(VALUE_BYTES)
    per_partition = max(1, total_bytes // (VALUE_BYTES * len(topics) * partitions))
    futures = []
    for _ in range(per_partition):
        for t in topics:
            for p in range(partitions):
                futures.append(producer.send(t, value=value, partition=p))
        if len(futures) > 2000:
            producer.flush(300)
            futures = [f for f in futures if not f.is_done]
    producer.flush(300)
    producer.close(60)
    return per_partition * len(topics) * partitions * VALUE_BYTES


# ------------------------------------------------------------------ step 1: create


def kafka_python_create_child(spec_file: str) -> None:
    """The kafka-python peer, run as its own process: one CreateTopics call per topic;
    prints its wire requests as JSON. TopicAlreadyExistsError is caught and counted, as a
    careful script does: a KRaft broker that timed out forwarding a CreateTopics to the
    controller sends it again, and the second copy answers it for the topic the first made
    (step 1 reads every topic back on its assignment afterwards)."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError
    from kafka.net.connection import KafkaConnection

    spec = json.loads(Path(spec_file).read_text())
    counts: Counter[str] = Counter()
    send = KafkaConnection._send_request

    def counting(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        counts[type(request).__name__.removesuffix("Request")] += 1
        return send(self, request, *args, **kwargs)

    KafkaConnection._send_request = counting
    client = KafkaAdminClient(bootstrap_servers=spec["bootstrap"].split(","), client_id="naive")
    exists = 0
    for name, assignment in spec["topics"]:
        topic = NewTopic(
            name,
            replica_assignments=dict(enumerate(assignment)),
            topic_configs={"retention.ms": str(spec["retention_ms"])},
        )
        try:
            client.create_topics([topic])
        except TopicAlreadyExistsError:
            exists += 1
    client.close()
    print(json.dumps({"calls": len(spec["topics"]), "exists": exists, "requests": counts}))


def step_create(
    bench: Bench,
    bootstrap: str,
    n: int,
    partitions: int,
    sample: int,
    topicctl: str | None,
    runtime: Any,
) -> list[Row]:
    rows: list[Row] = []
    shapes = {
        tool: [(f"{prefix}.t{i:05d}", step_assignment(i, partitions)) for i in range(n)]
        for tool, prefix in PREFIXES.items()
    }

    # kgitops: one cluster folder, N topic documents, `kgitops apply DIR --yes`
    folder = bench.tmp / "kgitops-create"
    folder.mkdir()
    (folder / "cluster.yaml").write_text(kgitops_cluster_yaml(bootstrap))
    (folder / "topics.yaml").write_text(
        "---\n".join(
            kgitops_topic_doc(t, partitions, a, RETENTION_MS) for t, a in shapes["kgitops"]
        )
    )
    print(f"step 1: kgitops apply ({n} topics)", flush=True)
    mark = bench.cpu
    seconds, proc, counts = bench.kgitops("kgitops-apply-create", "apply", str(folder), "--yes")
    own = kgitops_reported_requests(proc.stdout + proc.stderr)
    rows.append(
        Row(
            "kgitops apply",
            seconds if proc.returncode == 0 else None,
            sum(counts.values()) or None,
            f"exit {proc.returncode}: {tail(proc)}"
            if proc.returncode
            else f"its report: {own} (set-up aside); "
            + ", ".join(f"{k} {v}" for k, v in counts.most_common(4)),
            cpu=bench.cpu - mark,
        )
    )

    # topicctl: one config per topic + the cluster config; `topicctl apply` over the files
    tc_dir = bench.tmp / "topicctl"
    (tc_dir / "topics").mkdir(parents=True)
    (tc_dir / "cluster.yaml").write_text(topicctl_cluster_yaml(bootstrap))
    files = []
    for name, a in shapes["topicctl"]:
        path = tc_dir / "topics" / f"{name}.yaml"
        path.write_text(topicctl_topic_yaml(name, partitions, a, RETENTION_MS))
        files.append(str(path))
    timed = n if sample <= 0 else min(n, sample)
    if topicctl is None:
        rows.append(Row("topicctl apply", note="not run (not installed, see above)"))
        create_batch(bootstrap, shapes["topicctl"])
    else:
        print(f"step 1: topicctl apply ({timed} of {n} topics timed)", flush=True)
        mark = bench.cpu
        seconds, proc = bench.run(
            "topicctl-apply-create",
            [
                topicctl,
                "apply",
                "--skip-confirm",
                "--no-spinner",
                "--sleep-loop-duration",
                f"{bench.poll:g}s",
                "--cluster-config",
                str(tc_dir / "cluster.yaml"),
                *files[:timed],
            ],
            timeout=7200,
        )
        note = "" if timed == n else f"{timed} of {n} timed, extrapolated x{n / timed:.1f}"
        if proc.returncode:
            rows.append(Row("topicctl apply", note=f"exit {proc.returncode}: {tail(proc)}"))
        else:
            cpu = (bench.cpu - mark) * n / timed
            rows.append(Row("topicctl apply", seconds * n / timed, None, note, cpu=cpu))
        create_batch(bootstrap, shapes["topicctl"][timed:])

    # kafka-topics: one JVM per topic
    print(f"step 1: kafka-topics --create ({timed} of {n} topics timed)", flush=True)
    total = 0.0
    failed = ""
    mark = bench.cpu
    for name, a in shapes["kafka-topics"][:timed]:
        seconds, proc = bench.run(
            "kafka-topics-create",
            [
                runtime.java,
                *KAFKA_RUN_CLASS_JVM,
                *runtime.logging_options(),
                "-cp",
                runtime.classpath,
                TOPIC_COMMAND,
                "--bootstrap-server",
                bootstrap,
                "--create",
                "--topic",
                name,
                "--replica-assignment",
                replica_assignment_arg(a),
                "--config",
                f"retention.ms={RETENTION_MS}",
            ],
            timeout=600,
        )
        total += seconds
        if proc.returncode:
            failed = f"exit {proc.returncode}: {tail(proc)}"
            break
    if failed:
        rows.append(Row("kafka-topics --create", note=failed))
    else:
        note = "one JVM per topic"
        if timed != n:
            note += f"; {timed} of {n} timed, extrapolated x{n / timed:.1f}"
        cpu = (bench.cpu - mark) * n / timed
        rows.append(Row("kafka-topics --create", total * n / timed, None, note, cpu=cpu))
    create_batch(bootstrap, shapes["kafka-topics"][timed:])

    # kafka-python, one topic per create_topics call, in its own process
    print(f"step 1: kafka-python one by one ({n} topics)", flush=True)
    spec_file = bench.tmp / "kafka-python.json"
    spec_file.write_text(
        json.dumps(
            {"bootstrap": bootstrap, "retention_ms": RETENTION_MS, "topics": shapes["kafka-python"]}
        )
    )
    mark = bench.cpu
    seconds, proc = bench.run(
        "kafka-python-create",
        [sys.executable, str(Path(__file__).resolve()), "--kafka-python-create", str(spec_file)],
        timeout=3600,
        env={"PYTHONPATH": str(ROOT)},
    )
    if proc.returncode:
        rows.append(Row("kafka-python one by one", note=f"exit {proc.returncode}: {tail(proc)}"))
    else:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        req = Counter(out["requests"])
        rows.append(
            Row(
                "kafka-python one by one",
                seconds,
                sum(req.values()),
                f"{out['calls']} create_topics calls ({out['exists']} answered already-exists); "
                + ", ".join(f"{k} {v}" for k, v in req.most_common(3)),
                cpu=bench.cpu - mark,
            )
        )

    # the result, read back: every topic of every tool, on its explicit assignment
    deadline = time.monotonic() + 600
    for row, shape in zip(rows, shapes.values(), strict=True):
        while True:
            try:
                missing, elsewhere = read_back(bootstrap, shape)
            except Exception as exc:  # a read that timed out: ask again until the deadline
                missing, elsewhere = {f"(not read: {type(exc).__name__})"}, 0
            # a tool that failed left what it left: read once, do not wait for the rest
            if not (missing or elsewhere) or row.seconds is None or time.monotonic() > deadline:
                break
            time.sleep(1.0)
        if missing or elsewhere:
            row.extra["problem"] = (
                f"{len(missing)} topics missing, {elsewhere} partitions elsewhere"
            )
            row.note += f"; READ BACK: {row.extra['problem']}"
            create_batch(bootstrap, [(t, a) for t, a in shape if t in missing])
        else:
            row.note += f"; read back: all {len(shape)} on their assignment"
    return rows


def read_back(bootstrap: str, shape: Sequence[tuple[str, list[list[int]]]]) -> tuple[set[str], int]:
    """(topics missing, partitions not on their assignment) of ``shape``."""
    admin = admin_client(bootstrap)
    try:
        existing = set(admin.list_topics())
    finally:
        admin.close()
    missing = {t for t, _ in shape if t not in existing}
    present = [t for t, _ in shape if t in existing]
    live = assignments(bootstrap, present)
    elsewhere = sum(
        1 for t, a in shape if t in existing for p, r in enumerate(a) if live.get((t, p)) != r
    )
    return missing, elsewhere


# ------------------------------------------------------------------ step 2: drain


@dataclass
class DrainSet:
    tool: str
    topics: list[str]


def check_drained(bootstrap: str, topics: Sequence[str]) -> str:
    state = partition_state(bootstrap, topics)
    on = [tp for tp, p in state.items() if DRAIN_BROKER in p["replica_nodes"]]
    lagging = [tp for tp, p in state.items() if set(p["isr_nodes"]) != set(p["replica_nodes"])]
    if on:
        return f"{len(on)} partitions still have a replica on broker {DRAIN_BROKER}"
    if lagging:
        return f"{len(lagging)} partitions not fully in sync"
    return ""


def drained_check(bootstrap: str, topics: Sequence[str]) -> Any:
    return lambda: check_drained(bootstrap, topics)


def drain_kgitops(bench: Bench, bootstrap: str, ds: DrainSet, throttle: int) -> Row:
    folder = bench.tmp / "kgitops-drain"
    folder.mkdir()
    (folder / "topics.yaml").write_text(
        "---\n".join(kgitops_topic_doc(t, DATA_PARTITIONS, None, RETENTION_MS) for t in ds.topics)
    )
    (folder / "cluster.yaml").write_text(kgitops_cluster_yaml(bootstrap, throttle=throttle))
    _, before, _ = bench.kgitops(
        "kgitops-plan-before-drain", "plan", str(folder), "--detailed-exitcode"
    )
    if before.returncode != 0:
        return Row(
            "kgitops apply",
            note=f"the plan before the drain is not empty (exit {before.returncode})",
        )
    (folder / "cluster.yaml").write_text(
        kgitops_cluster_yaml(bootstrap, throttle=throttle, decommission=[DRAIN_BROKER])
    )
    mark = bench.cpu
    seconds, proc, counts = bench.kgitops(
        "kgitops-apply-drain", "apply", str(folder), "--yes", "--poll-interval", f"{bench.poll:g}"
    )
    if proc.returncode:
        return Row("kgitops apply", note=f"exit {proc.returncode}: {tail(proc)}")
    own = kgitops_reported_requests(proc.stdout + proc.stderr)
    return Row(
        "kgitops apply",
        seconds,
        sum(counts.values()),
        f"`decommission: [{DRAIN_BROKER}]`; its report: {own} requests (set-up aside)",
        cpu=bench.cpu - mark,
    )


def drain_reassign(bench: Bench, bootstrap: str, ds: DrainSet, throttle: int, runtime: Any) -> Row:
    java = [
        runtime.java,
        *KAFKA_RUN_CLASS_JVM,
        *runtime.logging_options(),
        "-cp",
        runtime.classpath,
    ]
    java += [REASSIGN_COMMAND, "--bootstrap-server", bootstrap]
    topics_file = bench.tmp / "reassign-topics.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in ds.topics]}))
    keep = ",".join(str(b) for b in range(1, BROKERS + 1) if b != DRAIN_BROKER)
    mark = bench.cpu
    t0 = time.perf_counter()
    _, gen = bench.run(
        "reassign-generate",
        [
            *java,
            "--generate",
            "--topics-to-move-json-file",
            str(topics_file),
            "--broker-list",
            keep,
        ],
        timeout=600,
    )
    if gen.returncode:
        return Row(
            "kafka-reassign-partitions", note=f"--generate exit {gen.returncode}: {tail(gen)}"
        )
    plan_file = bench.tmp / "reassign-plan.json"
    plan_file.write_text(json.dumps(parse_generate(gen.stdout)))
    _, exe = bench.run(
        "reassign-execute",
        [
            *java,
            "--execute",
            "--reassignment-json-file",
            str(plan_file),
            "--throttle",
            str(throttle),
        ],
        timeout=600,
    )
    if exe.returncode:
        return Row(
            "kafka-reassign-partitions", note=f"--execute exit {exe.returncode}: {tail(exe)}"
        )
    verifies = 0
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline:
        time.sleep(bench.poll)
        _, ver = bench.run(
            "reassign-verify",
            [*java, "--verify", "--reassignment-json-file", str(plan_file)],
            timeout=600,
        )
        verifies += 1
        done, moving = parse_verify(ver.stdout)
        if ver.returncode == 0 and moving == 0 and done > 0:
            return Row(
                "kafka-reassign-partitions",
                time.perf_counter() - t0,
                None,
                f"--generate, --execute, {verifies} x --verify (each a JVM; {bench.poll:g} s "
                "between them)",
                cpu=bench.cpu - mark,
            )
    return Row("kafka-reassign-partitions", note="did not complete within an hour")


def drain_topicctl(bench: Bench, bootstrap: str, ds: DrainSet, throttle: int, topicctl: str) -> Row:
    folder = bench.tmp / "topicctl-drain"
    (folder / "topics").mkdir(parents=True)
    (folder / "cluster.yaml").write_text(topicctl_cluster_yaml(bootstrap))
    for t in ds.topics:
        (folder / "topics" / f"{t}.yaml").write_text(
            topicctl_topic_yaml(t, DATA_PARTITIONS, None, RETENTION_MS)
        )
    mark = bench.cpu
    seconds, proc = bench.run(
        "topicctl-rebalance",
        [
            topicctl,
            "rebalance",
            "--no-spinner",
            "--cluster-config",
            str(folder / "cluster.yaml"),
            "--path-prefix",
            str(folder / "topics"),
            "--to-remove",
            str(DRAIN_BROKER),
            "--broker-throttle-mb",
            str(max(1, throttle // 1_000_000)),
            "--sleep-loop-duration",
            f"{bench.poll:g}s",
        ],
        timeout=7200,
    )
    if proc.returncode:
        return Row("topicctl rebalance", note=f"exit {proc.returncode}: {tail(proc)}")
    text = proc.stdout + proc.stderr
    summary = re.search(
        r"Rebalance complete! (\d+) topics rebalanced successfully, (\d+) topics", text
    )
    said = f"it said {summary.group(1)} ok, {summary.group(2)} with errors" if summary else ""
    failed = sorted(set(re.findall(r"rebalance failed with error: ([^\"]+)", text)))
    return Row(
        "topicctl rebalance",
        seconds,
        None,
        f"--to-remove {DRAIN_BROKER}, partition batch 1 (its default); exit 0; {said}"
        + (f" ({'; '.join(failed)})" if failed else ""),
        cpu=bench.cpu - mark,
    )


def prepare_drain(bootstrap: str, data_topics: int, data_bytes: int) -> list[DrainSet]:
    """Untimed set-up of step 2, run first, on the fresh cluster: each tool's data topics,
    filled and in sync. On a loaded 2-core machine, topics created after step 1's thousands
    were still not readable 10 minutes later, so the data goes in before them."""
    sets = [
        DrainSet(tool, [f"{prefix}.data{i:02d}" for i in range(data_topics)])
        for tool, prefix in DRAINERS.items()
    ]
    create_batch(
        bootstrap,
        [(t, step_assignment(i, DATA_PARTITIONS)) for ds in sets for i, t in enumerate(ds.topics)],
    )
    all_topics = [t for ds in sets for t in ds.topics]
    wait_for("the data topics", lambda: check_in_sync(bootstrap, all_topics), 600)
    print(
        f"step 2 set-up: producing {data_bytes * len(sets) / 1e6:.0f} MB "
        f"({data_bytes / 1e6:.0f} MB per tool)",
        flush=True,
    )
    t0 = time.perf_counter()
    produced = produce(bootstrap, all_topics, DATA_PARTITIONS, data_bytes * len(sets))
    print(f"  produced {produced / 1e6:.0f} MB in {time.perf_counter() - t0:.0f} s", flush=True)
    wait_for("replication of the data", lambda: check_in_sync(bootstrap, all_topics), 600)
    return sets


def step_drain(
    bench: Bench,
    bootstrap: str,
    sets: Sequence[DrainSet],
    throttle: int,
    topicctl: str | None,
    runtime: Any,
) -> list[Row]:
    all_topics = [t for ds in sets for t in ds.topics]
    # the cluster has taken step 1's topics since the set-up: the data must still be in sync
    wait_for("the data topics after step 1", lambda: check_in_sync(bootstrap, all_topics), 600)
    rows = []
    for ds in sets:
        before = assignments(bootstrap, ds.topics)
        size = sizes(bootstrap, ds.topics)
        print(f"step 2: {ds.tool} drains broker {DRAIN_BROKER}", flush=True)
        if ds.tool == "kgitops":
            row = drain_kgitops(bench, bootstrap, ds, throttle)
        elif ds.tool == "kafka-reassign-partitions":
            row = drain_reassign(bench, bootstrap, ds, throttle, runtime)
        elif topicctl is None:
            row = Row("topicctl rebalance", note="not run (not installed, see above)")
        else:
            row = drain_topicctl(bench, bootstrap, ds, throttle, topicctl)
        if row.seconds is not None:
            problem = ""
            try:
                wait_for(f"{ds.tool}'s drain", drained_check(bootstrap, ds.topics), 60)
            except SystemExit as exc:
                problem = str(exc)
            state = partition_state(bootstrap, ds.topics)
            after = {tp: list(p["replica_nodes"]) for tp, p in state.items()}
            moved, added = bytes_moved(before, after, size)
            on_broker = sum(size[tp] for tp, r in before.items() if DRAIN_BROKER in r)
            row.extra.update(
                moved=moved,
                added=added,
                on_broker=on_broker,
                off_preferred=sum(
                    1 for p in state.values() if p["leader_id"] != p["replica_nodes"][0]
                ),
                throttles=throttles_left(bootstrap, ds.topics),
                problem=problem,
            )
        rows.append(row)
    return rows


THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


# DescribeConfigs' ConfigSource of a value set on the topic or on a broker (by number or name)
DYNAMIC_SOURCES = frozenset(
    (
        "1",
        "2",
        "3",
        "TOPIC_CONFIG",
        "DYNAMIC_TOPIC_CONFIG",
        "DYNAMIC_BROKER_CONFIG",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
    )
)


def throttles_left(bootstrap: str, topics: Sequence[str]) -> int:
    """Replication throttle entries left on the brokers and on ``topics`` (DescribeConfigs)."""
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = admin_client(bootstrap)
    try:
        resources = [
            ConfigResource(ConfigResourceType.BROKER, str(b)) for b in range(1, BROKERS + 1)
        ]
        resources += [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        answer = admin.describe_configs(resources, config_filter="all")
    finally:
        admin.close()
    left = 0
    for by_name in answer.values():
        for configs in by_name.values():
            for key in THROTTLE_KEYS:
                entry = configs.get(key)
                if entry is not None and str(entry.get("config_source")) in DYNAMIC_SOURCES:
                    left += entry.get("value") not in (None, "")
    return left


def check_in_sync(bootstrap: str, topics: Sequence[str]) -> str:
    try:
        state = partition_state(bootstrap, topics)
    except Exception as exc:  # a topic not yet known to the broker asked
        return f"not readable yet ({type(exc).__name__})"
    if len(state) != len(topics) * DATA_PARTITIONS:
        return f"{len(state)} of {len(topics) * DATA_PARTITIONS} partitions known"
    lagging = [tp for tp, p in state.items() if set(p["isr_nodes"]) != set(p["replica_nodes"])]
    return f"{len(lagging)} partitions not fully in sync" if lagging else ""


# ------------------------------------------------------------------ step 3: re-plan


def step_replan(bench: Bench, n: int, topicctl: str | None) -> list[Row]:
    rows = []
    print("step 3: kgitops plan (nothing to do)", flush=True)
    mark = bench.cpu
    seconds, proc, counts = bench.kgitops(
        "kgitops-plan-empty", "plan", str(bench.tmp / "kgitops-create"), "--detailed-exitcode"
    )
    if proc.returncode == 0:
        rows.append(
            Row(
                "kgitops plan",
                seconds,
                sum(counts.values()),
                "exit 0 (no changes); " + ", ".join(f"{k} {v}" for k, v in counts.most_common(4)),
                cpu=bench.cpu - mark,
            )
        )
    else:
        rows.append(Row("kgitops plan", note=f"exit {proc.returncode} (expected 0): {tail(proc)}"))
    if topicctl is None:
        rows.append(Row("topicctl apply --dry-run", note="not run (not installed, see above)"))
    else:
        print("step 3: topicctl apply --dry-run (nothing to do)", flush=True)
        tc_dir = bench.tmp / "topicctl"
        files = sorted(str(p) for p in (tc_dir / "topics").glob("*.yaml"))
        mark = bench.cpu
        seconds, proc = bench.run(
            "topicctl-dry-run",
            [
                topicctl,
                "apply",
                "--dry-run",
                "--skip-confirm",
                "--no-spinner",
                "--sleep-loop-duration",
                f"{bench.poll:g}s",
                "--cluster-config",
                str(tc_dir / "cluster.yaml"),
                *files,
            ],
            timeout=7200,
        )
        changes = len(re.findall(r"Would ", proc.stdout + proc.stderr))
        if proc.returncode:
            rows.append(
                Row("topicctl apply --dry-run", note=f"exit {proc.returncode}: {tail(proc)}")
            )
        else:
            rows.append(
                Row(
                    "topicctl apply --dry-run",
                    seconds,
                    None,
                    f"{len(files)} topic configs; {changes} 'Would ...' lines",
                    cpu=bench.cpu - mark,
                )
            )
    rows.append(Row("kafka-topics", note="cannot: no desired state to compare with"))
    rows.append(Row("kafka-python", note="cannot: no desired state to compare with"))
    return rows


# ------------------------------------------------------------------ report


def table(title: str, rows: Sequence[Row], *, extra: str = "") -> None:
    print(f"\n{title}")
    base = rows[0]
    print(
        f"  {'tool':26} {'wall':>8} {'CPU':>8} {'requests':>8}   {'÷ kgitops: wall':>15} "
        f"{'CPU':>6} {'req':>6}  note"
    )
    for row in rows:
        secs = f"{row.seconds:7.1f}s" if row.seconds is not None else f"{'—':>8}"
        cpu = f"{row.cpu:7.1f}s" if row.cpu is not None and row.seconds is not None else f"{'—':>8}"
        req = f"{row.requests:8,}" if row.requests is not None else f"{'—':>8}"
        r_time = ratio(row.seconds, base.seconds) if row is not base else ""
        r_cpu = ratio(row.cpu, base.cpu) if row is not base and row.seconds is not None else ""
        r_req = ratio(row.requests, base.requests) if row is not base else ""
        print(
            f"  {row.tool:26} {secs} {cpu} {req}   {r_time:>15} {r_cpu:>6} {r_req:>6}  {row.note}"
        )
        if "moved" in row.extra:
            x = row.extra
            print(
                f"  {'':28} moved {x['moved'] / 1e6:.1f} MB ({x['added']} replicas added; "
                f"{x['on_broker'] / 1e6:.1f} MB was on broker {DRAIN_BROKER}); "
                f"{x['off_preferred']} partitions not led by their first replica; "
                f"{x['throttles']} throttle entries left; "
                + (
                    f"CHECK FAILED: {x['problem']}"
                    if x["problem"]
                    else f"checked: no replica on broker {DRAIN_BROKER}, all in sync"
                )
            )
    if extra:
        print(f"  {extra}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 topics, sample 5, 16 MB per drain")
    parser.add_argument("--topics", type=int, help="topics per tool in steps 1 and 3 (1000)")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--sample", type=int, help="topics timed for the one-at-a-time peers (20)")
    parser.add_argument("--all", action="store_true", help="time every topic, extrapolate nothing")
    parser.add_argument("--data-mb", type=float, help="MB produced per tool for the drain (240)")
    parser.add_argument("--data-topics", type=int, help="data topics per tool (4)")
    parser.add_argument("--throttle-mb", type=int, default=120, help="MB/s, every tool (120)")
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="keep the logs folder")
    parser.add_argument("--kafka-python-create", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kafka_python_create:
        kafka_python_create_child(args.kafka_python_create)
        return 0
    n = args.topics or (50 if args.quick else 1000)
    sample = 0 if args.all else (args.sample or (5 if args.quick else 20))
    data_mb = args.data_mb or (16 if args.quick else 240)
    data_topics = args.data_topics or (2 if args.quick else 4)
    throttle = args.throttle_mb * 1_000_000

    from kgitops.cluster.kafka import localcluster, localprobe
    from kgitops.cluster.kafka.runtime import cache_dir, ensure_runtime

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    began = time.monotonic()
    load0 = os.getloadavg()
    runtime = ensure_runtime()
    topicctl, how = ensure_topicctl(cache_dir() / "peers")
    print(how, flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="kgitops-peers-"))
    directory = str(tmp / "kafka")
    bench = Bench(tmp, args.poll_interval)
    ok = False
    try:
        cluster = localcluster.up(
            directory,
            brokers=BROKERS,
            racks=RACKS,
            base_port=localprobe.free_base_port(BROKERS),
            settings=LOADED_MACHINE,
            broker_heap_mb=BROKER_HEAP_MB,
        )
        print(
            f"cluster up in {time.monotonic() - began:.0f} s at {cluster.bootstrap}; "
            f"logs in {bench.logs}",
            flush=True,
        )
        bootstrap = cluster.bootstrap
        sets = prepare_drain(bootstrap, data_topics, int(data_mb * 1e6))
        create = step_create(bench, bootstrap, n, args.partitions, sample, topicctl, runtime)
        replan = step_replan(bench, n, topicctl)
        # steps 1 and 3 are printed before step 2 runs: a drain that fails on a loaded
        # machine does not take their figures with it
        table(
            f"step 1: create {n:,} topics ({args.partitions} partitions, RF {RF}, an explicit "
            "assignment, retention.ms 1 day) -- every topic read back on its assignment",
            create,
        )
        table(f"step 3: re-plan {n:,} topics with nothing to do", replan)
        drain = step_drain(bench, bootstrap, sets, throttle, topicctl, runtime)
        load1 = os.getloadavg()
        print(
            f"\nkgitops and its peers on one real Kafka {runtime.version} cluster "
            f"({BROKERS} brokers, racks {','.join(RACKS)}), {os.cpu_count()} cores; "
            f"load average {load0[0]:.1f} at the start, "
            f"{load1[0]:.1f} at the end; {how}"
        )
        table(
            f"step 2: drain broker {DRAIN_BROKER}: {data_topics} topics x {DATA_PARTITIONS} "
            f"partitions, RF {RF}, {data_mb:g} MB per tool, throttle {args.throttle_mb} MB/s, "
            f"poll {args.poll_interval:g} s",
            drain,
        )
        print(f"\ntime: {time.monotonic() - began:.0f} s in all")
        # the benchmark fails when kgitops' own results do not check out, not a peer's
        ok = all(r.extra.get("problem", "") == "" for r in drain[:1] + create[:1]) and all(
            r.seconds is not None for r in (create[0], drain[0], replan[0])
        )
        return 0 if ok else 1
    finally:
        try:  # a failed run keeps the nodes' logs and data beside the tools' logs
            localcluster.down(directory, keep_data=not ok)
        except Exception as exc:  # say it, and still say where the logs are
            print(f"could not take the cluster down ({exc}): see {directory}")
        finally:
            if ok and not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                print(f"logs kept in {bench.logs} (the brokers' in {directory}/nodes)")


if __name__ == "__main__":
    sys.exit(main())
