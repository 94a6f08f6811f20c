"""``kgitops completion bash|zsh|fish``: print a shell completion script.

::

    $ eval "$(kgitops completion bash)"          # this shell; or save it, docs/cli.md
    $ kgitops completion fish | source

The script is written from the command line's own parser (commands/_complete.py), so every
command, nested command, option and choice kgitops has is completed, and a new one needs
nothing here.
"""

from __future__ import annotations

import argparse

from kgitops.errors import KgitopsError

NAME = "completion"
HELP = "print a shell completion script (bash, zsh or fish) for commands, options and choices"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")


def run(args: argparse.Namespace) -> int:
    from kgitops.commands._complete import SHELLS, tree

    root = getattr(args, "_parser", None)
    if not isinstance(root, argparse.ArgumentParser):  # pragma: no cover - cli.py sets it
        raise KgitopsError("completion: the command line's parser is not available")
    print(SHELLS[args.shell](tree(root)), end="")
    return 0
