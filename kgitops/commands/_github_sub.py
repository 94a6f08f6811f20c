"""How a ``kgitops github`` subcommand is declared: its parser names the function that runs
it (``args._github``, which ``github.run`` calls), so no subcommand is without one.

``github.py`` declares the workflow helpers (``comment``, ``check-plan`` ...),
``_ci_steps.py`` and ``_ci_clusters.py`` the workflows' steps, each with ``subcommand``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def subcommand(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """The parser of ``kgitops github NAME``, run by ``run``; the caller adds its flags."""
    parser = sub.add_parser(name, help=help, description=description)
    parser.set_defaults(_github=run)
    return parser
