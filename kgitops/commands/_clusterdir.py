"""The cluster a folder's cluster.yaml describes, for commands that need only the cluster
(snapshot, status, simulate, import): topic files with errors do not stop them, a broken
cluster.yaml does, with its file:line:col. A command that only reads (``get``) is stopped
only by an error in how to reach the cluster (``readable_cluster``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kgitops.errors import Diagnostic, Mark, SpecError, printable
from kgitops.model import ClusterSpec

if TYPE_CHECKING:
    from kgitops.spec.load import Specs


def add_cluster_dir_argument(parser: argparse.ArgumentParser, other: str = "") -> None:
    """The ``DIR`` positional, ``args.dir``, of the commands that act on one cluster folder;
    ``other`` names what else it may be (``snapshot diff``)."""
    parser.add_argument("dir", metavar="DIR", help=f"the cluster folder (with cluster.yaml){other}")


def load_cluster(directory: str) -> ClusterSpec:
    """The ClusterSpec of ``directory``; SpecError with every diagnostic when there is none."""
    from kgitops.spec.load import load_specs

    return cluster_of(load_specs(directory), directory)


def cluster_of(specs: Specs, directory: str) -> ClusterSpec:
    """``specs.cluster``, or SpecError when cluster.yaml has any error: validation keeps
    what is valid of a broken cluster.yaml to check the rest, but nothing acts on it."""
    if specs.cluster is None:
        errors = specs.errors or [
            Diagnostic(Mark(directory), "error", "no cluster.yaml in this folder")
        ]
        raise SpecError(errors)
    own = [d for d in specs.errors if d.mark.path == specs.cluster.mark.path]
    if own:  # e.g. a stateFile outside the folder: never act on a cluster.yaml with errors
        raise SpecError(own)
    return specs.cluster


def readable_cluster(directory: str) -> ClusterSpec:
    """The ClusterSpec of ``directory`` for a command that only reads: errors in the topic
    files, or in cluster.yaml outside its connection fields (``defaults``, ``reassignment``
    ...), do not stop it; one line on stderr says the folder does not validate. An error in
    how to reach the cluster (``bootstrapServers``, ``security``, ``simulated`` ...) does."""
    from kgitops.spec.cluster_doc import connection_errors
    from kgitops.spec.load import load_specs

    specs = load_specs(directory)
    if specs.cluster is None or not specs.errors:
        return cluster_of(specs, directory)
    own = [d for d in specs.errors if d.mark.path == specs.cluster.mark.path]
    if own and connection_errors(specs.cluster):
        raise SpecError(own)
    files = sorted({d.mark.path for d in specs.errors})
    shown = ", ".join(printable(f) for f in files[:3]) + (", ..." if len(files) > 3 else "")
    print(
        f"warning: {len(specs.errors)} error(s) in {len(files)} spec file(s) ({shown}); "
        f"showing the cluster anyway (`kgitops validate {printable(directory)}` lists them)",
        file=sys.stderr,
    )
    return specs.cluster
