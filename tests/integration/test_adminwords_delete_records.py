"""DeleteRecords naming one partition twice, as KafkaJS sends it (``deleteTopicRecords`` passes
its partitions as given): Kafka's ``KafkaApis.handleDeleteRecordsRequest`` keys the request by
TopicPartition, so the last mention's offset is the one acted on and the partition is answered
once. The broker acted on every mention in turn, so [5, 2] left the log start offset at 5 where
Kafka's is 2, and [3, 99] (99 past the high watermark) deleted up to 3 and answered the 99's
OFFSET_OUT_OF_RANGE, where Kafka deletes nothing."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_kafkajs import NODE, kafkajs, kafkajs_installed  # noqa: F401

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/setup.sh installs it)"),
]


def _topic_with_ten_records(broker: BrokerProcess) -> str:
    topic = f"words-dr-{uuid.uuid4().hex[:8]}"
    created = kafkajs(broker, "admin", "create-topic", "--topic", topic, "--partitions", "1")
    assert created == {"created": True}
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce(topic, value=str(i).encode(), partition=0)
    assert producer.flush(15) == 0
    return topic


def _low_watermark(broker: BrokerProcess, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), 10)
        assert high == 10
        return int(low)
    finally:
        consumer.close()


def _low_from_kafkajs(broker: BrokerProcess, topic: str) -> int:
    [partition] = kafkajs(broker, "admin", "offsets", "--topic", topic)["topic"]
    return int(partition["low"])


def test_the_last_mention_of_a_partition_is_acted_on(shared_broker: BrokerProcess) -> None:
    topic = _topic_with_ten_records(shared_broker)
    answer = kafkajs(
        shared_broker, "admin", "delete-records", "--topic", topic, "--offsets", "0:5,0:2"
    )
    assert answer == {"deleted": True}
    assert _low_watermark(shared_broker, topic) == 2
    assert _low_from_kafkajs(shared_broker, topic) == 2


def test_a_refused_last_mention_deletes_nothing(shared_broker: BrokerProcess) -> None:
    topic = _topic_with_ten_records(shared_broker)
    answer = kafkajs(
        shared_broker, "admin", "delete-records", "--topic", topic, "--offsets", "0:3,0:99"
    )
    assert answer == {"errors": [{"partition": 0, "type": "OFFSET_OUT_OF_RANGE"}]}
    assert _low_watermark(shared_broker, topic) == 0
