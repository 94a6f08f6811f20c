"""The lows of the third round: names and file names never add a line or a terminal escape
to any output; markdown autolinks and references are neutralised; the access table never
hides a grant to anyone or on the cluster; a team folder's access documents speak for the
team only; codeowners output is one line per rule; ``local up`` refuses a symlinked state
folder; apply's log cannot issue workflow commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.helpers import THREE_BROKERS, cluster_folder, cluster_yaml
from tests.helpers import run_cli as cli

ROOT = Path(__file__).resolve().parents[2]

CLUSTER = cluster_yaml("prod", brokers=THREE_BROKERS)
TEAM = """\
policies:
  names:
    - folder: team-a/
      pattern: '^team-a\\.'
      owners: ['@acme/team-a']
      principals: ['User:team-a-*']
"""
TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 1\nreplicationFactor: 1\n"


def test_a_file_name_with_a_newline_and_an_escape_stays_on_one_escaped_line(
    tmp_path: Path,
) -> None:
    d = cluster_folder(tmp_path / "prod", cluster=CLUSTER)
    bad = d / "x\n::error::owned\x1b[2J.yaml"
    bad.write_text("apiVersion: kgitops/v1\nkind: Topic\nname: [\n")
    for fmt in ("text", "github"):
        code, out, err = cli("validate", str(d), "--format", fmt)
        assert code == 1
        text = out + err
        assert "\x1b" not in text
        assert not any(line.startswith("::error::owned") for line in text.splitlines())
        assert "x\\x0a" in text and "owned\\x1b[2J.yaml" in text


def test_markdown_neutralises_autolinks_and_references() -> None:
    from kgitops.plan.mdescape import md_text

    shown = md_text("see https://evil.example/x, www.evil.example and acme/infra#12 or #3")
    assert "https://" not in shown and "www." not in shown
    assert "#12" not in shown and "#3" not in shown


def test_the_access_table_never_hides_a_grant_to_anyone_or_on_the_cluster() -> None:
    from kgitops.render.access import MARKDOWN_ROWS, markdown_section

    def acl(principal: str, rtype: str, name: str) -> dict[str, object]:
        return {
            "type": "create_acl",
            "topic": name,
            "acl": {
                "principal": principal,
                "permission": "allow",
                "operation": "all",
                "resourceType": rtype,
                "name": name,
                "patternType": "literal",
                "host": "*",
            },
        }

    actions = [acl(f"User:app-{i:04d}", "topic", f"t{i:04d}") for i in range(MARKDOWN_ROWS + 50)]
    actions += [acl("User:*", "topic", "payments"), acl("User:x", "cluster", "kafka-cluster")]
    actions += [acl("User:y", "topic", "*")]
    text = "\n".join(markdown_section(actions))
    assert "`User:*`" in text and "kafka-cluster" in text and "`User:y`" in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| `+`")]
    assert len(rows) == MARKDOWN_ROWS
    assert "53 more ACL change(s)" in text


@pytest.fixture
def team(tmp_path: Path) -> Path:
    orders = TOPIC.format(name="team-a.orders")
    return cluster_folder(
        tmp_path / "prod", cluster=CLUSTER + TEAM, files={"team-a/orders.yaml": orders}
    )


def test_a_team_folder_acl_on_another_teams_topic_or_the_cluster_is_refused(team: Path) -> None:
    (team / "team-a" / "acl.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: ACL\nprincipal: User:team-a-app\nrules:\n"
        "  - {resourceType: topic, name: kgitops.password-versions, operations: [write]}\n"
        "  - {resourceType: cluster, operations: [alter]}\n"
        "  - {resourceType: topic, name: team-a.orders, operations: [read]}\n"
    )
    code, out, err = cli("validate", str(team))
    assert code == 1
    text = out + err
    assert "resource topic 'kgitops.password-versions' is not the team's" in text
    assert "a grant on the cluster resource is not the team's" in text
    assert "team-a.orders" not in text.split("is not the team's")[-1].split("\n")[0]


def test_a_team_folder_cannot_rewrite_another_teams_user_or_grant_another_principal(
    team: Path,
) -> None:
    (team / "team-a" / "users.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: User\nname: payments-app\nmechanism: SCRAM-SHA-512\n"
        "passwordEnv: TEAM_A_PW\n"
    )
    (team / "team-a" / "orders.yaml").write_text(
        TOPIC.format(name="team-a.orders") + "access:\n  consume:\n"
        "    - {principal: User:mallory, group: team-a-readers}\n"
    )
    code, out, err = cli("validate", str(team))
    assert code == 1
    text = out + err
    assert f"{team}/team-a/users.yaml:3:7: error: principal 'User:payments-app' is not one" in text
    assert "principal 'User:mallory' is not one of the team's (User:team-a-*)" in text
    (team / "team-a" / "users.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: User\nname: team-a-app\nmechanism: SCRAM-SHA-512\n"
        "passwordEnv: TEAM_A_PW\n"
    )
    (team / "team-a" / "orders.yaml").write_text(
        TOPIC.format(name="team-a.orders") + "access:\n  consume:\n"
        "    - {principal: User:team-a-app, group: team-a.readers}\n"
    )
    code, out, err = cli("validate", str(team))
    assert code == 0, out + err


def test_codeowners_output_escapes_a_folder_with_a_newline(tmp_path: Path) -> None:
    cluster_folder(
        tmp_path / "topics" / "prod",
        cluster=CLUSTER + "policies:\n  names:\n"
        "    - folder: \"team-a\\n/ @evil/owners\\n*\"\n      pattern: '^team-a'\n"
        "      owners: ['@acme/team-a']\n",
    )
    code, out, err = cli("codeowners", str(tmp_path / "topics"))
    assert code == 0, err
    rules = [ln for ln in out.splitlines() if not ln.startswith("#")]
    assert len(rules) == 1 and rules[0].endswith(" @acme/team-a")
    assert not any(ln.strip().startswith(("*", "/ @evil")) for ln in out.splitlines())


def test_local_up_refuses_a_symlinked_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".kgitops").symlink_to(elsewhere)
    monkeypatch.chdir(work)
    code, _, err = cli("local", "up", "--port", "1")
    assert code == 1
    assert ".kgitops is a symlink" in err
    assert list(elsewhere.iterdir()) == []


def test_apply_logs_cannot_issue_workflow_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """apply.yml's apply step shows the apply log between ::stop-commands::TOKEN and ::TOKEN::
    (a fresh random token each run): no line of the log is a workflow command."""
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "apply.yml").read_text())
    [found] = [s for s in doc["jobs"]["apply"]["steps"] if s.get("id") == "apply"]
    assert found["run"].strip() == "kgitops github apply-step"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    monkeypatch.setenv("DIR", "topics/demo")
    monkeypatch.setenv("PLAN", "::error::x/plan.json")  # the log quotes it
    tokens = []
    for _ in range(2):
        code, out, _ = cli("github", "apply-step")
        assert code == 0
        log = (tmp_path / "kgitops-apply-demo" / "apply.log").read_text()
        assert "::error::x/plan.json" in log
        first, *shown, end, last = out.splitlines()
        token = first.removeprefix("::stop-commands::")
        assert re.fullmatch(r"kgitops-[0-9a-f]{32}", token)
        assert shown == log.splitlines() and end == f"::{token}::"
        assert last == "kgitops apply topics/demo: failed"
        tokens.append(token)
    assert tokens[0] != tokens[1]
