"""Kafka's own code as the placement referee: random cases through Kafka 3.9's
``AdminUtils.assignReplicasToBrokers`` (and the ZooKeeper-era added-partitions rule on top of
it) in one JVM, compared with ``kgitops.placement.assignment``.

The referee is ``oracle/PlacementOracle.java`` on the classpath of ``oracle/pom.xml``
(``kafka-server-common`` 3.9.1 and the ``kafka-clients`` 3.9.1 it brings; AdminUtils was
removed in Kafka 4.0, so this classpath is never mixed with 4.x jars). ``mvn`` resolves the
classpath and ``javac`` compiles the program once, into
``~/.cache/kgitops/oracle/<sha12 of pom + source>/`` (``$KGITOPS_CACHE_DIR`` moves it).

How kgitops' arguments map onto Kafka's: ``assign_replicas(start_index=s)`` is
``fixedStartIndex = s``. With a separate ``replica_shift=h`` (Kafka's random mode draws the
start index and the shift independently), Kafka uses the start index only modulo the broker
count n and the shift only modulo n - 1 (``replicaIndex``), so the one ``fixedStartIndex`` F
with F = s (mod n) and F = h (mod n - 1) gives the same placement (n and n - 1 are coprime):
F = s' + n * ((h - s') mod (n - 1)) with s' = s mod n. ``rack_aware=False`` is Kafka given the
brokers without racks; ``keep_order=False`` is Kafka given the id-sorted list.

Used by ``test_placement_oracle.py`` (a fixed-seed sample) and ``benchmarks/placement_oracle.py``
(the full count).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgitops.errors import (
    AssignmentError,
    BrokerMetadataError,
    InvalidPartitions,
    InvalidReplicationFactor,
    PlacementOverflow,
)
from kgitops.model import Broker
from kgitops.placement.assignment import (
    INT_MAX,
    MAX_START_INDEX,
    Assignment,
    assign_added_partitions,
    assign_replicas,
)

HERE = Path(__file__).resolve().parent / "oracle"
POM = HERE / "pom.xml"
SOURCE = HERE / "PlacementOracle.java"
MAIN_CLASS = "PlacementOracle"

# kgitops' error classes and the Kafka exception each stands for. An added-partitions refusal
# that kgitops raises as its base AssignmentError (partition 0 missing or without replicas) is
# Kafka's AdminOperationException or Scala's NoSuchElementException (``existing(0).head``).
KAFKA_EXCEPTION = {
    InvalidPartitions: {"InvalidPartitionsException"},
    InvalidReplicationFactor: {"InvalidReplicationFactorException"},
    BrokerMetadataError: {"AdminOperationException"},
    AssignmentError: {"AdminOperationException", "NoSuchElementException"},
    PlacementOverflow: {"IndexOutOfBoundsException", "ArrayIndexOutOfBoundsException"},
}
# The refusals AdminZkClient raises (partition 0 missing: AdminOperationException naming a
# topic the emulation does not have; partition 0 empty: Scala's NoSuchElementException) and
# Kafka's IndexOutOfBoundsException past its 32-bit arithmetic are compared by class; the
# messages of AdminUtils' own checks and of "can only be increased" word for word, but for
# the topic name.


class OracleUnavailable(RuntimeError):
    """java, javac or mvn is missing, or the classpath could not be resolved."""


def cache_root() -> Path:
    explicit = os.environ.get("KGITOPS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kgitops"


def missing_tools() -> list[str]:
    """The tools the referee needs that are not on PATH (java and javac 17+, mvn)."""
    return [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


@dataclass
class Build:
    """Where the compiled referee lives, and what building it cost this time."""

    classes: Path
    classpath: str
    mvn_seconds: float | None = None  # None: the classpath came from the cache
    javac_seconds: float | None = None


def build(*, refresh: bool = False) -> Build:
    """Resolve the 3.9 classpath with mvn and compile the referee, once per pom + source.

    ``refresh`` runs mvn again even when a cached classpath is there (to time it)."""
    missing = missing_tools()
    if missing:
        raise OracleUnavailable(f"{', '.join(missing)} not found (needs Java 17+ and Maven)")
    digest = hashlib.sha256(POM.read_bytes() + b"\0" + SOURCE.read_bytes()).hexdigest()[:12]
    home = cache_root() / "oracle" / digest
    home.mkdir(parents=True, exist_ok=True)
    cp_file = home / "classpath.txt"
    mvn_seconds = None
    classpath = cp_file.read_text().strip() if cp_file.exists() else ""
    if refresh or not classpath or not all(Path(j).exists() for j in classpath.split(os.pathsep)):
        tmp = home / f"classpath.{os.getpid()}.tmp"
        started = time.perf_counter()
        done = subprocess.run(
            ["mvn", "-B", "-q", "-f", str(POM), "dependency:build-classpath",
             "-DincludeScope=runtime", f"-Dmdep.outputFile={tmp}"],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        mvn_seconds = time.perf_counter() - started
        if done.returncode != 0 or not tmp.exists():
            raise OracleUnavailable(f"mvn could not resolve {POM}: {done.stdout[-2000:]}")
        classpath = tmp.read_text().strip()
        os.replace(tmp, cp_file)
    classes = home / "classes"
    javac_seconds = None
    if not (classes / f"{MAIN_CLASS}.class").exists():
        staging = Path(tempfile.mkdtemp(prefix="classes.", dir=home))
        started = time.perf_counter()
        done = subprocess.run(
            ["javac", "-nowarn", "-d", str(staging), "-cp", classpath, str(SOURCE)],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        javac_seconds = time.perf_counter() - started
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise OracleUnavailable(f"javac failed: {done.stderr[-2000:]}")
        try:
            os.rename(staging, classes)
        except OSError:  # another process compiled it first
            shutil.rmtree(staging, ignore_errors=True)
    return Build(classes, classpath, mvn_seconds, javac_seconds)


class Oracle:
    """One JVM running the referee; ``ask`` sends lines and returns one answer per line."""

    def __init__(self, built: Build) -> None:
        self._proc = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-cp",
             f"{built.classes}{os.pathsep}{built.classpath}", MAIN_CLASS],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1 << 16,
        )  # fmt: skip

    def ask(self, lines: Sequence[str]) -> list[str]:
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        failure: list[BaseException] = []

        def feed() -> None:
            try:
                assert proc.stdin is not None
                proc.stdin.write("".join(f"{line}\n" for line in lines) + "\n")
                proc.stdin.flush()
            except BaseException as exc:  # surfaced below
                failure.append(exc)

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        answers = [proc.stdout.readline().rstrip("\n") for _ in lines]
        writer.join()
        if failure or any(not a for a in answers):
            err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
            raise RuntimeError(f"the referee JVM stopped answering: {failure} {err[-2000:]}")
        return answers

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        finally:
            if self._proc.poll() is None:
                self._proc.kill()
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ----------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One placement question, as kgitops is asked it.

    ``kind`` "create": ``assign_replicas(brokers, partitions, rf, start_index, replica_shift,
    start_partition, rack_aware, keep_order)``; "add": ``assign_added_partitions(brokers,
    existing, total, rack_aware)``."""

    kind: str
    brokers: tuple[Broker, ...]
    rack_aware: bool | None = None
    keep_order: bool = False
    partitions: int = 0
    rf: int = 0
    start_index: int = 0
    replica_shift: int | None = None
    start_partition: int = 0
    existing: tuple[tuple[int, tuple[int, ...]], ...] = ()
    total: int = 0
    note: str = field(default="", compare=False)


def fixed_start_index(start_index: int, replica_shift: int | None, n: int) -> int:
    """Kafka's one ``fixedStartIndex`` for kgitops' (start index, replica shift) pair.

    >>> fixed_start_index(2, None, 5), fixed_start_index(2, 3, 5), fixed_start_index(4, 0, 5)
    (2, 7, 4)
    """
    if replica_shift is None or n <= 1:
        return start_index
    s = start_index % n
    return s + n * ((replica_shift - s) % (n - 1))


def _brokers_field(brokers: Iterable[Broker], racks: bool) -> str:
    items = [
        f"{b.id}@{b.rack.encode('utf-8').hex()}" if racks and b.rack is not None else str(b.id)
        for b in brokers
    ]
    return ",".join(items) or "-"


def java_line(case: Case) -> str:
    """The case as the referee reads it (see PlacementOracle.java)."""
    racks = case.rack_aware is not False
    if case.kind == "create":
        given = case.brokers if case.keep_order else sorted(case.brokers, key=lambda b: b.id)
        fixed = fixed_start_index(case.start_index, case.replica_shift, len(case.brokers))
        return (
            f"A {fixed} {case.partitions} {case.rf} {case.start_partition} "
            f"{_brokers_field(given, racks)}"
        )
    existing = "/".join(f"{p}:{'.'.join(map(str, r))}" for p, r in case.existing) or "-"
    return f"N {case.total} {_brokers_field(case.brokers, racks)} {existing}"


def render(assignment: Assignment) -> str:
    return "OK" + "".join(f" {p}:{'.'.join(map(str, assignment[p]))}" for p in sorted(assignment))


def kgitops_answer(case: Case) -> str | AssignmentError:
    """kgitops' placement for the case, rendered as the referee renders Kafka's."""
    try:
        if case.kind == "create":
            result = assign_replicas(
                case.brokers,
                case.partitions,
                case.rf,
                start_index=case.start_index,
                replica_shift=case.replica_shift,
                start_partition=case.start_partition,
                rack_aware=case.rack_aware,
                keep_order=case.keep_order,
            )
        else:
            result = assign_added_partitions(
                case.brokers, dict(case.existing), case.total, rack_aware=case.rack_aware
            )
    except AssignmentError as exc:
        return exc
    return render(result)


def verdict(ours: str | AssignmentError, kafka: str) -> str:
    """How kgitops' answer compares with Kafka's: "placed" (the same placement), "refused"
    (the same refusal: Kafka's exception class, and AdminUtils' own message word for word),
    "beyond-int" (kgitops refuses partition ids past 2^31 - 1, where Kafka answers with
    negative ids or throws) or "mismatch"."""
    if isinstance(ours, str):
        return "placed" if ours == kafka else "mismatch"
    if isinstance(ours, PlacementOverflow) and str(ours).startswith("Partition ids"):
        negative = kafka.startswith("OK") and " -" in kafka
        return "beyond-int" if negative or "IndexOutOfBounds" in kafka else "mismatch"
    if not kafka.startswith("ERR "):
        return "mismatch"
    _, name, message = (kafka + " ").split(" ", 2)
    if name not in KAFKA_EXCEPTION.get(type(ours), set()):
        return "mismatch"
    message = message[:-1]
    if type(ours) in (PlacementOverflow, AssignmentError):
        return "refused"
    return "refused" if message.replace("Topic t ", "Topic ") == str(ours) else "mismatch"


# A rack pool that exercises Java's String order (UTF-16 code units): "az" < "az1" < "b",
# upper case before lower case, the empty rack, and a character outside the BMP, which sorts
# below U+FF21 in UTF-16 but above it by code point.
RACKS = ("az1", "az2", "az3", "az", "b", "B", "rack-10", "rack-9", "", "é", "\uff21", "\U0001f600")


def _broker_ids(rng: random.Random, n: int) -> list[int]:
    style = rng.random()
    if style < 0.3:
        return list(range(n))  # 0..n-1, no gaps
    if style < 0.5:
        return list(range(1, n + 1))
    if style < 0.9:
        return rng.sample(range(3 * n + 10), n)  # gaps
    return rng.sample(range(2**31 - 1), n)  # anywhere in Kafka's int range


def random_brokers(rng: random.Random, n: int) -> tuple[list[Broker], str]:
    """n brokers with gapped ids, racks absent, complete (uneven) or partial."""
    ids = _broker_ids(rng, n)
    mode = rng.random()
    if mode < 0.25 or n == 0:
        return [Broker(i) for i in ids], "no racks"
    k = rng.randint(1, min(len(RACKS), max(1, n)))
    pool = rng.sample(RACKS, k)
    if mode < 0.45:
        racks = [pool[i % k] for i in range(n)]  # round robin: even
    else:
        weights = [rng.random() ** 2 + 0.01 for _ in pool]  # uneven
        racks = rng.choices(pool, weights, k=n)
    brokers = [Broker(i, r) for i, r in zip(ids, racks, strict=True)]
    if mode > 0.95 and n > 1:  # partial rack information: Kafka refuses
        victims = rng.sample(range(n), rng.randint(1, n - 1))
        brokers = [Broker(b.id) if i in victims else b for i, b in enumerate(brokers)]
        return brokers, "partial racks"
    return brokers, "racks"


def _start(rng: random.Random, n: int) -> int:
    roll = rng.random()
    if roll < 0.7:
        return rng.randrange(max(n, 1))
    if roll < 0.95:
        return rng.randrange(4 * n + 5)
    return rng.randrange(MAX_START_INDEX)


def random_case(rng: random.Random) -> Case:
    """A random placement question: brokers with gaps in their ids, racks uneven, absent or
    partial, any start index and shift, start partition, and added partitions."""
    roll = rng.random()
    if roll < 0.015:
        return _near_int_limits(rng)
    n = 0 if roll < 0.02 else rng.choice((1, 2, 3, rng.randint(1, 12), rng.randint(4, 40)))
    brokers, racks = random_brokers(rng, n)
    rng.shuffle(brokers)
    has_rack = any(b.rack is not None for b in brokers)
    rack_aware = rng.choice((None, None, None, False, True if has_rack else None))
    if rng.random() < 0.7:
        return _create_case(rng, tuple(brokers), rack_aware, racks)
    return _add_case(rng, tuple(brokers), rack_aware, racks)


def _create_case(
    rng: random.Random, brokers: tuple[Broker, ...], rack_aware: bool | None, racks: str
) -> Case:
    n = len(brokers)
    partitions = rng.choice((1, rng.randint(1, 3 * n + 5), rng.randint(1, 200)))
    rf = rng.randint(1, max(n, 1))
    if rng.random() < 0.03:  # Kafka's refusals
        partitions, rf = rng.choice(((0, rf), (-3, rf), (partitions, 0), (partitions, n + 1)))
    start = _start(rng, n)
    shift = None if rng.random() < 0.5 else _start(rng, n)
    start_partition = rng.choice((0, 0, -1, rng.randint(0, 3 * n), rng.randint(0, 10**6)))
    return Case(
        "create",
        brokers,
        rack_aware,
        keep_order=rng.random() < 0.3,
        partitions=partitions,
        rf=rf,
        start_index=start,
        replica_shift=shift,
        start_partition=start_partition,
        note=racks,
    )


def _add_case(
    rng: random.Random, brokers: tuple[Broker, ...], rack_aware: bool | None, racks: str
) -> Case:
    n = len(brokers)
    # the topic was created on another broker set (brokers added or removed since), so
    # partition 0's first replica may be no broker of today's list
    then, _ = random_brokers(rng, rng.randint(1, 12))
    if rng.random() < 0.5 and brokers:
        then = list(brokers)
    count = rng.randint(1, 3 * n + 3)
    rf = rng.randint(1, len(then))
    try:
        made = assign_replicas(
            then, count, rf, start_index=_start(rng, len(then)), rack_aware=False
        )
    except AssignmentError:
        made = {p: tuple(rng.sample([b.id for b in then], rf)) for p in range(count)}
    existing = dict(made)
    roll = rng.random()
    total = count + rng.randint(1, 3 * n + 3)
    if roll < 0.1:  # Kafka's refusals, alone and together (its order decides)
        if rng.random() < 0.5:
            existing.pop(0)
        elif rng.random() < 0.5:
            existing[0] = ()
        if rng.random() < 0.5:
            total = rng.randint(0, len(existing))
    elif roll < 0.15 and brokers:  # partition 0 on an id above every broker: start index 0
        existing[0] = (max(b.id for b in brokers) + 1, *existing[0][1:])
    return Case(
        "add",
        brokers,
        rack_aware,
        existing=tuple(sorted(existing.items())),
        total=total,
        note=racks,
    )


def _near_int_limits(rng: random.Random) -> Case:
    """A case at the edge of Kafka's 32-bit arithmetic, on either side of it: partition id +
    start index near 2^31 - 1, or (rack-aware, over 128 racks) replica shift x racks near it."""
    if rng.random() < 0.5:
        n = rng.randint(1, 12)
        brokers, _ = random_brokers(rng, n)
        partitions = rng.randint(1, 3 * n + 2)
        start = rng.randrange(MAX_START_INDEX)
        first = INT_MAX - start - partitions + 1 + rng.randint(-3, 3)
        return Case("create", tuple(brokers), None, partitions=partitions,
                    rf=rng.randint(1, n), start_index=start, start_partition=max(0, first),
                    note="partition id + start index near 2^31")  # fmt: skip
    n = rng.randint(130, 260)
    n_racks = rng.randint(129, n)
    ids = rng.sample(range(3 * n), n)
    brokers = [Broker(i, f"r{k % n_racks:03d}") for k, i in enumerate(ids)]
    # RF 2..4: with most racks unused the walk ends fast; a larger RF can leave one broker
    # that a negative sum never visits, and Kafka then loops up to 2^31 times (see
    # test_placement_oracle.py for that case, on a short negative stretch)
    rf = rng.randint(2, 4)
    partitions = rng.randint(1, 2 * n)
    first = rng.choice((0, rng.randint(0, 5 * n)))
    bumps = sum(1 for p in range(max(first, 1), first + partitions) if p % n == 0)
    start = (INT_MAX - (rf - 1) * (n - 1) + 1) // n_racks - bumps + rng.randint(-2, 30)
    return Case("create", tuple(brokers), None, partitions=partitions, rf=rf,
                start_index=min(start, MAX_START_INDEX - 1), start_partition=first,
                note="replica shift x racks near 2^31")  # fmt: skip


@dataclass
class Outcome:
    cases: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)  # Kafka's exception, by name
    mismatches: list[tuple[Case, str, str]] = field(default_factory=list)  # the first few

    @property
    def mismatch_count(self) -> int:
        return self.verdicts["mismatch"]


def compare(oracle: Oracle, cases: Sequence[Case], outcome: Outcome, keep: int = 20) -> None:
    """Ask Kafka and kgitops every case; count verdicts, keep the first ``keep`` mismatches."""
    kafka = oracle.ask([java_line(c) for c in cases])
    for case, theirs in zip(cases, kafka, strict=True):
        ours = kgitops_answer(case)
        outcome.cases += 1
        found = verdict(ours, theirs)
        outcome.verdicts[found] += 1
        if found == "refused":
            outcome.refusals[theirs.split(" ", 2)[1]] += 1
        if found == "mismatch" and len(outcome.mismatches) < keep:
            shown = ours if isinstance(ours, str) else f"ERR {type(ours).__name__} {ours}"
            outcome.mismatches.append((case, shown, theirs))


def batches(seed: int, count: int, size: int = 5000) -> Iterator[list[Case]]:
    rng = random.Random(seed)
    done = 0
    while done < count:
        batch = [random_case(rng) for _ in range(min(size, count - done))]
        done += len(batch)
        yield batch


def describe(case: Case, ours: str, theirs: str) -> str:
    short = re.sub(r"(\S{200})\S+", r"\1...", f"{case}\n  kgitops: {ours}\n  kafka:   {theirs}")
    return f"{short}\n  referee line: {java_line(case)[:400]}"
