"""What a client can make the broker hold in memory: the bytes it really sent, not the sizes it
declares, and a bounded queue of requests when it never reads its answers. Measured as the
broker process's RSS (``/proc/<pid>/status``) while the connections stay open."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import METADATA, BrokerProcess, proc_status_kib, request
from tests.integration.test_broker_bad_input import assert_serving

pytestmark = pytest.mark.integration

MiB = 1024 * 1024
API_VERSIONS_V0 = struct.pack(">ihhih", 10, 18, 0, 7, -1)  # 10-byte body, null client id


def rss_mib(broker: BrokerProcess) -> float:
    return proc_status_kib(broker.proc.pid, "VmRSS") / 1024


def test_declared_frame_sizes_are_not_allocated_up_front(broker: BrokerProcess) -> None:
    before = rss_mib(broker)
    held = []
    for _ in range(8):  # each declares a frame just under socket.request.max.bytes (100 MiB)
        s = socket.create_connection(("127.0.0.1", broker.port))
        s.sendall(struct.pack(">i", 100 * MiB - 1) + b"\x00\x12\x00\x00\x00\x00\x00\x01")
        held.append(s)
    time.sleep(1)
    assert request(broker.port, METADATA, 1, {"topics": []}, timeout=5)["brokers"]
    # before: 8 x 100 MiB allocated at once (RSS ~1 GiB); now a few MiB per connection
    assert rss_mib(broker) - before < 80
    for s in held:
        s.close()
    assert_serving(broker)


def test_a_frame_bigger_than_a_receive_piece_arrives_whole(broker: BrokerProcess) -> None:
    """A 12 MiB record (frames over 4 MiB are received in pieces and joined)."""
    topic, big = "big-records", bytes(range(256)) * (12 * MiB // 256)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {"max.message.bytes": str(16 * MiB)}
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "message.max.bytes": 16 * MiB})
    producer.produce(topic, value=big)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "big",
            "fetch.max.bytes": 32 * MiB,
            "receive.message.max.bytes": 33 * MiB,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        message = consumer.poll(30)
    finally:
        consumer.close()
    assert message is not None and message.error() is None
    assert message.value() == big


def test_a_client_that_never_reads_its_answers_is_held_back(broker: BrokerProcess) -> None:
    before = rss_mib(broker)
    s = socket.create_connection(("127.0.0.1", broker.port))
    s.setblocking(False)
    chunk, sent, deadline = API_VERSIONS_V0 * 10_000, 0, time.monotonic() + 10
    while time.monotonic() < deadline:  # send until the broker stops taking them
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.05)
    # the broker stopped reading, so TCP pushed back on the client (before: it read 64 MiB
    # of tiny frames per connection, ~1.7 GiB of queued objects)
    assert sent < 40 * MiB
    assert rss_mib(broker) - before < 100
    assert request(broker.port, METADATA, 1, {"topics": []}, timeout=5)["brokers"]
    s.close()
    assert_serving(broker)


def test_pipelined_requests_past_the_queue_limit_are_all_answered_in_order(
    broker: BrokerProcess,
) -> None:
    """5,000 requests sent before reading one answer: reading pauses at 1,024 queued and
    resumes as they are answered; every one is answered, in order."""
    n = 5000
    frames = b"".join(
        struct.pack(">ihhih", 10, 18, 0, correlation_id, -1) for correlation_id in range(n)
    )
    with socket.create_connection(("127.0.0.1", broker.port)) as s:
        s.sendall(frames)
        s.shutdown(socket.SHUT_WR)  # the broker answers what it has, then closes
        s.settimeout(30)
        received = bytearray()
        while data := s.recv(1 << 20):
            received += data
    ids, pos = [], 0
    while pos < len(received):
        (size,) = struct.unpack_from(">i", received, pos)
        ids.append(struct.unpack_from(">i", received, pos + 4)[0])
        pos += 4 + size
    assert ids == list(range(n))
