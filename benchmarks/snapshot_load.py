"""How fast a state file (kgitops-state/v1) loads, against the bare json.loads of the same file.

1,000 topics x 1,000 partitions (1,000,000 partitions), RF 3, 30 brokers in 3 racks, each
partition with replicas, ISR, leader and size. Prints the CPU seconds (process_time, fair
on a shared machine) of read_state (parse and build the ClusterState) and of json.loads
alone, and their ratio; then the same for writing (write_state against json.dumps); and
checks that the round trip is exact. Then the decoders against each other, each in a child
process of its own (CPU and peak RSS from ``os.wait4``): the standard ``json``, ``orjson``
(when installed), ``msgspec`` to plain objects, and ``msgspec`` to the typed records
``read_state`` decodes into (``kgitops.cluster.statefast.StateFile``). The plan benchmark's
budget for loading the state of such a cluster is about 1 s.

    python3 benchmarks/snapshot_load.py [--topics 1000] [--partitions 1000]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgitops.cluster.snapshot import read_state, write_state
from kgitops.model import Broker, ClusterState, PartitionState, TopicState
from kgitops.placement.assignment import assign_replicas


def build(topics: int, partitions: int) -> ClusterState:
    brokers = tuple(Broker(i, f"az{i % 3}") for i in range(30))
    out = {}
    for t in range(topics):
        a = assign_replicas(brokers, partitions, 3, start_index=t % 30)
        out[f"topic.{t:05d}"] = TopicState(
            f"topic.{t:05d}",
            {p: PartitionState(r, r, r[0], 1_000_000 + p) for p, r in a.items()},
            {"retention.ms": "604800000"},
        )
    return ClusterState(brokers=brokers, topics=out, cluster_id="bench")


DECODERS = ("json", "orjson", "msgspec", "msgspec typed")


def decode_once(name: str, path: str) -> None:
    """Decode ``path`` with decoder ``name`` (in a child: ``--decode NAME PATH``)."""
    raw = Path(path).read_bytes()
    gc.disable()
    if name == "json":
        json.loads(raw.decode())
    elif name == "orjson":
        import orjson

        orjson.loads(raw)
    elif name == "msgspec":
        import msgspec

        msgspec.json.decode(raw)
    else:
        from kgitops.cluster.statefast import DECODER

        DECODER.decode(raw)


def decoders(path: str) -> dict[str, tuple[float, float] | None]:
    """(CPU seconds, peak RSS MB) of each decoder on ``path``, the start-up and the read of
    the file subtracted from the CPU (an empty run's figures); None where it is not installed.

    Run from a small launcher process (``--decoders PATH``): a child starts with its parent's
    resident size as its peak (Linux carries it across fork and exec), and this process holds
    the whole state."""
    launched = subprocess.run(
        [sys.executable, __file__, "--decoders", path], capture_output=True, text=True, check=True
    )
    return {k: None if v is None else (v[0], v[1]) for k, v in json.loads(launched.stdout).items()}


def _decoders(path: str) -> dict[str, tuple[float, float] | None]:
    out: dict[str, tuple[float, float] | None] = {}

    def child(*argv: str) -> tuple[float, float, int]:
        proc = subprocess.Popen([sys.executable, __file__, *argv])
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode

    base_cpu, _, _ = child("--decode", "none", path)
    for name in DECODERS:
        cpu, rss, code = child("--decode", name, path)
        out[name] = (max(0.0, cpu - base_cpu), rss) if code == 0 else None
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--decode", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--decoders", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decoders:
        print(json.dumps(_decoders(args.decoders)))
        return 0
    if args.decode:
        name, path = args.decode
        if name == "none":
            Path(path).read_bytes()
            return 0
        try:
            decode_once(name, path)
        except ImportError:
            return 3
        return 0
    state = build(args.topics, args.partitions)
    n = args.topics * args.partitions
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "state.json")
        t0 = time.process_time()
        write_state(path, state)
        t_write = time.process_time() - t0
        size = os.path.getsize(path)
        text = Path(path).read_text()
        # Each measured twice, interleaved, best kept: the first run of anything pays for
        # growing the heap, which is not what is compared here.
        t_read = t_json = t_dumps = float("inf")
        loaded: ClusterState | None = None
        for _ in range(2):
            gc.disable()  # the fairest baseline: json.loads without collector pauses
            t0 = time.process_time()
            data = json.loads(text)
            t_json = min(t_json, time.process_time() - t0)
            t0 = time.process_time()
            json.dumps(data)
            t_dumps = min(t_dumps, time.process_time() - t0)
            del data
            gc.enable()
            loaded = None  # free the previous load before timing the next
            t0 = time.process_time()
            loaded = read_state(path)
            t_read = min(t_read, time.process_time() - t0)
        exact = loaded == state
        decoded = decoders(path)
    print(f"state: {n:,} partitions, {size / 1e6:.0f} MB on disk")
    print(
        f"read_state   {t_read:6.2f} s CPU   json.loads alone {t_json:6.2f} s   "
        f"ratio {t_read / t_json:.2f}"
    )
    print(
        f"write_state  {t_write:6.2f} s CPU   json.dumps alone {t_dumps:6.2f} s   "
        f"ratio {t_write / t_dumps:.2f}"
    )
    print(f"round trip exact: {exact}")
    print("decoding the file alone, each in its own process:")
    floor = decoded["json"]
    for name, got in decoded.items():
        if got is None:
            print(f"  {name:14} not installed")
            continue
        ratio = f"   {got[0] / floor[0]:.2f}x json's CPU" if floor and floor[0] else ""
        print(f"  {name:14} {got[0]:6.2f} s CPU   peak RSS {got[1]:5.0f} MB{ratio}")
    return 0 if exact else 1


if __name__ == "__main__":
    from kgitops.files import file_size_limit

    with file_size_limit(10**10):  # `--max-file-size 10GB`: the state is far above 10 MB
        raise SystemExit(main())
