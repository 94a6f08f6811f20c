"""The kafka-python adapter's access requests, without a broker: every request kgitops builds
encodes and decodes at every version kafka-python 3.0 has, the bytes are Kafka's wire format
(checked against bytes written out by hand from the protocol spec), and every response is
read back into kgitops' values -- also after an encode/decode round trip at every version."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kafka.protocol.admin import (
    AlterClientQuotasResponse,
    AlterUserScramCredentialsResponse,
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsResponse,
    DescribeAclsResponse,
    DescribeClientQuotasResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from kgitops.access import Acl, QuotaEntity, ScramCredential, scram_salted_password
from kgitops.cluster.kafka import access as ka
from kgitops.cluster.port import QuotaChange, ScramUpsert
from kgitops.errors import ClusterRequestError

ACLS = [
    Acl("User:a", "topic", "orders", "literal", "write"),
    Acl("User:b", "group", "b-", "prefixed", "read", "deny", "10.0.0.1"),
    Acl("User:a", "cluster", "kafka-cluster", "literal", "idempotent_write"),
    Acl("User:c", "transactional_id", "tx", "literal", "describe"),
]
SALTED = scram_salted_password("SCRAM-SHA-512", "pw", b"0123456789abcdef", 4096)
UPSERTS = [ScramUpsert("a", "SCRAM-SHA-512", 4096, b"0123456789abcdef", SALTED, 2)]
QUOTAS = {
    QuotaEntity("a"): QuotaChange({"producer_byte_rate": 1048576.0}, ("request_percentage",)),
    QuotaEntity("<default>", "app"): QuotaChange({"consumer_byte_rate": 2.0}),
}


def _set(value: Any) -> Any:
    """to_dict() without unset (None) fields, which versions differ in having."""
    if isinstance(value, dict):
        return {k: _set(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_set(v) for v in value]
    return value


REQUESTS = {
    "DescribeAcls": lambda: ka.build_describe_acls(),
    "CreateAcls": lambda: ka.build_create_acls(ACLS),
    "DeleteAcls": lambda: ka.build_delete_acls(ACLS),
    "DescribeClientQuotas": lambda: ka.build_describe_client_quotas(),
    "AlterClientQuotas": lambda: ka.build_alter_client_quotas(QUOTAS),
    "DescribeUserScramCredentials": lambda: ka.build_describe_scram_users(),
    "AlterUserScramCredentials": lambda: ka.build_upsert_scram_users(UPSERTS),
}


@pytest.mark.parametrize("api", sorted(REQUESTS))
def test_each_access_request_encodes_and_decodes_at_every_version(api: str) -> None:
    request = REQUESTS[api]()
    cls = type(request)
    assert cls.__name__ == f"{api}Request"
    versions = range(cls.min_version, cls.max_version + 1)
    assert len(versions) >= 1
    full = _set(request.to_dict())  # before encode: encoding pins the request's version
    for version in versions:
        data = request.encode(version=version, header=False)
        again = cls.decode(data, version=version, header=False)
        want = copy.deepcopy(full)
        if api == "DescribeAcls" and version == 0:
            want.pop("pattern_type_filter")  # v0 has no pattern type (always literal)
        if api in ("CreateAcls", "DeleteAcls") and version == 0:
            key = "creations" if api == "CreateAcls" else "filters"
            field = "resource_pattern_type" if api == "CreateAcls" else "pattern_type_filter"
            for item in want[key]:
                item.pop(field)
        assert _set(again.to_dict()) == want, (api, version)


def test_create_acls_bytes_are_kafkas_wire_format_at_v1_and_v2() -> None:
    """CreateAcls for User:a allow read on literal topic t, written out from the protocol
    spec: v1 INT32 array count, INT8 resource type 2 (topic), INT16-length name, INT8
    pattern 3 (literal), principal, host, INT8 operation 3 (read), INT8 permission 3
    (allow); v2 (flexible) compact arrays and strings (length + 1) and empty tag buffers."""
    req = ka.build_create_acls([Acl("User:a", "topic", "t", "literal", "read")])
    v1 = "0000000102000174030006557365723a6100012a0303"
    v2 = "020202740307557365723a61022a03030000"
    assert req.encode(version=1, header=False).hex() == v1
    assert req.encode(version=2, header=False).hex() == v2
    assert CreateAclsRequest.API_KEY == 30


def test_scram_upsertion_bytes_carry_the_salted_password_never_the_password() -> None:
    req = ka.build_upsert_scram_users(UPSERTS)
    data = req.encode(version=0, header=False)
    assert SALTED in data and b"0123456789abcdef" in data
    assert b"pw" not in data.replace(SALTED, b"").replace(b"0123456789abcdef", b"")
    assert DescribeUserScramCredentialsRequest.API_KEY == 50


def _round(resp: Any) -> list[Any]:
    """The response as each version decodes it."""
    cls = type(resp)
    return [
        cls.decode(resp.encode(version=v, header=False), version=v, header=False)
        for v in range(cls.min_version, cls.max_version + 1)
    ]


def test_describe_acls_responses_read_back_as_bindings_at_every_version() -> None:
    R = DescribeAclsResponse.DescribeAclsResource
    D = R.AclDescription
    resp = DescribeAclsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        resources=[
            R(
                resource_type=3,
                resource_name="b-",
                pattern_type=4,
                acls=[D(principal="User:b", host="10.0.0.1", operation=3, permission_type=2)],
            ),
            R(
                resource_type=2,
                resource_name="orders",
                pattern_type=3,
                acls=[D(principal="User:a", host="*", operation=4, permission_type=3)],
            ),
        ],
    )
    for i, got in enumerate(_round(resp)):
        acls = ka.read_describe_acls(got)
        expected = {ACLS[0], ACLS[1]}
        if i == 0:  # v0 has no pattern type: Kafka means literal
            expected = {
                ACLS[0],
                Acl("User:b", "group", "b-", "literal", "read", "deny", "10.0.0.1"),
            }
        assert acls == expected


def test_create_and_delete_acl_results_map_to_each_binding_in_order() -> None:
    C = CreateAclsResponse.AclCreationResult
    resp = CreateAclsResponse(
        throttle_time_ms=0,
        results=[
            C(error_code=0, error_message=None),
            C(error_code=42, error_message="Invalid host"),  # INVALID_REQUEST
            C(error_code=0, error_message=None),
        ],
    )
    for got in _round(resp):
        results = ka.read_create_acls(got, ACLS)
        assert results[ACLS[0].key] is None and results[ACLS[2].key] is None
        err = results[ACLS[1].key]
        assert isinstance(err, ClusterRequestError) and "Invalid host" in str(err)
        assert "no result" in str(results[ACLS[3].key])  # a short answer is not success
    F = DeleteAclsResponse.DeleteAclsFilterResult
    dresp = DeleteAclsResponse(
        throttle_time_ms=0,
        filter_results=[F(error_code=0, error_message=None, matching_acls=[]) for _ in ACLS],
    )
    for got in _round(dresp):
        assert ka.read_delete_acls(got, ACLS) == {a.key: None for a in ACLS}


def test_client_quotas_read_back_with_default_entities_and_per_entity_errors() -> None:
    E = DescribeClientQuotasResponse.EntryData
    resp = DescribeClientQuotasResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        entries=[
            E(
                entity=[E.EntityData(entity_type="user", entity_name=None)],
                values=[E.ValueData(key="producer_byte_rate", value=1024.0)],
            ),
            E(
                entity=[
                    E.EntityData(entity_type="user", entity_name="a"),
                    E.EntityData(entity_type="client-id", entity_name="app"),
                ],
                values=[E.ValueData(key="request_percentage", value=200.0)],
            ),
            E(
                entity=[E.EntityData(entity_type="ip", entity_name="10.0.0.1")],
                values=[E.ValueData(key="connection_creation_rate", value=5.0)],
            ),
        ],
    )
    for got in _round(resp):
        assert ka.read_describe_client_quotas(got) == {
            QuotaEntity("<default>"): {"producer_byte_rate": 1024.0},
            QuotaEntity("a", "app"): {"request_percentage": 200.0},
        }
    A = AlterClientQuotasResponse.EntryData
    aresp = AlterClientQuotasResponse(
        throttle_time_ms=0,
        entries=[
            A(
                error_code=0,
                error_message=None,
                entity=[A.EntityData(entity_type="user", entity_name="a")],
            ),
            A(
                error_code=42,
                error_message="bad",
                entity=[
                    A.EntityData(entity_type="user", entity_name=None),
                    A.EntityData(entity_type="client-id", entity_name="app"),
                ],
            ),
        ],
    )
    for got in _round(aresp):
        results = ka.read_alter_client_quotas(got, QUOTAS)
        assert results["user=a"] is None
        assert isinstance(results["user=<default>,client-id=app"], ClusterRequestError)
    # the default entity travels as a null name
    req = ka.build_alter_client_quotas(QUOTAS).to_dict()
    assert req["entries"][1]["entity"][0] == {"entity_type": "user", "entity_name": None}
    assert req["entries"][0]["ops"][1] == {
        "key": "request_percentage",
        "value": 0.0,
        "remove": True,
    }


def test_scram_credentials_read_back_without_salts_and_results_per_user() -> None:
    R = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    resp = DescribeUserScramCredentialsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        results=[
            R(
                user="a",
                error_code=0,
                error_message=None,
                credential_infos=[
                    R.CredentialInfo(mechanism=1, iterations=4096),
                    R.CredentialInfo(mechanism=2, iterations=8192),
                ],
            ),
        ],
    )
    for got in _round(resp):
        assert ka.read_describe_scram_users(got) == {
            ("a", "SCRAM-SHA-256"): ScramCredential("a", "SCRAM-SHA-256", 4096),
            ("a", "SCRAM-SHA-512"): ScramCredential("a", "SCRAM-SHA-512", 8192),
        }
    U = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    uresp = AlterUserScramCredentialsResponse(
        throttle_time_ms=0,
        results=[U(user="a", error_code=0, error_message=None)],
    )
    for got in _round(uresp):
        assert ka.read_upsert_scram_users(got, UPSERTS) == {"a SCRAM-SHA-512": None}
    assert (
        ka.read_upsert_scram_users(
            AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[]), UPSERTS
        )["a SCRAM-SHA-512"]
        is not None
    )
