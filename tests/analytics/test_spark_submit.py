"""Under ``spark-submit`` the library call reuses the submitted application's master and
session instead of starting its own local one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgitops.placement.partitioner import partition_for

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
from kgitops.analytics.api import key_report
report = key_report(sys.argv[1], "key", [4, 8], cache_dir=sys.argv[2])
spark = SparkSession.getActiveSession()
print(json.dumps({"master": spark.sparkContext.master, "report": report}))
"""


def test_key_report_runs_under_spark_submit_on_its_master(tmp_path: Path) -> None:
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if not submit.exists():
        pytest.skip("this pyspark has no bin/spark-submit")
    keys = [f"k{i % 30}" for i in range(300)]
    pq.write_table(pa.table({"key": keys}), tmp_path / "keys.parquet")
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            str(submit),
            "--master",
            "local[1]",
            str(script),
            str(tmp_path / "keys.parquet"),
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["master"] == "local[1]"
    eight = [0] * 8
    for k in keys:
        eight[partition_for(k, 8)] += 1
    assert out["report"]["partitionCounts"]["8"]["messages"] == eight
