"""key_report, the planner's entry: cached by the sample's content, and every failure an
AnalyticsError that says what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgitops.analytics import api, javaudf, job
from kgitops.errors import AnalyticsError
from kgitops.placement.partitioner import partition_for


def _write(path: Path, keys: list[str]) -> None:
    pq.write_table(pa.table({"k": keys}), path)


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("Spark was started although the report is cached")


@pytest.mark.spark
def test_a_cached_report_is_reused_until_the_sample_changes(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = tmp_path / "keys.parquet"
    keys = [f"order-{i % 50}" for i in range(500)]
    _write(sample, keys)
    cache = str(tmp_path / "cache")
    first = api.key_report(str(sample), "k", [6, 12], cache_dir=cache)
    assert first["partitionCounts"]["12"]["messages"][partition_for("order-7", 12)] >= 10
    assert first["moves"][0]["from"] == 6 and first["moves"][0]["to"] == 12
    monkeypatch.setattr(job, "analyze", _refuse)
    assert api.key_report(str(sample), "k", [6, 12], cache_dir=cache) == first
    _write(sample, [*keys, "one-more"])
    with pytest.raises(AssertionError, match="cached"):
        api.key_report(str(sample), "k", [6, 12], cache_dir=cache)
    with pytest.raises(AssertionError, match="cached"):  # other counts: another report
        api.key_report(str(sample), "k", [6, 24], cache_dir=cache)


def test_the_digest_covers_every_data_file_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "sample"
    folder.mkdir()
    _write(folder / "part-0.parquet", ["a"])
    (folder / "_SUCCESS").write_text("")
    before = api.sample_digest(str(folder))
    _write(folder / "part-1.parquet", ["b"])
    assert api.sample_digest(str(folder)) != before
    assert api.sample_digest("hdfs://namenode/keys") is None


def test_a_missing_sample_is_a_clear_error_before_any_jvm_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job, "get_session", _refuse)
    with pytest.raises(AnalyticsError, match=r"nope\.parquet: no such file or directory"):
        api.key_report(str(tmp_path / "nope.parquet"), "key", [6], cache_dir=str(tmp_path))


def test_without_pyspark_the_error_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = tmp_path / "keys.parquet"
    _write(sample, ["a"])
    monkeypatch.setattr(javaudf, "pyspark_home", lambda: None)
    with pytest.raises(AnalyticsError, match=r"needs pyspark: pip install 'kgitops\[spark\]'"):
        api.key_report(str(sample), "k", [6], cache_dir=str(tmp_path / "c"))


def test_without_java_the_error_says_spark_needs_a_jdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = tmp_path / "keys.parquet"
    _write(sample, ["a"])
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AnalyticsError, match="needs a Java 17\\+ runtime"):
        api.key_report(str(sample), "k", [6], cache_dir=str(tmp_path / "c"))


@pytest.mark.spark
def test_an_unreadable_sample_or_a_wrong_column_is_an_analytics_error(
    spark: Any, tmp_path: Path
) -> None:
    garbage = tmp_path / "bad.parquet"
    garbage.write_bytes(b"this is not parquet at all")
    with pytest.raises(AnalyticsError, match=r"bad\.parquet: cannot read the key sample"):
        api.key_report(str(garbage), "key", [6], cache_dir=str(tmp_path / "c"))
    sample = tmp_path / "keys.parquet"
    _write(sample, ["a"])
    with pytest.raises(AnalyticsError, match=r"no key column 'key' \(columns: k\)"):
        api.key_report(str(sample), "key", [6], cache_dir=str(tmp_path / "c"))
    pq.write_table(pa.table({"n": [1, 2]}), tmp_path / "ints.parquet")
    with pytest.raises(AnalyticsError, match="is bigint, not string or binary"):
        api.key_report(str(tmp_path / "ints.parquet"), "n", [6], cache_dir=str(tmp_path / "c"))
