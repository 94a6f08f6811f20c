"""A missing key or size column is said before Spark starts (a JVM and a session take tens of
seconds): read from the Parquet footer or the CSV header; the Spark job is never entered."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.cli import main

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    import kgitops.analytics.job as job

    def boom(*_: object, **__: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(job, "analyze", boom)


def test_a_parquet_sample_without_the_key_column_is_refused_before_spark(
    tmp_path: Path, no_spark: None, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "keys.parquet"
    pq.write_table(pa.table({"k": ["a", "b"], "bytes": [1, 2]}), sample)
    assert main(["analyze", "keys", "--input", str(sample), "--partitions", "6"]) == 1
    err = capsys.readouterr().err
    assert f"{sample}: no key column 'key' (columns: bytes, k); use --key-column" in err


def test_a_csv_sample_without_the_size_column_is_refused_before_spark(
    tmp_path: Path, no_spark: None, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "keys.csv"
    sample.write_text("key,size\na,1\n")
    argv = ["analyze", "keys", "--input", str(sample), "--partitions", "6", "--size-column", "b"]
    assert main(argv) == 1
    assert f"{sample}: no size column 'b' (columns: key, size)" in capsys.readouterr().err
