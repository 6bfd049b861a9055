"""Hostile and broken clients: each loses only its own connection; the broker keeps serving."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import Any

import crc32c
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import take
from tiered_mq.protocol.codec import encode_request
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration


def closed_promptly(sock: socket.socket, within: float = 3.0) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def assert_serving(broker: BrokerProcess) -> None:
    assert broker.running
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce("alive", value=b"x")
    assert producer.flush(10) == 0


def test_garbage_bytes(shared_broker: BrokerProcess) -> None:
    with socket.create_connection(("127.0.0.1", shared_broker.port)) as s:
        s.sendall(struct.pack(">i", 64) + bytes(range(64)))
        assert closed_promptly(s)
    assert_serving(shared_broker)


def test_frame_above_socket_request_max_bytes_is_refused_unbuffered(
    shared_broker: BrokerProcess,
) -> None:
    with socket.create_connection(("127.0.0.1", shared_broker.port)) as s:
        started = time.monotonic()
        s.sendall(struct.pack(">i", 104857600 + 1))  # only the size: nothing else comes
        assert closed_promptly(s)
        assert time.monotonic() - started < 2
    assert_serving(shared_broker)


def test_unknown_api_key_and_version(shared_broker: BrokerProcess) -> None:
    with socket.create_connection(("127.0.0.1", shared_broker.port)) as s:
        header = struct.pack(">hhih", 4242, 0, 1, -1)
        s.sendall(struct.pack(">i", len(header)) + header)
        assert closed_promptly(s)
    with socket.create_connection(("127.0.0.1", shared_broker.port)) as s:
        header = struct.pack(">hhih", 3, 77, 1, -1)  # Metadata v77
        s.sendall(struct.pack(">i", len(header)) + header)
        assert closed_promptly(s)
    assert_serving(shared_broker)


def produce(broker: BrokerProcess, topic: str, records: bytes, version: int = 8) -> dict[str, Any]:
    """Produce ``records`` to partition 0 of ``topic``; that partition's response."""
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    answer = request(broker.port, 0, version, body)["responses"][0]["partition_responses"][0]
    return answer  # type: ignore[no-any-return]


def test_corrupt_batch_answers_corrupt_message(shared_broker: BrokerProcess) -> None:
    request(shared_broker.port, 3, 8, {"topics": [{"name": "corrupt"}]})
    good = encode_batch([(b"k", b"v", [], None)])
    bad = bytearray(good)
    bad[-2] ^= 0x55

    answer = produce(shared_broker, "corrupt", bytes(bad))
    assert answer["error_code"] == 2 and "CRC" in (answer["error_message"] or "")
    assert produce(shared_broker, "corrupt", good)["base_offset"] == 0  # nothing was appended


def forged(batch: bytes, records_count: int, last_offset_delta: int) -> bytes:
    """``batch`` with other header counts and a CRC that matches again (only a broker that
    checks the counts against each other can tell)."""
    out = bytearray(batch)
    struct.pack_into(">i", out, 23, last_offset_delta)
    struct.pack_into(">i", out, 57, records_count)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def test_crc_valid_batches_with_impossible_counts_are_refused(shared_broker: BrokerProcess) -> None:
    """Kafka's LogValidator rules: one batch per partition, at least one record, and a record
    count equal to the offset range. Before, such batches were appended: a last offset delta
    of 2**31-1 on one record moved the high watermark by 2**31."""
    topic = "forged"
    request(shared_broker.port, 3, 8, {"topics": [{"name": topic}]})
    three = encode_batch([(b"k", b"v%d" % i, [], None) for i in range(3)])

    invalid_record, corrupt_message = 87, 2
    for records in (
        forged(three, 1, 2**31 - 1),  # one record claiming 2**31 offsets
        forged(three, 3, 0),  # three records in one offset
        forged(three, 0, 0),  # a record count of 0
        three + three,  # two batches in one partition
    ):
        answer = produce(shared_broker, topic, records)
        assert answer["error_code"] == invalid_record, answer
        assert produce(shared_broker, topic, records, version=7)["error_code"] == corrupt_message
    # garbage where records or a codec's frame should start (a broken encoder): CORRUPT_MESSAGE
    one = encode_batch([(b"k", b"v", [], None)])
    records_start = 61
    garbage_cases = [(0, b"\x7f" * 20), (0, b"\xfe\xff\xff\xff\x0f" + b"x" * 20)]
    garbage_cases += [(codec, b"\x00" * 20) for codec in (1, 3, 4)]  # gzip, lz4, zstd
    for codec, garbage in garbage_cases:
        bad = bytearray(one[:records_start] + garbage)
        struct.pack_into(">i", bad, 8, len(bad) - 12)  # batch length
        struct.pack_into(">h", bad, 21, codec)  # attributes: the codec
        struct.pack_into(">I", bad, 17, crc32c.crc32c(bytes(bad[21:])))
        answer = produce(shared_broker, topic, bytes(bad))
        assert answer["error_code"] == corrupt_message, (codec, answer)
    assert produce(shared_broker, topic, three)["base_offset"] == 0  # nothing appended before
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "forged"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        got = [m.value() for m in take(consumer, 3)]
    finally:
        consumer.close()
    assert got == [b"v0", b"v1", b"v2"]
    assert_serving(shared_broker)


def test_a_batch_larger_than_segment_bytes_fails_delivery(shared_broker: BrokerProcess) -> None:
    """Kafka's UnifiedLog.append: RECORD_LIST_TOO_LARGE (18), nothing appended. librdkafka
    reports it as the message's delivery error; the partition's next batch gets offset 0.
    Before, the broker appended the batch alone in a segment larger than segment.bytes."""
    topic = "tiny-segments"
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    config = {"segment.bytes": "16384"}
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(10)
    outcomes: list[tuple[KafkaError | None, int]] = []
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    for value in (b"x" * 20_000, b"small"):
        producer.produce(topic, value, on_delivery=lambda e, m: outcomes.append((e, m.offset())))
        assert producer.flush(20) == 0
    (refused, _), (delivered, offset) = outcomes
    assert refused is not None and refused.code() == KafkaError.RECORD_LIST_TOO_LARGE, refused
    assert not refused.retriable()
    assert (delivered, offset) == (None, 0)  # nothing of the big batch was appended
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": topic})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        assert [m.value() for m in take(consumer, 1)] == [b"small"]
    finally:
        consumer.close()
    assert_serving(shared_broker)


def test_invalid_topic_name_and_config_have_clear_errors(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    futures = admin.create_topics(
        [
            NewTopic("bad/name", 1, 1),
            NewTopic("badcfg", 1, 1, config={"retention.ms": "soon"}),
        ]
    )
    with pytest.raises(KafkaException, match="illegal"):
        futures["bad/name"].result(10)
    with pytest.raises(KafkaException, match=r"retention\.ms"):
        futures["badcfg"].result(10)


def test_disconnect_mid_request(shared_broker: BrokerProcess) -> None:
    frame = encode_request(0, 8, 1, "x", {"acks": -1, "timeout_ms": 1, "topic_data": []})
    for cut in (2, 6, len(frame) - 1):
        s = socket.create_connection(("127.0.0.1", shared_broker.port))
        s.sendall(frame[:cut])
        s.close()
    # a big produce cut off in the middle of its records
    s = socket.create_connection(("127.0.0.1", shared_broker.port))
    s.sendall(struct.pack(">i", 5_000_000) + b"\x00" * 100_000)
    s.close()
    assert_serving(shared_broker)


def test_dev_refuses_an_invalid_config_clearly(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", extra_args=["--config", "segment.bytes=abc"])
    with pytest.raises(RuntimeError, match="exited with 1"):
        broker.start()
    refusal = "Invalid value abc for configuration segment.bytes: Not a number of type INT"
    assert f"INVALID_CONFIG: {refusal}" in broker.log_tail()
    assert not broker.running
