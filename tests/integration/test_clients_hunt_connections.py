"""Many clients at once: what each connection costs the broker, measured as its RSS and open
descriptors (``/proc/<pid>/``).

A fleet of consumers keeps a connection per client open, most of the time parked in a Fetch long
poll. Each connection's receive buffer starts small and grows only for a client that sends more
than it holds (server.py); before, every connection allocated 256 KiB at once, so 300 idle
long-polling clients cost ~80 MiB and 10,000 cost 2.5 GiB. A client that sends a long poll and
closes its connection has it closed at once, as Kafka does, not held for ``max_wait_ms``.
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, proc_status_kib
from tests.kafka_requests import fetch_body
from tiered_mq.protocol.codec import decode_response, encode_request

pytestmark = pytest.mark.integration

FETCH = 1
CLIENTS = 300


def _rss_mib(broker: BrokerProcess) -> float:
    return proc_status_kib(broker.proc.pid, "VmRSS") / 1024


def _open_fds(broker: BrokerProcess) -> int:
    return sum(1 for _ in Path(f"/proc/{broker.proc.pid}/fd").iterdir())


def _long_poll(topic: str, max_wait_ms: int) -> bytes:
    body = fetch_body(topic, 0, max_wait_ms=max_wait_ms, min_bytes=1)
    return encode_request(FETCH, 11, 1, "fleet", body)


def _read_response(sock: socket.socket) -> bytes:
    buf = bytearray()
    while len(buf) < 4 or len(buf) < 4 + struct.unpack_from(">i", buf)[0]:
        chunk = sock.recv(1 << 16)
        assert chunk, "the broker closed the connection"
        buf += chunk
    return bytes(buf[4:])


def test_hundreds_of_long_polling_clients_cost_little_memory(broker: BrokerProcess) -> None:
    topic = "fleet"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    poll = _long_poll(topic, 20_000)
    time.sleep(0.5)
    before = _rss_mib(broker)
    clients = [socket.create_connection(("127.0.0.1", broker.port)) for _ in range(CLIENTS)]
    try:
        for sock in clients:
            sock.sendall(poll)  # each parks a Fetch: the topic is empty
        time.sleep(2)
        grown = _rss_mib(broker) - before
        # before: 256 KiB per connection (~80 MiB here); now ~30 KiB
        assert grown < 30, f"{CLIENTS} parked clients grew the broker by {grown:.0f} MiB"

        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce(topic, value=b"for everyone")
        assert producer.flush(10) == 0
        for sock in clients:  # the append wakes every parked fetch, each gets the record
            sock.settimeout(10)
            response = decode_response(FETCH, 11, _read_response(sock))
            partition = response["responses"][0]["partitions"][0]
            assert partition["error_code"] == 0
            assert partition["high_watermark"] == 1
            assert b"for everyone" in bytes(partition["records"])
    finally:
        for sock in clients:
            sock.close()


def test_clients_that_close_during_a_long_poll_leave_nothing_open(broker: BrokerProcess) -> None:
    topic = "left"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    poll = _long_poll(topic, 30_000)
    time.sleep(0.5)
    before = _open_fds(broker)
    for _ in range(CLIENTS):  # each parks a 30 s long poll and goes away
        with socket.create_connection(("127.0.0.1", broker.port)) as sock:
            sock.sendall(poll)
    time.sleep(2)
    # before: every socket stayed open until its max_wait_ms ran out
    assert _open_fds(broker) - before < 20

    # a client that only shuts its sending side gets its long poll answered now, then EOF
    with socket.create_connection(("127.0.0.1", broker.port)) as sock:
        sock.sendall(poll)
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(5)
        started = time.monotonic()
        response = decode_response(FETCH, 11, _read_response(sock))
        assert time.monotonic() - started < 5
        partition = response["responses"][0]["partitions"][0]
        assert partition["error_code"] == 0 and partition["high_watermark"] == 0
        assert sock.recv(1) == b""
