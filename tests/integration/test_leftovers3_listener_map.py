"""``listener.security.protocol.map`` in DescribeConfigs of the BROKER resource, asked with
confluent-kafka's AdminClient as ``kafka-configs.sh --entity-type brokers --describe --all``
asks it: Kafka's default map (each security protocol's name to itself, in Kafka's order) from
DEFAULT_CONFIG, and a map set with ``--config`` answered as given (STATIC_BROKER_CONFIG) with
each of its listener names taking clients."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

KAFKA_DEFAULT = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"


def protocol_map(bootstrap: str) -> tuple[str | None, ConfigSource]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    entry = admin.describe_configs([resource])[resource].result(20)[
        "listener.security.protocol.map"
    ]
    return entry.value, ConfigSource(entry.source)


def test_default_map_is_kafkas(broker: BrokerProcess) -> None:
    assert protocol_map(broker.bootstrap) == (KAFKA_DEFAULT, ConfigSource.DEFAULT_CONFIG)


def test_a_map_set_is_answered_and_its_listeners_take_clients(
    broker_factory: BrokerFactory,
) -> None:
    internal, external = free_port(), free_port()
    args = [
        "--config", f"listeners=INTERNAL://127.0.0.1:{internal},EXTERNAL://127.0.0.1:{external}",
        "--config", "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
    ]  # fmt: skip
    broker_factory(port=internal, extra_args=args)
    for port in (internal, external):
        assert protocol_map(f"127.0.0.1:{port}") == (
            "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
            ConfigSource.STATIC_BROKER_CONFIG,
        )
