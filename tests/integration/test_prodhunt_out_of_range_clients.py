"""A consumer whose position DeleteRecords moved below the log start offset gets
OFFSET_OUT_OF_RANGE with high_watermark, last_stable_offset and log_start_offset -1, as from
Kafka (its error LogReadResult; this broker sent the real offsets), and each real client still
resets its position by ``auto.offset.reset`` with ListOffsets: earliest resumes at the new log
start, latest at the end. The raw Fetch check fails on the old code; the clients' checks show
none of them read the error's offsets."""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import produce_values, take
from tests.kafka_requests import fetch_body

pytestmark = pytest.mark.integration

FETCH, OFFSET_OUT_OF_RANGE = 1, 1
RECORDS, DELETED_BELOW, START = 10, 6, 2  # consumers start at 2, below the new log start 6


def _trimmed_topic(broker: BrokerProcess, topic: str) -> None:
    """``topic``: values v0..v9 at offsets 0..9, the first six deleted."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    produce_values(broker.bootstrap, topic, *(b"v%d" % i for i in range(RECORDS)))
    tp = TopicPartition(topic, 0, DELETED_BELOW)
    assert admin.delete_records([tp])[tp].result(10).low_watermark == DELETED_BELOW


def _confluent(broker: BrokerProcess, topic: str, reset: str) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"reset-{reset}",
            "auto.offset.reset": reset,
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, START)])
        if reset == "latest":
            time.sleep(2)  # the reset to the end is done before the new record
            produce_values(broker.bootstrap, topic, b"new")
        return [m.value() for m in take(consumer, 1 if reset == "latest" else 4, timeout=20)]
    finally:
        consumer.close()


def _kafka_python(broker: BrokerProcess, topic: str) -> list[bytes]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        tp = KTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, START)
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < RECORDS - DELETED_BELOW and time.monotonic() < deadline:
            for messages in consumer.poll(timeout_ms=500).values():
                got.extend(m.value for m in messages)
        return got
    finally:
        consumer.close()


def _aiokafka(broker: BrokerProcess, topic: str) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer
    from aiokafka import TopicPartition as ATopicPartition

    async def run() -> list[bytes]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            tp = ATopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek(tp, START)
            got: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(got) < RECORDS - DELETED_BELOW and time.monotonic() < deadline:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend(m.value or b"" for m in messages)
            return got
        finally:
            await consumer.stop()

    return asyncio.run(run())


def test_out_of_range_answers_minus_one_and_clients_reset(shared_broker: BrokerProcess) -> None:
    topic = "trimmed"
    _trimmed_topic(shared_broker, topic)
    answer = request(shared_broker.port, FETCH, 11, fetch_body(topic, START))
    partition = answer["responses"][0]["partitions"][0]
    assert partition["error_code"] == OFFSET_OUT_OF_RANGE
    offsets = [partition[k] for k in ("high_watermark", "last_stable_offset", "log_start_offset")]
    assert offsets == [-1, -1, -1] and not partition["records"]

    remaining = [b"v%d" % i for i in range(DELETED_BELOW, RECORDS)]
    assert _confluent(shared_broker, topic, "earliest") == remaining
    assert _kafka_python(shared_broker, topic) == remaining
    assert _aiokafka(shared_broker, topic) == remaining
    assert _confluent(shared_broker, topic, "latest") == [b"new"]
