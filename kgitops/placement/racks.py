"""The rack rule, in one place: validate, the diff and rebalance all ask this module.

Kafka's rack-aware assignment (``AdminUtils.assignReplicasToBrokersRackAware``) spreads each
partition's replicas over as many racks as it can: ``min(RF, racks)`` distinct racks, counting
the racks of the brokers it assigns to. It needs a rack on every broker (otherwise it refuses,
"Not all brokers have rack information"), so the rule applies only when every broker has one.

The racks a partition *can* be on are those of the brokers a replica may be placed on now
(online and not being decommissioned), plus the racks it already covers::

    brokers 1@a 2@a 3@b 4@c, broker 4 decommissioned, RF 3
    replicas (1, 2, 3): racks {a, b}; could be on {a, b} -> needs 2 -> fine
    replicas (1, 2, 4): racks {a, c}; could be on {a, b, c} -> needs 3 -> broken

Counting a rack whose only broker is offline or drained would ask for a move no placement can
make (the first version's diff did, while rebalance and validate did not; see
tests/planner/test_rack_rule.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from kgitops.model import Broker


@dataclass(frozen=True)
class RackRule:
    """``rack_of``: every broker's rack (empty: some broker has none, the rule is off);
    ``available``: the racks replicas may be placed on now."""

    rack_of: Mapping[int, str]
    available: frozenset[str]

    @classmethod
    def of(cls, brokers: Iterable[Broker], drain: Collection[int] = ()) -> RackRule:
        listed = list(brokers)
        if not listed or any(b.rack is None for b in listed):
            return cls({}, frozenset())
        rack_of = {b.id: b.rack for b in listed if b.rack is not None}
        available = frozenset(
            b.rack for b in listed if b.rack is not None and b.online and b.id not in drain
        )
        return cls(rack_of, available)

    @property
    def applies(self) -> bool:
        return bool(self.rack_of)

    def racks(self, replicas: Iterable[int]) -> set[str]:
        """The racks ``replicas`` cover (brokers the rule does not know cover none)."""
        rack_of = self.rack_of
        return {rack_of[b] for b in replicas if b in rack_of}

    def needed(self, replicas: Collection[int], covered: set[str] | None = None) -> int:
        """``min(replicas, racks they could be on)``: the racks the partition should cover."""
        racks = self.racks(replicas) if covered is None else covered
        return min(len(set(replicas)), len(self.available | racks))

    def broken(self, replicas: Collection[int]) -> bool:
        """Whether the partition covers fewer racks than it could."""
        if not self.rack_of:
            return False
        racks = self.racks(replicas)
        return len(racks) < self.needed(replicas, racks)
