"""``Admin`` gives up at once, with ``_TRANSPORT``, when librdkafka reports every broker down
(``_ALL_BROKERS_DOWN`` to the error callback) and none is up, as long as no broker has answered
it yet; once one has, it waits the whole request timeout for brokers to come back, as before. A
stand-in for confluent-kafka's AdminClient plays librdkafka."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from tiered_mq.client import admin as admin_mod
from tiered_mq.client.admin import Admin
from tiered_mq.client.errors import ClientError

REFUSED = "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"


class FakeAdminClient:
    """``up``: a broker is up (Metadata answers, ListGroups answers when ``answering``);
    ``reports``: what the next ``poll`` hands the error callback."""

    made: list[FakeAdminClient] = []

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.up = False
        self.answering = True
        self.reports: list[KafkaError] = []
        self.made.append(self)

    def poll(self, timeout: float = 0.0) -> int:
        served, self.reports = self.reports, []
        for err in served:
            self.conf["error_cb"](err)
        return len(served)

    def list_topics(self, timeout: float = -1, **_: Any) -> Any:
        if not self.up:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata"))
        return type("Metadata", (), {"topics": {}})()

    def list_consumer_groups(self, **_: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if self.up and self.answering:
            future.set_result(type("Result", (), {"valid": [], "errors": []})())
        return future


def all_down(*before: KafkaError) -> list[KafkaError]:
    return [*before, KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down")]


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> tuple[Admin, FakeAdminClient]:
    monkeypatch.setattr(admin_mod.ck_admin, "AdminClient", FakeAdminClient)
    admin = Admin(bootstrap_servers="127.0.0.1:1", request_timeout_s=2.0)
    return admin, FakeAdminClient.made[-1]


def test_every_broker_down_ends_the_wait_at_once(admin: tuple[Admin, FakeAdminClient]) -> None:
    sdk, rd = admin
    rd.reports = all_down(KafkaError(KafkaError._TRANSPORT, REFUSED))
    started = time.monotonic()
    with pytest.raises(ClientError) as raised:
        sdk.list_groups()
    assert time.monotonic() - started < 1.0  # not the 2 s request timeout
    assert raised.value.name == "_TRANSPORT" and raised.value.code == KafkaError._TRANSPORT
    assert str(raised.value) == f"_TRANSPORT: list groups: no broker could be reached: {REFUSED}"
    rd.reports = all_down()
    with pytest.raises(ClientError, match=r"^_TRANSPORT: list topics: no broker could be reached"):
        sdk.list_topics()


def test_a_refused_login_is_named_before_every_broker_down(
    admin: tuple[Admin, FakeAdminClient],
) -> None:
    sdk, rd = admin
    rd.reports = all_down(KafkaError(KafkaError._AUTHENTICATION, "Authentication failed"))
    with pytest.raises(ClientError, match=r"^_AUTHENTICATION: list groups: Authentication failed"):
        sdk.list_groups()


def test_a_broker_up_since_the_report_is_waited_for(admin: tuple[Admin, FakeAdminClient]) -> None:
    """Every broker was reported down, but one is up now: the request is still waited for."""
    sdk, rd = admin
    rd.reports = all_down()
    rd.up, rd.answering = True, False
    answer = type("Result", (), {"valid": [], "errors": []})()
    future: Future[Any] = Future()
    rd.list_consumer_groups = lambda **_: future  # type: ignore[method-assign]
    threading.Timer(0.6, future.set_result, [answer]).start()
    assert sdk.list_groups() == []


def test_after_an_answer_brokers_going_down_are_waited_for(
    admin: tuple[Admin, FakeAdminClient],
) -> None:
    """A client a broker has answered waits the whole timeout (the broker may be restarting)."""
    sdk, rd = admin
    rd.up = True
    assert sdk.list_groups() == []
    rd.up = False
    rd.reports = all_down(KafkaError(KafkaError._TRANSPORT, REFUSED))
    started = time.monotonic()
    with pytest.raises(ClientError, match=r"^_TIMED_OUT: list groups: no answer within 2\.0s"):
        sdk.list_groups()
    assert time.monotonic() - started >= 1.9
