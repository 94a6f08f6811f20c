"""How the access actions read in the text and markdown plans (from the plan's JSON).

Text: one line per action, like the topic actions::

    + upsert_user orders-app SCRAM-SHA-512  8192 iterations, password from $PW (new credential)
    ~ alter_quota user=orders-app  producer_byte_rate: 1048576 -> 10485760
    + create_acl User:b allow read group:b-*  from topic orders access.consume.0

Markdown: a section of its own, "Access changes", with one table row per ACL binding in five
columns that fit a comment (who, and the host when not every host; allow or **deny** and the
operation; the resource, "(prefixed)" for a prefix pattern; where git asks for it), then
users and quotas, so a reviewer reads who gains or loses what at a glance::

    | `+` | `User:b` | allow read | group `b-` (prefixed) | topic orders access.consume.0 |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgitops.plan.access_actions import AlterQuota
from kgitops.plan.mdescape import md_code, md_text

MARKDOWN_ROWS = 200
"""Rows of the ACL table; the rest is counted and left to the JSON plan. A grant to anyone
(principal ``*`` or ``User:*``, host or resource ``*``) or on the cluster resource is never
among the rest: those rows come first, all of them, however many."""


def wide(acl: Mapping[str, Any]) -> bool:
    """Whether an ACL binding reaches further than one principal's named resource: anyone
    (``*``, ``User:*``), any resource name ``*``, or the cluster resource itself."""
    return (
        acl.get("principal") in ("*", "User:*")
        or str(acl.get("principal", "")).endswith(":*")
        or acl.get("name") == "*"
        or acl.get("resourceType") == "cluster"
    )


def _who(acl: Mapping[str, Any]) -> str:
    """The principal, and its host when the binding is not for every host (``*``)."""
    host = acl.get("host", "*")
    return md_code(acl["principal"]) + ("" if host == "*" else f" on host {md_code(host)}")


def _grant(acl: Mapping[str, Any]) -> str:
    """``allow read``; a deny in bold, as it overrides every allow."""
    permission = md_text(acl["permission"])
    if acl["permission"] != "allow":
        permission = f"**{permission}**"
    return f"{permission} {md_text(acl['operation'])}"


def _resource(acl: Mapping[str, Any]) -> str:
    """``topic `orders```; a prefixed pattern says so (it covers names not made yet)."""
    pattern = acl["patternType"]
    shown = "" if pattern == "literal" else f" ({md_text(pattern)})"
    return f"{md_text(acl['resourceType'])} {md_code(acl['name'])}{shown}"


def markdown_section(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The "Access changes" section of the pull-request comment; empty without access."""
    acls = [a for a in actions if a["type"] in ("create_acl", "delete_acl")]
    users = [a for a in actions if a["type"] == "upsert_user"]
    quotas = [a for a in actions if a["type"] == "alter_quota"]
    if not (acls or users or quotas):
        return []
    out = ["#### Access changes", ""]
    if acls:
        out += ["| | principal | grant | resource | from |", "|---|---|---|---|---|"]
        first = [a for a in acls if wide(a["acl"])]
        rest = [a for a in acls if not wide(a["acl"])]
        shown = first + rest[: max(0, MARKDOWN_ROWS - len(first))]
        for a in shown:
            acl = a["acl"]
            sym = "+" if a["type"] == "create_acl" else "-"
            src = a.get("source") or ("not in git" if sym == "-" else "")
            out.append(
                f"| `{sym}` | {_who(acl)} | {_grant(acl)} | {_resource(acl)} | {md_text(src)} |"
            )
        if len(acls) > len(shown):
            out.append(f"\n... {len(acls) - len(shown)} more ACL change(s) in the JSON plan")
        out.append("")
    for a in users:
        out.append(
            f"- `+` SCRAM user {md_code(a['user'])} ({md_text(a['mechanism'])}, "
            f"{md_text(a['iterations'])} iterations): {md_text(a.get('reason', ''))}; "
            f"password from {md_code('$' + str(a['passwordEnv']))} at apply"
        )
    for a in quotas:
        out.append(f"- `~` quota {md_code(a['topic'])}: {md_text(AlterQuota.headline(a))}")
    if users or quotas:
        out.append("")
    return out
