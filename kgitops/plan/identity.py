"""The cluster identity guard: cluster.yaml's ``clusterId`` against the id the cluster reports.

A reused address (a test cluster rebuilt behind ``kafka-1:9092``, a DNS name moved to another
environment) must not receive a plan made for another cluster::

    error: cluster.yaml pins clusterId 'lkc-prod-1' but the cluster at kafka-1:9092 reports
    'lkc-test-7'; refusing to plan against another cluster
"""

from __future__ import annotations

from kgitops.errors import WrongCluster
from kgitops.model import ClusterSpec, ClusterState


def check_cluster_id(cluster: ClusterSpec, state: ClusterState, *, doing: str = "plan") -> None:
    """WrongCluster when cluster.yaml pins ``clusterId`` and the cluster reports another id
    (or none: an adapter that cannot tell is refused too, as the guard was asked for)."""
    pinned = cluster.cluster_id
    if pinned is None or state.cluster_id == pinned:
        return
    where = (
        f"the cluster at {','.join(cluster.bootstrap_servers)}"
        if cluster.bootstrap_servers
        else "the cluster"
    )
    live = repr(state.cluster_id) if state.cluster_id is not None else "no cluster id"
    raise WrongCluster(
        f"cluster.yaml pins clusterId {pinned!r} but {where} reports {live}; "
        f"refusing to {doing} against another cluster"
    )
