"""The Java UDF jar is compiled from the packaged source once and cached by source hash and
Spark version; without a working JDK compiler there is no jar (the Arrow path takes over)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from kgitops.analytics import javaudf


@pytest.mark.slow
def test_the_jar_is_compiled_once_and_then_reused(tmp_path: Path) -> None:
    jar = javaudf.udf_jar(cache_dir=tmp_path)
    if javaudf.find_javac() is None:
        pytest.skip("no javac on this machine")
    assert jar is not None
    assert jar.parent == tmp_path / "udf"
    with zipfile.ZipFile(jar) as zf:
        assert "kgitops/spark/KafkaMurmur2.class" in zf.namelist()
    stamp = jar.stat().st_mtime_ns
    # cached: found without any compiler at all
    again = javaudf.udf_jar(cache_dir=tmp_path, javac="/nonexistent/javac")
    assert again == jar and jar.stat().st_mtime_ns == stamp


def test_the_cache_key_holds_the_source_hash_and_the_spark_version(tmp_path: Path) -> None:
    import hashlib

    import pyspark

    jar = javaudf.udf_jar(cache_dir=tmp_path)
    if jar is None:
        pytest.skip("no javac on this machine")
    digest = hashlib.sha256(javaudf.java_source() + pyspark.__version__.encode()).hexdigest()
    assert jar.name == f"kgitops-murmur2-{digest[:12]}-spark{pyspark.__version__}.jar"


def test_no_jar_without_a_working_compiler(tmp_path: Path) -> None:
    assert javaudf.udf_jar(cache_dir=tmp_path, javac="/bin/false") is None
    assert javaudf.udf_jar(cache_dir=tmp_path, javac="/nonexistent/javac") is None
    assert not any((tmp_path / "udf").glob("*.jar"))


def test_the_java_source_ships_in_the_package() -> None:
    source = javaudf.java_source().decode()
    assert "class KafkaMurmur2" in source and "0x9747b28c" in source
