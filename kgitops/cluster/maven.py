"""Jars from Maven Central through Maven: one pom, one cached folder of jars.

``ensure_jars(pom, libs, ...)`` runs ``mvn dependency:copy-dependencies`` on ``pom`` (a
dependency list, not a build) the first time and leaves every runtime jar it names, with
their transitive ones, in ``libs``; later calls return at once. The folder is filled under
a temporary name and renamed when complete (a ``.complete`` marker inside), under a lock, so
two processes never share a half-copied classpath. Used for Apache Kafka's broker jars
(``kafka/runtime.py``) and for Spark's Kafka source (``analytics/sparkkafka.py``), both under
``cache_dir()``::

    ~/.cache/kgitops/kafka-4.1.2/libs/*.jar
    ~/.cache/kgitops/spark-kafka-4.0.1_2.13/libs/*.jar

Without ``mvn`` one line says what to install; a failed fetch says Maven's own first error.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from kgitops.errors import KgitopsError

MAVEN_SECONDS = 900
COMPLETE = ".complete"


def cache_dir() -> Path:
    """``$KGITOPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/kgitops``, else ``~/.cache/kgitops``."""
    explicit = os.environ.get("KGITOPS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kgitops"


def find_maven(what: str, error: type[KgitopsError]) -> str:
    """``mvn`` on PATH, or ``error`` saying that ``what`` (e.g. "the Kafka jars") needs it."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise error(
            f"{what} come from Maven Central through Maven, and no `mvn` was found; "
            "install it (Debian: apt-get install maven)"
        )
    return mvn


def is_complete(libs: Path) -> bool:
    return (libs / COMPLETE).is_file()


def ensure_jars(
    pom: str,
    libs: Path,
    *,
    properties: Sequence[str] = (),
    what: str,
    error: type[KgitopsError],
    marker: str = "",
) -> Path:
    """``libs``, filled with the runtime jars of ``pom`` (the pom's text) the first time.
    ``what`` names the jars in messages; every failure is an ``error``."""
    if not is_complete(libs):
        mvn = find_maven(what, error)
        libs.parent.mkdir(parents=True, exist_ok=True)
        with _locked(libs.parent / ".lock"):
            if not is_complete(libs):
                _download(mvn, pom, libs, properties, what, error, marker)
    return libs


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _download(
    mvn: str,
    pom_text: str,
    libs: Path,
    properties: Sequence[str],
    what: str,
    error: type[KgitopsError],
    marker: str,
) -> None:
    work = Path(tempfile.mkdtemp(prefix=f".{libs.parent.name}-", dir=libs.parent))
    try:
        pom = work / "pom.xml"
        pom.write_text(pom_text, encoding="utf-8")
        target = work / "libs"
        command = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            "-Dmdep.prependGroupId=true",
            f"-DoutputDirectory={target}",
            *properties,
        ]
        try:
            out = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=MAVEN_SECONDS,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise error(f"Maven did not fetch {what} within {MAVEN_SECONDS} s") from None
        except OSError as exc:
            raise error(f"cannot run Maven ({mvn}): {exc}") from None
        if out.returncode != 0 or not any(target.glob("*.jar")):
            last = last_error(out.stdout + out.stderr)
            raise error(
                f"Maven could not fetch {what} from Maven Central"
                + (f": {last}" if last else f" (exit {out.returncode})")
            )
        (target / COMPLETE).write_text(marker + "\n")
        if libs.exists():
            shutil.rmtree(libs)
        os.rename(target, libs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def last_error(text: str) -> str:
    """Maven's first line that says what failed (a FATAL parse error, a missing artifact)."""
    lines = [_ANSI.sub("", line).strip() for line in text.splitlines()]
    for line in lines:
        if line.startswith("[FATAL]") or "Could not resolve" in line or "Could not find" in line:
            return line.removeprefix("[FATAL]").removeprefix("[ERROR]").strip()[:300]
    errors = [line for line in lines if line.startswith("[ERROR]") and line != "[ERROR]"]
    return errors[0].removeprefix("[ERROR]").strip()[:300] if errors else ""
