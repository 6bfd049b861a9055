"""A Produce request that names a topic-partition twice (in one topic entry, or in two entries
of the same topic) appends that partition once, with the records of its last mention, and
answers it once, as Kafka does (KafkaApis collects the request into a map from TopicPartition
to records). Before, every mention was appended: the records were written twice."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration.broker_process import BrokerProcess, request
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration

PRODUCE, LIST_OFFSETS, CREATE_TOPICS = 0, 2, 19


def _batch(*values: bytes) -> bytes:
    now = int(time.time() * 1000)
    return bytes(encode_batch([(None, v, [], now) for v in values]))


def _end_offsets(broker: BrokerProcess, topic: str) -> list[int]:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": p, "timestamp": -1} for p in (0, 1)]}
        ],
    }
    answer = request(broker.port, LIST_OFFSETS, 5, body)
    return [p["offset"] for p in answer["topics"][0]["partitions"]]


def _values(broker: BrokerProcess, topic: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    consumer.assign([TopicPartition(topic, partition, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(values) < count and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and not m.error():
                values.append(m.value())
    finally:
        consumer.close()
    return values


def test_a_partition_named_twice_is_appended_once_with_its_last_records(
    broker: BrokerProcess,
) -> None:
    topic = f"dup-{uuid.uuid4().hex[:8]}"
    create = {
        "topics": [{"name": topic, "num_partitions": 2, "replication_factor": 1, "configs": []}],
        "timeout_ms": 10000,
    }
    assert request(broker.port, CREATE_TOPICS, 4, create)["topics"][0]["error_code"] == 0
    body = {
        "acks": -1,
        "timeout_ms": 10000,
        "topic_data": [
            {
                "name": topic,
                "partition_data": [
                    {"index": 0, "records": _batch(b"a1", b"a2")},
                    {"index": 1, "records": _batch(b"c1")},
                    {"index": 0, "records": _batch(b"b1", b"b2", b"b3")},
                ],
            },
            {"name": topic, "partition_data": [{"index": 1, "records": _batch(b"d1", b"d2")}]},
        ],
    }
    answer = request(broker.port, PRODUCE, 8, body)
    assert _end_offsets(broker, topic) == [3, 2]  # not 5 and 3: each appended once
    assert _values(broker, topic, 0, 3) == [b"b1", b"b2", b"b3"]
    assert _values(broker, topic, 1, 2) == [b"d1", b"d2"]
    assert [t["name"] for t in answer["responses"]] == [topic]  # answered once each
    parts = answer["responses"][0]["partition_responses"]
    answered = [(p["index"], p["error_code"], p["base_offset"]) for p in parts]
    assert answered == [(0, 0, 0), (1, 0, 0)]
