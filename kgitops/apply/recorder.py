"""A ClusterAdmin in front of another that writes down every write request, one line each.

``apply`` always runs through it: the lines are the report's request count, and with
``send=False`` (``--dry-run``) they are the output -- the exact requests a real run would send,
since the same code produces them. Reads (describe, list_reassignments) always go through::

    CreateTopics [{"assignment":{"0":[1,2,3]},"config":{"retention.ms":"1000"},"name":"a"}]
    IncrementalAlterConfigs topics {"a":{"set":{"retention.ms":"2000"}}}
    AlterPartitionReassignments {"a-0":[1,2,4]}
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from kgitops.access import Acl, QuotaEntity, ScramCredential, json_number
from kgitops.cluster.port import (
    ClusterAdmin,
    ConfigChange,
    NewPartitions,
    NewTopic,
    PartitionResults,
    QuotaChange,
    Results,
    ScramUpsert,
)
from kgitops.errors import ClusterError
from kgitops.groups import GroupsState
from kgitops.model import OWNER_TOPIC, ClusterState, TopicPartition
from kgitops.plan.owners import OwnerRecord, record_json

_K = TypeVar("_K")


def _j(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _assign(a: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
    return {str(p): list(r) for p, r in sorted(a.items())}


def _change(c: ConfigChange) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if c.set:
        out["set"] = dict(sorted(c.set.items()))
    if c.delete:
        out["delete"] = sorted(c.delete)
    if c.append:
        out["append"] = dict(sorted(c.append.items()))
    if c.subtract:
        out["subtract"] = dict(sorted(c.subtract.items()))
    return out


class Recorder:
    """Writes one line per write request it passes on (``send=False``: passes none on and
    answers success for every item, for ``--dry-run``)."""

    def __init__(self, inner: ClusterAdmin, *, send: bool = True) -> None:
        self.inner = inner
        self.send = send
        self.requests: list[str] = []

    def _write(self, line: str, items: Iterable[_K]) -> Mapping[_K, ClusterError | None] | None:
        self.requests.append(line)
        if self.send:
            return None
        return dict.fromkeys(items)

    def describe(self, topics: Iterable[str] | None = None) -> ClusterState:
        return self.inner.describe(topics)

    def list_reassignments(self) -> Mapping[str, Mapping[int, tuple[tuple[int, ...], ...]]]:
        return self.inner.list_reassignments()

    def create_topics(self, topics: Sequence[NewTopic]) -> Results:
        body = [
            {"name": t.name, "assignment": _assign(t.assignment), "config": dict(t.config)}
            for t in topics
        ]
        fake = self._write(f"CreateTopics {_j(body)}", (t.name for t in topics))
        return fake if fake is not None else self.inner.create_topics(topics)

    def create_partitions(self, additions: Sequence[NewPartitions]) -> Results:
        body = {a.topic: {"total": a.total, "assignment": _assign(a.assignment)} for a in additions}
        fake = self._write(f"CreatePartitions {_j(body)}", (a.topic for a in additions))
        return fake if fake is not None else self.inner.create_partitions(additions)

    def alter_topic_configs(self, changes: Mapping[str, ConfigChange]) -> Results:
        body = {t: _change(c) for t, c in changes.items()}
        fake = self._write(f"IncrementalAlterConfigs topics {_j(body)}", changes)
        return fake if fake is not None else self.inner.alter_topic_configs(changes)

    def alter_broker_configs(self, changes: Mapping[int, ConfigChange]) -> Results:
        body = {str(b): _change(c) for b, c in changes.items()}
        fake = self._write(
            f"IncrementalAlterConfigs brokers {_j(body)}", (f"broker:{b}" for b in changes)
        )
        return fake if fake is not None else self.inner.alter_broker_configs(changes)

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> PartitionResults:
        tps = [TopicPartition(*tp) for tp in targets]
        body = {
            str(tp): None if r is None else list(r)
            for tp, r in zip(tps, targets.values(), strict=True)
        }
        fake = self._write(f"AlterPartitionReassignments {_j(body)}", tps)
        return fake if fake is not None else self.inner.alter_reassignments(targets)

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> PartitionResults:
        parts = [TopicPartition(*tp) for tp in partitions]
        fake = self._write(f"ElectLeaders PREFERRED {_j([str(tp) for tp in parts])}", parts)
        return fake if fake is not None else self.inner.elect_preferred_leaders(parts)

    def delete_topics(self, names: Sequence[str]) -> Results:
        fake = self._write(f"DeleteTopics {_j(list(names))}", names)
        return fake if fake is not None else self.inner.delete_topics(names)

    # ------------------------------------------------------------ consumer groups

    def describe_groups(self, group_ids: Iterable[str] | None = None) -> GroupsState:
        return self.inner.describe_groups(group_ids)

    def list_offsets(
        self, partitions: Iterable[tuple[str, int]], spec: int
    ) -> Mapping[tuple[str, int], int]:
        return self.inner.list_offsets(partitions, spec)

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> PartitionResults:
        line = {str(tp): o for tp, o in sorted(offsets.items())}
        fake = self._write(f"OffsetCommit {_j({'group': group_id, 'offsets': line})}", offsets)
        return fake if fake is not None else self.inner.alter_group_offsets(group_id, offsets)

    def delete_groups(self, group_ids: Sequence[str]) -> Results:
        fake = self._write(f"DeleteGroups {_j(list(group_ids))}", group_ids)
        return fake if fake is not None else self.inner.delete_groups(group_ids)

    # ------------------------------------------------------------ access

    def probe_access(self, apis: Collection[str]) -> None:
        self.inner.probe_access(apis)  # changes nothing: sent in --dry-run too

    def read_owners(self) -> Mapping[str, OwnerRecord]:
        return self.inner.read_owners()

    def record_owners(self, records: Mapping[str, OwnerRecord | None]) -> None:
        # apply records its owner before the plan runs (commands/_owners.claim), not here
        body = {o: None if r is None else record_json(r) for o, r in sorted(records.items())}
        self.requests.append(f"Produce {OWNER_TOPIC} {_j(body)}")
        if self.send:
            self.inner.record_owners(records)

    def ready_scram_versions(self) -> None:
        self.inner.ready_scram_versions()  # apply's preflight: never in --dry-run

    def describe_acls(self) -> frozenset[Acl]:
        return self.inner.describe_acls()

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        return self.inner.describe_client_quotas()

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        return self.inner.describe_scram_users()

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        fake = self._write(f"CreateAcls {_j([a.to_json() for a in acls])}", (a.key for a in acls))
        return fake if fake is not None else self.inner.create_acls(acls)

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        fake = self._write(f"DeleteAcls {_j([a.to_json() for a in acls])}", (a.key for a in acls))
        return fake if fake is not None else self.inner.delete_acls(acls)

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        body = [
            {
                "entity": e.to_json(),
                "set": {k: json_number(v) for k, v in sorted(c.set.items())},
                "remove": sorted(c.delete),
            }
            for e, c in changes.items()
        ]
        fake = self._write(f"AlterClientQuotas {_j(body)}", (e.key for e in changes))
        return fake if fake is not None else self.inner.alter_client_quotas(changes)

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        # The salt and salted password are never written down. passwordVersion: what a real
        # cluster's adapter then records in its passwordVersion topic (one Produce).
        body = [
            {
                "name": u.name,
                "mechanism": u.mechanism,
                "iterations": u.iterations,
                "passwordVersion": u.password_version,
            }
            for u in upserts
        ]
        fake = self._write(f"AlterUserScramCredentials {_j(body)}", (u.key for u in upserts))
        return fake if fake is not None else self.inner.upsert_scram_users(upserts)

    def sleep(self, seconds: float) -> None:
        if self.send:
            self.inner.sleep(seconds)

    def close(self) -> None:
        self.inner.close()
