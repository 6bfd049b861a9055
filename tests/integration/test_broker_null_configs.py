"""DescribeConfigs of the BROKER resource shows null for a string config that is unset and has
no default in Kafka (``broker.rack``, ``advertised.listeners``, ``zookeeper.connect``, the
``ssl.*`` file locations: KafkaConfig defines them with a null default), as
``kafka-configs.sh --describe --all`` shows ``broker.rack=null``; a config whose Kafka default
is the empty string (``authorizer.class.name``) stays ``""``. Checked with confluent-kafka and
kafka-python, whose ``value`` is None for a null."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

NULL_WHEN_UNSET = (
    "broker.rack",
    "advertised.listeners",
    "zookeeper.connect",
    "zookeeper.connection.timeout.ms",
    "ssl.keystore.location",
    "ssl.truststore.location",
)


def confluent_values(bootstrap: str) -> dict[str, tuple[str | None, ConfigSource]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    entries = admin.describe_configs([resource])[resource].result(20)
    return {k: (e.value, ConfigSource(e.source)) for k, e in entries.items()}


def kafka_python_values(bootstrap: str) -> dict[str, str | None]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        answer = admin.describe_configs(
            [KpConfigResource(ConfigResourceType.BROKER, "0")], config_filter="all"
        )
    finally:
        admin.close()
    return {k: v["value"] for k, v in answer["broker"]["0"].items()}


def test_unset_configs_without_a_kafka_default_are_null(broker: BrokerProcess) -> None:
    confluent = confluent_values(broker.bootstrap)
    for name in NULL_WHEN_UNSET:
        assert confluent[name] == (None, ConfigSource.DEFAULT_CONFIG), name
    assert confluent["authorizer.class.name"] == ("", ConfigSource.DEFAULT_CONFIG)
    kp = kafka_python_values(broker.bootstrap)
    for name in NULL_WHEN_UNSET:
        assert kp[name] is None, name
    assert kp["authorizer.class.name"] == ""


def test_a_set_one_shows_its_value(broker_factory: BrokerFactory) -> None:
    b = broker_factory(extra_args=["--config", "broker.rack=rack-a"])
    confluent = confluent_values(b.bootstrap)
    assert confluent["broker.rack"] == ("rack-a", ConfigSource.STATIC_BROKER_CONFIG)
    assert confluent["advertised.listeners"] == (None, ConfigSource.DEFAULT_CONFIG)
