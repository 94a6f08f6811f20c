"""What many test files share: running the CLI in this process, and writing a cluster folder.

``run_cli("plan", str(folder), "--format", "json")`` is ``kgitops plan FOLDER --format json``
through ``kgitops.cli.main`` (the one exit path), its stdout and stderr captured apart::

    code, out, err = run_cli("validate", str(folder))

``committed_repo(root, {"topics/prod/cluster.yaml": ...})`` is a git repository whose one
commit holds those files; ``git(root, "diff")`` runs git there. ``tree(root)`` is everything
under ``root`` (for "nothing changed": ``assert tree(root) == before``).

``cluster_folder(path, brokers=BROKERS, files={"orders.yaml": ORDERS})`` writes
``path/cluster.yaml`` for a simulated cluster (``simulated.stateFile: .state/NAME.json``, or
``state_file``), ``cluster_folder(path, bootstrap="127.0.0.1:9092")`` one for a broker (or
several, comma separated). ``extra`` lines are appended to cluster.yaml (indented two spaces
after a simulated cluster, they continue its ``simulated`` mapping); ``files`` are written
beside it, ``state`` (a kgitops-state/v1 mapping) as the simulated state file. A test about
the Cluster document itself gives its whole text as ``cluster`` (``name`` then only names the
state file). ``cluster_yaml`` is the document alone. Every file is written as UTF-8.

``eventually(read, ok)`` reads a real Kafka cluster until what it says holds.
``kafka_admin(bootstrap)`` is kgitops' Kafka adapter on a real broker (the set-up of a test
that creates topics there); ``group_consumer(bootstrap, group, [topic])`` a kafka-python
member of a consumer group, and ``poll_records(consumer, n)`` has it read ``n`` records.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from kgitops.cli import main
from kgitops.model import Broker, ClusterSpec

if TYPE_CHECKING:
    from kgitops.cluster.kafka.admin import KafkaAdmin

#: The brokers most test clusters have: three, one per rack (or without racks).
THREE_BROKERS = (Broker(0), Broker(1), Broker(2))
THREE_RACKS = (Broker(0, "a"), Broker(1, "b"), Broker(2, "c"))
THREE_AZS = (Broker(0, "az1"), Broker(1, "az2"), Broker(2, "az3"))


class CliResult(NamedTuple):
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """stdout then stderr, as one text."""
        return self.out + self.err


def run_cli(*argv: str) -> CliResult:
    """``kgitops ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return CliResult(code, out.getvalue(), err.getvalue())


def run_cli_text(*argv: str) -> tuple[int, str]:
    """``kgitops ARGV`` in this process: (exit code, stdout then stderr)."""
    result = run_cli(*argv)
    return result.code, result.text


def cluster_yaml(
    name: str = "demo",
    *,
    brokers: Sequence[Broker] = (),
    bootstrap: str | None = None,
    extra: str = "",
    state_file: str | None = None,
) -> str:
    """A Cluster document: simulated with ``brokers`` (state in ``state_file``,
    ``.state/NAME.json`` by default), or a broker at ``bootstrap``."""
    text = f"apiVersion: kgitops/v1\nkind: Cluster\nname: {name}\n"
    if bootstrap is not None:
        text += f"bootstrapServers: {json.dumps(bootstrap.split(','))}\n"
    else:
        racks = ", ".join(
            f"{{id: {b.id}, rack: {b.rack}}}" if b.rack else f"{{id: {b.id}}}" for b in brokers
        )
        state_file = state_file or f".state/{name}.json"
        text += f"simulated:\n  stateFile: {state_file}\n  brokers: [{racks}]\n"
    return text + extra


def cluster_folder(
    path: Path,
    name: str = "demo",
    *,
    brokers: Sequence[Broker] = (),
    bootstrap: str | None = None,
    extra: str = "",
    files: Mapping[str, str] | None = None,
    state: Mapping[str, Any] | None = None,
    state_file: str | None = None,
    cluster: str | None = None,
) -> Path:
    """``path`` (made if missing) holding cluster.yaml (``cluster``, or the one
    ``cluster_yaml`` builds), ``files`` and the simulated state."""
    path.mkdir(parents=True, exist_ok=True)
    if cluster is None:
        cluster = cluster_yaml(
            name, brokers=brokers, bootstrap=bootstrap, extra=extra, state_file=state_file
        )
    (path / "cluster.yaml").write_text(cluster, encoding="utf-8")
    for relative, text in (files or {}).items():
        (path / relative).parent.mkdir(parents=True, exist_ok=True)
        (path / relative).write_text(text, encoding="utf-8")
    if state is not None:
        file = path / (state_file or f".state/{name}.json")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(state), encoding="utf-8")
    return path


def git(repo: Path, *args: str) -> str:
    """``git -C REPO ARGS``: its stdout; a failure raises."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def committed_repo(root: Path, files: Mapping[str, str]) -> Path:
    """A git repository at ``root`` (branch main) whose one commit, "base", holds ``files``
    and whatever ``root`` held already."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root``, relative to it: a file's bytes, ``"<dir>"`` for a folder,
    ``"-> TARGET"`` for a symlink (never followed)."""
    out: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "<dir>"
    return out


def kafka_admin(bootstrap: str, *, timeout_ms: int = 10_000, name: str = "kafka") -> KafkaAdmin:
    """kgitops' Kafka adapter on ``bootstrap`` (servers separated by commas), ``timeout_ms``
    per request; ``name`` is the cluster's in its messages. The caller closes it."""
    from kgitops.cluster.kafka.admin import KafkaAdmin

    return KafkaAdmin(
        ClusterSpec(
            name=name,
            directory=".",
            bootstrap_servers=tuple(bootstrap.split(",")),
            request_timeout_ms=timeout_ms,
        )
    )


def group_consumer(
    bootstrap: str, group: str, topics: Sequence[str] = (), *, client_id: str | None = None
) -> Any:
    """A kafka-python ``KafkaConsumer`` in ``group``, subscribed to ``topics``: it reads from
    the earliest offset, commits only when told, and leaves the group 6 s after it stops
    heartbeating (a closed member is gone quickly). The caller closes it."""
    import kafka

    named = {} if client_id is None else {"client_id": client_id}
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        **named,
    )
    if topics:
        consumer.subscribe(list(topics))
    return consumer


def poll_records(consumer: Any, count: int, seconds: float = 60.0) -> int:
    """Poll until ``consumer`` has read ``count`` records (at most ``seconds``): how many it
    read. Its first polls join the group: once it returns, the consumer is a live member."""
    seen = 0
    deadline = time.monotonic() + seconds
    while seen < count and time.monotonic() < deadline:
        seen += sum(len(records) for records in consumer.poll(timeout_ms=500).values())
    return seen


T = TypeVar("T")


def eventually(
    read: Callable[[], T], ok: Callable[[T], bool], seconds: float = 30.0, *, pause: float = 0.3
) -> T:
    """``read()`` once ``ok`` holds (at most ``seconds``; the last answer otherwise). A real
    Kafka cluster's brokers apply the metadata log each on its own (KRaft's MetadataLoader):
    a topic, an ACL, a credential or a quota the controller accepted, or a group member that
    left, shows on a broker a moment later."""
    value = read()
    deadline = time.monotonic() + seconds
    while not ok(value) and time.monotonic() < deadline:
        time.sleep(pause)
        value = read()
    return value
