"""Broker restarts lose nothing: clean (SIGTERM) and hard (SIGKILL after the producer's flush)."""

from __future__ import annotations

import signal
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.conftest import BrokerFactory
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration


def produce(broker: BrokerProcess, topic: str, start: int, n: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": "all",
            "linger.ms": 2,
            "enable.idempotence": True,
        }
    )
    for i in range(start, start + n):
        producer.produce(topic, key=str(i % 5).encode(), value=f"v{i}".encode())
    assert producer.flush(20) == 0


def consume(broker: BrokerProcess, topic: str, partitions: int, expected: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.5):
                assert m.error() is None, m.error()
                values.append(m.value())
    finally:
        consumer.close()
    return values


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_restart_loses_nothing(broker_factory: BrokerFactory, sig: int) -> None:
    broker = broker_factory(
        extra_args=["--config", "num.partitions=3", "--config", "segment.bytes=20000"]
    )
    produce(broker, "durable", 0, 3000)  # several segments per partition
    code = broker.stop(sig)
    assert code == (0 if sig == signal.SIGTERM else -signal.SIGKILL)
    broker.start()
    produce(broker, "durable", 3000, 500)
    values = consume(broker, "durable", 3, 3500)
    assert sorted(values) == sorted(f"v{i}".encode() for i in range(3500))


def test_producer_state_survives_sigkill(broker_factory: BrokerFactory) -> None:
    broker = broker_factory()
    pid = request(broker.port, 22, 1, {"transactional_id": None, "transaction_timeout_ms": 1})[
        "producer_id"
    ]

    def send(seq: int, value: bytes) -> dict:  # type: ignore[type-arg]
        records = encode_batch(
            [(None, value, [], None)], producer_id=pid, producer_epoch=0, base_sequence=seq
        )
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": "idem", "partition_data": [{"index": 0, "records": records}]}],
        }
        answer = request(broker.port, 0, 8, body)
        return answer["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]

    request(broker.port, 3, 8, {"topics": [{"name": "idem"}], "allow_auto_topic_creation": True})
    assert send(0, b"a")["base_offset"] == 0
    assert send(1, b"b")["base_offset"] == 1
    broker.kill()
    broker.start()
    retried = send(1, b"b")
    assert (retried["error_code"], retried["base_offset"]) == (0, 1)
    assert send(5, b"gap")["error_code"] == 45
    assert send(2, b"c")["base_offset"] == 2
    new_pid = request(broker.port, 22, 1, {"transactional_id": None, "transaction_timeout_ms": 1})
    assert new_pid["producer_id"] > pid  # ids are never reused across restarts
