"""The plan command at scale, run as users run it: ``kgitops plan DIR --state S --format json
--out plan.json`` as a process, 10,000 topics x 100 partitions (1,000,000 partitions, RF 3)
against a state file of 60 brokers in 3 racks. Goal: at most 2 s of CPU and 500 MB.

Two variants, each command in its own process (CPU user + system and peak RSS of that child,
from ``os.wait4``'s resource usage):

* ``existing``: every topic exists, placed as Kafka would place it: the plan is empty;
* ``new``: no topic exists: 10,000 topics are created, each with the start index that best
  evens out preferred leaders given everything planned before it.

``--decommission 5,17`` runs one variant instead, ``drain``: the files of ``existing`` with
``decommission: [5, 17]`` in cluster.yaml, so the plan moves every replica off those brokers
(a reassign per topic holding one: with 60 brokers, every topic). Many small topics are what
this case weighs: the per-topic and per-partition costs of the drain and the balancer.

The state file is written here as another program would write it, not as ``kgitops
snapshot`` does: topics in a shuffled order, partitions in descending order, each
partition's fields in another order (``leader, sizeBytes, isr, replicas``), ``brokers`` after
``topics``, no ``clusterId``, compact separators. The CPU of each stage comes from the
command itself (``KGITOPS_PROFILE_STAGES``, kgitops/perf.py): ``start-up`` is the CPU used
before the first stage (the interpreter, the imports, the command line), ``other`` everything
after it outside the marked stages (the lock, the checks between stages, the exit). Each
tree of kgitops is compiled to bytecode (``compileall``) before its first run, as pip
compiles an installed package.

``--compare REF`` also runs the command with the kgitops of git ref ``REF`` (``git archive``)
on the same generated files, in the same run, and prints the figures of this tree against
REF's: before and after, measured back to back.

``--live`` also runs ``plan`` against the local Kafka-protocol broker (Tansu) with 10 and with
1,000 managed topics and counts the admin requests sent (at kafka-python's connection layer):
the describe is batched, so the count does not grow with the number of topics.

``--repeat N`` runs each command N times (alternating with REF's) and reports the least CPU of
the whole and of each stage, with the range of the runs: on a shared host the same code's CPU
moves by a third from one run to the next. Before each round of runs the host is probed: the
CPU of ``python -c pass`` (the interpreter's own start-up, part of every command's) and of a
fixed 10-million-step Python loop (how fast the host is just then), printed as the least and
the range: figures of two runs compare only where their loops took about as long.

Run: ``python benchmarks/plan.py [--topics 10000] [--partitions 100] [--compare main]
[--repeat N] [--live] [--decommission 5,17]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BROKERS = 60
RACKS = 3
GOAL_CPU_S = 2.0
GOAL_RSS_MB = 500.0
VARIANTS = ("existing", "new")


def _brokers() -> list[dict[str, Any]]:
    return [{"rack": f"az{i % RACKS + 1}", "id": i} for i in range(BROKERS)]


def generate(
    root: str, topics: int, partitions: int, *, new: bool, decommission: Sequence[int] = ()
) -> tuple[str, str]:
    """A cluster folder with ``topics`` Topic docs (100 per file) and a state JSON file in a
    key order of another program's (see the module docstring); ``decommission``: the brokers
    cluster.yaml drains."""
    from kgitops.model import Broker
    from kgitops.placement.assignment import assign_replicas

    folder = os.path.join(root, "prod")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "cluster.yaml"), "w") as f:
        f.write(
            "apiVersion: kgitops/v1\nkind: Cluster\nname: prod\n"
            'bootstrapServers: ["kafka-1:9092"]\n'
            "reassignment: {throttleBytesPerSec: 50000000}\n"
        )
        if decommission:
            f.write(f"decommission: [{', '.join(map(str, decommission))}]\n")
    brokers = [Broker(b["id"], b["rack"]) for b in _brokers()]
    placed = {s: assign_replicas(brokers, partitions, 3, start_index=s) for s in range(BROKERS)}
    live: dict[str, Any] = {}
    per_file = 100
    for start in range(0, topics, per_file):
        docs = []
        for i in range(start, min(start + per_file, topics)):
            name = f"team{i % 50:02d}.topic{i:05d}"
            docs.append(
                f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\n"
                f"partitions: {partitions}\nreplicationFactor: 3\n"
                "config:\n  retention.ms: 604800000\n  cleanup.policy: delete\n"
            )
            if new:
                continue
            assignment = placed[i % BROKERS]
            live[name] = {
                "config": {"retention.ms": "604800000", "cleanup.policy": "delete"},
                "partitions": {
                    str(p): {
                        "leader": r[0],
                        "sizeBytes": 1 << 20,
                        "isr": list(r),
                        "replicas": list(r),
                    }
                    for p, r in sorted(assignment.items(), reverse=True)
                },
            }
        with open(os.path.join(folder, f"topics-{start // per_file:04d}.yaml"), "w") as f:
            f.write("---\n".join(docs))
    names = list(live)
    random.Random(31).shuffle(names)
    state = os.path.join(root, "state.json")
    with open(state, "w") as f:
        json.dump(
            {
                "topics": {n: live[n] for n in names},
                "brokers": _brokers(),
                "format": "kgitops-state/v1",
            },
            f,
            separators=(",", ":"),
        )
    return folder, state


def run_command(folder: str, state: str, out_dir: str, code: Path = ROOT) -> dict[str, Any]:
    """``kgitops plan FOLDER --state STATE --format json --out plan.json`` in a child process,
    with the kgitops of the tree ``code``: its CPU (user + system), peak RSS, CPU per stage
    (none from a tree older than ``KGITOPS_PROFILE_STAGES``), and the sizes it wrote."""
    plan_file = os.path.join(out_dir, "plan.json")
    stdout_file = os.path.join(out_dir, "stdout.json")
    stages_file = os.path.join(out_dir, "stages.json")
    if os.path.exists(stages_file):
        os.unlink(stages_file)
    env = {**os.environ, "KGITOPS_PROFILE_STAGES": stages_file}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    _bytecode(code)
    argv = [sys.executable, "-m", "kgitops", "plan", folder, "--state", state]
    argv += ["--format", "json", "--out", plan_file, "--max-file-size", "1GB"]
    with open(stdout_file, "wb") as out, tempfile.TemporaryFile() as err:
        # run in out_dir: ``python -m`` puts the working folder first on the path
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=out_dir)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(argv)}: exit {proc.returncode}\n{err.read().decode()}")
    stages: dict[str, float] = {}
    if os.path.exists(stages_file):
        with open(stages_file) as f:
            stages = json.load(f)
    cpu = usage.ru_utime + usage.ru_stime
    stages["other"] = max(0.0, cpu - sum(stages.values()))
    # counted by a child: loaded here, a 90 MB plan would raise this process's peak, which
    # the next command would start from
    counted = subprocess.run(
        [sys.executable, __file__, "--count-actions", plan_file],
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        "cpu_s": cpu,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "stages_cpu_s": stages,
        "actions": int(counted.stdout),
        "plan_mb": os.path.getsize(plan_file) / 1e6,
        "stdout_mb": os.path.getsize(stdout_file) / 1e6,
        "state_mb": os.path.getsize(state) / 1e6,
    }


#: a fixed amount of pure Python work: its CPU says how fast the host is during this run
_LOOP = "x = 0\nfor i in range(10_000_000):\n    x += i\n"


def _child_cpu(argv: list[str]) -> float:
    """CPU (user + system) of ``argv`` run as a child process."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)}: failed")
    return usage.ru_utime + usage.ru_stime


def host_probe() -> dict[str, float]:
    """This host's speed during the run: the interpreter's own start-up (``python -c pass``:
    the site module and the installed ``.pth`` hooks, before any kgitops code) and a fixed
    10-million-step Python loop, each as a process."""
    return {
        "interpreter_s": _child_cpu([sys.executable, "-c", "pass"]),
        "loop_s": _child_cpu([sys.executable, "-c", _LOOP]),
    }


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of least CPU, with each stage's least CPU over all ``runs`` (the cost of the
    code with the least interference) and every run's CPU (``runs_cpu_s``)."""
    top = min(runs, key=lambda r: float(r["cpu_s"]))
    names = dict.fromkeys(k for r in runs for k in r["stages_cpu_s"])
    stages = {k: min(r["stages_cpu_s"].get(k, 0.0) for r in runs) for k in names}
    return {**top, "stages_cpu_s": stages, "runs_cpu_s": [r["cpu_s"] for r in runs]}


_COMPILED: set[Path] = set()


def _bytecode(code: Path) -> None:
    """Compile the tree ``code`` once, as pip does when it installs a package: an installed
    kgitops runs from compiled bytecode, and ``PYTHONDONTWRITEBYTECODE`` (set on some
    machines) would otherwise make every run compile kgitops' ~200 modules again."""
    if code not in _COMPILED:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(code / "kgitops")],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        _COMPILED.add(code)


def live_requests(counts: tuple[int, ...] = (10, 1000)) -> dict[int, Counter[str]]:
    """Admin requests `plan` sends to the local broker, per number of managed topics."""
    from kafka.net.connection import KafkaConnection

    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.local import start_broker
    from kgitops.cluster.port import NewTopic
    from kgitops.commands._planning import plan_directory
    from kgitops.model import ClusterSpec
    from kgitops.plan.actions import CreateTopic

    sent: Counter[str] = Counter()
    original = KafkaConnection._send_request

    def counting(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        sent[type(request).__name__.removesuffix("Request")] += 1
        return original(self, request, *args, **kwargs)

    out: dict[int, Counter[str]] = {}
    broker = start_broker()
    try:
        spec = ClusterSpec(name="bench", directory=".", bootstrap_servers=(broker.bootstrap,))
        admin = KafkaAdmin(spec)
        node = admin.describe([]).brokers[0].id
        for n in counts:
            names = [f"live{n}.t{i:05d}" for i in range(n)]
            admin.create_topics([NewTopic(t, {0: (node,)}) for t in names])
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "cluster.yaml"), "w") as f:
                    f.write(
                        "apiVersion: kgitops/v1\nkind: Cluster\nname: bench\n"
                        f'bootstrapServers: ["{broker.bootstrap}"]\nunmanagedTopics: ignore\n'
                    )
                with open(os.path.join(tmp, "topics.yaml"), "w") as f:
                    f.write(
                        "---\n".join(
                            f"apiVersion: kgitops/v1\nkind: Topic\nname: {t}\n"
                            "partitions: 1\nreplicationFactor: 1\n"
                            for t in names
                        )
                    )
                KafkaConnection._send_request = counting
                sent.clear()
                try:
                    result = plan_directory(tmp)
                finally:
                    KafkaConnection._send_request = original
                assert not result.plan.of_kind(CreateTopic), "topics should exist"
                out[n] = Counter(sent)
            admin.delete_topics(names)
        admin.close()
    finally:
        broker.stop()
    return out


def _broker_ids(text: str) -> tuple[int, ...]:
    """``5,17`` -> (5, 17): brokers of the generated cluster (0 .. BROKERS - 1)."""
    try:
        ids = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of broker ids: {text!r}") from None
    if not ids or any(not 0 <= b < BROKERS for b in ids) or len(set(ids)) != len(ids):
        raise argparse.ArgumentTypeError(f"brokers are 0 .. {BROKERS - 1}, each once: {text!r}")
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--live", action="store_true", help="also count live admin requests")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument(
        "--compare",
        metavar="REF",
        help="also run the command with the kgitops of git ref REF (e.g. main), on the same "
        "files in the same run, and print this tree's figures as ratios of REF's",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each command N times (alternating with REF's) and report the least CPU of "
        "each stage and of the whole: on a shared host the same code's CPU varies by run",
    )
    parser.add_argument(
        "--decommission",
        metavar="IDS",
        type=_broker_ids,
        default=(),
        help="run the drain instead: the existing topics with these brokers (e.g. 5,17) in "
        "cluster.yaml's decommission list",
    )
    parser.add_argument("--generate", nargs=2, metavar=("DIR", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--count-actions", metavar="PLAN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_actions:
        with open(args.count_actions) as f:
            print(len(json.load(f)["actions"]))
        return
    if args.generate:
        root, variant = args.generate
        generate(
            root, args.topics, args.partitions, new=variant == "new", decommission=args.decommission
        )
        return
    results: dict[str, Any] = {}
    before: dict[str, Any] = {}
    probes: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as other:
        if args.compare:  # piped, never held here (this process's size would be the peak's floor)
            git = subprocess.Popen(
                ["git", "-C", str(ROOT), "archive", args.compare], stdout=subprocess.PIPE
            )
            subprocess.run(["tar", "-x", "-C", other], stdin=git.stdout, check=True)
            assert git.stdout is not None
            git.stdout.close()
            if git.wait() != 0:
                sys.exit(f"git archive {args.compare} failed")
        for variant in ("drain",) if args.decommission else VARIANTS:
            with tempfile.TemporaryDirectory() as tmp:
                # generated by a child: a child process starts with its parent's resident size
                # as its peak (Linux carries it across fork and exec): this process stays small
                sizes = ["--topics", str(args.topics), "--partitions", str(args.partitions)]
                if args.decommission:
                    sizes += ["--decommission", ",".join(map(str, args.decommission))]
                subprocess.run(
                    [sys.executable, __file__, "--generate", tmp, variant, *sizes], check=True
                )
                folder, state = os.path.join(tmp, "prod"), os.path.join(tmp, "state.json")
                mine: list[dict[str, Any]] = []
                theirs: list[dict[str, Any]] = []
                for _ in range(args.repeat):  # alternating: a slower spell of the host hits both
                    probes.append(host_probe())
                    if args.compare:
                        theirs.append(run_command(folder, state, tmp, Path(other)))
                    mine.append(run_command(folder, state, tmp))
                if theirs:
                    before[variant] = best(theirs)
                results[variant] = best(mine)
    n_parts = args.topics * args.partitions
    drained = ", ".join(map(str, args.decommission))
    print(
        f"`kgitops plan DIR --state S --format json --out plan.json` as a process: "
        f"{args.topics:,} topics x {args.partitions} partitions = {n_parts:,} partitions, "
        f"RF 3, {BROKERS} brokers in {RACKS} racks"
        + (f", brokers {drained} drained" if drained else "")
    )
    print(
        f"{'variant':9} {'actions':>8} {'state':>8} {'plan file':>10} {'CPU':>7} "
        f"{'of 2 s':>7} {'peak RSS':>9} {'of 500 MB':>9}"
    )
    for variant, r in results.items():
        print(
            f"{variant:9} {r['actions']:8,} {r['state_mb']:5.1f} MB {r['plan_mb']:7.1f} MB "
            f"{r['cpu_s']:6.2f}s {r['cpu_s'] / GOAL_CPU_S:7.0%} {r['peak_rss_mb']:6.0f} MB "
            f"{r['peak_rss_mb'] / GOAL_RSS_MB:9.0%}"
        )
    names = list(dict.fromkeys(k for r in results.values() for k in r["stages_cpu_s"]))
    print("CPU by stage (share of the command's CPU):")
    for name in names:
        cells = []
        for r in results.values():
            v = r["stages_cpu_s"].get(name, 0.0)
            cells.append(f"{v:5.2f}s {v / r['cpu_s']:4.0%}")
        print(
            f"  {name:14} "
            + "   ".join(f"{variant}: {c}" for variant, c in zip(results, cells, strict=True))
        )
    print("(CPU = user + system of the child process: on a shared machine the wall time is longer)")
    host = {k: min(p[k] for p in probes) for k in probes[0]}
    loops = [p["loop_s"] for p in probes]
    print(
        f"the host, the least of {len(probes)}: `python -c pass` {host['interpreter_s']:.2f}s "
        f"of CPU (in every command's start-up); a 10M-step Python loop {host['loop_s']:.2f}s "
        f"(runs {min(loops):.2f}-{max(loops):.2f}s: the host's speed during this run)"
    )
    if before:
        print(f"\nthis tree against {args.compare}, the same files, measured in this run:")
        for variant, r in results.items():
            b = before[variant]
            if len(r["runs_cpu_s"]) > 1:
                print(
                    f"  {variant:9} {len(r['runs_cpu_s'])} runs each, alternating: REF "
                    f"{min(b['runs_cpu_s']):.2f}-{max(b['runs_cpu_s']):.2f}s, this tree "
                    f"{min(r['runs_cpu_s']):.2f}-{max(r['runs_cpu_s']):.2f}s; the least:"
                )
            print(
                f"  {variant:9} CPU {b['cpu_s']:6.2f}s -> {r['cpu_s']:5.2f}s "
                f"({r['cpu_s'] / b['cpu_s']:.2f}x)   peak RSS {b['peak_rss_mb']:4.0f} -> "
                f"{r['peak_rss_mb']:4.0f} MB ({r['peak_rss_mb'] / b['peak_rss_mb']:.2f}x)   "
                f"plan file {b['plan_mb']:.1f} -> {r['plan_mb']:.1f} MB"
            )
            after, before_ = dict(r["stages_cpu_s"]), dict(b["stages_cpu_s"])
            if "start-up" not in before_ and "start-up" in after:  # a tree before the stage
                after["other"] += after.pop("start-up")
                print("    (start-up is in other: REF does not measure it apart)")
            for name, v in after.items():
                if name in before_:
                    w = before_[name]
                    print(f"    {name:14} {w:5.2f}s -> {v:5.2f}s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"this": results, args.compare or "": before, "host": host}, f, indent=2)
    if args.live:
        counts = live_requests()
        print("\nadmin requests sent by `kgitops plan` to a live broker (Tansu):")
        for n, c in counts.items():
            detail = ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
            print(f"  {n:5,} managed topics: {sum(c.values())} requests ({detail})")
        small, large = (sum(c.values()) for c in counts.values())
        print(f"  ratio for 100x the topics: {large / small:.2f}")


if __name__ == "__main__":
    main()
