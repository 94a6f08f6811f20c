"""Open the cluster a cluster.yaml describes: the simulated one or a real one over kafka-python.

Both adapters are imported lazily, so a command that never touches a cluster never loads
kafka-python, and a simulated cluster never needs it.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgitops.cluster.port import ClusterAdmin
from kgitops.model import ClusterSpec


def open_cluster(spec: ClusterSpec, *, environ: Mapping[str, str] | None = None) -> ClusterAdmin:
    """The ``ClusterAdmin`` for ``spec``: ``SimulatedCluster`` when it is simulated, else
    ``KafkaAdmin`` (which connects now, and raises a ``ClusterError`` when it cannot)."""
    if spec.simulated is not None:
        from kgitops.cluster.simulated import SimulatedCluster
        from kgitops.spec.include import repository_root

        return SimulatedCluster.from_spec(spec.simulated, root=repository_root(spec.directory))
    from kgitops.cluster.kafka.admin import KafkaAdmin

    return KafkaAdmin(spec, environ=environ)
