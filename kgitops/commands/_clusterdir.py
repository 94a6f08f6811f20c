"""The cluster a folder's cluster.yaml describes, for commands that need only the cluster
(snapshot, status, simulate, import): topic files with errors do not stop them, a broken
cluster.yaml does, with its file:line:col."""

from __future__ import annotations

from kgitops.errors import Diagnostic, Mark, SpecError
from kgitops.model import ClusterSpec


def load_cluster(directory: str) -> ClusterSpec:
    """The ClusterSpec of ``directory``; SpecError with every diagnostic when there is none."""
    from kgitops.spec.load import load_specs

    specs = load_specs(directory)
    if specs.cluster is None:
        errors = specs.errors or [
            Diagnostic(Mark(directory), "error", "no cluster.yaml in this folder")
        ]
        raise SpecError(errors)
    own = [d for d in specs.errors if d.mark.path == specs.cluster.mark.path]
    if own:  # e.g. a stateFile outside the folder: never act on a cluster.yaml with errors
        raise SpecError(own)
    return specs.cluster
