"""``kgitops export-reassignment PLAN``: a saved plan's moves as kafka-reassign-partitions JSON."""

from __future__ import annotations

import argparse
import sys

from kgitops.errors import PlanError

NAME = "export-reassignment"
HELP = "print a saved plan's moves in kafka-reassign-partitions.sh JSON format"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "plan", metavar="PLAN", help="a plan saved by `kgitops plan --out` (- for stdin)"
    )
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._out import named_files
    from kgitops.files import REASSIGNMENT_OUT, check_output, max_file_size, read_json, write_output
    from kgitops.jsontext import loads_json
    from kgitops.plan.value import Plan
    from kgitops.render.text import reassignment_json, render_reassignment

    named = named_files(None, args.out) if args.out else {}
    if args.out:
        check_output(args.out, REASSIGNMENT_OUT, named=named)
    try:
        if args.plan == "-":
            raw = sys.stdin.buffer.read(max_file_size() + 1)
            if len(raw) > max_file_size():
                raise PlanError(f"<stdin>: the plan is larger than {max_file_size():,} bytes")
            data = loads_json(raw, "<stdin>")
        else:
            data = read_json(args.plan)
    except OSError as exc:
        raise PlanError(f"{args.plan}: cannot read the plan: {exc.strerror or exc}") from None
    try:
        plan = Plan.from_json(data)
    except PlanError as exc:
        raise PlanError(f"{args.plan}: {exc}") from None
    data = reassignment_json(plan.to_json())
    text = render_reassignment(plan.to_json())
    if args.out:
        try:
            write_output(
                args.out, text, REASSIGNMENT_OUT, named=named, empty=not data["partitions"]
            )
        except OSError as exc:
            raise PlanError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 0
