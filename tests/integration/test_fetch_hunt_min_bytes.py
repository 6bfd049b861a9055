"""A consumer with ``fetch.min.bytes`` as large as ``max.partition.fetch.bytes`` reads a backlog
at once, as from Kafka, whose 1 MiB slice of a backlog meets a 1 MiB ``min_bytes``. Whole
batches stop short of the limit, so every fetch here waited ``fetch.wait.max.ms`` (30 s) first."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

MIB = 1 << 20
RECORDS = 3000  # ~3 MB


def test_consumer_with_a_large_fetch_min_bytes_reads_a_backlog_at_once(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("backlog", 1, 1)])["backlog"].result(10)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
        for i in range(RECORDS):
            producer.produce("backlog", i.to_bytes(4, "big") * 250, partition=0)
        assert producer.flush(30) == 0
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "min-bytes",
                "fetch.min.bytes": MIB,
                "max.partition.fetch.bytes": MIB,
                "fetch.wait.max.ms": 30_000,
            }
        )
        try:
            consumer.assign([TopicPartition("backlog", 0, 0)])
            start = time.monotonic()
            offsets: list[int] = []
            while len(offsets) < RECORDS // 2 and time.monotonic() - start < 60:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    offsets.append(message.offset())
            took = time.monotonic() - start
        finally:
            consumer.close()
        assert offsets[: RECORDS // 2] == list(range(RECORDS // 2))
        assert took < 15, f"the first 1.5 MB took {took:.1f} s"  # 30 s before the fix
