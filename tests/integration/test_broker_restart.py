"""Broker restarts lose nothing: clean (SIGTERM) and hard (SIGKILL after the producer's flush)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import take
from tests.integration.conftest import BrokerFactory
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration


def produce(broker: BrokerProcess, topic: str, start: int, n: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": "all",
            "linger.ms": 2,
            "batch.size": 16384,  # below segment.bytes: a bigger batch is refused
            "enable.idempotence": True,
        }
    )
    for i in range(start, start + n):
        producer.produce(topic, key=str(i % 5).encode(), value=f"v{i}".encode())
    assert producer.flush(20) == 0


def read_from_start(
    broker: BrokerProcess, topic: str, partitions: int, expected: int, timeout: float = 20
) -> list[Message]:
    """Every record of ``topic`` from offset 0: ``expected`` of them (fewer after ``timeout``),
    then whatever else arrives within a second (more would be duplicates)."""
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    try:
        return take(consumer, expected, timeout) + take(consumer, 1000, 1.0)
    finally:
        consumer.close()


def consume(broker: BrokerProcess, topic: str, partitions: int, expected: int) -> list[bytes]:
    return [m.value() or b"" for m in read_from_start(broker, topic, partitions, expected)]


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


@pytest.mark.slow
def test_sigkill_under_load_loses_no_acknowledged_record(broker_factory: BrokerFactory) -> None:
    """An idempotent acks=all producer keeps sending while the broker is SIGKILLed three times
    mid-stream (segments rolling meanwhile). Every record the producer was told is written is
    found at the offset it was told, and retries after each restart add no duplicates."""
    broker = broker_factory(
        extra_args=["--config", "num.partitions=3", "--config", "segment.bytes=50000"]
    )
    n = 60_000
    acked: dict[bytes, tuple[int, int]] = {}
    failed: list[str] = []

    def on_delivery(err: Any, msg: Message) -> None:
        if err is None:
            acked[msg.value() or b""] = (msg.partition(), msg.offset())
        else:
            failed.append(str(err))

    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 2,
            "batch.size": 16384,  # below segment.bytes: a bigger batch is refused
            "message.timeout.ms": 120_000,
            "reconnect.backoff.max.ms": 200,
        }
    )
    stop = threading.Event()

    def send_all() -> None:
        for i in range(n):
            while True:
                try:
                    producer.produce("loaded", f"v{i}".encode(), on_delivery=on_delivery)
                    break
                except BufferError:  # the queue is full while the broker is down
                    producer.poll(0.05)
            if i % 500 == 0:
                producer.poll(0)
                time.sleep(0.005)  # ~100k records/s: the kills land mid-stream
            if stop.is_set():
                return

    sender = threading.Thread(target=send_all)
    sender.start()
    try:
        for kill in range(1, 4):
            deadline = time.monotonic() + 60
            while len(acked) < kill * n // 5:  # the sender thread's callbacks need poll()
                assert time.monotonic() < deadline, f"only {len(acked)} acknowledged"
                producer.poll(0.05)
            assert broker.stop(signal.SIGKILL) == -signal.SIGKILL
            broker.restart()
    finally:
        sender.join(120)
        stop.set()
    assert producer.flush(120) == 0
    assert failed == []
    assert len(acked) == n

    by_position = read_positions(broker, "loaded", 3, n)
    assert len(by_position) == n, "duplicates or losses in the log"
    for value, position in acked.items():
        assert by_position.get(position) == value, f"{value!r} not at its acknowledged {position}"


def read_positions(
    broker: BrokerProcess, topic: str, partitions: int, expected: int
) -> dict[tuple[int, int], bytes]:
    """Every record of ``topic`` by (partition, offset), read from offset 0."""
    got = read_from_start(broker, topic, partitions, expected, timeout=60)
    return {(m.partition(), m.offset()): m.value() or b"" for m in got}
