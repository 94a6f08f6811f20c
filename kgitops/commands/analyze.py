"""``kgitops analyze keys``: where a sample of keys lands for several partition counts, what
moves when the count changes, and what that means per broker, rack and consumer.

    kgitops analyze keys --input keys.parquet --partitions 6,12,24 [--key-column key]
        [--size-column bytes] [--format parquet|csv|json] [--master URL] [--out REPORT.json]
        [--markdown] [--current N] [--state FILE --topic T] [--consumers N] [--quiet]
    kgitops analyze keys --topic T --cluster DIR --partitions 6,12,24
        [--max-records-per-partition N] [--since DURATION] [--min-partitions N] ...

With ``--cluster`` the keys come from the live topic through Spark's Kafka source (the key
and the serialized key + value size of every record in range), not from a file; the report
is the one a file of the same records gives.

Prints text (or markdown with ``--markdown``). ``--out FILE`` writes the kgitops-keys/v1 JSON
and prints nothing else on stdout unless ``--markdown`` is given; ``--out -`` prints the JSON
to stdout and nothing else goes there (Spark's own logging goes to stderr, at ERROR; so do
the stage lines saying what the job is doing, which ``--quiet`` turns off).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kgitops.commands._options import add_state
from kgitops.commands._units import duration_above_zero, positive_int
from kgitops.errors import AnalyticsError, KgitopsError
from kgitops.model import Broker

if TYPE_CHECKING:
    from kgitops.analytics.kafkasource import TopicSource

NAME = "analyze"
HELP = "analyse message keys with Spark: partition load, skew, hot keys, what moves"


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of partition counts: {text!r}") from None
    if not counts or any(n < 1 for n in counts):
        raise argparse.ArgumentTypeError("partition counts must be positive integers")
    return counts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="analyze_command", metavar="WHAT", required=True)
    keys = sub.add_parser(
        "keys",
        help="per-partition load, skew, hot keys and the share of keys that move",
        description="Run the key analysis on Spark (local[*] unless --master is given).",
    )
    keys.add_argument(
        "--input",
        metavar="PATH",
        help="the key sample: a file or folder, local or any Hadoop URI (or --cluster)",
    )
    keys.add_argument(
        "--cluster",
        metavar="DIR",
        help="read --topic's keys from the live cluster of this folder with Spark's Kafka "
        "source, instead of --input",
    )
    keys.add_argument(
        "--max-records-per-partition",
        type=positive_int,
        metavar="N",
        help="with --cluster: only each partition's last N records (default: all)",
    )
    keys.add_argument(
        "--since",
        type=duration_above_zero("the duration"),
        metavar="DURATION",
        help="with --cluster: only records of the last DURATION, e.g. 1h, 7d",
    )
    keys.add_argument(
        "--min-partitions",
        type=positive_int,
        metavar="N",
        help="with --cluster: split the read into at least N Spark partitions "
        "(default: one per topic partition)",
    )
    keys.add_argument(
        "--partitions",
        required=True,
        type=_counts,
        metavar="N,N,...",
        help="candidate partition counts, e.g. 6,12,24",
    )
    keys.add_argument(
        "--key-column",
        default="key",
        metavar="COL",
        help="the key column, string (hashed as UTF-8) or binary (default: key)",
    )
    keys.add_argument("--size-column", metavar="COL", help="message size in bytes, per row")
    keys.add_argument(
        "--format",
        choices=("parquet", "csv", "json"),
        dest="fmt",
        help="the sample's format (default: from the file names)",
    )
    keys.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    keys.add_argument("--out", metavar="REPORT.json", help="write the JSON report ('-': stdout)")
    keys.add_argument("--markdown", action="store_true", help="print markdown, for a PR comment")
    keys.add_argument(
        "--current",
        type=positive_int,
        metavar="N",
        help="the topic's current partition count: moves are measured from it "
        "(default: the first of --partitions, or the topic's count in --state)",
    )
    add_state(keys, "its brokers and racks give per-broker and per-rack load")
    keys.add_argument(
        "--topic", metavar="T", help="the topic to read (--cluster) or to place (--state)"
    )
    keys.add_argument(
        "--consumers",
        type=positive_int,
        metavar="N",
        help="per-consumer load for a group of N members (range, round-robin)",
    )
    keys.add_argument(
        "--top",
        type=positive_int,
        default=10,
        metavar="N",
        help="how many hot keys to list (default: 10)",
    )
    keys.add_argument(
        "--engine",
        choices=("auto", "java", "arrow"),
        default="auto",
        help="murmur2 engine: the Java UDF, the Arrow fallback, or auto",
    )
    keys.add_argument(
        "--quiet", "-q", action="store_true", help="no stage lines on stderr, only errors"
    )


def _say(args: argparse.Namespace) -> Callable[[str], None]:
    """Stage lines on stderr, or nothing with --quiet."""
    from kgitops.analytics.progress import silent

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return silent if args.quiet else say


def _topic_source(args: argparse.Namespace) -> tuple[TopicSource | None, int | None]:
    """The live topic to read (and its partition count), or (None, None) for --input."""
    cluster_only = ("max_records_per_partition", "since", "min_partitions")
    if args.cluster is None:
        if args.input is None:
            raise AnalyticsError(
                "give the key sample (--input) or a live topic (--topic, --cluster)"
            )
        given = [n for n in cluster_only if getattr(args, n) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise AnalyticsError(f"{flag} needs --cluster (it bounds the read of a live topic)")
        return None, None
    if args.input is not None:
        raise AnalyticsError("--input and --cluster are two sources of keys: give one")
    if args.topic is None:
        raise AnalyticsError("--cluster needs --topic (the topic whose keys to read)")
    if args.key_column != "key" or args.size_column is not None or args.fmt is not None:
        raise AnalyticsError(
            "--key-column, --size-column and --format describe a file; with --cluster the "
            "key is the record's key and the size its serialized key + value"
        )
    from kgitops.analytics.kafkasource import TopicSource, source_options
    from kgitops.cluster.kafka.sample import offset_ranges
    from kgitops.commands._clusterdir import readable_cluster

    cluster = readable_cluster(args.cluster)
    if cluster.simulated is not None:
        raise AnalyticsError(
            f"{cluster.mark}: cluster {cluster.name!r} is simulated: it holds no messages to "
            "read; analyse a real cluster (or `kgitops local up`)"
        )
    options = source_options(cluster)  # secrets and TLS files checked before connecting
    since_ms = None if args.since is None else max(0, int((time.time() - args.since) * 1000))
    ranges = offset_ranges(
        cluster, args.topic, last=args.max_records_per_partition, since_ms=since_ms
    )
    source = TopicSource(
        topic=args.topic,
        cluster=cluster.name,
        ranges=ranges,
        options=options,
        min_partitions=args.min_partitions,
    )
    if source.records == 0:
        raise AnalyticsError(f"{source.describe()}: no record in range; nothing to analyse")
    return source, len(ranges)


def _placement_source(
    args: argparse.Namespace,
) -> tuple[int | None, tuple[dict[int, tuple[int, ...]], tuple[Broker, ...]] | None]:
    """(current count, placement inputs) from --state/--topic."""
    if args.state is None:
        if args.topic is not None and args.cluster is None:
            raise AnalyticsError(
                "--topic needs --state (the cluster state holding the topic) or --cluster "
                "(the cluster folder to read it from)"
            )
        return None, None
    if args.topic is None:
        raise AnalyticsError("--state needs --topic (which topic of the state to use)")
    from kgitops.cluster.snapshot import read_state

    state = read_state(args.state)
    topic = state.topics.get(args.topic)
    if topic is None:
        raise AnalyticsError(f"{args.state}: no topic {args.topic!r} in this state")
    current = {p: s.replicas for p, s in topic.partitions.items()}
    return topic.partition_count, (current, state.brokers)


def run(args: argparse.Namespace) -> int:
    from kgitops.analytics.job import JobSpec, analyze, counts_of, job_metadata
    from kgitops.analytics.render import render_markdown, render_text
    from kgitops.analytics.report import ReportInput, build_report, placements_for

    named: dict[str, str] = {}
    if args.out and args.out != "-":
        from kgitops.commands._out import named_files
        from kgitops.files import KEYS_REPORT_OUT, check_output

        named = named_files(None, args.out)
        check_output(args.out, KEYS_REPORT_OUT, named=named)  # before Spark starts
    state_count, placement_input = _placement_source(args)
    source, live_count = _topic_source(args)
    if live_count is not None and state_count is not None and live_count != state_count:
        raise AnalyticsError(
            f"{args.topic!r} has {live_count} partitions on the cluster but {state_count} "
            f"in {args.state}: take a fresh snapshot"
        )
    state_count = state_count if state_count is not None else live_count
    current = args.current if args.current is not None else state_count
    if args.current is not None and state_count is not None and args.current != state_count:
        raise AnalyticsError(
            f"--current {args.current} disagrees with {args.topic!r} in {args.state}, "
            f"which has {state_count} partitions"
        )
    from kgitops.analytics.kafkasource import KEY_COLUMN, SIZE_COLUMN

    spec = JobSpec(
        input=args.input if source is None else source.describe(),
        counts=tuple(args.partitions),
        key_column=args.key_column if source is None else KEY_COLUMN,
        size_column=args.size_column if source is None else SIZE_COLUMN,
        fmt=args.fmt,
        base=current,
        top=args.top,
        engine=args.engine,
        source=source,
    )
    from kgitops.analytics.job import guess_format
    from kgitops.analytics.precheck import check_columns

    if source is None:
        check_columns(  # before Spark starts: a missing column is said at once
            spec.input, spec.fmt or guess_format(spec.input), spec.key_column, spec.size_column
        )
    result = analyze(spec, master=args.master, say=_say(args))
    counts = counts_of(spec)
    placements = {}
    if placement_input is not None:
        placements = placements_for(placement_input[0], placement_input[1], counts)
    meta = job_metadata(spec, result)
    if current is not None:
        meta["current"] = current
    if args.topic:
        meta["topic"] = args.topic
    report = build_report(
        ReportInput(
            counts=counts,
            base=current if current is not None else counts[0],
            rows=result.rows,
            hot=result.hot,
            sizes=result.sizes,
            placements=placements,
            consumers=args.consumers,
            topic=args.topic or "topic",
            meta=meta,
        )
    )
    text = json.dumps(report, indent=2, sort_keys=False) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    if args.out:
        _write(args.out, text, named)
        if not args.markdown:
            print(f"wrote {args.out}", file=sys.stderr)
            return 0
    sys.stdout.write(render_markdown(report) if args.markdown else render_text(report))
    return 0


def _write(path: str, text: str, named: dict[str, str]) -> None:
    from kgitops.files import KEYS_REPORT_OUT, write_output

    try:
        write_output(path, text, KEYS_REPORT_OUT, named=named)
    except OSError as exc:
        raise KgitopsError(f"{path}: cannot write the report: {exc.strerror}") from exc
