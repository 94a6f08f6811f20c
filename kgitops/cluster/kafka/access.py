"""ACLs, client quotas and SCRAM credentials through kafka-python: the access half of
``KafkaAdmin``.

Not built yet: every call refuses in one line naming the Kafka API, so an apply never
reports success for an access change it did not make, and a plan that needs the cluster's
ACLs, users or quotas stops before showing anything wrong. Plan and apply them on a
simulated cluster or against a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgitops.access import Acl, QuotaEntity, ScramCredential
from kgitops.cluster.port import QuotaChange, Results, ScramUpsert
from kgitops.errors import ClusterError


def _not_yet(api: str) -> ClusterError:
    return ClusterError(
        f"kgitops cannot send {api} through kafka-python yet: ACLs, SCRAM users and client "
        "quotas are managed on simulated clusters only for now"
    )


class AccessRequests:
    """The access operations of the ClusterAdmin port for ``KafkaAdmin``."""

    def describe_acls(self) -> frozenset[Acl]:
        raise _not_yet("DescribeAcls")

    def create_acls(self, acls: Sequence[Acl]) -> Results:
        raise _not_yet("CreateAcls")

    def delete_acls(self, acls: Sequence[Acl]) -> Results:
        raise _not_yet("DeleteAcls")

    def describe_client_quotas(self) -> Mapping[QuotaEntity, Mapping[str, float]]:
        raise _not_yet("DescribeClientQuotas")

    def alter_client_quotas(self, changes: Mapping[QuotaEntity, QuotaChange]) -> Results:
        raise _not_yet("AlterClientQuotas")

    def describe_scram_users(self) -> Mapping[tuple[str, str], ScramCredential]:
        raise _not_yet("DescribeUserScramCredentials")

    def upsert_scram_users(self, upserts: Sequence[ScramUpsert]) -> Results:
        raise _not_yet("AlterUserScramCredentials")
