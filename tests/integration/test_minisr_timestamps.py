"""A record stamped below -1 (librdkafka sends the timestamp it is given, -5 here; the batch's
max timestamp is then -1) on a topic with ``message.timestamp.before.max.ms``: refused with
INVALID_TIMESTAMP, as Kafka's LogValidator judges every timestamp but -1. It was stored. A
topic with the default (Long.MAX_VALUE) takes it, as Kafka does."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration


def send(bootstrap: str, topic: str, timestamp: int) -> KafkaError | None:
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    reports: list[KafkaError | None] = []

    def on_delivery(error: KafkaError | None, _: Message) -> None:
        reports.append(error)

    producer.produce(topic, b"v", timestamp=timestamp, on_delivery=on_delivery)
    assert producer.flush(15) == 0 and len(reports) == 1
    return reports[0]


def test_a_timestamp_below_minus_1_is_refused_by_before_max_ms(
    shared_broker: BrokerProcess,
) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    window = {"message.timestamp.before.max.ms": "3600000"}
    topics = [NewTopic("window", 1, 1, config=window), NewTopic("open", 1, 1)]
    for future in admin.create_topics(topics).values():
        future.result(15)
    error = send(shared_broker.bootstrap, "window", -5)
    assert error is not None and error.code() == KafkaError.INVALID_TIMESTAMP, error
    assert send(shared_broker.bootstrap, "open", -5) is None
