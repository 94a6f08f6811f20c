"""The first plan after kgitops started recording passwordVersions on real clusters: before,
a bump on a real Kafka planned nothing; now a cluster with no record at all counts every
credential as version 1, so each user whose passwordVersion is above 1 is rewritten. The plan
says so, naming them (PASSWORD_VERSION_UNRECORDED)."""

from __future__ import annotations

from kgitops.access import AccessSpecs, AccessState, ScramCredential, UserSpec
from kgitops.cluster.kafka import version_records as r
from kgitops.plan.access_diff import access_actions

TOPIC = "_kgitops-password-versions"


def _users(*versions: int) -> list[UserSpec]:
    return [UserSpec(f"app{i}", "SCRAM-SHA-512", f"PW{i}", 8192, n) for i, n in enumerate(versions)]


def _live(users: list[UserSpec], records: dict[tuple[str, str], r.VersionRecord]) -> AccessState:
    creds = {(u.name, u.mechanism): ScramCredential(u.name, u.mechanism, 8192) for u in users}
    return AccessState(users=r.join(creds, records, TOPIC))


def test_no_record_at_all_names_every_credential_it_rewrites_in_one_warning() -> None:
    users = _users(3, 1, 2)
    actions, warnings = access_actions(AccessSpecs(users=tuple(users)), _live(users, {}))
    assert [a.name for a in actions] == ["app0", "app2"]  # type: ignore[attr-defined]
    [w] = warnings
    assert w.code == "PASSWORD_VERSION_UNRECORDED"
    assert "2 SCRAM credential(s) will be rewritten" in w.message
    assert "app0 (SCRAM-SHA-512, passwordVersion 3); app2 (SCRAM-SHA-512, passwordVersion 2)" in (
        w.message
    )
    assert f"topic {TOPIC} is missing or empty" in w.message
    assert "app1" not in w.message  # version 1: nothing rewritten
    assert w.data == {"users": ["app0", "app2"]}


def test_once_the_topic_holds_records_a_missing_one_is_an_ordinary_rotation() -> None:
    users = _users(3, 2)
    records = {("app1", "SCRAM-SHA-512"): r.VersionRecord(2, 8192, 0)}
    actions, warnings = access_actions(AccessSpecs(users=tuple(users)), _live(users, records))
    assert [a.name for a in actions] == ["app0"]  # type: ignore[attr-defined]
    assert warnings == []


def test_users_at_version_1_plan_nothing_and_warn_nothing() -> None:
    users = _users(1, 1)
    assert access_actions(AccessSpecs(users=tuple(users)), _live(users, {})) == ([], [])


def test_the_warning_shows_ten_users_and_counts_the_rest() -> None:
    users = _users(*([2] * 13))
    _, [w] = access_actions(AccessSpecs(users=tuple(users)), _live(users, {}))
    assert "13 SCRAM credential(s)" in w.message and "and 3 more" in w.message
    assert len(w.data["users"]) == 13
