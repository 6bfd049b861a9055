"""``connections.max.idle.ms``: the broker closes a connection that has been silent that long,
one that went quiet without sending a byte or that stalled mid-frame, and never one in use."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, proc_status_kib
from tests.integration.test_broker_bad_input import closed_promptly

pytestmark = pytest.mark.integration


def test_silent_and_stalled_connections_are_closed_busy_ones_kept(tmp_path: Path) -> None:
    configs = ["--config", "connections.max.idle.ms=1500"]
    with BrokerProcess(tmp_path / "data", extra_args=configs) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        consumer = Consumer(
            {"bootstrap.servers": broker.bootstrap, "group.id": "idle", "fetch.wait.max.ms": 500}
        )
        producer.produce("busy", b"first")
        assert producer.flush(10) == 0
        consumer.assign([TopicPartition("busy", 0, 0)])

        assert broker.proc is not None
        rss_before = proc_status_kib(broker.proc.pid, "VmRSS")
        silent = [socket.create_connection(("127.0.0.1", broker.port)) for _ in range(20)]
        stalled = []
        for _ in range(20):  # declares 50 MB, sends 1,000 bytes of it, then nothing
            sock = socket.create_connection(("127.0.0.1", broker.port))
            sock.sendall(struct.pack(">i", 50_000_000) + b"\0" * 1000)
            stalled.append(sock)
        time.sleep(0.5)
        assert proc_status_kib(broker.proc.pid, "VmRSS") > rss_before  # their buffers

        got: list[bytes] = []
        started = time.monotonic()
        while time.monotonic() - started < 4:  # the consumer fetches all along (long polls)
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value())
        assert all(closed_promptly(s) for s in silent + stalled)

        # the consumer, fetching all along, kept its connection; the silent producer is served
        # again (librdkafka reconnects, as it does when Kafka closes an idle connection)
        producer.produce("busy", b"second")
        assert producer.flush(10) == 0
        deadline = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value())
        assert got == [b"first", b"second"]
        consumer.close()
        assert "idle for more than connections.max.idle.ms" in broker.log_tail(200)
        for s in silent + stalled:
            s.close()
