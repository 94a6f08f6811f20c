"""``kgitops partition``: the partition Kafka's default partitioner picks for each key.

::

    $ kgitops partition --partitions 12 user-1 user-2
    $ kgitops partition --partitions 12 --hex 00ff10

``toPositive(murmur2(key bytes)) % N``, keys as UTF-8 (Kafka's StringSerializer) or, with
``--hex``, the exact bytes given in hex; ``-`` reads keys from stdin, one per line. One
partition per line, in the order of the keys (for scripts); ``--format json`` prints each key
next to its partition::

    {"format": "kgitops-partition/v1", "partitions": 12,
     "keys": [{"key": "user-1", "keyHex": "757365722d31", "partition": 9}, ...]}

``key`` is the key as text, or null when its bytes (``--hex``) are not UTF-8.
"""

from __future__ import annotations

import argparse
import json
import sys

from kgitops.commands._units import integer
from kgitops.errors import KgitopsError
from kgitops.names import INT32_MAX

MAX_KAFKA_PARTITIONS = INT32_MAX
NAME = "partition"
HELP = "print the partition Kafka's default partitioner picks for each key"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--partitions", required=True, type=integer, metavar="N")
    parser.add_argument("--hex", action="store_true", help="keys are hex-encoded bytes")
    parser.add_argument(
        "keys",
        nargs="+",
        metavar="KEY",
        help="keys to place; '-' reads one key per line from stdin",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: one partition a line, in key order (default); json: each key and its partition",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._units import check_count
    from kgitops.placement.partitioner import partition_for

    # the computation costs the same for any count: every count Kafka accepts (its partition
    # count is a Java int) is answered, as Kafka's own tests use Integer.MAX_VALUE
    check_count(args.partitions, "--partitions", MAX_KAFKA_PARTITIONS)
    given: list[str] = []
    for key in args.keys:
        if key == "-":
            given.extend(line.rstrip("\r\n") for line in sys.stdin)
        else:
            given.append(key)
    keys: list[str | bytes] = []
    for key in given:
        if args.hex:
            try:
                keys.append(bytes.fromhex(key))
            except ValueError:
                raise KgitopsError(f"--hex: {key!r} is not hex (expected e.g. 00ff10)") from None
        else:
            try:
                key.encode("utf-8")
            except UnicodeEncodeError:
                raise KgitopsError(f"key {key!r} is not valid text; use --hex") from None
            keys.append(key)
    if args.format == "json":
        print(json.dumps(_report(keys, args.partitions), indent=2))
        return 0
    for key in keys:
        print(partition_for(key, args.partitions))
    return 0


def _report(keys: list[str | bytes], partitions: int) -> dict[str, object]:
    from kgitops.placement.partitioner import partition_for

    rows: list[dict[str, object]] = []
    for key in keys:
        raw = key.encode("utf-8") if isinstance(key, str) else key
        try:
            text: str | None = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        rows.append({"key": text, "keyHex": raw.hex(), "partition": partition_for(key, partitions)})
    return {"format": "kgitops-partition/v1", "partitions": partitions, "keys": rows}
