"""Access on the local Tansu broker, which advertises DescribeAcls, CreateAcls and the SCRAM
APIs but serves only DescribeAcls (always no binding) and AlterUserScramCredentials (success,
nothing kept); it answers CreateAcls and DescribeUserScramCredentials with a truncated body
kafka-python never decodes, and does not list DeleteAcls nor the client-quota APIs
(docs/access.md, "Real clusters and the local broker").

kgitops must refuse such a folder in one line naming the API, exit 1, before changing
anything, in seconds (the probe's deadline), not after requestTimeoutMs; a new plan still
shows the change.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path

import pytest
from kafka.protocol.admin import (
    CreateAclsRequest,
    CreateAclsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from kgitops.access import ACCESS_APIS, Acl, scram_salted_password
from kgitops.cli import main
from kgitops.cluster.kafka import access as ka
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.port import ScramUpsert
from kgitops.errors import AccessUnsupported
from kgitops.model import ClusterSpec, SecuritySpec
from tests.helpers import cluster_folder

TIMEOUT_MS = 1000  # the probes' deadline too (the shorter of the two)
TOPIC = "apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 1\nreplicationFactor: 1\n"
USER = (
    "---\napiVersion: kgitops/v1\nkind: User\nname: orders-app\nmechanism: SCRAM-SHA-256\n"
    "passwordEnv: KGITOPS_TEST_ORDERS_PW\n"
)
QUOTA = "---\napiVersion: kgitops/v1\nkind: Quota\nuser: orders-app\nproducerByteRate: 1024\n"


def _folder(
    path: Path, bootstrap: str, body: str, timeout_ms: int = TIMEOUT_MS, extra: str = ""
) -> str:
    extra = (
        "unmanagedTopics: ignore\n"
        "security: {allowCleartextCredentials: true}  # a local broker, no wire to tap\n"
        f"requestTimeoutMs: {timeout_ms}\n{extra}"
    )
    return str(
        cluster_folder(path, "local", bootstrap=bootstrap, extra=extra, files={"t.yaml": body})
    )


def _admin(bootstrap: str, timeout_ms: int = TIMEOUT_MS) -> KafkaAdmin:
    return KafkaAdmin(
        ClusterSpec(
            name="local",
            directory=".",
            bootstrap_servers=(bootstrap,),
            request_timeout_ms=timeout_ms,
            security=SecuritySpec(allow_cleartext_credentials=True),  # a local broker
        )
    )


def _read_back(bootstrap: str, topic: str) -> tuple[set[str], frozenset[Acl]]:
    """What kafka-python reads of the broker: the topic (if created) and every ACL."""
    admin = _admin(bootstrap, 5000)
    try:
        return set(admin.describe([topic]).topics), admin.describe_acls()
    finally:
        admin.close()


def _kinds(out: str) -> list[str]:
    return sorted(a["type"] for a in json.loads(out)["actions"])


def _one_error_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("error: "), text
    return lines[0]


@pytest.mark.slow
def test_an_acl_apply_is_refused_up_front_in_seconds_and_a_replan_still_shows_it(
    local_broker: str, topic_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """requestTimeoutMs is 60 s: the refusal comes from the probe's own 3 s deadline."""
    topic = topic_prefix + "acl"
    body = TOPIC.format(name=topic) + "access:\n  consume: [User:b]\n"
    folder = _folder(tmp_path, local_broker, body, timeout_ms=60_000)
    assert main(["plan", folder, "--format", "json"]) == 0
    assert _kinds(capsys.readouterr().out) == ["create_acl", "create_acl", "create_topic"]

    started = time.monotonic()
    code = main(["apply", folder, "--yes"])
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert out == ""  # refused before the plan is shown, nothing applied
    assert _one_error_line(err) == (
        f"error: the cluster at {local_broker} did not answer CreateAcls within 3 s (an empty "
        "probe): it does not support ACLs, or it is too slow right now (run again, or raise "
        "accessProbeTimeoutMs in cluster.yaml); nothing was changed"
    )
    assert elapsed < 30, elapsed  # not requestTimeoutMs (60 s)
    assert _read_back(local_broker, topic) == (set(), frozenset())  # no topic, no ACL

    assert main(["plan", folder, "--format", "json"]) == 0
    assert _kinds(capsys.readouterr().out) == ["create_acl", "create_acl", "create_topic"]


def test_a_folder_with_users_is_refused_at_plan_and_apply_and_nothing_is_created(
    local_broker: str,
    topic_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KGITOPS_TEST_ORDERS_PW", "s3cret-pw")
    topic = topic_prefix + "user"
    # the probe's deadline is cluster.yaml's accessProbeTimeoutMs (requestTimeoutMs is 60 s)
    body = TOPIC.format(name=topic) + USER
    folder = _folder(tmp_path, local_broker, body, 60_000, "accessProbeTimeoutMs: 1000\n")
    refusal = (
        f"error: the cluster at {local_broker} did not answer DescribeUserScramCredentials "
        "within 1 s (a probe for one user): it does not support SCRAM credentials, or it is too "
        "slow right now (run again, or raise accessProbeTimeoutMs in cluster.yaml)"
    )
    assert main(["plan", folder]) == 1
    out, err = capsys.readouterr()
    assert out == "" and _one_error_line(err) == refusal
    assert main(["apply", folder, "--yes"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and _one_error_line(err) == refusal + "; nothing was changed"
    assert "s3cret-pw" not in out + err
    assert _read_back(local_broker, topic) == (set(), frozenset())


def test_a_folder_with_quotas_is_refused_at_plan_and_apply_without_a_request(
    local_broker: str, topic_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_prefix + "quota"
    folder = _folder(tmp_path, local_broker, TOPIC.format(name=topic) + QUOTA)
    refusal = (
        f"error: the cluster at {local_broker} does not list DescribeClientQuotas among its "
        "APIs: it does not support client quotas"
    )
    assert main(["plan", folder]) == 1
    out, err = capsys.readouterr()
    assert out == "" and _one_error_line(err) == refusal
    assert main(["apply", folder, "--yes"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and _one_error_line(err) == refusal + "; nothing was changed"
    assert _read_back(local_broker, topic) == (set(), frozenset())


def test_the_probes_pass_only_what_the_broker_answers_and_name_the_rest(
    local_broker: str,
) -> None:
    admin = _admin(local_broker)
    try:
        served = []
        refused = {}
        for api in sorted(ACCESS_APIS):
            try:
                admin.probe_access([api])
                served.append(api)
            except AccessUnsupported as exc:
                assert exc.operation == api
                refused[api] = str(exc)
        assert served == ["AlterUserScramCredentials", "DescribeAcls"]
        assert sorted(refused) == [
            "AlterClientQuotas",
            "CreateAcls",
            "DeleteAcls",
            "DescribeClientQuotas",
            "DescribeUserScramCredentials",
        ]
        assert "did not answer CreateAcls within 1 s (an empty probe)" in refused["CreateAcls"]
        assert "does not list DeleteAcls among its APIs" in refused["DeleteAcls"]
        # Tansu answers AlterUserScramCredentials with success and keeps nothing: the probe
        # passes, and apply's read-back (which needs DescribeUserScramCredentials, refused
        # above) is what would report it NOT done.
        salted = scram_salted_password("SCRAM-SHA-256", "pw", b"s" * 16, 4096)
        upsert = ScramUpsert("a", "SCRAM-SHA-256", 4096, b"s" * 16, salted)
        assert admin.upsert_scram_users([upsert]) == {"a SCRAM-SHA-256": None}
        with pytest.raises(AccessUnsupported, match="DescribeUserScramCredentials"):
            admin.describe_scram_users()
        assert admin.describe_acls() == frozenset()
    finally:
        admin.close()


def _raw(bootstrap: str, request: object, version: int) -> bytes | None:
    """One request on a fresh socket: the answer's body, or None when the broker closed the
    connection."""
    host, port = bootstrap.rsplit(":", 1)
    request.with_header(correlation_id=7, client_id="kgitops-test")  # type: ignore[attr-defined]
    data = request.encode(version=version, header=True, framed=True)  # type: ignore[attr-defined]
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(bytes(data))
        head = s.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return None
        (n,) = struct.unpack(">i", head)
        return s.recv(n, socket.MSG_WAITALL)


def test_the_broker_answers_create_acls_and_describe_scram_with_a_truncated_body(
    local_broker: str,
) -> None:
    """The wire-level finding behind the probes: the answer comes at once but stops after
    the throttle time (no results array, no tag buffer), so kafka-python cannot decode it;
    at a flexible version its read loop then stops and the request only ends by time-out."""
    for version in range(CreateAclsRequest.max_version + 1):
        body = _raw(local_broker, ka.build_probe("CreateAcls"), version)
        assert body is not None and body[:4] == struct.pack(">i", 7)
        with pytest.raises((struct.error, IndexError)):  # kafka-python's decoders
            CreateAclsResponse.decode(body, version=version, header=True)
    body = _raw(local_broker, DescribeUserScramCredentialsRequest(users=None), 0)
    assert body is not None
    with pytest.raises(IndexError):
        DescribeUserScramCredentialsResponse.decode(body, version=0, header=True)
