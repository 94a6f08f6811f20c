"""How fast a cluster folder loads: 10,000 topic documents (1,000,000 partitions) in 100 files.

Measures ``load_specs`` as the planner calls it (plain block YAML read line by line, the
compiled schema fast path, the semantic rules), and in the same run the same load with every document checked by
jsonschema alone, and with PyYAML's own constructor instead of kgitops' node walk (positions
lost, duplicate keys missed: what kgitops avoids). Prints CPU seconds and the ratios.

    python3 benchmarks/specs_load.py [--topics 10000] [--partitions 100] [--files 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from kgitops.spec import schemacheck  # noqa: E402
from kgitops.spec.folders import spec_files  # noqa: E402
from kgitops.spec.load import load_specs  # noqa: E402

TOPIC = """\
---
apiVersion: kgitops/v1
kind: Topic
name: team{f:03d}.events-{t:04d}
partitions: {partitions}
replicationFactor: 3
config:
  retention.ms: 604800000
  min.insync.replicas: 2
  cleanup.policy: delete
"""


def write_folder(root: str, topics: int, partitions: int, files: int) -> None:
    brokers = ", ".join(f"{{id: {i}, rack: az{i % 3}}}" for i in range(12))
    with open(os.path.join(root, "cluster.yaml"), "w") as fh:
        fh.write(
            "apiVersion: kgitops/v1\nkind: Cluster\nname: bench\n"
            f"simulated:\n  stateFile: .state/bench.json\n  brokers: [{brokers}]\n"
        )
    per_file = -(-topics // files)
    for f in range(files):
        first = f * per_file
        count = min(per_file, topics - first)
        if count <= 0:
            break
        with open(os.path.join(root, f"team{f:03d}.yaml"), "w") as fh:
            fh.writelines(
                TOPIC.format(f=f, t=t, partitions=partitions) for t in range(first, first + count)
            )


def timed(fn: object) -> float:
    """CPU seconds of this process: on a shared machine, wall time measures the neighbours."""
    start = time.process_time()
    fn()  # type: ignore[operator]
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        write_folder(root, args.topics, args.partitions, args.files)
        load_specs(root)  # warm: schemas compiled, files in the page cache
        fast = min(timed(lambda: load_specs(root)) for _ in range(3))
        specs = load_specs(root)
        assert len(specs.topics) == args.topics and not specs.diagnostics
        total = sum(t.partitions for t in specs.topics)

        def never(kind: str) -> schemacheck.Predicate:
            return lambda value: False

        with mock.patch.object(schemacheck, "conforms", never):
            slow_schema = timed(lambda: load_specs(root))

        def pyyaml_only() -> None:
            for name in spec_files(root):
                with open(name, encoding="utf-8") as fh:
                    list(yaml.load_all(fh.read(), Loader=yaml.CSafeLoader))

        pyyaml = min(timed(pyyaml_only) for _ in range(2))
    print(f"{args.topics} topics, {total} partitions, {args.files} files")
    print(f"load_specs:                          {fast:.3f} s CPU")
    print(f"  with jsonschema on every document: {slow_schema:.3f} s ({slow_schema / fast:.1f}x)")
    print(
        f"  PyYAML CSafeLoader load_all only:  {pyyaml:.3f} s ({pyyaml / fast:.2f}x of load_specs)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
