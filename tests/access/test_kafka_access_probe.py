"""The access probes of the kafka-python adapter, without a broker: every probe request
encodes and decodes at every version kafka-python has; the answers a real Kafka cluster gives
them (AclApis, KafkaApis, ControllerApis, ScramImage) pass the preflight at every version;
a time-out, an undecodable answer or an API the cluster does not list is refused in one line
naming the API, and nothing else (unreachable, authentication) is mistaken for a refusal."""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection
from typing import Any

import kafka.errors as kerr
import pytest
from kafka.protocol.admin import (
    AlterClientQuotasResponse,
    AlterUserScramCredentialsResponse,
    CreateAclsResponse,
    DeleteAclsResponse,
    DescribeAclsResponse,
    DescribeClientQuotasResponse,
    DescribeUserScramCredentialsResponse,
)

from kgitops.access import ACCESS_APIS
from kgitops.cluster.kafka import access as ka
from kgitops.cluster.kafka.errors import translate
from kgitops.errors import (
    AccessUnsupported,
    ClusterAuthError,
    ClusterUnreachable,
)

NOT_FOUND = 91  # RESOURCE_NOT_FOUND
CLUSTER_AUTHORIZATION_FAILED = 31
SECURITY_DISABLED = 54


def _set(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _set(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_set(v) for v in value]
    return value


@pytest.mark.parametrize("api", sorted(ACCESS_APIS))
def test_each_probe_encodes_and_decodes_at_every_version(api: str) -> None:
    request = ka.build_probe(api)
    cls = type(request)
    assert cls.__name__ == f"{api}Request"
    full = _set(request.to_dict())
    for version in range(cls.min_version, cls.max_version + 1):
        again = cls.decode(request.encode(version=version, header=False), version=version)
        want = copy.deepcopy(full)
        if api == "DescribeAcls" and version == 0:
            want.pop("pattern_type_filter")  # v0: literal only, as the probe asks
        assert _set(again.to_dict()) == want, (api, version)


def test_the_probes_change_nothing_and_name_at_most_one_thing() -> None:
    """Empty writes (AlterClientQuotas validate-only besides), and reads of one user, one
    quota entity, the cluster resource's ACLs: never an empty or null user list, which
    Kafka answers with every user."""
    assert ka.build_probe("CreateAcls").creations == []
    assert ka.build_probe("DeleteAcls").filters == []
    alter = ka.build_probe("AlterUserScramCredentials")
    assert alter.upsertions == [] and alter.deletions == []
    quotas = ka.build_probe("AlterClientQuotas")
    assert quotas.entries == [] and quotas.validate_only is True
    users = ka.build_probe("DescribeUserScramCredentials").users
    assert [u.name for u in users] == [ka.PROBE_NAME]
    (component,) = ka.build_probe("DescribeClientQuotas").components
    assert (component.entity_type, component.match_type, component.match) == (
        "user",
        0,
        ka.PROBE_NAME,
    )
    acls = ka.build_probe("DescribeAcls")
    assert (acls.resource_type_filter, acls.resource_name_filter) == (4, "kafka-cluster")
    with pytest.raises(ValueError, match="not an access API"):
        ka.build_probe("CreateTopics")


def _kafkas_answer(api: str, *, error: int = 0) -> Any:
    """What Kafka 3.x/4.x answers each probe: empty result lists for the empty writes
    (whatever the principal may do), RESOURCE_NOT_FOUND for the unknown probe user, no
    entry for the quota entity, no binding on the cluster resource. ``error``: a
    top-level error the reads can carry (no authorizer, not authorised)."""
    if api == "DescribeAcls":
        return DescribeAclsResponse(
            throttle_time_ms=0, error_code=error, error_message=None, resources=[]
        )
    if api == "CreateAcls":
        return CreateAclsResponse(throttle_time_ms=0, results=[])
    if api == "DeleteAcls":
        return DeleteAclsResponse(throttle_time_ms=0, filter_results=[])
    if api == "DescribeUserScramCredentials":
        R = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
        return DescribeUserScramCredentialsResponse(
            throttle_time_ms=0,
            error_code=error,
            error_message=None,
            results=[]
            if error
            else [
                R(
                    user=ka.PROBE_NAME,
                    error_code=NOT_FOUND,
                    error_message="Attempt to describe a user credential that does not exist",
                    credential_infos=[],
                )
            ],
        )
    if api == "AlterUserScramCredentials":
        return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[])
    if api == "DescribeClientQuotas":
        return DescribeClientQuotasResponse(
            throttle_time_ms=0, error_code=error, error_message=None, entries=[]
        )
    assert api == "AlterClientQuotas"
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=[])


class Wire(ka.AccessRequests):
    """The adapter's access half over a fake connection: ``answer(api, request, version)``
    gives the decoded response or raises what kafka-python would."""

    def __init__(
        self,
        answer: Callable[[str, Any, int], Any],
        *,
        listed: Collection[str] = ACCESS_APIS,
        timeout_ms: int = 30_000,
        version: int | None = None,
    ) -> None:
        self.answer = answer
        self.listed = set(listed)
        self.version = version
        self.sent: list[tuple[str, int | None]] = []
        self._access_served = set()
        self._access_refused = {}
        self._access_where = "kafka-1:9092,kafka-2:9092"
        self._access_timeout_ms = timeout_ms

    def supports(self, request_class: Any) -> bool:
        return request_class.__name__.removesuffix("Request") in self.listed

    def _send(
        self, request: Any, node_id: int | None = None, *, timeout_ms: int | None = None
    ) -> Any:
        api = type(request).__name__.removesuffix("Request")
        self.sent.append((api, timeout_ms))
        version = type(request).max_version if self.version is None else self.version
        return self.answer(api, request, version)


def _like_kafka(error: int = 0) -> Callable[[str, Any, int], Any]:
    """Kafka's answer, through the wire: the request and the answer encoded and decoded at
    the version sent."""

    def answer(api: str, request: Any, version: int) -> Any:
        type(request).decode(request.encode(version=version, header=False), version=version)
        resp = _kafkas_answer(api, error=error)
        cls = type(resp)
        return cls.decode(resp.encode(version=version, header=False), version=version)

    return answer


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_a_real_kafkas_answers_pass_the_preflight_at_every_version(version: int) -> None:
    """Versions past an API's last are its last (AlterUserScramCredentials has only v0)."""

    def at(api: str, request: Any, v: int) -> Any:
        return _like_kafka()(api, request, min(version, type(request).max_version))

    wire = Wire(at)
    wire.probe_access(ACCESS_APIS)
    assert sorted(api for api, _ in wire.sent) == sorted(ACCESS_APIS)
    assert all(ms == 3000 for _, ms in wire.sent)  # the probe's deadline, not 30 s
    wire.probe_access(ACCESS_APIS)  # probed once per adapter
    assert len(wire.sent) == len(ACCESS_APIS)


@pytest.mark.parametrize("error", [SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED])
def test_an_answer_with_an_error_passes_the_probe_the_real_request_reports_it(error: int) -> None:
    """No authorizer, or a principal without Describe: the cluster serves the API; what it
    says is the real read's to report (today's messages), not a refusal of the API."""
    wire = Wire(_like_kafka(error))
    wire.probe_access(["DescribeAcls", "DescribeUserScramCredentials", "DescribeClientQuotas"])
    assert len(wire.sent) == 3


def _raises(exc: BaseException) -> Callable[[str, Any, int], Any]:
    def answer(api: str, request: Any, version: int) -> Any:
        raise translate(exc, type(request).__name__)

    return answer


def test_no_answer_within_the_probes_deadline_is_refused_in_one_line() -> None:
    wire = Wire(_raises(kerr.RequestTimedOutError("Request timed out after 3000 ms")))
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["CreateAcls", "AlterUserScramCredentials"])
    assert str(caught.value) == (
        "the cluster at kafka-1:9092,kafka-2:9092 did not answer AlterUserScramCredentials "
        "within 3 s (an empty probe): it does not support SCRAM credentials, or it is too slow "
        "right now (run again, or raise accessProbeTimeoutMs in cluster.yaml)"
    )
    assert caught.value.operation == "AlterUserScramCredentials"
    assert "\n" not in str(caught.value)
    assert wire.sent == [("AlterUserScramCredentials", 3000)]  # the first refusal ends it
    with pytest.raises(AccessUnsupported):  # and is kept: not probed again
        wire.probe_access(["AlterUserScramCredentials"])
    assert len(wire.sent) == 1


def test_a_short_request_timeout_shortens_the_probe_too() -> None:
    wire = Wire(_raises(kerr.RequestTimedOutError()), timeout_ms=1500)
    with pytest.raises(AccessUnsupported, match=r"CreateAcls within 1\.5 s \(an empty probe\)"):
        wire.probe_access(["CreateAcls"])
    assert wire.sent == [("CreateAcls", 1500)]


def test_an_answer_kafka_python_cannot_decode_is_refused() -> None:
    wire = Wire(_raises(kerr.KafkaProtocolError("Unable to decode response")))
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["DescribeUserScramCredentials"])
    assert str(caught.value) == (
        "the cluster at kafka-1:9092,kafka-2:9092 answered DescribeUserScramCredentials "
        "(a probe for one user) with a reply that does not decode: it does not support "
        "SCRAM credentials"
    )


def test_an_api_the_cluster_does_not_list_is_refused_before_any_probe_is_sent() -> None:
    wire = Wire(_like_kafka(), listed=ACCESS_APIS - {"DeleteAcls"})
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["CreateAcls", "DeleteAcls"])
    assert str(caught.value) == (
        "the cluster at kafka-1:9092,kafka-2:9092 does not list DeleteAcls among its APIs: "
        "it does not support deleting ACLs"
    )
    assert wire.sent == []


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (kerr.KafkaConnectionError("connection refused"), ClusterUnreachable),
        (kerr.SaslAuthenticationFailedError("bad password"), ClusterAuthError),
    ],
)
def test_an_unreachable_cluster_or_a_failed_login_is_not_called_unsupported(
    exc: BaseException, kind: type[Exception]
) -> None:
    wire = Wire(_raises(exc))
    with pytest.raises(kind) as caught:
        wire.probe_access(["CreateAcls"])
    assert not isinstance(caught.value, AccessUnsupported)
    wire.answer = _like_kafka()
    wire.probe_access(["CreateAcls"])  # not kept as a refusal: asked again, and served


def test_every_access_request_is_probed_first_once() -> None:
    calls: list[str] = []

    def answer(api: str, request: Any, version: int) -> Any:
        calls.append(api)
        if api == "DescribeAcls" and request.resource_type_filter == 1:  # the real read
            return DescribeAclsResponse(
                throttle_time_ms=0, error_code=0, error_message=None, resources=[]
            )
        return _like_kafka()(api, request, version)

    wire = Wire(answer)
    assert wire.describe_acls() == frozenset()
    assert wire.describe_acls() == frozenset()
    assert calls == ["DescribeAcls", "DescribeAcls", "DescribeAcls"]  # probe, read, read


def test_the_probe_deadline_is_access_probe_timeout_ms_and_a_time_out_names_it() -> None:
    """A slow controller (an election, a busy queue) is given the time cluster.yaml allows; a
    time-out is not worded as proof that the API is missing."""
    wire = Wire(_raises(kerr.RequestTimedOutError("Request timed out after 10000 ms")))
    wire._access_probe_ms = 10_000
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["CreateAcls"])
    assert wire.sent == [("CreateAcls", 10_000)]
    assert "did not answer CreateAcls within 10 s (an empty probe)" in str(caught.value)
    assert "or it is too slow right now" in str(caught.value)
    assert "raise accessProbeTimeoutMs in cluster.yaml" in str(caught.value)


def test_a_probe_bounded_by_a_shorter_request_timeout_names_request_timeout_ms() -> None:
    wire = Wire(_raises(kerr.RequestTimedOutError("timed out")), timeout_ms=1500)
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["DescribeAcls"])
    assert wire.sent == [("DescribeAcls", 1500)]
    assert str(caught.value).endswith(
        "did not answer DescribeAcls within 1.5 s (a probe for the cluster resource's ACLs): it "
        "does not support ACLs, or it is too slow right now (run again, or raise "
        "requestTimeoutMs in cluster.yaml)"
    )


def test_an_api_refused_as_unsupported_is_still_said_to_be_unsupported() -> None:
    """Only a time-out is worded as 'or too slow': a refusal is an answer."""
    wire = Wire(_raises(kerr.UnsupportedVersionError("no")))
    with pytest.raises(AccessUnsupported) as caught:
        wire.probe_access(["CreateAcls"])
    assert "too slow" not in str(caught.value)
    assert str(caught.value).endswith(": it does not support ACLs")
