"""The access planner as properties: applying its actions to the live state converges (a
re-plan is empty), it deletes only with the opt-in and only what git does not name, and it
never rewrites a credential it need not. Plus the simulated cluster's Kafka checks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kgitops.access import (
    AccessSpecs,
    AccessState,
    Acl,
    AclSpec,
    QuotaEntity,
    QuotaSpec,
    UserSpec,
    scram_salted_password,
)
from kgitops.apply.access import scram_rounds
from kgitops.cluster.access_sim import AccessStore
from kgitops.cluster.port import QuotaChange, ScramUpsert
from kgitops.errors import Mark
from kgitops.plan.access_actions import AlterQuota, CreateAcl, DeleteAcl, UpsertUser
from kgitops.plan.access_diff import access_actions
from kgitops.plan.actions import Action

M = Mark("t.yaml")

acls = st.builds(
    Acl,
    principal=st.sampled_from(["User:a", "User:b", "User:*"]),
    resource_type=st.sampled_from(["topic", "group"]),
    name=st.sampled_from(["orders", "orders.", "*"]),
    pattern_type=st.sampled_from(["literal", "prefixed"]),
    operation=st.sampled_from(["read", "describe"]),
    permission=st.sampled_from(["allow", "deny"]),
    host=st.sampled_from(["*", "10.0.0.1"]),
)
entities = st.sampled_from(
    [QuotaEntity("a"), QuotaEntity(None, "c"), QuotaEntity("<default>"), QuotaEntity("a", "c")]
)
values = st.dictionaries(
    st.sampled_from(["producer_byte_rate", "consumer_byte_rate", "request_percentage"]),
    st.integers(1, 10**9).map(float),
    max_size=3,
)
users = st.builds(
    UserSpec,
    name=st.sampled_from(["a", "b"]),
    mechanism=st.sampled_from(["SCRAM-SHA-256", "SCRAM-SHA-512"]),
    password_env=st.just("PW"),
    iterations=st.sampled_from([4096, 8192]),
    password_version=st.integers(1, 3),
)


@st.composite
def desired(draw: st.DrawFn) -> AccessSpecs:
    wanted = draw(st.frozensets(acls, max_size=6))
    us = {(u.name, u.mechanism): u for u in draw(st.lists(users, max_size=3))}
    qs = draw(st.dictionaries(entities, values, max_size=3))
    return AccessSpecs(
        acls=tuple(AclSpec(a, M) for a in sorted(wanted)),
        users=tuple(us.values()),
        quotas=tuple(QuotaSpec(e, v, M) for e, v in qs.items()),
        used=True,
    )


def apply(actions: list[Action], store: AccessStore) -> None:
    """What apply does with the actions, against the simulated cluster's store."""
    upserts = []
    for a in actions:
        if isinstance(a, UpsertUser):
            salt = b"s" * 32
            salted = scram_salted_password(a.mechanism, "pw", salt, a.iterations)
            upserts.append(
                ScramUpsert(a.name, a.mechanism, a.iterations, salt, salted, a.password_version)
            )
    for round_ in scram_rounds([(None, u) for u in upserts]):  # a user once per request
        assert all(r is None for r in store.upsert_scram_users([u for _, u in round_]).values())
    changes = {
        a.entity: QuotaChange(dict(a.set), a.delete) for a in actions if isinstance(a, AlterQuota)
    }
    assert all(r is None for r in store.alter_client_quotas(changes).values())
    assert all(
        r is None
        for r in store.create_acls([a.acl for a in actions if isinstance(a, CreateAcl)]).values()
    )
    store.delete_acls([a.acl for a in actions if isinstance(a, DeleteAcl)])


@given(desired(), desired(), st.sampled_from(["ignore", "warn", "delete"]))
def test_applying_the_plan_converges_and_deletes_only_with_the_opt_in(
    want: AccessSpecs, before: AccessSpecs, policy: str
) -> None:
    store = AccessStore()
    apply(access_actions(before, AccessState(), "ignore")[0], store)  # some live state
    live = store.state()
    actions, _ = access_actions(want, live, policy)
    deleted = {a.acl for a in actions if isinstance(a, DeleteAcl)}
    wanted = {s.acl for s in want.acls}
    assert deleted == (live.acls - wanted if policy == "delete" else set())
    apply(actions, store)
    after = store.state()
    assert wanted <= after.acls
    assert access_actions(want, after, policy)[0] == []


@given(desired())
def test_an_unchanged_spec_never_rewrites_a_credential(want: AccessSpecs) -> None:
    store = AccessStore()
    apply(access_actions(want, AccessState())[0], store)
    salts = {k: c.salt for k, c in store.users.items()}
    assert not [a for a in access_actions(want, store.state())[0] if isinstance(a, UpsertUser)]
    assert {k: c.salt for k, c in store.users.items()} == salts


def test_the_simulated_cluster_refuses_what_kafka_refuses() -> None:
    store = AccessStore()
    salted = scram_salted_password("SCRAM-SHA-256", "pw", b"s", 4096)
    got = store.upsert_scram_users(
        [
            ScramUpsert("a", "SCRAM-SHA-256", 1000, b"s", salted),
            ScramUpsert("b", "SCRAM-SHA-256", 4096, b"s", salted),
            ScramUpsert("b", "SCRAM-SHA-256", 4096, b"s", salted),
        ]
    )
    assert getattr(got["a SCRAM-SHA-256"], "code", None) == "UNACCEPTABLE_CREDENTIAL"
    assert getattr(got["b SCRAM-SHA-256"], "code", None) == "DUPLICATE_RESOURCE"
    two = store.upsert_scram_users(  # Kafka keys the request by user: any mechanisms
        [
            ScramUpsert("c", "SCRAM-SHA-256", 4096, b"s", salted),
            ScramUpsert("c", "SCRAM-SHA-512", 4096, b"s", salted),
        ]
    )
    assert {k: getattr(v, "code", None) for k, v in two.items()} == dict.fromkeys(
        ["c SCRAM-SHA-256", "c SCRAM-SHA-512"], "DUPLICATE_RESOURCE"
    )
    assert store.users == {}
    q = store.alter_client_quotas(
        {
            QuotaEntity("a"): QuotaChange({"producer_byte_rate": 1.5}),
            QuotaEntity("b"): QuotaChange({"bytes_per_fortnight": 1.0}),
            QuotaEntity("c"): QuotaChange({"request_percentage": 0.0}),
        }
    )
    assert {k: getattr(v, "code", None) for k, v in q.items()} == dict.fromkeys(
        ["user=a", "user=b", "user=c"], "INVALID_REQUEST"
    )
    assert store.quotas == {}
    bad = Acl("orders-app", "topic", "t", "literal", "read")
    wrong_cluster = Acl("User:a", "cluster", "c", "literal", "alter")
    r = store.create_acls([bad, wrong_cluster])
    assert all(getattr(e, "code", None) == "INVALID_REQUEST" for e in r.values())
    assert store.acls == set()


def test_the_password_never_reaches_a_scram_upserts_repr() -> None:
    salted = scram_salted_password("SCRAM-SHA-512", "hunter2", b"salt", 4096)
    text = repr(ScramUpsert("a", "SCRAM-SHA-512", 4096, b"salt", salted))
    assert "hunter2" not in text and salted.hex() not in text and repr(salted) not in text
