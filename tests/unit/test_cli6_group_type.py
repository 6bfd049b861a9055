"""librdkafka's ConsumerGroupType as Kafka's GroupType prints it (kafka-consumer-groups.sh
``--list --type``): ``Classic``, ``Consumer``, and ``Unknown`` when the broker did not say."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupType

from tiered_mq.client.admin_groups import group_type_name


def test_group_types_are_spelled_as_kafka_prints_them() -> None:
    assert group_type_name(ConsumerGroupType.CLASSIC) == "Classic"
    assert group_type_name(ConsumerGroupType.CONSUMER) == "Consumer"
    assert group_type_name(ConsumerGroupType.UNKNOWN) == "Unknown"
    assert group_type_name(None) == "Unknown"
