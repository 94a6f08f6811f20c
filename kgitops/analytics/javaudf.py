"""Build the Java murmur2 UDF once per machine: compile ``java/KafkaMurmur2.java`` with the
JDK against the jars that ship inside pyspark, and cache the jar.

The cache key is the source's SHA-256 and the Spark version, so a new kgitops (new source) or
a new pyspark (new API jars) builds a fresh jar and an old one is never loaded by mistake::

    ~/.cache/kgitops/udf/kgitops-murmur2-<sha12>-spark<version>.jar

``$KGITOPS_CACHE_DIR`` (or ``$XDG_CACHE_HOME``) moves the cache. When no ``javac`` is found
(or it fails), :func:`udf_jar` returns ``None`` and the pipeline falls back to the
vectorised Arrow path. Importing this module does not import Spark.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

CLASS_NAME = "kgitops.spark.KafkaMurmur2"
FUNCTION_NAME = "kafka_murmur2"
_SOURCE = "KafkaMurmur2.java"


def cache_root() -> Path:
    """The user cache directory of kgitops."""
    explicit = os.environ.get("KGITOPS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "kgitops"


def java_source() -> bytes:
    return (resources.files("kgitops.analytics") / "java" / _SOURCE).read_bytes()


def pyspark_home() -> tuple[Path, str] | None:
    """(pyspark's folder, its version), or None when pyspark is not installed. Imports only
    pyspark's version module, not the JVM gateway."""
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).parent, str(pyspark.__version__)


def find_javac() -> str | None:
    """The JDK compiler: ``$JAVA_HOME/bin/javac`` first, then ``javac`` on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "javac"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("javac")


def udf_jar(*, javac: str | None = None, cache_dir: Path | None = None) -> Path | None:
    """The path of the compiled UDF jar, building it if it is not cached; None when it
    cannot be built here (no pyspark, no javac, or the compiler failed)."""
    home = pyspark_home()
    if home is None:
        return None
    spark_dir, version = home
    source = java_source()
    digest = hashlib.sha256(source + version.encode()).hexdigest()[:12]
    folder = (cache_dir or cache_root()) / "udf"
    jar = folder / f"kgitops-murmur2-{digest}-spark{version}.jar"
    if jar.is_file():
        return jar
    compiler = javac or find_javac()
    if compiler is None:
        return None
    jars = spark_dir / "jars"
    if not jars.is_dir():
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="kgitops-udf-") as tmp:
            src = Path(tmp) / _SOURCE
            src.write_bytes(source)
            out = Path(tmp) / "classes"
            out.mkdir()
            result = subprocess.run(
                [
                    compiler,
                    "-nowarn",
                    "--release",
                    "17",
                    "-cp",
                    f"{jars}{os.sep}*",
                    "-d",
                    str(out),
                    str(src),
                ],
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            if result.returncode != 0:
                return None
            partial = folder / f".{jar.name}.{os.getpid()}.tmp"
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
                for cls in sorted(out.rglob("*.class")):
                    zf.write(cls, cls.relative_to(out).as_posix())
            os.replace(partial, jar)  # atomic: a concurrent build never sees half a jar
    except (OSError, subprocess.SubprocessError):
        return None
    return jar
