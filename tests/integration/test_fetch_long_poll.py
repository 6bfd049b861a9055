"""A long-poll Fetch answers from the log as it is when the wait ends: records deleted while it
waited (DeleteRecords) are never sent, with a raw Fetch and with a real consumer."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import FETCH, BrokerProcess, request
from tests.kafka_requests import fetch_body

pytestmark = pytest.mark.integration

OFFSET_OUT_OF_RANGE = 1


def _topic_with_ten_records(broker: BrokerProcess, topic: str) -> AdminClient:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i in range(10):
        producer.produce(topic, value=f"v{i}".encode(), partition=0)
        producer.flush(10)  # one batch per record: DeleteRecords cuts between them
    return admin


def _delete_records(admin: AdminClient, topic: str, before: int) -> None:
    tp = TopicPartition(topic, 0, before)
    assert admin.delete_records([tp])[tp].result(10).low_watermark == before


def test_parked_fetch_does_not_send_records_deleted_while_it_waited(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        admin = _topic_with_ten_records(broker, "parked")
        answer: dict[str, Any] = {}

        def parked_fetch() -> None:
            body = fetch_body("parked", 5, max_wait_ms=3000, min_bytes=10_000_000)
            response = request(broker.port, FETCH, 11, body, timeout=30)
            answer.update(response["responses"][0]["partitions"][0])

        fetching = threading.Thread(target=parked_fetch)
        fetching.start()
        time.sleep(1)  # parked: 50 bytes of 10 MB are there
        _delete_records(admin, "parked", 8)
        fetching.join(30)
        assert answer["error_code"] == OFFSET_OUT_OF_RANGE
        assert answer["log_start_offset"] == -1  # an error's offsets are -1, as Kafka's
        assert not answer["records"]


def test_consumer_never_gets_records_deleted_under_its_long_poll(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        admin = _topic_with_ten_records(broker, "polled")
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "long-poll",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.min.bytes": 10_000_000,
                "fetch.wait.max.ms": 3000,
            }
        )
        consumer.assign([TopicPartition("polled", 0, 5)])
        consumer.poll(0.5)  # its first fetch is parked in the broker
        _delete_records(admin, "polled", 8)
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < 2 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
        consumer.close()
        assert got == [b"v8", b"v9"]  # reset to the new log start: never v5, v6, v7
