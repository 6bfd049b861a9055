"""``Admin.scram_users`` asks for all users only when DescribeCluster lists DESCRIBE (or ALL)
among the caller's cluster operations: Kafka refuses the request at the top level otherwise,
and librdkafka 2.16 aborts the process on that answer."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AclOperation, ScramMechanism

from tiered_mq.client import admin as admin_mod
from tiered_mq.client.admin import Admin, ScramCredential
from tiered_mq.client.errors import ClientError


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    if isinstance(value, BaseException):
        future.set_exception(value)
    else:
        future.set_result(value)
    return future


class FakeAdminClient:
    """Answers DescribeCluster with ``cluster`` (a result's operations, or an exception)."""

    cluster: Any = None

    def __init__(self, conf: dict[str, Any]) -> None:
        self.described_users = 0

    def poll(self, timeout: float = 0.0) -> int:
        return 0

    def describe_cluster(self, include_authorized_operations: bool, **_: Any) -> Future[Any]:
        assert include_authorized_operations
        if isinstance(self.cluster, BaseException):
            return _done(self.cluster)
        return _done(SimpleNamespace(authorized_operations=self.cluster))

    def describe_user_scram_credentials(self, **_: Any) -> Future[Any]:
        self.described_users += 1
        info = SimpleNamespace(mechanism=ScramMechanism.SCRAM_SHA_256, iterations=8192)
        return _done({"carol": SimpleNamespace(scram_credential_infos=[info])})


def _admin(monkeypatch: pytest.MonkeyPatch, cluster: Any) -> tuple[Admin, FakeAdminClient]:
    monkeypatch.setattr(FakeAdminClient, "cluster", cluster)
    monkeypatch.setattr(admin_mod.ck_admin, "AdminClient", FakeAdminClient)
    admin = Admin(bootstrap_servers="unused:9092")
    fake = admin._admin
    assert isinstance(fake, FakeAdminClient)
    return admin, fake


CAROL = [ScramCredential("carol", "SCRAM-SHA-256", 8192)]


@pytest.mark.parametrize(
    "operations",
    [[AclOperation.ALTER, AclOperation.DESCRIBE], [AclOperation.ALL]],
)
def test_lists_with_describe_or_all(monkeypatch: pytest.MonkeyPatch, operations: Any) -> None:
    admin, _ = _admin(monkeypatch, operations)
    assert admin.scram_users() == CAROL


@pytest.mark.parametrize("operations", [None, [], [AclOperation.ALTER, AclOperation.CREATE]])
def test_refuses_without_describe(monkeypatch: pytest.MonkeyPatch, operations: Any) -> None:
    # None: what confluent-kafka reports for Kafka's 0 (no operations at all)
    admin, fake = _admin(monkeypatch, operations)
    with pytest.raises(ClientError) as refused:
        admin.scram_users()
    assert refused.value.name == "CLUSTER_AUTHORIZATION_FAILED" and refused.value.code == 31
    assert "listing SCRAM users needs DESCRIBE on the cluster" in str(refused.value)
    assert fake.described_users == 0  # the request that would abort was never sent


def test_a_broker_without_describe_cluster_is_asked_anyway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unsupported = KafkaException(KafkaError(KafkaError._UNSUPPORTED_FEATURE))
    admin, _ = _admin(monkeypatch, unsupported)
    assert admin.scram_users() == CAROL


def test_other_describe_cluster_errors_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    admin, fake = _admin(monkeypatch, KafkaException(KafkaError(KafkaError._TRANSPORT, "down")))
    with pytest.raises(ClientError, match="_TRANSPORT: describe cluster: down"):
        admin.scram_users()
    assert fake.described_users == 0
