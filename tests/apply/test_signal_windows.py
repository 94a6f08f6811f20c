"""Record before you act (issue 26): a signal right after *each* cluster call of a drain.

A drain moves two partitions off broker 6, one at a time, throttled. A hook counts the
cluster calls apply makes (describe, list_reassignments, the config and reassignment
requests, the sleeps of the wait) and delivers the signal right after the Nth one *returns*:
the request took effect, the caller never saw the answer -- the worst window. For SIGTERM and
SIGHUP (in this process: kgitops' handler turns them into ``Interrupted``) and SIGKILL (a
child process) and every N in turn, the final state is judged, read back through the port:

* no move kgitops started runs unthrottled, and every move in flight is in the move record
  (``.kgitops/moves.json``), so the next apply waits for it instead of calling it another
  tool's;
* SIGTERM / SIGHUP: every move cancelled (or completed) and every throttle gone; the report
  names every partition whose move was sent; exit 3 once a move was sent, 130 before;
* then a plain ``kgitops apply`` exits 0 and leaves the cluster converged: no throttle, no
  move in flight, an empty plan, no record left.

``CLUSTER`` names the adapter class the hook wraps, so the same judge can run on another
cluster (the real-Kafka variant comes with that cluster).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_apply_simulated import Folder, topic

import kgitops
from kgitops.apply.journal import JOURNAL
from kgitops.model import ClusterState
from kgitops.plan.throttles import RATE_KEYS, in_flight, needed, parse_entries, stale_throttles

ROOT = str(Path(kgitops.__file__).resolve().parent.parent)
HERE = str(Path(__file__).resolve().parent)
CLUSTER = "kgitops.cluster.simulated:SimulatedCluster"

#: The port's calls apply makes; the hook counts the outermost ones.
CALLS = (
    "describe",
    "list_reassignments",
    "alter_topic_configs",
    "alter_broker_configs",
    "alter_reassignments",
    "elect_preferred_leaders",
    "create_topics",
    "create_partitions",
    "delete_topics",
    "sleep",
)


class Hook:
    """Wraps ``cluster``'s CALLS: after the ``at``-th outermost call returns, sends ``sig`` to
    this process (``at`` 0: never); logs every submitted reassignment (target not None) to
    ``log`` *before* it is sent; ``calls`` counts."""

    def __init__(self, cluster: str, sig: int, at: int, log: str) -> None:
        module, name = cluster.split(":")
        self.cls = getattr(importlib.import_module(module), name)
        self.sig, self.at, self.log = sig, at, log
        self.calls = 0
        self.depth = 0
        self.originals = {c: getattr(self.cls, c) for c in CALLS if hasattr(self.cls, c)}
        for c, real in self.originals.items():
            setattr(self.cls, c, self._wrap(c, real))

    def _wrap(self, call: str, real: Callable[..., Any]) -> Callable[..., Any]:
        hook = self

        @functools.wraps(real)
        def hooked(cluster: Any, *args: Any, **kwargs: Any) -> Any:
            if call == "alter_reassignments" and hook.depth == 0:
                sent = [f"{tp[0]}-{tp[1]}" for tp, t in args[0].items() if t is not None]
                if sent:
                    with open(hook.log, "a") as f:
                        f.write(json.dumps(sent) + "\n")
            hook.depth += 1
            try:
                out = real(cluster, *args, **kwargs)
            finally:
                hook.depth -= 1
            if hook.depth == 0:
                hook.calls += 1
                if hook.calls == hook.at:
                    if hook.sig != signal.SIGKILL and not callable(signal.getsignal(hook.sig)):
                        raise AssertionError(f"no handler for {hook.sig} at call {hook.at}")
                    os.kill(os.getpid(), hook.sig)
            return out

        return hooked

    def undo(self) -> None:
        for c, real in self.originals.items():
            setattr(self.cls, c, real)


DRIVER = """
import sys
sys.path.insert(0, sys.argv[1])
import test_signal_windows as t
from kgitops import cli
t.Hook(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
sys.exit(cli.main(sys.argv[6:]))
"""


def drain(root: Path) -> Folder:
    """orders: 6 partitions of 20 MB, RF 2 on brokers 1-6; broker 6 decommissioned, so two
    partitions move, one at a time (maxConcurrentMoves 1), at 10 MB/s."""
    demo = Folder(root)
    demo.topics(topic("orders", 6, 2))
    demo.apply()
    demo.set_sizes("orders", 20_000_000)
    demo.cluster(decommission=[6])
    path = demo.dir / "cluster.yaml"
    path.write_text(path.read_text().replace("maxConcurrentMoves: 4", "maxConcurrentMoves: 1"))
    return demo


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The drain, ready to apply, and how many cluster calls its uninterrupted apply makes."""
    root = tmp_path_factory.mktemp("drain")
    drain(root)
    probe = copy_of(root, tmp_path_factory.mktemp("probe"))
    hook = Hook(CLUSTER, 0, 0, str(probe.dir.parent / "log"))
    try:
        code, out, err = probe.cli("apply", "--yes")
    finally:
        hook.undo()
    assert code == 0, out + err
    assert hook.calls > 15, hook.calls
    return root, hook.calls


def copy_of(template: Path, dest: Path) -> Folder:
    shutil.copytree(template / "demo", dest / "demo")
    demo = Folder.__new__(Folder)
    demo.dir, demo.state_file = dest / "demo", dest / "demo" / ".state" / "demo.json"
    return demo


def live(demo: Folder) -> ClusterState:
    """The cluster of ``demo``'s cluster.yaml as kgitops' port reads it (the simulated state
    file here; the same call reads a real cluster)."""
    from kgitops.cluster.connect import open_cluster
    from kgitops.commands._clusterdir import load_cluster

    admin = open_cluster(load_cluster(str(demo.dir)))
    try:
        return admin.describe(None)
    finally:
        admin.close()


def unthrottled(state: ClusterState) -> list[str]:
    """The moves in flight in ``state`` whose throttle entries or rates are not all set."""
    need = needed(in_flight(state))
    missing = []
    for name, keys in need.replicas.items():
        config = state.topics[name].config
        for key, entries in keys.items():
            have = parse_entries(config.get(key)) if key in config else frozenset()
            if have is not None and not entries <= have:
                missing.append(f"{name}: {key} lacks {sorted(entries - have)}")
    online = state.online_broker_ids
    for b in sorted(need.brokers & set(online)):
        if not set(RATE_KEYS) <= set(state.broker_configs.get(b, {})):
            missing.append(f"broker {b}: no rate")
    return missing


def recorded_moves(demo: Folder) -> dict[str, Any]:
    path = demo.dir / JOURNAL
    return json.loads(path.read_text())["moves"] if path.exists() else {}


def submitted(log: Path) -> list[str]:
    if not log.exists():
        return []
    return sorted({tp for line in log.read_text().splitlines() for tp in json.loads(line)})


def judge_in_flight(demo: Folder) -> None:
    """Whatever still moves is throttled and recorded as kgitops' own."""
    state = live(demo)
    assert unthrottled(state) == [], "a move kgitops started runs unthrottled"
    ours = recorded_moves(demo)
    for name, parts in state.reassignments.items():
        for p in parts:
            assert str(p) in ours.get(name, {}), f"{name}-{p} moves but is not in {JOURNAL}"


def judge_next_apply(demo: Folder) -> None:
    """A plain apply afterwards finishes the drain and leaves nothing behind."""
    code, out, err = demo.cli("apply", "--yes")
    assert code == 0, out + err
    state = live(demo)
    assert not state.reassignments
    assert stale_throttles(state) == [], "a throttle with no move left after the next apply"
    assert unthrottled(state) == []
    assert not any(k in c for c in state.broker_configs.values() for k in RATE_KEYS), (
        state.broker_configs
    )
    assert all(6 not in p.replicas for p in state.topics["orders"].partitions.values())
    code, out, err = demo.cli("plan", "--detailed-exitcode")
    assert code == 0, out + err
    assert recorded_moves(demo) == {}
    from kgitops.apply.record import record_path
    from kgitops.commands._clusterdir import load_cluster

    assert not Path(record_path(load_cluster(str(demo.dir)))).exists()


def moves_named(out: str, sent: list[str], demo: Folder) -> list[str]:
    """The submitted moves the report does not account for: each is named (``partition
    N: ...``) or on its target and counted among the partitions moved."""
    state = live(demo)
    moved = [
        tp
        for tp in sent
        if 6 not in state.topics["orders"].partitions[int(tp.rsplit("-", 1)[1])].replicas
    ]
    counted = f"{len(moved)} partition(s) moved" in out or not moved
    missing = [
        tp for tp in sent if f"partition {tp.rsplit('-', 1)[1]}:" not in out and tp not in moved
    ]
    return missing + ([] if counted else [f"moved {moved} not counted"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_any_cluster_call_leaves_nothing_unthrottled_or_unreported(
    template: tuple[Path, int], tmp_path: Path, sig: signal.Signals
) -> None:
    root, calls = template
    failures = []
    for at in range(1, calls + 1):
        demo = copy_of(root, tmp_path / f"at{at}")
        log = demo.dir.parent / "log"
        hook = Hook(CLUSTER, sig, at, str(log))
        try:
            code, out, err = demo.cli("apply", "--yes")
        finally:
            hook.undo()
        sent = submitted(log)
        report = out + err
        try:
            assert code == (3 if sent else 130), f"exit {code} with {sent} sent"
            assert f"interrupted ({sig.name})" in report
            judge_in_flight(demo)
            state = live(demo)
            assert not state.reassignments, "every move in flight is cancelled"
            assert stale_throttles(state) == [], "every throttle of the run is removed"
            assert moves_named(report, sent, demo) == []
            if "replication throttles removed" in report:
                assert stale_throttles(state) == []
            judge_next_apply(demo)
        except AssertionError as exc:
            failures.append(f"{sig.name} after call {at}: {exc}\n{report}")
    assert not failures, "\n\n".join(failures)


def test_kill_9_after_any_cluster_call_leaves_every_move_recorded_and_throttled(
    template: tuple[Path, int], tmp_path: Path
) -> None:
    root, calls = template
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    failures = []
    for at in range(1, calls + 1):
        demo = copy_of(root, tmp_path / f"at{at}")
        log = demo.dir.parent / "log"
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                DRIVER,
                HERE,
                CLUSTER,
                str(int(signal.SIGKILL)),
                str(at),
                str(log),
                "apply",
                str(demo.dir),
                "--yes",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        try:
            assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
            judge_in_flight(demo)
            judge_next_apply(demo)
        except AssertionError as exc:
            failures.append(f"SIGKILL after call {at}: {exc}")
    assert not failures, "\n\n".join(failures)
