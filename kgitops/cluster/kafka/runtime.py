"""Apache Kafka's jars from Maven Central, for ``kgitops local up --kafka`` and the tests.

The broker (``kafka.Kafka``), the storage formatter (``kafka.tools.StorageTool``) and Kafka's
own tools (``kafka-topics``, ``kafka-reassign-partitions``...) are published on Maven Central;
the pom shipped beside this module (``jvm/pom.xml``) lists them, and ``kgitops.cluster.maven``
turns it into one folder of jars, cached per Kafka version under ``$KGITOPS_CACHE_DIR``
(default ``$XDG_CACHE_HOME/kgitops``, else ``~/.cache/kgitops``).

Without ``java`` 17+ or ``mvn`` one line says what to install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kgitops.cluster import maven
from kgitops.cluster.localdefaults import KAFKA_VERSION
from kgitops.errors import LocalBrokerError

DEFAULT_VERSION = KAFKA_VERSION
JVM_DIR = Path(__file__).with_name("jvm")
# gradle/dependencies.gradle's versions.log4j2 of each Kafka release: the SLF4J binding the
# broker's POM leaves out must match the log4j-core it brings.
_LOG4J2 = {"4.0.0": "2.24.3", "4.0.1": "2.24.3", "4.1.0": "2.24.3", "4.1.1": "2.24.3"}
_LOG4J2_DEFAULT = "2.25.3"
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
    return maven.cache_dir()


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


def run_tool(
    command: list[str], late: str, secret: str, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run a JDK tool (``kafka-storage format``, ``keytool``) with no input: its exit code and
    the last line it printed (stderr, else stdout; "" if none) with ``secret`` masked.
    ``LocalBrokerError``: ``late`` after 120 s, or the tool cannot start."""
    try:
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise LocalBrokerError(late) from None
    except OSError as exc:
        raise LocalBrokerError(f"cannot run {os.path.basename(command[0])}: {exc}") from None
    said = (done.stderr or done.stdout).strip()
    if secret:  # "" would put *** between every character
        said = said.replace(secret, "***")
    return done.returncode, said.splitlines()[-1] if said else ""


def find_maven() -> str:
    return maven.find_maven("the Kafka jars", LocalBrokerError)


def libs_dir(version: str) -> Path:
    return cache_dir() / f"kafka-{version}" / "libs"


def cached(version: str) -> bool:
    return maven.is_complete(libs_dir(version))


def ensure_runtime(version: str = DEFAULT_VERSION) -> Runtime:
    """The jars of Kafka ``version`` (downloaded through Maven the first time) and a Java that
    runs them."""
    check_version(version)
    java = find_java()
    libs = maven.ensure_jars(
        (JVM_DIR / "pom.xml").read_text(encoding="utf-8"),
        libs_dir(version),
        properties=maven_properties(version),
        what=f"Kafka {version}'s jars",
        error=LocalBrokerError,
        marker=version,
    )
    return Runtime(version, java, libs)


def maven_properties(version: str) -> list[str]:
    props = [f"-Dkafka.version={version}"]
    if int(version.split(".", 1)[0]) >= 4:
        props.append(f"-Dlog4j2.version={_LOG4J2.get(version, _LOG4J2_DEFAULT)}")
    else:
        props.append("-Dkafka.reload4j=true")
    return props
