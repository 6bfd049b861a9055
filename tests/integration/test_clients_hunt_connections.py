"""Many clients at once: what each open connection costs the broker, measured as its RSS
(``/proc/<pid>/status``) while the connections stay open.

A fleet of consumers keeps a connection per client open, most of the time parked in a Fetch long
poll. Each connection's receive buffer starts small and grows only for a client that sends more
than it holds (server.py); before, every connection allocated 256 KiB at once, so 300 idle
long-polling clients cost ~80 MiB and 10,000 cost 2.5 GiB.
"""

from __future__ import annotations

import socket
import struct
import time

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
    poll = encode_request(
        FETCH, 11, 1, "fleet", fetch_body(topic, 0, max_wait_ms=20_000, min_bytes=1)
    )
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
