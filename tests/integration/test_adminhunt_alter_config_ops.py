"""IncrementalAlterConfigs APPEND/SUBTRACT on a key that is not a list, refused as Kafka refuses
it: on a topic by the controller (ConfigurationControlManager: INVALID_CONFIG "Can't APPEND to key
retention.ms because its type is not LIST."), on a broker by the broker before it forwards the
change (ConfigAdminManager.prepareIncrementalConfigs: INVALID_CONFIG, an
InvalidConfigurationException, "Config value append is not allowed for config key:
log.retention.ms"). Nothing is changed either way."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration


def test_java_sees_kafkas_refusals(java: Java, shared_broker: BrokerProcess) -> None:  # noqa: F811
    topic = "adminhunt-append-scalar"
    answers = java.admin(
        shared_broker,
        f"create {topic} 1 retention.ms=3600000",
        f"alter-config topic:{topic} APPEND:retention.ms=5",
        f"alter-config topic:{topic} SUBTRACT:retention.ms=5",
        "alter-config broker:0 APPEND:log.retention.ms=5",
        "alter-config broker:0 SUBTRACT:log.retention.ms=5",
        f"describe-configs topic:{topic}",
        "describe-configs broker:0",
    )
    created, append, subtract, broker_append, broker_subtract, topic_cfg, broker_cfg = answers
    assert "ok" in created, created
    assert (append["error"], append["message"]) == (
        "InvalidConfigurationException",
        "Can't APPEND to key retention.ms because its type is not LIST.",
    )
    assert (subtract["error"], subtract["message"]) == (
        "InvalidConfigurationException",
        "Can't SUBTRACT to key retention.ms because its type is not LIST.",
    )
    assert (broker_append["error"], broker_append["message"]) == (
        "InvalidConfigurationException",
        "Config value append is not allowed for config key: log.retention.ms",
    )
    assert (broker_subtract["error"], broker_subtract["message"]) == (
        "InvalidConfigurationException",
        "Config value subtract is not allowed for config key: log.retention.ms",
    )
    assert topic_cfg["ok"]["retention.ms"]["value"] == "3600000"
    assert broker_cfg["ok"]["log.retention.ms"]["source"] != "DYNAMIC_BROKER_CONFIG"


def test_confluent_kafka_gets_invalid_config_for_a_broker(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    op = ConfigEntry("log.retention.ms", "5", incremental_operation=AlterConfigOpType.APPEND)
    resource = ConfigResource("broker", "0", incremental_configs=[op])
    with pytest.raises(KafkaException) as refused:
        admin.incremental_alter_configs([resource])[resource].result(15)
    error: KafkaError = refused.value.args[0]
    assert error.code() == KafkaError.INVALID_CONFIG, error
    assert error.str() == "Config value append is not allowed for config key: log.retention.ms"
