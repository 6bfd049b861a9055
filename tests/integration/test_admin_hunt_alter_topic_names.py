"""AlterConfigs and IncrementalAlterConfigs of a TOPIC resource whose name is not a legal topic
name ("", other characters, too long) answer INVALID_TOPIC_EXCEPTION, as DescribeConfigs does
and as Kafka's ``Topic.validate`` makes both alter paths answer; they used to answer
UNKNOWN_TOPIC_OR_PARTITION, which tells a tool to wait for the topic to appear. A legal name
that names no topic stays UNKNOWN_TOPIC_OR_PARTITION. Driven with kafka-python's admin client
(both requests) and confluent-kafka's."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ResourceType
from confluent_kafka.admin import ConfigResource as CkResource
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

ILLEGAL = ("bad name!", "", "x" * 250)


def answer(admin: KafkaAdminClient, resource: ConfigResource, incremental: bool) -> Any:
    """kafka-python's answer (it checks the keys against the topic's described dynamic configs
    first unless told not to: the topic does not exist)."""
    return admin.alter_configs([resource], incremental=incremental, raise_on_unknown=False)


def kafka_python_errors(bootstrap: str, name: str) -> list[str]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        resource = ConfigResource(ConfigResourceType.TOPIC, name, configs={"retention.ms": "1"})
        return [str(answer(admin, resource, inc)["topic"][name]) for inc in (True, False)]
    finally:
        admin.close()


def test_an_illegal_topic_name_is_invalid_topic(shared_broker: BrokerProcess) -> None:
    for name in ILLEGAL:
        for error in kafka_python_errors(shared_broker.bootstrap, name):
            assert error.startswith("[Error 17] InvalidTopicError"), (name, error)
    for error in kafka_python_errors(shared_broker.bootstrap, "no-such-topic"):
        assert error.startswith("[Error 3] UnknownTopicOrPartitionError"), error

    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    entry = ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)
    resource = CkResource(ResourceType.TOPIC, "bad name!", incremental_configs=[entry])
    with pytest.raises(KafkaException) as refused:
        admin.incremental_alter_configs([resource])[resource].result(20)
    assert refused.value.args[0].code() == KafkaError.TOPIC_EXCEPTION
