"""Access documents in a team folder are held to that team's names and principals.

``policies.names`` delegates a sub-folder to a team (its topics' names, its reviewers in
CODEOWNERS). An ACL, User or Quota document in that folder, or a topic's ``access``, is the
team's too, so it may only speak for the team: its principals are those the rule lists in
``principals`` (exactly, or by a prefix ending in ``*``), its topic, group and
transactional-id resources have names the rule's ``pattern`` matches (never ``*``), and it
grants nothing on the cluster resource; a quota names one of the team's users::

    policies:
      names:
        - folder: team-a/
          pattern: '^team-a\\.'
          owners: ['@acme/team-a']
          principals: ['User:team-a-*']

    topics/prod/team-a/acl.yaml:5:17: error: resource topic 'kgitops.password-versions' is
      not the team's: team-a/ names match ^team-a\\. (policy names at cluster.yaml:12:7)

A rule without ``principals`` allows its folder no access document at all. Findings follow
``policies.mode`` (error, or warn).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kgitops.errors import Diagnostic, Mark, Severity
from kgitops.spec.policies import NameRule, name_rules
from kgitops.spec.yamlload import Document


def _allowed(principal: str, principals: Sequence[str]) -> bool:
    return any(
        principal == p or (p.endswith("*") and principal.startswith(p[:-1])) for p in principals
    )


def _rule_of(path: str, directory: str, rules: Sequence[NameRule]) -> NameRule | None:
    rel = os.path.relpath(path, directory).replace(os.sep, "/")
    for rule in rules:
        if rule.folder and rel.startswith(rule.folder):
            return rule
    return None


def check_team_access(
    cluster: Document,
    directory: str,
    access_docs: Sequence[tuple[str, Document]],
    topic_docs: Sequence[Document],
    out: list[Diagnostic],
) -> None:
    """Every access document and topic ``access`` in a team folder, against its rule."""
    policies = cluster.value.get("policies")
    if not isinstance(policies, dict):
        return
    severity: Severity = "warning" if policies.get("mode") == "warn" else "error"
    rules = name_rules(cluster, [])
    if not any(r.folder for r in rules):
        return
    principals = _principals(cluster)
    found: list[tuple[Mark, str]] = []
    for kind, doc in access_docs:
        rule = _rule_of(doc.path, directory, rules)
        if rule is not None:
            found += _document(kind, doc, rule, principals.get(rule.mark, ()))
    for doc in topic_docs:
        value = doc.value if isinstance(doc.value, dict) else {}
        rule = _rule_of(doc.path, directory, rules)
        if rule is not None and value.get("access"):
            found += _topic_access(doc, value["access"], rule, principals.get(rule.mark, ()))
    out.extend(Diagnostic(mark, severity, message) for mark, message in found)


def _principals(cluster: Document) -> dict[Mark, tuple[str, ...]]:
    raw = cluster.value["policies"].get("names")
    out: dict[Mark, tuple[str, ...]] = {}
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(entry, dict):
            out[cluster.mark(f"policies.names.{i}")] = tuple(
                str(p) for p in entry.get("principals") or ()
            )
    return out


def _whose(rule: NameRule) -> str:
    return f"{rule.folder} names match {rule.pattern.pattern} (policy names at {rule.mark})"


def _principal(
    doc: Document, path: str, principal: str, rule: NameRule, allowed: Sequence[str]
) -> list[tuple[Mark, str]]:
    if _allowed(principal, allowed):
        return []
    listed = ", ".join(allowed) if allowed else "none: the rule lists no principals"
    return [
        (
            doc.mark(path),
            f"principal {principal!r} is not one of the team's ({listed}) in {rule.folder} "
            f"(policy names at {rule.mark})",
        )
    ]


def _document(
    kind: str, doc: Document, rule: NameRule, allowed: Sequence[str]
) -> list[tuple[Mark, str]]:
    v: dict[str, Any] = doc.value
    if kind == "User":
        return _principal(doc, "name", f"User:{v['name']}", rule, allowed)
    if kind == "Quota":
        if "user" not in v:
            return [
                (
                    doc.mark("clientId"),
                    f"a client-id quota reaches beyond the team: not in {rule.folder} "
                    f"(policy names at {rule.mark})",
                )
            ]
        return _principal(doc, "user", f"User:{v['user']}", rule, allowed)
    found = _principal(doc, "principal", str(v["principal"]), rule, allowed)
    for i, item in enumerate(v.get("rules") or []):
        rtype = item.get("resourceType")
        name = item.get("name")
        if rtype == "cluster":
            found.append(
                (
                    doc.mark(f"rules.{i}.resourceType"),
                    f"a grant on the cluster resource is not the team's: not in {rule.folder} "
                    f"(policy names at {rule.mark})",
                )
            )
        elif name == "*" or not (isinstance(name, str) and rule.pattern.search(name)):
            found.append(
                (
                    doc.mark(f"rules.{i}.name"),
                    f"resource {rtype} {name!r} is not the team's: {_whose(rule)}",
                )
            )
    return found


def _topic_access(
    doc: Document, access: Any, rule: NameRule, allowed: Sequence[str]
) -> list[tuple[Mark, str]]:
    found: list[tuple[Mark, str]] = []
    if not isinstance(access, dict):
        return found
    for i, principal in enumerate(access.get("produce") or []):
        found += _principal(doc, f"access.produce.{i}", str(principal), rule, allowed)
    for i, item in enumerate(access.get("consume") or []):
        entry = {"principal": item} if isinstance(item, str) else item
        path = f"access.consume.{i}"
        found += _principal(doc, path, str(entry.get("principal")), rule, allowed)
        group = entry.get("group")
        if group is not None and (group == "*" or not rule.pattern.search(str(group))):
            found.append((doc.mark(path), f"group {group!r} is not the team's: {_whose(rule)}"))
    return found
