"""A broker stopped while its log cleaner rewrites a segment: the stop does not wait for the
rewrite, and leaves no ``.swap`` for the next start to complete (Kafka's cleaner aborts its
cleaning on shutdown and removes its ``.cleaned`` files)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import LIST_OFFSETS, BrokerProcess, request

pytestmark = pytest.mark.integration

RECORDS = 120_000  # 1 KB each: two rolled 50 MB segments, about 5 s of rewriting


def log_end_offset(port: int) -> int:
    parts = [{"partition_index": 0, "timestamp": -1}]
    body = {"replica_id": -1, "topics": [{"name": "c", "partitions": parts}]}
    answer = request(port, LIST_OFFSETS, 1, body)
    return int(answer["topics"][0]["partitions"][0]["offset"])


def test_stop_during_a_cleaning_pass_aborts_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    filling = BrokerProcess(data, extra_args=["--config", "log.cleaner.enable=false"])
    with filling:
        admin = AdminClient({"bootstrap.servers": filling.bootstrap})
        configs = {"cleanup.policy": "compact", "segment.bytes": str(50 << 20)}
        admin.create_topics([NewTopic("c", 1, 1, config=configs)])["c"].result()
        producer = Producer({"bootstrap.servers": filling.bootstrap, "linger.ms": 50})
        value = b"x" * 1000
        for i in range(RECORDS):
            while True:
                try:
                    producer.produce("c", value, key=str(i % 1000).encode())
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(60) == 0
    partition_dir = data / "c-0"
    cleaning = BrokerProcess(data, extra_args=["--config", "log.cleaner.backoff.ms=100"])
    with cleaning:
        deadline = time.monotonic() + 30
        while not list(partition_dir.glob("*.cleaned")):  # pass 2 is writing
            assert time.monotonic() < deadline, cleaning.log_tail()
            time.sleep(0.01)
        started = time.monotonic()
        assert cleaning.stop() == 0
        took = time.monotonic() - started
    left = sorted(p.name for p in partition_dir.iterdir() if p.suffix in (".swap", ".cleaned"))
    assert left == []
    assert took < 2.0, f"the stop waited {took:.1f} s for the rewrite"
    checking = BrokerProcess(data, extra_args=["--config", "log.cleaner.enable=false"])
    with checking:
        assert log_end_offset(checking.port) == RECORDS
    assert "completing swap" not in checking.log_tail(200)
