"""Apply's access preflight: before anything is sent, the cluster must serve every access API
the plan's actions go in (``ClusterAdmin.probe_access``); one that does not is refused in
one line ending "nothing was changed" (exit 1) and the topics of the same plan stay uncreated.
"""

from __future__ import annotations

import pytest
from apply_fakes import FakeCluster

from kgitops.access import Acl, QuotaEntity
from kgitops.apply.run import apply_plan
from kgitops.errors import AccessUnsupported, KgitopsError
from kgitops.model import Broker, ReassignmentSettings
from kgitops.plan.access_actions import (
    AlterQuota,
    UpsertUser,
    create_acl,
    delete_acl,
    write_apis,
)
from kgitops.plan.actions import CreateTopic
from kgitops.plan.value import Plan

SETTINGS = ReassignmentSettings(throttle_bytes_per_sec=1000, max_concurrent_moves=3)
READ = Acl("User:b", "topic", "orders", "literal", "read")
OLD = Acl("User:old", "topic", "orders", "literal", "read")
TOPIC = CreateTopic("orders", partitions=1, replication_factor=1, assignment={0: (1,)})
USER = UpsertUser(
    "a SCRAM-SHA-256", name="a", mechanism="SCRAM-SHA-256", password_env="KGITOPS_TEST_PW"
)
QUOTA = AlterQuota("user=a", entity=QuotaEntity("a"), set={"producer_byte_rate": 1024.0})


def _plan(*actions: object) -> Plan:
    return Plan(cluster="test", state_fingerprint="sha256:x", actions=tuple(actions))  # type: ignore[arg-type]


def _cluster(unserved: frozenset[str] = frozenset()) -> FakeCluster:
    return FakeCluster(brokers=[Broker(1)], unserved=unserved)


def test_each_access_kind_names_the_api_it_is_sent_in() -> None:
    plan = _plan(TOPIC, USER, QUOTA, create_acl(READ), delete_acl(OLD))
    assert write_apis(plan.actions) == [
        "AlterClientQuotas",
        "AlterUserScramCredentials",
        "CreateAcls",
        "DeleteAcls",
    ]
    assert write_apis([TOPIC]) == []


def test_an_unserved_api_refuses_the_whole_apply_before_the_topics_are_created() -> None:
    fake = _cluster(frozenset({"CreateAcls"}))
    with pytest.raises(AccessUnsupported) as caught:
        apply_plan(_plan(TOPIC, create_acl(READ)), fake, SETTINGS, allow_delete=False)
    assert str(caught.value) == (
        "the cluster did not answer CreateAcls (a probe); nothing was changed"
    )
    assert caught.value.exit_code == 1
    assert fake.writes() == [] and fake.replicas == {} and not fake.access.acls


def test_the_preflight_probes_exactly_the_plans_write_apis_once_then_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KGITOPS_TEST_PW", "pw")
    fake = _cluster()
    plan = _plan(TOPIC, USER, create_acl(READ))
    report = apply_plan(plan, fake, SETTINGS, allow_delete=False)
    assert report.complete
    probes = [payload for name, payload in fake.calls if name == "probe_access"]
    assert probes == [
        ["AlterUserScramCredentials", "CreateAcls"],
        ["DescribeAcls", "DescribeUserScramCredentials"],
    ]  # then verification's reads
    assert fake.calls[0] == ("probe_access", ["AlterUserScramCredentials", "CreateAcls"])
    assert READ in fake.access.acls and "orders" in fake.replicas


def test_a_plan_without_access_changes_probes_nothing() -> None:
    fake = _cluster(frozenset({"CreateAcls", "DescribeAcls"}))
    assert apply_plan(_plan(TOPIC), fake, SETTINGS, allow_delete=False).complete
    assert all(name != "probe_access" for name, _ in fake.calls)


def test_a_dry_run_sends_no_write_probe() -> None:
    fake = _cluster(frozenset({"CreateAcls"}))
    report = apply_plan(
        _plan(TOPIC, create_acl(READ)), fake, SETTINGS, allow_delete=False, dry_run=True
    )
    assert any(line.startswith("CreateAcls ") for line in report.requests)
    assert all(name != "probe_access" for name, _ in fake.calls)
    assert fake.writes() == []


def test_a_missing_password_is_still_said_first() -> None:
    """Nothing is sent, not even a probe, while a password the plan needs is missing."""
    fake = _cluster(frozenset({"AlterUserScramCredentials"}))
    with pytest.raises(KgitopsError, match="KGITOPS_TEST_PW") as caught:
        apply_plan(_plan(USER), fake, SETTINGS, allow_delete=False)
    assert not isinstance(caught.value, AccessUnsupported)
    assert fake.calls == []


def test_nested_before_any_change_says_nothing_was_changed_once() -> None:
    """The words are added once however deep the guard is nested (apply's preflight runs
    inside the command's own guard), decided by the exception's type, not its words."""
    from kgitops.apply.access import before_any_change
    from kgitops.errors import AccessUnsupportedNothingChanged

    with (
        pytest.raises(AccessUnsupportedNothingChanged) as caught,
        before_any_change(),
        before_any_change(),
    ):
        raise AccessUnsupported("CreateAcls", "the cluster did not answer CreateAcls")
    assert str(caught.value) == "the cluster did not answer CreateAcls; nothing was changed"
    assert caught.value.operation == "CreateAcls"
