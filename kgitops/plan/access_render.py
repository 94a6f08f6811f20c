"""How the access actions read in the text and markdown plans (from the plan's JSON).

Text: one line per action, like the topic actions::

    + upsert_user orders-app SCRAM-SHA-512  8192 iterations, password from $PW (new credential)
    ~ alter_quota user=orders-app  producer_byte_rate: 1048576 -> 10485760
    + create_acl User:b allow read group:b-*  from topic orders access.consume.0

Markdown: a section of its own, "Access changes", with one table row per ACL binding (who,
allow/deny, operation, resource, pattern, host, where git asks for it), then users and
quotas, so a reviewer reads who gains or loses what at a glance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgitops.plan.access_actions import AlterQuota
from kgitops.plan.mdescape import md_code, md_text

MARKDOWN_ROWS = 200


def markdown_section(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The "Access changes" section of the pull-request comment; empty without access."""
    acls = [a for a in actions if a["type"] in ("create_acl", "delete_acl")]
    users = [a for a in actions if a["type"] == "upsert_user"]
    quotas = [a for a in actions if a["type"] == "alter_quota"]
    if not (acls or users or quotas):
        return []
    out = ["#### Access changes", ""]
    if acls:
        out += [
            "| | principal | permission | operation | resource | pattern | host | from |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for a in acls[:MARKDOWN_ROWS]:
            acl = a["acl"]
            sym = "+" if a["type"] == "create_acl" else "-"
            src = a.get("source") or ("not in git" if sym == "-" else "")
            out.append(
                f"| `{sym}` | {md_code(acl['principal'])} | {md_text(acl['permission'])} | "
                f"{md_text(acl['operation'])} | {md_text(acl['resourceType'])} "
                f"{md_code(acl['name'])} | {md_text(acl['patternType'])} | "
                f"{md_code(acl['host'])} | {md_text(src)} |"
            )
        if len(acls) > MARKDOWN_ROWS:
            out.append(f"\n... {len(acls) - MARKDOWN_ROWS} more ACL change(s) in the JSON plan")
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
