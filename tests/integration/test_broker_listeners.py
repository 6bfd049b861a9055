"""Two listeners on one broker (Kafka's internal/external setup): a plaintext INTERNAL one and
a SASL EXTERNAL one advertised under another host name. Each client is answered with its own
listener's address, so it stays on that listener's protocol; groups work on both."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from tests.integration.broker_process import (
    FIND_COORDINATOR,
    METADATA,
    BrokerProcess,
    exchange,
    free_port,
    request,
)
from tests.integration.client_helpers import confluent_round_trip, sasl_conf

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
    return sasl_conf(f"localhost:{port}", "SCRAM-SHA-512", "app", "app-secret", **more)


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
    confluent_round_trip({"bootstrap.servers": broker.bootstrap}, "inside", 200, partitions=2)
    confluent_round_trip(_external(external), "outside", 200, partitions=2)


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


def test_a_wildcard_ipv6_listener_takes_ipv4_clients_too(tmp_path: Path) -> None:
    """``[::]`` is every address, as in Kafka (Java binds it dual-stack): IPv4 and IPv6
    clients both reach the broker, and a real client round-trips through it."""
    port = free_port()
    args = ["--config", f"listeners=PLAINTEXT://[::]:{port}"]
    with BrokerProcess(tmp_path / "data", port=port, extra_args=args) as broker:
        assert request(broker.port, METADATA, 1, {"topics": []})["brokers"]  # over 127.0.0.1
        with socket.create_connection(("::1", port), timeout=5.0) as over_ipv6:
            assert exchange(over_ipv6, METADATA, 1, {"topics": []})["brokers"]
        confluent_round_trip({"bootstrap.servers": broker.bootstrap}, "dual-stack", 50)
