"""The action kinds, one list: ``ENTRIES``, one ``Entry`` per kind, in apply order.

A kind's class (``kgitops.plan.actions``, ``kgitops.plan.access_actions``) owns its JSON
``type``, ``order`` and ``symbol``; its entry here says what the rest of the code needs to
know of it, so nothing else lists the kinds:

* ``subject``: what its actions act on: ``topic`` (a topic, or a broker's throttles) or
  ``access`` (ACL bindings, SCRAM users, client quotas: sent in an access API, read back
  from the part of the access in ``access_part``);
* ``steps``: the apply steps that run its actions, by name (``kgitops.apply.run`` maps each
  name to its step) with the place of each among all steps (``STEPS``, in run order).
  alter_config has two: the config changes, and those that must wait for the topic's
  moves (a min.insync.replicas raise after a replication factor raise).

``tests/apply/test_kind_tables.py`` checks that every registered kind has an entry and
that apply has a step for every step named here::

    order  kind              subject  apply steps
       10  create_topic      topic    creates
       20  alter_config      topic    configs, configs_after_moves (after reassign)
       30  add_partitions    topic    partitions
       40  reassign          topic    reassign
       45  remove_throttles  topic    throttles
       50  elect_leaders     topic    elections
    52-58  upsert_user,      access   access (one step for the four access kinds)
           alter_quota,
           create_acl,
           delete_acl
       60  delete_topic      topic    deletes
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kgitops.plan import access_actions, actions
from kgitops.plan.action_base import Action

Subject = Literal["topic", "access"]


@dataclass(frozen=True)
class Step:
    """One apply step: its name (``kgitops.apply.run`` runs the step of that name) and its
    place among all steps (lower first)."""

    name: str
    order: int


@dataclass(frozen=True)
class Entry:
    """One kind: its class (JSON type, order, symbol), subject and apply steps."""

    action: type[Action]
    subject: Subject
    steps: tuple[Step, ...]
    #: an access kind: the part of the cluster's access it is read back from
    access_part: str | None = None

    @property
    def kind(self) -> str:
        return self.action.kind

    @property
    def order(self) -> int:
        return self.action.order


def _step(name: str, order: int) -> tuple[Step, ...]:
    return (Step(name, order),)


_ACCESS = Step("access", 52)

ENTRIES: tuple[Entry, ...] = tuple(
    sorted(
        (
            Entry(actions.CreateTopic, "topic", _step("creates", 10)),
            Entry(
                actions.AlterConfig,
                "topic",
                (Step("configs", 20), Step("configs_after_moves", 41)),
            ),
            Entry(actions.AddPartitions, "topic", _step("partitions", 30)),
            Entry(actions.Reassign, "topic", _step("reassign", 40)),
            Entry(actions.RemoveThrottles, "topic", _step("throttles", 45)),
            Entry(actions.ElectLeaders, "topic", _step("elections", 50)),
            Entry(access_actions.UpsertUser, "access", (_ACCESS,), access_part="users"),
            Entry(access_actions.AlterQuota, "access", (_ACCESS,), access_part="quotas"),
            Entry(access_actions.CreateAcl, "access", (_ACCESS,), access_part="acls"),
            Entry(access_actions.DeleteAcl, "access", (_ACCESS,), access_part="acls"),
            Entry(actions.DeleteTopic, "topic", _step("deletes", 60)),
        ),
        key=lambda e: e.order,
    )
)

#: The kinds sent in an access API (AlterUserScramCredentials, AlterClientQuotas,
#: CreateAcls, DeleteAcls): their subject is not a topic.
ACCESS_KINDS: frozenset[str] = frozenset(e.kind for e in ENTRIES if e.subject == "access")

#: access kind -> the part of the cluster's access (acls, users, quotas) it is read back from
ACCESS_PART: Mapping[str, str] = {
    e.kind: e.access_part for e in ENTRIES if e.access_part is not None
}

#: Apply's steps by name, in the order it runs them (each once).
STEPS: tuple[str, ...] = tuple(
    s.name for s in sorted({s for e in ENTRIES for s in e.steps}, key=lambda s: s.order)
)


def entry(kind: str) -> Entry:
    """The entry of the kind whose JSON ``type`` is ``kind`` (KeyError: none)."""
    return _BY_KIND[kind]


_BY_KIND = {e.kind: e for e in ENTRIES}
