"""Configs of a topic that does not exist, answered as Apache Kafka 4.x answers them.

DescribeConfigs: UNKNOWN_TOPIC_OR_PARTITION with no error message (Kafka's ConfigHelper sets
only the code), so the Java Admin shows "This server does not host this topic-partition." and
librdkafka "Broker: Unknown topic or partition"; the broker used to say "topic 'x' does not
exist". IncrementalAlterConfigs: Kafka's controller (ConfigurationControlManager) judges APPEND
on a key that is not a list, then the values, and only then whether the topic exists, so a bad
value or a refused APPEND is INVALID_CONFIG on a missing topic too, and a good value is
UNKNOWN_TOPIC_OR_PARTITION "The topic 'x' does not exist."; the broker used to answer the
missing topic first. The legacy AlterConfigs already judged the values first (as Kafka)."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration


def refusal(future: object) -> KafkaError:
    """The KafkaError a confluent-kafka admin future fails with."""
    with pytest.raises(KafkaException) as info:
        future.result(15)  # type: ignore[attr-defined]
    error: KafkaError = info.value.args[0]
    return error


def test_describe_configs_of_a_missing_topic(java: Java, shared_broker: BrokerProcess) -> None:  # noqa: F811
    missing = f"lo5-missing-{uuid.uuid4().hex[:8]}"
    (described,) = java.admin(shared_broker, f"describe-configs topic:{missing}")
    assert (described["error"], described["message"]) == (
        "UnknownTopicOrPartitionException",
        "This server does not host this topic-partition.",
    )

    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    resource = ConfigResource("topic", missing)
    error = refusal(admin.describe_configs([resource])[resource])
    assert (error.code(), error.str()) == (
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        "Broker: Unknown topic or partition",
    )


def test_alter_configs_of_a_missing_topic_judges_the_values_first(
    java: Java,  # noqa: F811
    shared_broker: BrokerProcess,
) -> None:
    missing = f"lo5-missing-{uuid.uuid4().hex[:8]}"
    append, bad_value, good_value, listed = java.admin(
        shared_broker,
        f"alter-config topic:{missing} APPEND:retention.ms=5",
        f"alter-config topic:{missing} SET:retention.ms=abc",
        f"alter-config topic:{missing} SET:retention.ms=5",
        "list",
    )
    assert (append["error"], append["message"]) == (
        "InvalidConfigurationException",
        "Can't APPEND to key retention.ms because its type is not LIST.",
    )
    assert (bad_value["error"], bad_value["message"]) == (
        "InvalidConfigurationException",
        "Invalid value abc for configuration retention.ms: Not a number of type LONG",
    )
    assert (good_value["error"], good_value["message"]) == (
        "UnknownTopicOrPartitionException",
        f"The topic '{missing}' does not exist.",
    )
    assert missing not in listed["ok"]  # nothing was created on the way

    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    bad = ConfigEntry("retention.ms", "abc", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource("topic", missing, incremental_configs=[bad])
    refused = refusal(admin.incremental_alter_configs([resource])[resource])
    assert (refused.code(), refused.str()) == (
        KafkaError.INVALID_CONFIG,
        "Invalid value abc for configuration retention.ms: Not a number of type LONG",
    )
    # the legacy AlterConfigs judged the value first already: the same answer
    resource = ConfigResource("topic", missing, set_config={"retention.ms": "abc"})
    legacy = refusal(admin.alter_configs([resource])[resource])
    assert (legacy.code(), legacy.str()) == (refused.code(), refused.str())
