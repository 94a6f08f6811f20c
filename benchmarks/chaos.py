"""Chaos on a real Apache Kafka cluster: a long drain (broker 4), a rebalance back onto it,
a drain of broker 1, while acks=all producers and a consumer group run, with brokers killed
(SIGKILL) and restarted and apply stopped (SIGTERM) at random moments; each phase is planned
and applied again until a plan after it is empty. Not in CI (minutes; one JVM per node).

Starts its own cluster (``kgitops.cluster.kafka.localcluster.up``: 1 controller + 4 brokers
in racks az1,az2,az3,az1, a free base port, a temporary folder; ``down`` at the end), runs
the CLI as a user does (``kgitops plan --out`` then ``kgitops apply --plan``, each a
process), and reports what a platform team asks:

* acknowledged records lost (goal 0): every record a producer saw acknowledged is read back
  with its value, by a group-less consumer reading every partition from the beginning;
* replication throttles left at the end (goal 0), read with DescribeConfigs on every broker
  and topic;
* applies needed to converge, per phase; the time; the faults injected, by kind.

At most one broker is down at a time (RF 3, min.insync.replicas 2: acks=all writes go on);
the controller (one node) is never killed. The faults are shared by the phases (what a phase
that converged early did not use goes to the next); once a phase converges every broker is
started again. Bounded: ``--faults`` faults, ``--minutes`` in all, ``--max-applies`` per
phase. Each apply's output is kept in the temporary folder (``apply-NNN.log``).

    python3 benchmarks/chaos.py [--faults 24] [--seed 1] [--minutes 40] [--max-applies 30]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgitops.cluster.kafka import localcluster, localprobe  # noqa: E402
from kgitops.cluster.kafka.localcluster import KafkaCluster  # noqa: E402

TOPICS = ("chaos.orders", "chaos.payments", "chaos.clicks")
PARTITIONS = 6
FILL_RECORDS = 30_000  # per topic, 200 B each: ~6 MB per topic before the drain
THROTTLE = 250_000
_applies = itertools.count(1)
THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


def value_of(key: bytes) -> bytes:
    """The value written under ``key``: 200 bytes derived from it, so a record read back
    with another value is caught without keeping the values."""
    return (hashlib.sha256(key).hexdigest() * 4)[:200].encode()


def write_folder(folder: Path, bootstrap: str, *, drain: int | None) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "cluster.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Cluster\nname: chaos\n"
        f"bootstrapServers: {bootstrap.split(',')!r}\n"
        "unmanagedTopics: ignore\n"
        f"reassignment: {{throttleBytesPerSec: {THROTTLE}, maxConcurrentMoves: 4, "
        "timeoutSeconds: 1200}\n" + (f"decommission: [{drain}]\n" if drain else "")
    )
    (folder / "topics.yaml").write_text(
        "---\n".join(
            f"apiVersion: kgitops/v1\nkind: Topic\nname: {t}\npartitions: {PARTITIONS}\n"
            "replicationFactor: 3\nconfig: {min.insync.replicas: '2'}\n"
            for t in TOPICS
        )
    )


def kgitops(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgitops", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        check=False,
    )


class Producers:
    """``threads`` kafka-python producers (acks=all), each writing its own keys to every
    topic; ``acked`` holds the keys the cluster acknowledged."""

    def __init__(self, bootstrap: str, threads: int = 2, per_second: int = 150) -> None:
        self.bootstrap = bootstrap.split(",")
        self.acked: set[bytes] = set()
        self.failed = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.per_second = per_second
        self.threads = [
            threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)
        ]

    def _producer(self) -> Any:
        from kafka import KafkaProducer

        return KafkaProducer(
            bootstrap_servers=self.bootstrap,
            acks="all",
            retries=10,
            linger_ms=10,
            request_timeout_ms=10000,
            delivery_timeout_ms=60000,
            max_block_ms=20000,
        )

    def _ok(self, key: bytes, _meta: Any) -> None:
        with self.lock:
            self.acked.add(key)

    def _err(self, _exc: BaseException) -> None:
        with self.lock:
            self.failed += 1

    def fill(self, records: int) -> None:
        producer = self._producer()
        for topic in TOPICS:
            for n in range(records):
                key = f"fill-{topic}-{n:07d}".encode()
                future = producer.send(topic, key=key, value=value_of(key))
                future.add_callback(self._ok, key)
                future.add_errback(self._err)
        producer.flush(120)
        producer.close(30)

    def _run(self, me: int) -> None:
        producer = self._producer()
        n = 0
        while not self.stop.is_set():
            for _ in range(self.per_second // 10):
                key = f"p{me}-{n:08d}".encode()
                try:
                    future = producer.send(TOPICS[n % len(TOPICS)], key=key, value=value_of(key))
                except Exception:  # buffer full or metadata late while a broker is down
                    with self.lock:
                        self.failed += 1
                    continue
                future.add_callback(self._ok, key)
                future.add_errback(self._err)
                n += 1
            self.stop.wait(0.1)
        producer.flush(120)
        producer.close(30)

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(180)


class Group:
    """A consumer group reading all topics and committing, as an application does."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap.split(",")
        self.consumed = 0
        self.errors = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(
            *TOPICS,
            bootstrap_servers=self.bootstrap,
            group_id="chaos-group",
            auto_offset_reset="earliest",
            enable_auto_commit=True,
            auto_commit_interval_ms=1000,
        )
        while not self.stop.is_set():
            try:
                for batch in consumer.poll(timeout_ms=500).values():
                    self.consumed += len(batch)
            except Exception:
                self.errors += 1
                time.sleep(0.5)
        consumer.close()


class Chaos:
    """The fault injector: during a phase (``begin``, ``end``), at random intervals, kills a
    broker (none down), restarts the one down, or sends SIGTERM to the apply running, until
    the phase's ``budget`` of faults is spent; at the end of the phase every broker is
    started again."""

    def __init__(self, cluster: KafkaCluster, rng: random.Random) -> None:
        self.cluster = cluster
        self.rng = rng
        self.budget = 0
        self.faults: Counter[str] = Counter()
        self.log: list[str] = []
        self.apply: subprocess.Popen[str] | None = None
        self.down: int | None = None
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.thread: threading.Thread | None = None

    def begin(self, faults: int) -> None:
        self.budget = sum(self.faults.values()) + faults
        self.stop.clear()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def end(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(300)
        self.heal()

    def spent(self) -> bool:
        return sum(self.faults.values()) >= self.budget

    def _note(self, what: str) -> None:
        self.log.append(f"{time.monotonic() - self.started:7.1f}s {what}")

    def _run(self) -> None:
        while not self.stop.is_set() and not self.spent():
            if self.stop.wait(self.rng.uniform(3.0, 12.0)):
                break
            with self.lock:
                choices = ["restart"] if self.down is not None else ["kill", "kill"]
                apply = self.apply
                if apply is not None and apply.poll() is None:
                    choices.append("sigterm")
                what = self.rng.choice(choices)
                if what == "kill":
                    victim = self.rng.choice([b.id for b in self.cluster.brokers])
                    self.cluster.stop_node(self.cluster.node(victim), kill=True)
                    self.down = victim
                    self._note(f"SIGKILL broker {victim}")
                elif what == "restart" and self.down is not None:
                    self.cluster.start_node(self.cluster.node(self.down))
                    self._note(f"restart broker {self.down}")
                    self.down = None
                elif what == "sigterm" and apply is not None:
                    apply.send_signal(signal.SIGTERM)
                    self._note(f"SIGTERM apply (pid {apply.pid})")
                self.faults[what] += 1
        self.heal()

    def heal(self) -> None:
        with self.lock:
            if self.down is not None:
                self.cluster.start_node(self.cluster.node(self.down))
                self._note(f"restart broker {self.down} (faults spent)")
                self.down = None


def converge(
    folder: Path, chaos: Chaos, rebalance: bool, max_applies: int, deadline: float
) -> tuple[int, list[int], bool]:
    """Plan and apply until a plan is empty: (applies run, their exit codes, converged)."""
    plan_file = folder.parent / "plan.json"
    codes: list[int] = []
    extra = ["--rebalance"] if rebalance else []
    while len(codes) < max_applies and time.monotonic() < deadline:
        plan = kgitops("plan", str(folder), *extra, "--detailed-exitcode", "--out", str(plan_file))
        if plan.returncode == 0 and chaos.down is None:
            return len(codes), codes, True
        if plan.returncode != 2:  # a broker down at planning time: ask again
            time.sleep(2)
            continue
        with chaos.lock:
            chaos.apply = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kgitops",
                    "apply",
                    "--plan",
                    str(plan_file),
                    "--yes",
                    "--poll-interval",
                    "1",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                cwd=ROOT,
            )
            apply = chaos.apply
        try:
            out, _ = apply.communicate(timeout=max(60.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            apply.kill()
            out, _ = apply.communicate()
            print("  apply did not end before the deadline; killed", flush=True)
        with chaos.lock:
            chaos.apply = None
        codes.append(apply.returncode)
        (folder.parent / f"apply-{next(_applies):03d}.log").write_text(out)
        last = [line for line in out.splitlines() if line.startswith(("error", "  NOT"))][:2]
        print(
            f"  apply {len(codes)}: exit {apply.returncode}  {' | '.join(last)}"[:300], flush=True
        )
    return len(codes), codes, False


def throttles_left(cluster: KafkaCluster) -> list[str]:
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap.split(","))
    try:
        resources = [ConfigResource(ConfigResourceType.BROKER, str(b.id)) for b in cluster.brokers]
        resources += [ConfigResource(ConfigResourceType.TOPIC, t) for t in TOPICS]
        answer = admin.describe_configs(resources, config_filter="all")
    finally:
        admin.close()
    left = []
    for kind, by_name in answer.items():
        for name, configs in by_name.items():
            for key in THROTTLE_KEYS:
                entry = configs.get(key)
                if entry is None or entry.get("is_default") or entry.get("config_source") == 5:
                    continue
                if entry.get("value") not in (None, ""):
                    left.append(f"{kind} {name}: {key}={entry['value']}")
    return left


def read_back(bootstrap: str) -> tuple[set[bytes], int, int]:
    """(keys read, records read, records whose value is not the one written)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap.split(","), enable_auto_commit=False, consumer_timeout_ms=1000
    )
    parts = [TopicPartition(t, p) for t in TOPICS for p in range(PARTITIONS)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    keys: set[bytes] = set()
    records = wrong = 0
    deadline = time.monotonic() + 600
    while any(consumer.position(tp) < end[tp] for tp in parts) and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=1000, max_records=5000).values():
            for r in batch:
                records += 1
                keys.add(r.key)
                wrong += r.value != value_of(r.key)
    consumer.close()
    return keys, records, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=40)
    parser.add_argument("--max-applies", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    began = time.monotonic()
    deadline = began + args.minutes * 60
    tmp = Path(tempfile.mkdtemp(prefix="kgitops-chaos-"))
    print(f"each apply's output: {tmp}/apply-NNN.log", flush=True)
    directory = str(tmp / "kafka")
    cluster = localcluster.up(directory, base_port=localprobe.free_base_port(4))
    print(f"cluster up in {time.monotonic() - began:.0f} s at {cluster.bootstrap}", flush=True)
    try:
        folder = tmp / "chaos"
        write_folder(folder, cluster.bootstrap, drain=None)
        created = kgitops("apply", str(folder), "--yes")
        assert created.returncode == 0, created.stdout + created.stderr
        producers = Producers(cluster.bootstrap)
        producers.fill(FILL_RECORDS)
        print(f"filled {len(producers.acked)} records", flush=True)
        group = Group(cluster.bootstrap)
        group.thread.start()
        producers.start()
        chaos = Chaos(cluster, rng)
        phases = []
        plan = (
            ("drain broker 4", 4, False),
            ("rebalance", None, True),
            ("drain broker 1", 1, False),
        )
        for i, (name, drain, rebalance) in enumerate(plan):
            write_folder(folder, cluster.bootstrap, drain=drain)
            t0 = time.monotonic()
            before = sum(chaos.faults.values())
            # what is left of the budget, shared by the phases left
            chaos.begin((args.faults - before) // (len(plan) - i))
            print(f"{name}:", flush=True)
            n, codes, ok = converge(folder, chaos, rebalance, args.max_applies, deadline)
            chaos.end()
            faults = sum(chaos.faults.values()) - before
            phases.append((name, n, codes, ok, time.monotonic() - t0, faults))
        # the faults may have ended after the last apply: converge once more, fault-free
        final_n, final_codes, final_ok = converge(folder, chaos, False, 5, deadline + 600)
        producers.close()
        group.stop.set()
        group.thread.join(30)
        left = throttles_left(cluster)
        status = kgitops("status", str(folder))
        keys, records, wrong = read_back(cluster.bootstrap)
        lost = producers.acked - keys
        total = time.monotonic() - began
        print()
        print(
            f"faults injected: {sum(chaos.faults.values())} ({dict(sorted(chaos.faults.items()))})"
        )
        for line in chaos.log:
            print(f"  {line}")
        for name, n, codes, ok, secs, faults in phases:
            print(
                f"{name}: {'converged' if ok else 'NOT converged'} after {n} apply(ies) "
                f"(exit codes {codes}) in {secs:.0f} s, {faults} fault(s)"
            )
        print(
            f"after the faults: {'converged' if final_ok else 'NOT converged'}, "
            f"{final_n} more apply(ies) (exit codes {final_codes})"
        )
        print(
            f"records acknowledged: {len(producers.acked)}; read back: {records} "
            f"({len(keys)} distinct keys); lost: {len(lost)}; wrong value: {wrong}; "
            f"produce errors (not acknowledged): {producers.failed}"
        )
        print(f"consumer group: {group.consumed} records consumed, {group.errors} poll errors")
        print(f"throttles left: {len(left)}" + (f" {left}" if left else ""))
        print(f"status at the end: exit {status.returncode}: {status.stdout.splitlines()[1:2]}")
        print(f"time: {total:.0f} s")
        return 0 if not lost and not left and final_ok and not wrong else 1
    finally:
        localcluster.down(directory)


if __name__ == "__main__":
    sys.exit(main())
