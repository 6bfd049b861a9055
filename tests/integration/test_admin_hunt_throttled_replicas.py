"""Kafka's ``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
topic configs (set by ``kafka-reassign-partitions --throttle``, copied by tools that replicate a
topic's configs) are accepted, checked as Kafka's ``ThrottledReplicaListValidator`` does, listed
by DescribeConfigs (default ``""``, type LIST) and changed by IncrementalAlterConfigs APPEND and
SUBTRACT like any list config. They used to be refused INVALID_CONFIG "unknown topic config" and
left out of DescribeConfigs. Driven with confluent-kafka's AdminClient."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

LEADER = "leader.replication.throttled.replicas"
FOLLOWER = "follower.replication.throttled.replicas"


def described(admin: AdminClient, topic: str) -> dict[str, tuple[str | None, ConfigSource]]:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(20)
    return {k: (e.value, ConfigSource(e.source)) for k, e in entries.items()}


def alter(admin: AdminClient, topic: str, name: str, op: AlterConfigOpType, value: str) -> None:
    entry = ConfigEntry(name, value, incremental_operation=op)
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[entry])
    admin.incremental_alter_configs([resource])[resource].result(20)


def test_throttled_replica_lists_are_topic_configs(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    topics = [
        NewTopic("throttled-plain", 2, 1),
        NewTopic("throttled-all", 1, 1, config={LEADER: "*"}),
    ]
    for future in admin.create_topics(topics).values():
        future.result(20)
    plain = described(admin, "throttled-plain")
    assert plain[LEADER] == ("", ConfigSource.DEFAULT_CONFIG)
    assert plain[FOLLOWER] == ("", ConfigSource.DEFAULT_CONFIG)
    assert described(admin, "throttled-all")[LEADER] == ("*", ConfigSource.DYNAMIC_TOPIC_CONFIG)

    alter(admin, "throttled-plain", FOLLOWER, AlterConfigOpType.APPEND, "0:0")
    alter(admin, "throttled-plain", FOLLOWER, AlterConfigOpType.APPEND, "1:0")
    assert described(admin, "throttled-plain")[FOLLOWER] == (
        "0:0,1:0",
        ConfigSource.DYNAMIC_TOPIC_CONFIG,
    )
    alter(admin, "throttled-plain", FOLLOWER, AlterConfigOpType.SUBTRACT, "0:0")
    assert described(admin, "throttled-plain")[FOLLOWER][0] == "1:0"

    for bad in ("0-0", "*,0:0", "a:1"):
        with pytest.raises(KafkaException) as refused:
            alter(admin, "throttled-plain", LEADER, AlterConfigOpType.SET, bad)
        error = refused.value.args[0]
        assert error.code() == KafkaError.INVALID_CONFIG, error
        assert LEADER in error.str() and "must be the literal '*'" in error.str()
    assert described(admin, "throttled-plain")[LEADER] == ("", ConfigSource.DEFAULT_CONFIG)
