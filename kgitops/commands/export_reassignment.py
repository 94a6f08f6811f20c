"""``kgitops export-reassignment PLAN``: a saved plan's moves as kafka-reassign-partitions JSON."""

from __future__ import annotations

import argparse
import json
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
    from kgitops.plan.render import render_reassignment
    from kgitops.plan.value import Plan

    try:
        if args.plan == "-":
            data = json.load(sys.stdin)
        else:
            with open(args.plan, encoding="utf-8") as f:
                data = json.load(f)
    except OSError as exc:
        raise PlanError(f"{args.plan}: cannot read the plan: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"{args.plan}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    plan = Plan.from_json(data)
    text = render_reassignment(plan.to_json())
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise PlanError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 0
