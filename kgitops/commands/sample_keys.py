"""``kgitops sample-keys DIR --topic T --max N [--out FILE.parquet]``: read a bounded sample
of a live topic's keys (and message sizes) into Parquet, for ``kgitops analyze keys`` and for
the planner's KEY_REMAP figures.

The file has two columns, ``key`` (binary, NULL for a null key: the exact bytes the producer
hashed) and ``bytes`` (serialized key + value size). ``--out`` defaults to the topic's
``keys.sample`` in its spec, so ``kgitops plan`` picks the fresh sample up::

    kgitops sample-keys topics/prod --topic payments.orders --max 1000000
    kgitops analyze keys --input topics/prod/samples/orders-keys.parquet --key-column key \\
        --size-column bytes --partitions 12,24
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from kgitops.commands._units import positive_int, seconds
from kgitops.errors import KgitopsError
from kgitops.model import TopicSpec

NAME = "sample-keys"
HELP = "read a bounded sample of a live topic's keys and sizes into Parquet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="the cluster folder (topics/<cluster>)")
    parser.add_argument("--topic", required=True, metavar="T", help="the topic to sample")
    parser.add_argument(
        "--max",
        type=positive_int,
        default=100_000,
        metavar="N",
        help="at most N messages, the most recent, spread as the partitions' traffic is "
        "(default: 100000)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE.parquet",
        help="where to write (default: the topic's keys.sample in its spec)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="stop reading after this long (default: 60)",
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="no running count on stderr, only the result"
    )


class _Counter:
    """``read 120,000 of 1,000,000 messages`` on stderr, at most once every ``every``
    seconds while the sample is read."""

    def __init__(self, topic: str, every: float = 2.0) -> None:
        self.topic = topic
        self.every = every
        self.last = time.monotonic()

    def __call__(self, read: int, expected: int) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            print(f"read {read:,} of {expected:,} messages of {self.topic}", file=sys.stderr)


def _own_sample(
    args: argparse.Namespace, directory: str, topics: Sequence[TopicSpec]
) -> str | None:
    """The topic's ``keys.sample`` (absolute), or None when its spec names none."""
    for topic in topics:
        if topic.name == args.topic and topic.keys is not None:
            from kgitops.files import resolve_inside

            # a path from a spec: relative, and inside the cluster folder once resolved
            return resolve_inside(directory, str(topic.keys.sample), shown=str(topic.mark))
    return None


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._clusterdir import cluster_of
    from kgitops.spec.load import load_specs

    specs = load_specs(args.directory)
    cluster = cluster_of(specs, args.directory)  # never connect with a broken cluster.yaml
    if cluster.simulated is not None:
        raise KgitopsError(
            f"{cluster.mark}: cluster {cluster.name!r} is simulated: it holds no messages to "
            "sample; sample a real cluster (or `kgitops local up`)"
        )
    own = _own_sample(args, args.directory, specs.topics)
    out = str(args.out) if args.out else own
    if out is None:
        raise KgitopsError(
            f"--out is needed: topic {args.topic!r} has no keys.sample in the specs of "
            f"{args.directory}"
        )
    from kgitops.commands._out import named_files
    from kgitops.files import SAMPLE_OUT, check_output, write_output

    named = named_files(args.directory, out, specs)
    own_real = None if own is None else os.path.realpath(own)
    make_dirs = out == own  # only the spec's own path may have its folder made
    check_output(out, SAMPLE_OUT, named=named, own=own_real, new_folder=make_dirs)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KgitopsError("sample-keys writes Parquet: pip install 'kgitops[spark]'") from None

    from kgitops.cluster.kafka.sample import sample_keys

    counter = None if args.quiet else _Counter(args.topic)
    rows = sample_keys(cluster, args.topic, args.max, timeout=args.timeout, progress=counter)
    table = pa.table(
        {
            "key": pa.array([k for k, _ in rows], pa.binary()),
            "bytes": pa.array([s for _, s in rows], pa.int64()),
        }
    )
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    if not rows:
        raise KgitopsError(
            f"read no message of {args.topic} in {args.timeout:g} s; nothing written"
            + (f" ({out} is left as it was)" if os.path.lexists(out) else "")
        )
    try:
        write_output(
            out,
            buffer.getvalue().to_pybytes(),
            SAMPLE_OUT,
            named=named,
            own=own_real,
            root=args.directory if make_dirs else None,
            make_dirs=make_dirs,
        )
    except OSError as exc:
        raise KgitopsError(f"{out}: cannot write the sample: {exc.strerror}") from exc
    nulls = sum(1 for k, _ in rows if k is None)
    print(
        f"wrote {len(rows):,} messages of {args.topic} ({nulls:,} with a null key) to {out}",
        file=sys.stderr,
    )
    return 0
