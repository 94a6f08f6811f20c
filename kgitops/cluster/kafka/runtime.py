"""Apache Kafka's jars from Maven Central, for ``kgitops local up --kafka`` and the tests.

The broker (``kafka.Kafka``), the storage formatter (``kafka.tools.StorageTool``) and Kafka's
own tools (``kafka-topics``, ``kafka-reassign-partitions``...) are published on Maven Central;
the pom shipped beside this module (``jvm/pom.xml``) lists them, and ``mvn
dependency:copy-dependencies`` turns it into one folder of jars, cached per Kafka version
under ``$KGITOPS_CACHE_DIR`` (default ``$XDG_CACHE_HOME/kgitops``, else ``~/.cache/kgitops``).
The folder is filled under a temporary name and renamed when complete, under a lock, so two
processes never share a half-copied classpath.

Without ``java`` 17+ or ``mvn`` one line says what to install.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kgitops.errors import LocalBrokerError

DEFAULT_VERSION = "4.1.2"
JVM_DIR = Path(__file__).with_name("jvm")
# gradle/dependencies.gradle's versions.log4j2 of each Kafka release: the SLF4J binding the
# broker's POM leaves out must match the log4j-core it brings.
_LOG4J2 = {"4.0.0": "2.24.3", "4.0.1": "2.24.3", "4.1.0": "2.24.3", "4.1.1": "2.24.3"}
_LOG4J2_DEFAULT = "2.25.3"
MAVEN_SECONDS = 900
_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")
_JAVA_MAJOR = re.compile(r'version "(?:1\.)?([0-9]+)')


@dataclass(frozen=True)
class Runtime:
    """A Kafka version's jars, ready to run: ``java -cp runtime.classpath MAIN ...``."""

    version: str
    java: str
    libs: Path

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    def logging_options(self) -> list[str]:
        if self.major >= 4:
            return [f"-Dlog4j2.configurationFile={JVM_DIR / 'log4j2.properties'}"]
        return [f"-Dlog4j.configuration=file:{JVM_DIR / 'log4j.properties'}"]


def check_version(version: str) -> str:
    if not _VERSION.match(version):
        raise LocalBrokerError(f"--kafka-version {version!r}: a Kafka release such as 4.1.2")
    major = int(version.split(".", 1)[0])
    if major < 3 or (major == 3 and int(version.split(".")[1]) < 3):
        raise LocalBrokerError(
            f"--kafka-version {version}: kgitops runs Kafka in KRaft mode, which needs 3.3 or later"
        )
    return version


def cache_dir() -> Path:
    explicit = os.environ.get("KGITOPS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kgitops"


def find_java() -> str:
    """``java`` 17 or later: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidates = [os.path.join(home, "bin", "java")] if home else []
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    found = []
    for java in candidates:
        major = _java_major(java)
        if major is not None:
            found.append(major)
            if major >= 17:
                return java
    if found:
        raise LocalBrokerError(
            f"Apache Kafka needs Java 17 or later (found Java {max(found)}); install a JDK 17+ "
            "(Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
        )
    raise LocalBrokerError(
        "Apache Kafka needs Java 17 or later and no `java` was found; install a JDK 17+ "
        "(Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
    )


def _java_major(java: str) -> int | None:
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _JAVA_MAJOR.search(out.stderr + out.stdout)
    return int(match.group(1)) if match else None


def find_maven() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LocalBrokerError(
            "the Kafka jars come from Maven Central through Maven, and no `mvn` was found; "
            "install it (Debian: apt-get install maven)"
        )
    return mvn


def libs_dir(version: str) -> Path:
    return cache_dir() / f"kafka-{version}" / "libs"


def cached(version: str) -> bool:
    return (libs_dir(version) / ".complete").is_file()


def ensure_runtime(version: str = DEFAULT_VERSION) -> Runtime:
    """The jars of Kafka ``version`` (downloaded through Maven the first time) and a Java that
    runs them."""
    check_version(version)
    java = find_java()
    libs = libs_dir(version)
    if not cached(version):
        mvn = find_maven()
        libs.parent.mkdir(parents=True, exist_ok=True)
        with _locked(libs.parent / ".lock"):
            if not cached(version):
                _download(mvn, version, libs)
    return Runtime(version, java, libs)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def maven_properties(version: str) -> list[str]:
    props = [f"-Dkafka.version={version}"]
    if int(version.split(".", 1)[0]) >= 4:
        props.append(f"-Dlog4j2.version={_LOG4J2.get(version, _LOG4J2_DEFAULT)}")
    else:
        props.append("-Dkafka.reload4j=true")
    return props


def _download(mvn: str, version: str, libs: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=f".kafka-{version}-", dir=libs.parent))
    try:
        pom = work / "pom.xml"
        shutil.copyfile(JVM_DIR / "pom.xml", pom)
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
            *maven_properties(version),
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
            raise LocalBrokerError(
                f"Maven did not fetch Kafka {version}'s jars within {MAVEN_SECONDS} s"
            ) from None
        except OSError as exc:
            raise LocalBrokerError(f"cannot run Maven ({mvn}): {exc}") from None
        if out.returncode != 0 or not any(target.glob("*.jar")):
            last = _last_error(out.stdout + out.stderr)
            raise LocalBrokerError(
                f"Maven could not fetch Kafka {version}'s jars from Maven Central"
                + (f": {last}" if last else f" (exit {out.returncode})")
            )
        (target / ".complete").write_text(version + "\n")
        if libs.exists():
            shutil.rmtree(libs)
        os.rename(target, libs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _last_error(text: str) -> str:
    """Maven's first line that says what failed (a FATAL parse error, a missing artifact)."""
    lines = [_ANSI.sub("", line).strip() for line in text.splitlines()]
    for line in lines:
        if line.startswith("[FATAL]") or "Could not resolve" in line or "Could not find" in line:
            return line.removeprefix("[FATAL]").removeprefix("[ERROR]").strip()[:300]
    errors = [line for line in lines if line.startswith("[ERROR]") and line != "[ERROR]"]
    return errors[0].removeprefix("[ERROR]").strip()[:300] if errors else ""
