"""Config refusals worded as Apache Kafka words them, as the Java Admin and confluent-kafka show
them: a bad topic config value is INVALID_CONFIG with ConfigDef's ``ConfigException`` text
("Invalid value abc for configuration retention.ms: Not a number of type LONG"), an unknown topic
config LogConfig.validateNames' "Unknown topic config name: nope"; a bad dynamic broker value is
INVALID_REQUEST with the same text for the broker key. IncrementalAlterConfigs APPEND/SUBTRACT on
a broker key Kafka's KafkaConfig does not define is INVALID_CONFIG "Unknown config name: x"
(ConfigAdminManager.prepareIncrementalConfigs, Kafka 4.3: KAFKA-20129), on a broker key that is
not a list INVALID_CONFIG "Config value append is not allowed for config key: log.retention.ms"
(an InvalidConfigurationException there). The broker used to answer "retention.ms: 'abc' is not
an int", "nope: unknown topic config" and INVALID_REQUEST "Config value append is not allowed for
config key: retention.ms". Altering the
configs of a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION "The topic 'x' does not
exist." (Kafka's KRaftClusterTest pins it), where the broker said "topic 'x' does not exist"."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration


def test_java_admin_sees_kafkas_config_words(java: Java, shared_broker: BrokerProcess) -> None:  # noqa: F811
    topic = f"words-cfg-{uuid.uuid4().hex[:8]}"
    answers = java.admin(
        shared_broker,
        f"create {topic}-bad 1 retention.ms=abc",
        f"create {topic} 1",
        f"set-config topic:{topic} segment.bytes=2147483648",
        f"set-config topic:{topic} min.insync.replicas=0",
        f"set-config topic:{topic} cleanup.policy=delete,foo",
        f"set-config topic:{topic} preallocate=yes",
        f"set-config topic:{topic} compression.type=brotli",
        f"set-config topic:{topic} compression.gzip.level=0",
        f"set-config topic:{topic} nope=1",
        "set-config broker:0 log.retention.ms=tomorrow",
        "alter-config broker:0 APPEND:retention.ms=5",
        "alter-config broker:0 SUBTRACT:no.such.broker.config=5",
        "alter-config broker:0 APPEND:log.retention.ms=5",
        f"set-config topic:{topic}-missing retention.ms=5",
        f"describe-configs topic:{topic}",
        "list",
    )
    bad_create, created, *refused, broker_value, append, subtract, scalar, missing = answers[:-2]
    described, listed = answers[-2:]
    assert (bad_create["error"], bad_create["message"]) == (
        "InvalidConfigurationException",
        "Invalid value abc for configuration retention.ms: Not a number of type LONG",
    )
    assert f"{topic}-bad" not in listed["ok"]
    assert "ok" in created, created
    assert [(a["error"], a["message"]) for a in refused] == [
        (
            "InvalidConfigurationException",
            "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT",
        ),
        (
            "InvalidConfigurationException",
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            "InvalidConfigurationException",
            "Invalid value foo for configuration cleanup.policy: String must be one of: "
            "compact, delete",
        ),
        (
            "InvalidConfigurationException",
            "Invalid value yes for configuration preallocate: Expected value to be either true "
            "or false",
        ),
        (
            "InvalidConfigurationException",
            "Invalid value brotli for configuration compression.type: String must be one of: "
            "uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            "InvalidConfigurationException",
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 "
            "and 9 or equal to -1",
        ),
        ("InvalidConfigurationException", "Unknown topic config name: nope"),
    ]
    assert (broker_value["error"], broker_value["message"]) == (
        "InvalidRequestException",
        "Invalid value tomorrow for configuration log.retention.ms: Not a number of type LONG",
    )
    assert (append["error"], append["message"]) == (
        "InvalidConfigurationException",
        "Unknown config name: retention.ms",
    )
    assert (subtract["error"], subtract["message"]) == (
        "InvalidConfigurationException",
        "Unknown config name: no.such.broker.config",
    )
    assert (scalar["error"], scalar["message"]) == (
        "InvalidConfigurationException",
        "Config value append is not allowed for config key: log.retention.ms",
    )
    assert (missing["error"], missing["message"]) == (
        "UnknownTopicOrPartitionException",
        f"The topic '{topic}-missing' does not exist.",
    )
    configs = described["ok"]
    assert configs["segment.bytes"]["source"] != "DYNAMIC_TOPIC_CONFIG", configs
    assert configs["cleanup.policy"]["value"] == "delete"


def test_confluent_kafka_sees_kafkas_config_words(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    topic = f"words-cfg-ck-{uuid.uuid4().hex[:8]}"
    future = admin.create_topics([NewTopic(topic, 1, config={"retention.ms": "abc"})])[topic]
    with pytest.raises(KafkaException) as refused:
        future.result(15)
    error: KafkaError = refused.value.args[0]
    assert (error.code(), error.str()) == (
        KafkaError.INVALID_CONFIG,
        "Invalid value abc for configuration retention.ms: Not a number of type LONG",
    )

    missing = ConfigResource("topic", f"{topic}-missing", set_config={"retention.ms": "5"})
    with pytest.raises(KafkaException) as unknown_topic:  # the legacy AlterConfigs
        admin.alter_configs([missing])[missing].result(15)
    error = unknown_topic.value.args[0]
    assert (error.code(), error.str()) == (
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        f"The topic '{topic}-missing' does not exist.",
    )

    op = ConfigEntry("retention.ms", "5", incremental_operation=AlterConfigOpType.APPEND)
    resource = ConfigResource("broker", "0", incremental_configs=[op])
    with pytest.raises(KafkaException) as unknown:
        admin.incremental_alter_configs([resource])[resource].result(15)
    error = unknown.value.args[0]
    assert (error.code(), error.str()) == (
        KafkaError.INVALID_CONFIG,
        "Unknown config name: retention.ms",
    )
