"""``plan/apply --target SELECTOR``: a partial plan, only what the selectors name. Pure.

A selector is one of::

    payments.orders      a topic, by name or glob (payments.*)
    label:tier=1         the topics, ACL, User and Quota documents with this label
    acl:User:orders-app  the ACL bindings of a principal (a glob too: acl:User:team-*)
    user:orders-app      a SCRAM user's credentials (a glob too)
    quota:user=orders-app  a quota entity as plans print it (quota:orders-app: the user's)

The whole plan is made first (so every choice, e.g. where a new topic's replicas go, is the
one the whole plan would make), then only the selected actions are kept; the plan records
its selectors (``targets``) and its fingerprint covers only the selected topics, so a
change elsewhere on the cluster does not make it stale, a change of a selected topic does.
``apply --plan`` plans again with the same selectors and refuses anything else, as for a
whole plan, and runs a targeted plan only with ``--allow-targeted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kgitops.access import NO_ACCESS, AccessSpecs
from kgitops.errors import PlanError
from kgitops.model import ClusterSpec, ClusterState, TopicSpec, glob_match
from kgitops.plan.access_actions import AlterQuota, CreateAcl, DeleteAcl, UpsertUser
from kgitops.plan.actions import Action, Reassign
from kgitops.plan.fields import TARGETS_FIELD
from kgitops.plan.fingerprint import state_fingerprint
from kgitops.plan.kinds import ACCESS_KINDS
from kgitops.plan.spread import broker_spread
from kgitops.plan.transfer import estimate_transfer
from kgitops.plan.value import Plan

_PREFIXES = ("acl", "user", "quota", "label")


@dataclass(frozen=True)
class Selector:
    """One ``--target``: its kind (topic, acl, user, quota, label) and what follows."""

    kind: str
    value: str
    text: str  # as given

    def topic(self, spec: TopicSpec | None, name: str) -> bool:
        if self.kind == "topic":
            return glob_match(self.value, name)
        if self.kind == "label" and spec is not None:
            key, _, wanted = self.value.partition("=")
            return spec.labels.get(key) == wanted
        return False

    def access(self, action: Action, access: AccessSpecs = NO_ACCESS) -> bool:
        if self.kind == "label":
            pair = tuple(self.value.partition("=")[::2])
            if isinstance(action, CreateAcl):
                return any(s.acl == action.acl and pair in s.labels for s in access.acls)
            if isinstance(action, UpsertUser):
                return any(u.name == action.name and pair in u.labels for u in access.users)
            if isinstance(action, AlterQuota):
                return any(q.entity == action.entity and pair in q.labels for q in access.quotas)
            return False
        if self.kind == "acl" and isinstance(action, CreateAcl | DeleteAcl):
            return glob_match(self.value, action.acl.principal)
        if self.kind == "user" and isinstance(action, UpsertUser):
            return glob_match(self.value, action.name)
        if self.kind == "quota" and isinstance(action, AlterQuota):
            entity = action.entity
            if "=" in self.value:
                return entity.key == self.value
            return entity.user is not None and glob_match(self.value, entity.user)
        return False


def parse_selector(text: str) -> Selector:
    """``--target`` text -> Selector; PlanError (one line) for one that selects nothing."""
    head, sep, rest = text.partition(":")
    if sep and head in _PREFIXES:
        if not rest:
            raise PlanError(f"--target {text}: give what follows {head}: (e.g. {_example(head)})")
        if head == "label":
            key, eq, _ = rest.partition("=")
            if not eq or not key:
                raise PlanError(f"--target {text}: a label selector is label:KEY=VALUE")
        return Selector(head, rest, text)
    if not text or text.strip() != text:
        raise PlanError(
            f"--target {text!r}: give a topic name or glob, or acl:, user:, quota:, label:"
        )
    return Selector("topic", text, text)


def _example(head: str) -> str:
    return {
        "acl": "acl:User:orders-app",
        "user": "user:orders-app",
        "quota": "quota:user=orders-app",
        "label": "label:tier=1",
    }[head]


def parse_targets(texts: Iterable[str]) -> tuple[Selector, ...]:
    """The selectors, in the order given, each once."""
    seen: dict[str, Selector] = {}
    for text in texts:
        seen.setdefault(text, parse_selector(text))
    return tuple(seen.values())


def targeted(
    plan: Plan,
    selectors: Sequence[Selector],
    specs: Sequence[TopicSpec],
    state: ClusterState,
    cluster: ClusterSpec,
    access: AccessSpecs = NO_ACCESS,
) -> Plan:
    """``plan`` cut down to what ``selectors`` name (see the module doc); the selectors are
    recorded in its ``targets``. A selector that names nothing at all is a PlanError (a typo
    must not look like "no changes")."""
    by_name: Mapping[str, TopicSpec] = {t.name: t for t in specs}
    known = set(by_name) | set(state.topics) | {a.topic for a in _topic_actions(plan.actions)}
    topics = {n for n in known if any(s.topic(by_name.get(n), n) for s in selectors)}
    actions = [
        a
        for a in plan.actions
        if (a.kind in ACCESS_KINDS and any(s.access(a, access) for s in selectors))
        or (a.kind not in ACCESS_KINDS and a.topic in topics)
    ]
    unmatched = [
        s.text
        for s in selectors
        if not any(s.topic(by_name.get(n), n) for n in known)
        and not any(s.access(a, access) for a in plan.actions if a.kind in ACCESS_KINDS)
        and not (s.kind == "label" and _labelled(s.value, access))
        and s.kind in ("topic", "label")
    ]
    if unmatched:
        raise PlanError(
            f"--target {', '.join(unmatched)}: no topic in the specs or on cluster "
            f"{cluster.name} matches"
        )
    fingerprint, digests = state_fingerprint(state, sorted(topics))
    moves = any(isinstance(a, Reassign) for a in actions)
    covers_access = any(a.kind in ACCESS_KINDS for a in actions) or any(
        s.kind in ("acl", "user", "quota") for s in selectors
    )
    settings = cluster.reassignment
    return replace(
        plan,
        state_fingerprint=fingerprint,
        state_digests=digests,
        actions=tuple(actions),
        warnings=tuple(w for w in plan.warnings if not w.topic or w.topic in topics),
        transfer=estimate_transfer(
            actions, state, settings.throttle_bytes_per_sec, settings.max_concurrent_moves
        ),
        spread=broker_spread(state, actions) if moves else None,
        # access is part of this plan only when it acts on it or a selector names it
        access_fingerprint=plan.access_fingerprint if covers_access else None,
        access_parts=plan.access_parts if covers_access else None,
        targets=tuple(s.text for s in selectors),
    )


def _labelled(value: str, access: AccessSpecs) -> bool:
    """Whether an access document has the label ``KEY=VALUE``."""
    pair = tuple(value.partition("=")[::2])
    return any(
        pair in s.labels for group in (access.acls, access.users, access.quotas) for s in group
    )


def _topic_actions(actions: Iterable[Action]) -> Iterable[Action]:
    return (a for a in actions if a.kind not in ACCESS_KINDS and a.topic)


def targets_of(plan_json: Mapping[str, object]) -> list[str] | None:
    """The selectors a plan (JSON) was cut to; None for a whole plan."""
    value = plan_json.get(TARGETS_FIELD)
    return [str(v) for v in value] if isinstance(value, list) else None
