"""A full disk, caused for real: the broker's data directory on a small tmpfs.

Producing until the filesystem is full must give the producer a clear error
(KAFKA_STORAGE_ERROR), keep the broker up and every acknowledged record readable (also after a
restart on the full disk), and produce must work again once space is freed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess
from tests.integration.tmpfs import mounted_tmpfs

pytestmark = pytest.mark.integration

DISK_BYTES = 24 << 20
BALLAST_BYTES = 6 << 20
VALUE_BYTES = 16 << 10
TOPIC = "fills"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of DISK_BYTES (root only: CI runs as root)."""
    with mounted_tmpfs(tmp_path / "disk", f"size={DISK_BYTES}") as mount:
        yield mount


def _produce(bootstrap: str, values: list[bytes]) -> dict[bytes, int | KafkaError]:
    """Send ``values`` (no retries, so the broker's error is what the callback sees); each
    value maps to its offset or its error."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "retries": 0,
            "linger.ms": 0,
            "enable.idempotence": False,
            "message.timeout.ms": 20000,
        }
    )
    outcome: dict[bytes, int | KafkaError] = {}

    def done(err: KafkaError | None, msg: Message) -> None:
        value = msg.value()
        assert value is not None
        outcome[value[:16]] = err if err is not None else int(msg.offset() or 0)

    for value in values:
        producer.produce(TOPIC, value, partition=0, on_delivery=done)
        producer.flush(20)
    assert producer.flush(20) == 0
    return outcome


def _value(i: int) -> bytes:
    return f"{i:016d}".encode() + os.urandom(VALUE_BYTES - 16)


def _read_all(bootstrap: str, end: int) -> list[tuple[int, bytes]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    out: list[tuple[int, bytes]] = []
    try:
        while len(out) < end:
            msg = consumer.poll(10)
            assert msg is not None, f"read {len(out)} of {end} records"
            assert msg.error() is None, msg.error()
            value = msg.value()
            assert value is not None
            out.append((int(msg.offset() or 0), value[:16]))
    finally:
        consumer.close()
    return out


def test_full_disk_refuses_produce_clearly_and_loses_nothing(small_disk: Path) -> None:
    ballast = small_disk / "ballast"
    ballast.write_bytes(b"\0" * BALLAST_BYTES)  # freed later: room to recover
    data_dir = small_disk / "data"
    with BrokerProcess(data_dir) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        configs = {"segment.bytes": str(1 << 20), "remote.storage.enable": "false"}
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=configs)])[TOPIC].result(20)

        outcome = _produce(broker.bootstrap, [_value(i) for i in range(DISK_BYTES // VALUE_BYTES)])
        acked = {k: v for k, v in outcome.items() if isinstance(v, int)}
        errors = [v for v in outcome.values() if isinstance(v, KafkaError)]
        assert errors, "the disk never filled"
        assert acked, "nothing was written before the disk filled"
        assert {e.code() for e in errors} == {KafkaError.KAFKA_STORAGE_ERROR}, errors[0]

        # the broker is up, and every acknowledged record reads back at its offset
        assert sorted(acked.values()) == list(range(len(acked)))
        read = _read_all(broker.bootstrap, len(acked))
        assert read == sorted((offset, key) for key, offset in acked.items())

        broker.restart()  # recovery on a full disk: starts, and serves what it has
        assert _read_all(broker.bootstrap, len(acked)) == read

        ballast.unlink()  # space again: produce works, offsets go on from the last ack
        again = _produce(broker.bootstrap, [_value(10**6 + i) for i in range(3)])
        offsets = [v for v in again.values() if isinstance(v, int)]
        assert sorted(offsets) == [len(acked), len(acked) + 1, len(acked) + 2], again

        broker.restart()
        total = len(acked) + 3
        assert [offset for offset, _ in _read_all(broker.bootstrap, total)] == list(range(total))
