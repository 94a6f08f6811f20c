"""The job runs unchanged on a Spark "local-cluster": two executor JVMs, each with its own
Python workers, separate from the driver. The sample is read and hashed by the executors and
the driver gets aggregates only, so nothing depends on the driver holding the data. A
separate process, since one Python process holds one SparkContext."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.analytics.reference import expected
from tests.analytics.test_spark_exactness import _sample

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = r"""
import json, sys
from kgitops.analytics import javaudf
from kgitops.analytics.job import JobSpec, get_session, run_job
spark = get_session("local-cluster[2,1,1024]", jar=javaudf.udf_jar())
import time
sc = spark.sparkContext
deadline = time.monotonic() + 120
while time.monotonic() < deadline:   # executors register a few seconds after the driver
    executors = sc._jsc.sc().getExecutorMemoryStatus().size() - 1   # minus the driver
    if executors >= 2:
        break
    time.sleep(0.5)
out = {"master": sc.master, "executors": executors, "engines": {}}
for engine in ("java", "arrow"):
    spec = JobSpec(sys.argv[1], (6, 12, 24), size_column="size", engine=engine)
    result = run_job(spark, spec)
    out["engines"][engine] = [
        [r.n, r.p, r.keys, r.messages, r.bytes, r.moved_keys, r.moved_messages]
        for r in result.rows
    ]
spark.stop()
print(json.dumps(out))
"""


def test_the_job_runs_on_a_local_cluster_with_executors_apart_from_the_driver(
    tmp_path: Path,
) -> None:
    sample = tmp_path / "keys.parquet"
    rows = _sample(sample, n_rows=2000, seed=11)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(sample)],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["master"] == "local-cluster[2,1,1024]"
    assert out["executors"] == 2
    want = expected(rows, (6, 12, 24), base=6)
    for engine, got in out["engines"].items():
        for n in (6, 12, 24):
            msgs = [0] * n
            for r in got:
                if r[0] == n and r[1] is not None:
                    msgs[r[1]] = r[3]
            assert msgs == want["messages"][n], engine
            assert sum(r[5] for r in got if r[0] == n) == want["moves"][n][0]
