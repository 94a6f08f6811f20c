"""The options several commands declare alike, one declaring function each: the flag, its
type and the part of its help every command shares, taking only the words that differ.

``--state`` (plan, import, validate, analyze keys, github check-plan), ``--allow-delete``
(apply, github check-plan), ``--base`` / ``--allow-connection-change`` (plan, github
check-plan), ``--topic`` as a repeatable filter (import, snapshot), ``--dry-run`` (apply,
import) and ``--format`` (plan, apply, validate). The arguments only plan and apply share
are in ``commands/_fleet.py``.
"""

from __future__ import annotations

import argparse


def add_state(parser: argparse.ArgumentParser, use: str) -> None:
    """``--state FILE``, ``args.state``: a snapshot read instead of (or beside) the cluster;
    ``use`` says what the command does with it."""
    parser.add_argument(
        "--state", metavar="FILE", help=f"a saved cluster state (kgitops snapshot): {use}"
    )


def add_allow_delete(parser: argparse.ArgumentParser) -> None:
    """``--allow-delete``, ``args.allow_delete``: the gate on deleting topics and ACLs."""
    parser.add_argument(
        "--allow-delete", action="store_true", help="let the plan delete topics and ACLs"
    )


def add_connection_review(parser: argparse.ArgumentParser, base: str, allowed: str) -> None:
    """``--base REF`` and ``--allow-connection-change``: cluster.yaml's connection settings
    compared with a git ref, and a reviewed change let through; ``base`` says what the
    comparison finds, ``allowed`` what the command then does."""
    parser.add_argument(
        "--base",
        metavar="REF",
        help=f"compare cluster.yaml's connection settings with this git ref {base}",
    )
    parser.add_argument(
        "--allow-connection-change",
        action="store_true",
        help=f"the connection change (a CONNECTION_CHANGED finding) is reviewed and allowed: "
        f"{allowed}",
    )


def add_topic_filter(parser: argparse.ArgumentParser) -> None:
    """``--topic NAME``, repeatable, ``args.topic`` (None: every topic)."""
    parser.add_argument(
        "--topic",
        action="append",
        default=None,
        metavar="NAME",
        help="only this topic (repeatable); default: every topic",
    )


def add_dry_run(parser: argparse.ArgumentParser, output: str, instead: str) -> None:
    """``--dry-run``, ``args.dry_run``: print ``output`` instead of ``instead``."""
    parser.add_argument(
        "--dry-run", action="store_true", help=f"print {output} instead of {instead}"
    )


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], help: str) -> None:
    """``--format``, ``args.format``: text unless another of ``choices`` is asked for."""
    parser.add_argument("--format", choices=choices, default="text", help=help)
