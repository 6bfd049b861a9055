"""A login the broker refuses reaches ``Admin``'s caller as ``_AUTHENTICATION`` at once: not
as a timeout after the whole wait, nor as a bare transport failure (librdkafka reports the
refusal only to the error callback, which ``poll`` serves)."""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from tiered_mq.client import admin as admin_mod
from tiered_mq.client.admin import Admin
from tiered_mq.client.errors import ClientError

REFUSED = "SASL authentication error: Authentication failed: invalid credentials"


class RefusingAdminClient:
    """Requests never answered, metadata a transport failure; ``poll`` reports the refusal."""

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf

    def poll(self, timeout: float = 0.0) -> int:
        self.conf["error_cb"](KafkaError(KafkaError._AUTHENTICATION, REFUSED))
        return 1

    def list_consumer_groups(self, **_: Any) -> Future[Any]:
        return Future()

    def list_topics(self, **_: Any) -> Any:
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata"))


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> Admin:
    monkeypatch.setattr(admin_mod.ck_admin, "AdminClient", RefusingAdminClient)
    return Admin(bootstrap_servers="unused:9092", request_timeout_s=10.0)


def test_a_refused_login_ends_the_wait(admin: Admin) -> None:
    started = time.monotonic()
    with pytest.raises(ClientError, match=f"_AUTHENTICATION: list groups: {REFUSED}"):
        admin.list_groups()
    assert time.monotonic() - started < 2.0  # not the 10 s request timeout


def test_a_refused_login_explains_a_transport_failure(admin: Admin) -> None:
    with pytest.raises(ClientError, match=f"_AUTHENTICATION: list topics: {REFUSED}"):
        admin.list_topics()
