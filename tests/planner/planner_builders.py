"""Builders for hand-made specs and states, so the planner's tests read as specifications."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgitops.errors import Diagnostic, Mark
from kgitops.model import (
    Broker,
    ClusterSpec,
    ClusterState,
    PartitionState,
    TopicSpec,
    TopicState,
)


@dataclass(frozen=True)
class FakeSpecs:
    """The shape of specs.Specs that the diff reads."""

    cluster: ClusterSpec | None
    topics: tuple[TopicSpec, ...]
    directory: str = "."
    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)


def specs(*topics: TopicSpec, **cluster: object) -> FakeSpecs:
    c = ClusterSpec(name="test", directory=".", **cluster)  # type: ignore[arg-type]
    return FakeSpecs(cluster=c, topics=tuple(sorted(topics, key=lambda t: t.name)))


def topic(name: str, partitions: int = 3, rf: int = 3, **kw: Any) -> TopicSpec:
    marks = {
        "partitions": Mark(f"topics/{name}.yaml", 3, 13),
        "replicationFactor": Mark(f"topics/{name}.yaml", 4, 20),
    }
    return TopicSpec(
        name=name,
        partitions=partitions,
        replication_factor=rf,
        mark=Mark(f"topics/{name}.yaml", 1, 1),
        marks=marks,
        **kw,
    )


def brokers(n: int, racks: Sequence[str] | None = None) -> tuple[Broker, ...]:
    return tuple(Broker(i, None if racks is None else racks[i % len(racks)]) for i in range(n))


def live(
    name: str,
    assignment: Mapping[int, Sequence[int]],
    config: Mapping[str, str] | None = None,
    size: int | None = 1000,
) -> TopicState:
    return TopicState(
        name=name,
        partitions={
            p: PartitionState(tuple(r), tuple(r), r[0], size) for p, r in assignment.items()
        },
        config=dict(config or {}),
    )


def state(bs: Sequence[Broker], *topics: TopicState, **kw: object) -> ClusterState:
    return ClusterState(brokers=tuple(bs), topics={t.name: t for t in topics}, **kw)  # type: ignore[arg-type]
