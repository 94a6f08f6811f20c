"""The Spark side of the key analysis: the session, reading the sample, running the
transforms, and bringing back only aggregates. Every Spark or Py4J failure becomes an
``AnalyticsError`` here; nothing above this module sees a pyspark exception.

The driver never holds keys: it collects one row per (partition count, partition) and the
top-N hot keys, so its memory does not grow with the input. The same code runs on
``local[*]``, a ``local-cluster`` or a real cluster (``--master``, or ``spark-submit``, where
the active session is reused).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kgitops.analytics import javaudf, transforms
from kgitops.analytics.kafkasource import REDACTION_REGEX, TopicSource, read_topic
from kgitops.analytics.progress import Say, silent, task_counter
from kgitops.analytics.report import HotKey, LoadRow
from kgitops.errors import AnalyticsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Format = Literal["parquet", "csv", "json"]
EngineChoice = Literal["auto", "java", "arrow", "builtin"]


_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex{short}
"""


@dataclass(frozen=True)
class JobSpec:
    """What to analyse. ``base`` is the count moves are measured from (the current one).
    With ``source`` the keys come from a live topic (``input`` names it) instead of a file."""

    input: str
    counts: tuple[int, ...]
    key_column: str = "key"
    size_column: str | None = None
    fmt: Format | None = None
    base: int | None = None
    top: int = 10
    engine: EngineChoice = "auto"
    source: TopicSource | None = None


@dataclass(frozen=True)
class JobResult:
    rows: tuple[LoadRow, ...]
    hot: tuple[HotKey, ...]
    engine: str
    sizes: bool
    notes: tuple[str, ...] = field(default=())


def require_spark() -> None:
    """Raise AnalyticsError when pyspark or a Java runtime is missing, before any JVM starts."""
    if javaudf.pyspark_home() is None:
        raise AnalyticsError(
            "the key analysis needs pyspark: pip install 'kgitops[spark]' (pyspark, pyarrow)"
        )
    java_home = os.environ.get("JAVA_HOME")
    has_java = bool(java_home and (Path(java_home) / "bin" / "java").is_file())
    if not has_java and shutil.which("java") is None:
        raise AnalyticsError(
            "the key analysis needs a Java 17+ runtime for Spark: install a JDK "
            "(java on PATH or JAVA_HOME)"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    if "Traceback (most recent call last)" in text:  # a Python worker's failure: its last line
        tail = [line.strip() for line in text.splitlines() if line.strip()]
        return tail[-1][:500] if tail else type(exc).__name__
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("JVM stacktrace", "at ", "Traceback")):
            return line[:500]
    return type(exc).__name__


@contextlib.contextmanager
def spark_errors(what: str) -> Iterator[None]:
    """Translate whatever Spark, Py4J or Arrow raise into one AnalyticsError line."""
    try:
        yield
    except AnalyticsError:
        raise
    except Exception as exc:
        names = {c.__module__.split(".")[0] for c in type(exc).__mro__}
        if names & {"pyspark", "py4j", "pyarrow"} or isinstance(exc, OSError | RuntimeError):
            raise AnalyticsError(f"{what}: {_first_line(exc)}") from exc
        raise


def _log_config() -> Path | None:
    try:
        path = javaudf.cache_root() / "log4j2-quiet.properties"
        if not path.is_file() or path.read_text() != _LOG4J:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_LOG4J)
        return path
    except OSError:
        return None


def get_session(
    master: str | None = None,
    *,
    jar: Path | None = None,
    extra_jars: Sequence[Path] = (),
    app_name: str = "kgitops-keys",
) -> SparkSession:
    """The active session if there is one (spark-submit, tests), else a new quiet one on
    ``master`` (default ``local[*]``) with the UDF jar and ``extra_jars`` (Spark's Kafka
    source) on ``spark.jars``: local files, never resolved from a repository at run time."""
    require_spark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        # a session kgitops did not start (spark-submit, a notebook) still hides the Kafka
        # source's secrets (the TLS key as PEM text) from its plans and event logs
        with spark_errors("cannot configure Spark"):
            active.conf.set("spark.sql.redaction.options.regex", REDACTION_REGEX)
        return active
    under_submit = master is None and "PYSPARK_GATEWAY_PORT" in os.environ
    resolved = master or ("" if under_submit else "local[*]")
    builder = SparkSession.builder.appName(app_name)
    if resolved:  # under spark-submit its --master stands
        builder = builder.master(resolved)
    builder = builder.config("spark.ui.enabled", "false")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    builder = builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
    # the numpy murmur2 kernel hashes ~3x faster per key in 100k-row batches than in 10k
    builder = builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
    if resolved.startswith("local"):
        # Spark's default of 200 shuffle partitions is for clusters; on one machine a few
        # per core keep the per-task overhead down (AQE coalesces further).
        builder = builder.config("spark.sql.shuffle.partitions", str(4 * (os.cpu_count() or 2)))
    log = _log_config()
    if log is not None:
        opt = f"-Dlog4j2.configurationFile={log.as_uri()}"
        builder = builder.config("spark.driver.extraJavaOptions", opt)
        if resolved.startswith("local"):
            builder = builder.config("spark.executor.extraJavaOptions", opt)
    jars = [str(j) for j in (jar, *extra_jars) if j is not None]
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    builder = builder.config("spark.sql.redaction.options.regex", REDACTION_REGEX)
    with spark_errors("cannot start Spark"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_java_udf(spark: SparkSession, jar: Path) -> bool:
    """Register ``kafka_murmur2`` from the jar; True when it works. A session started
    without the jar on ``spark.jars`` gets it through ``ADD JAR``."""
    from pyspark.sql.types import IntegerType

    def attempt() -> bool:
        try:
            spark.udf.registerJavaFunction(javaudf.FUNCTION_NAME, javaudf.CLASS_NAME, IntegerType())
            row = spark.sql("SELECT kafka_murmur2(cast('21' AS binary))").head()
            return row is not None and row[0] == -973932308  # Kafka's own test vector
        except Exception:
            return False

    if attempt():
        return True
    try:
        spark.sql(f"ADD JAR '{jar}'")
    except Exception:
        return False
    return attempt()


def resolve_engine(spark: SparkSession, choice: EngineChoice) -> tuple[transforms.Engine, str]:
    """The hash engine to use and a note on why; ``auto`` prefers the Java UDF."""
    if choice in ("arrow", "builtin"):
        return choice, ""
    jar = javaudf.udf_jar()
    if jar is not None and register_java_udf(spark, jar):
        return "java", ""
    if choice == "java":
        raise AnalyticsError(
            "the Java murmur2 UDF is not available: no JDK compiler (javac) was found, or "
            "it could not be compiled or loaded; use --engine arrow"
        )
    return "arrow", "no JDK compiler: murmur2 runs on the vectorised Arrow path"


def guess_format(path: str) -> Format:
    """parquet, csv or json from the file name, or from the files inside a local folder."""

    def by_name(name: str) -> Format | None:
        lower = name.lower()
        if lower.endswith((".csv", ".csv.gz", ".tsv")):
            return "csv"
        if lower.endswith((".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz")):
            return "json"
        if lower.endswith(".parquet"):
            return "parquet"
        return None

    found = by_name(path.rstrip("/"))
    if found:
        return found
    local = Path(path[7:] if path.startswith("file://") else path)
    if "://" not in path or path.startswith("file://"):
        with contextlib.suppress(OSError):
            if local.is_dir():
                for child in sorted(local.rglob("*")):
                    if child.is_file() and not child.name.startswith(("_", ".")):
                        f = by_name(child.name)
                        if f:
                            return f
    return "parquet"


def check_input(spec: JobSpec) -> None:
    """Fail early, before a JVM starts, on a local sample that is not there."""
    local = spec.input.removeprefix("file://")
    if spec.source is None and "://" not in local and not Path(local).exists():
        raise AnalyticsError(f"{spec.input}: no such file or directory")
    if not spec.counts or any(n < 1 for n in spec.counts):
        raise AnalyticsError("partition counts must be positive integers")


def read_sample(spark: SparkSession, spec: JobSpec) -> DataFrame:
    """The sample with Spark's own readers (local paths or any Hadoop file system URI)."""
    check_input(spec)
    if spec.source is not None:
        return _read_source(spark, spec.source)
    fmt = spec.fmt or guess_format(spec.input)
    with spark_errors(f"{spec.input}: cannot read the key sample as {fmt}"):
        reader = spark.read
        if fmt == "csv":
            df = reader.option("header", "true").csv(spec.input)
        elif fmt == "json":
            df = reader.json(spec.input)
        else:
            df = reader.parquet(spec.input)
        columns = df.columns
    if "_corrupt_record" in columns and spec.key_column not in columns:
        raise AnalyticsError(f"{spec.input}: not valid {fmt}: every record is corrupt")
    problem = transforms.key_type_problem(df, spec.key_column, spec.size_column)
    if problem:
        raise AnalyticsError(f"{spec.input}: {problem}")
    return df


def _read_source(spark: SparkSession, source: TopicSource) -> DataFrame:
    """The topic through Spark's Kafka source. A session started elsewhere (spark-submit,
    tests) without the source's jars gets them through ``ADD JAR``."""
    what = f"{source.describe()}: cannot read it with Spark's Kafka source"
    with spark_errors(what):
        try:
            return read_topic(spark, source)
        except Exception as exc:
            if "kafka" not in str(exc).lower() or "data source" not in str(exc).lower():
                raise
        from kgitops.analytics.sparkjars import source_jars

        for jar in source_jars().jars:
            spark.sql(f"ADD JAR '{jar}'")
        return read_topic(spark, source)


def _to_positive_mod(h: int, n: int) -> int:
    return (h & 0x7FFFFFFF) % n


def run_job(spark: SparkSession, spec: JobSpec, *, say: Say = silent) -> JobResult:
    """Run the analysis; return only aggregates (O(sum of counts + top) rows). ``say``
    hears what it is doing (one line per stage, then Spark's task counts while it runs)."""
    counts = tuple(dict.fromkeys(spec.counts))
    if not counts or any(n < 1 for n in counts):
        raise AnalyticsError("partition counts must be positive integers")
    base = spec.base if spec.base is not None else counts[0]
    if base not in counts:
        counts = (base, *counts)
    engine, note = resolve_engine(spark, spec.engine)
    raw = read_sample(spark, spec)
    if spec.source is not None:
        src = spec.source
        say(f"reading {len(src.ranges)} partitions of {src.describe()} ({src.records:,} offsets)…")
    else:
        say(f"reading {spec.input}…")
    say(f"hashing keys with murmur2 ({engine}) and counting {len(counts)} partition counts…")
    started = time.monotonic()
    with spark_errors(f"{spec.input}: the key analysis failed"), task_counter(spark, say):
        frame = transforms.analysis(
            transforms.normalize_keys(raw, spec.key_column, spec.size_column),
            counts,
            base,
            spec.top,
            engine,
        )
        collected = frame.collect()
    load = [r for r in collected if r["kind"] == "load"]
    hot = sorted(
        (r for r in collected if r["kind"] == "hot" and r[transforms.KEY] is not None),
        key=lambda r: (-int(r[transforms.MESSAGES]), bytes(r[transforms.KEY])),
    )[: spec.top]
    rows = tuple(
        LoadRow(
            n=int(r["n"]),
            p=None if r["p"] is None else int(r["p"]),
            keys=int(r["keys"]),
            messages=int(r["messages"]),
            bytes=int(r["bytes"] or 0),
            moved_keys=int(r["movedKeys"]),
            moved_messages=int(r["movedMessages"]),
            moved_bytes=int(r["movedBytes"] or 0),
        )
        for r in load
    )
    say(
        f"analysed {sum(r.messages for r in rows if r.n == base):,} messages "
        f"in {time.monotonic() - started:.1f} s"
    )
    hot_keys = tuple(
        HotKey(
            key=bytes(r[transforms.KEY]),
            messages=int(r[transforms.MESSAGES]),
            bytes=int(r[transforms.BYTES] or 0),
            partitions={n: _to_positive_mod(int(r[transforms.HASH]), n) for n in counts},
        )
        for r in hot
    )
    return JobResult(
        rows=rows,
        hot=hot_keys,
        engine=engine,
        sizes=spec.size_column is not None,
        notes=(note,) if note else (),
    )


def counts_of(spec: JobSpec) -> tuple[int, ...]:
    """The counts the report covers: the base first when it was not among the candidates."""
    counts = tuple(dict.fromkeys(spec.counts))
    if spec.base is not None and spec.base not in counts:
        return (spec.base, *counts)
    return counts


def analyze(spec: JobSpec, *, master: str | None = None, say: Say = silent) -> JobResult:
    """Start (or reuse) a session and run the job."""
    check_input(spec)
    require_spark()
    jar = javaudf.udf_jar() if spec.engine in ("auto", "java") else None
    extra: tuple[Path, ...] = ()
    if spec.source is not None:
        from kgitops.analytics.sparkjars import is_cached, source_jars, spark_build

        build = spark_build()
        if not is_cached(build):
            say(f"fetching Spark's Kafka source ({build.artifact()}) from Maven Central…")
        found = source_jars(build)
        if found.version != build.spark:
            say(
                f"note: Spark's Kafka source {found.version} runs on pyspark {build.spark} "
                f"(spark-sql-kafka-0-10_{build.scala} {build.spark} is not on Maven Central)"
            )
        extra = found.jars
    say(f"starting Spark ({master or 'local[*]'})…")
    spark = get_session(master, jar=jar, extra_jars=extra)
    return run_job(spark, spec, say=say)


def job_metadata(spec: JobSpec, result: JobResult) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "input": spec.input,
        "keyColumn": spec.key_column,
        "engine": result.engine,
    }
    if spec.size_column:
        meta["sizeColumn"] = spec.size_column
    if result.notes:
        meta["notes"] = list(result.notes)
    return meta
