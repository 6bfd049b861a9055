"""Two listeners on one broker (Kafka's internal/external setup): a plaintext INTERNAL one and
a SASL EXTERNAL one advertised under another host name. Each client is answered with its own
listener's address, so it stays on that listener's protocol; groups work on both."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from tests.integration.broker_process import (
    FIND_COORDINATOR,
    METADATA,
    BrokerProcess,
    free_port,
    request,
)

pytestmark = pytest.mark.integration

JAAS = 'x required user_app="app-secret";'


@pytest.fixture(scope="module")
def two_listeners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, int]]:
    internal, external = free_port(), free_port()
    args = [
        "--config", f"listeners=INTERNAL://127.0.0.1:{internal},EXTERNAL://127.0.0.1:{external}",
        "--config", f"advertised.listeners=EXTERNAL://localhost:{external}",
        "--config", "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
        "--config", f"sasl.jaas.config={JAAS}",
    ]  # fmt: skip
    data = tmp_path_factory.mktemp("listeners") / "data"
    with BrokerProcess(data, port=internal, extra_args=args) as broker:
        yield broker, external


def _external(port: int, **more: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": f"localhost:{port}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "app",
        "sasl.password": "app-secret",
        **more,
    }


def _round_trip(conf: dict[str, Any], topic: str, n: int = 200) -> None:
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(20)
    producer = Producer(conf)
    for i in range(n):
        producer.produce(topic, key=str(i).encode(), value=f"{topic}-{i}".encode())
    assert producer.flush(20) == 0
    consumer = Consumer({**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])  # FindCoordinator, then the group protocol on this listener
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < n and time.monotonic() < deadline:
            for m in consumer.consume(500, 0.5):
                assert m.error() is None, m.error()
                got.append(m.value() or b"")
    finally:
        consumer.close()
    assert sorted(got) == sorted(f"{topic}-{i}".encode() for i in range(n))


def test_each_listener_answers_with_its_own_address(
    two_listeners: tuple[BrokerProcess, int],
) -> None:
    broker, external = two_listeners
    inside = request(broker.port, METADATA, 1, {"topics": []})
    assert [(b["host"], b["port"]) for b in inside["brokers"]] == [("127.0.0.1", broker.port)]
    outside = request(external, METADATA, 1, {"topics": []}, 5.0, None, ("app", "app-secret"))
    assert [(b["host"], b["port"]) for b in outside["brokers"]] == [("localhost", external)]
    coordinator = request(
        external, FIND_COORDINATOR, 1, {"key": "g", "key_type": 0}, 5.0, None, ("app", "app-secret")
    )
    assert (coordinator["host"], coordinator["port"]) == ("localhost", external)


def test_clients_on_both_listeners(two_listeners: tuple[BrokerProcess, int]) -> None:
    broker, external = two_listeners
    _round_trip({"bootstrap.servers": broker.bootstrap}, "inside")
    _round_trip(_external(external), "outside")


def test_the_sasl_listener_still_demands_a_login(two_listeners: tuple[BrokerProcess, int]) -> None:
    broker, external = two_listeners
    with pytest.raises((OSError, ValueError)):
        request(external, METADATA, 1, {"topics": []}, timeout=5.0)
    assert request(broker.port, METADATA, 1, {"topics": []})["brokers"]


def test_listeners_are_described(two_listeners: tuple[BrokerProcess, int]) -> None:
    broker, external = two_listeners
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    configs = admin.describe_configs([resource])[resource].result(20)
    assert configs["listeners"].value == (
        f"INTERNAL://127.0.0.1:{broker.port},EXTERNAL://127.0.0.1:{external}"
    )
    assert configs["sasl.jaas.config"].value is None
    assert configs["sasl.jaas.config"].is_sensitive
