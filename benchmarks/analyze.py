"""Benchmark of the key analysis (``kgitops analyze keys``) on Spark, local[2].

    python benchmarks/analyze.py [--rows 10000000] [--repeat 2] [--master local[2]]
        [--engines builtin,java,arrow] [--no-warmup] [--no-stages]

    # 100M keys, the whole job against the floor only (what the goals are about):
    python benchmarks/analyze.py --rows 100000000 --engines builtin,java --repeat 1 \
        --no-warmup --no-stages

Generates the keys once into Parquet (cached under the temp dir, in a child process so the
driver's memory is not counted), then in one run, one session:

* cold start: a new SparkSession (JVM launch) plus building/loading the Java UDF jar;
* the whole job (aggregate per key, hash, partition load for 6/12/24, top-10 hot keys) with
  Kafka's murmur2 as the Java UDF, as the vectorised Arrow fallback, and with Spark's own
  ``hash()`` (Murmur3) in its place -- the floor, since no hash can cost less than a built-in;
* the hash stage alone (read, hash every row, sum), for each engine;
* driver memory: the JVM's peak heap use and RSS, and the Python driver's peak RSS. In
  local mode the executors run inside the driver JVM; ``--master local-cluster[2,1,2048]``
  runs them apart, so the JVM figure is then the driver's alone.

Prints ratios measured in this run (goals: Java UDF within 1.3x of the floor, Arrow within
3x, driver under 500 MB).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GEN = r"""
import sys, numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
rows, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(42)
# a realistic mix: mostly-distinct ids, a Zipf-ish heavy head, a few null keys
ids = np.where(rng.random(rows) < 0.9, rng.integers(0, rows, rows), rng.zipf(1.3, rows) % 1000)
keys = pc.binary_join_element_wise("customer-", pc.cast(pa.array(ids), pa.string()), "")
keys = pc.if_else(pa.array(rng.random(rows) < 0.001), pa.nulls(rows, pa.string()), keys)
sizes = pa.array(rng.integers(100, 2000, rows).astype("int32"))
pq.write_table(pa.table({"key": keys, "bytes": sizes}), path, row_group_size=1 << 20)
"""


def sample_path(rows: int) -> Path:
    folder = Path(tempfile.gettempdir()) / "kgitops-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"keys-{rows}.parquet"
    if not path.exists():
        t = time.perf_counter()
        part = path.with_suffix(".part")
        subprocess.run([sys.executable, "-c", GEN, str(rows), str(part)], check=True)
        part.rename(path)
        print(f"generated {rows:,} keys in {time.perf_counter() - t:.1f}s: {path}")
    return path


def _vm_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def jvm_memory(spark: Any) -> tuple[float, float]:
    """(peak heap used MB over the heap pools, peak RSS MB) of the driver JVM."""
    jvm = spark.sparkContext._jvm
    peak = 0
    for pool in jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans():
        if str(pool.getType().toString()) == "Heap memory":
            peak += pool.getPeakUsage().getUsed()
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    return peak / 2**20, _vm_kb(pid, "VmHWM") / 1024


def timed(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--engines",
        default="builtin,java,arrow",
        help="which to time (builtin is the floor the ratios need)",
    )
    parser.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the Java job once untimed first (JIT, page cache); a whole job at 100M rows",
    )
    parser.add_argument(
        "--stages",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the hash stage alone, per engine",
    )
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    path = sample_path(args.rows)

    from pyspark.sql import functions as F

    from kgitops.analytics import javaudf, transforms
    from kgitops.analytics.job import JobSpec, get_session, register_java_udf, run_job

    t0 = time.perf_counter()
    jar = javaudf.udf_jar()
    spark = get_session(args.master, jar=jar)
    assert jar is not None and register_java_udf(spark, jar), "the Java UDF did not load"
    spark.range(1).collect()
    cold = time.perf_counter() - t0
    print(f"cold start (JVM, session, UDF jar): {cold:.1f}s  [{spark.sparkContext.master}]")

    def job(engine: str) -> Any:
        spec = JobSpec(str(path), (6, 12, 24), size_column="bytes", engine=engine)  # type: ignore[arg-type]
        return lambda: run_job(spark, spec)

    def hash_only(engine: str) -> Any:
        df = transforms.normalize_keys(spark.read.parquet(str(path)), "key", None)
        df = df.withColumn(transforms.MESSAGES, F.lit(1)).withColumn(transforms.BYTES, F.lit(0))
        hashed = transforms.with_hash(df, engine)  # type: ignore[arg-type]
        return lambda: hashed.agg(F.sum(F.col("h").cast("long"))).collect()

    if args.warmup:
        job("java")()  # warm-up: JIT, page cache
    n = args.rows
    engines = tuple(args.engines.split(","))
    whole = {e: float("inf") for e in engines}
    stage = {e: float("inf") for e in engines}
    for _ in range(args.repeat):  # interleaved, best of each: fair on a shared machine
        for engine in engines:
            whole[engine] = min(whole[engine], timed(job(engine), 1))
            if args.stages:
                stage[engine] = min(stage[engine], timed(hash_only(engine), 1))
    results = {e: (whole[e], stage[e]) for e in engines}
    for engine in engines:
        w, s_ = results[engine]
        print(
            f"{engine:>8}: job {w:6.1f}s ({n / w:9.3g} keys/s)"
            + (f"   hash stage {s_:6.1f}s ({n / s_:9.3g} keys/s)" if args.stages else "")
        )
    floor_job, floor_stage = results.get("builtin", (float("nan"), float("nan")))
    for engine, goal in (("java", 1.3), ("arrow", 3.0)):
        if engine not in results or "builtin" not in results:
            continue
        w, s_ = results[engine]
        ok = "ok" if w / floor_job <= goal else "MISSED"
        print(
            f"{engine} / hash() floor: job {w / floor_job:.2f}x (goal <= {goal}x: {ok})"
            + (f", hash stage {s_ / floor_stage:.2f}x" if args.stages else "")
        )
    heap, rss = jvm_memory(spark)
    py_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    where = (
        "the executors run inside it (local mode)"
        if str(spark.sparkContext.master).startswith("local[")
        else "the driver alone: executors are separate JVMs"
    )
    print(
        f"driver memory: JVM peak heap used {heap:.0f} MB, JVM peak RSS {rss:.0f} MB ({where}); "
        f"Python driver peak RSS {py_rss:.0f} MB "
        f"(goal < 500 MB: {'ok' if py_rss < 500 else 'MISSED'})"
    )
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
