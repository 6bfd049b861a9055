"""Every client family against `tiered-mq dev`: all codecs, keys, timestamps, idempotence.

Consumers use manual assignment (no consumer group) so these tests exercise the broker core
only; the group protocol has its own integration tests.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from tests.integration.broker_process import FETCH, LIST_OFFSETS, BrokerProcess, request
from tests.integration.client_helpers import kcat_round_trip, recent_timestamp_ms
from tests.kafka_requests import fetch_body
from tiered_mq.record.records import decode_batches, encode_batch

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def new_topic(broker: BrokerProcess, partitions: int = 1, **configs: str) -> str:
    name = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=configs)])
    futures[name].result(10)
    return name


def consume_all(
    broker: BrokerProcess, topic: str, partitions: int, expected: int, timeout: float = 20
) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < expected and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.5):
                assert m.error() is None, m.error()
                got.append(m)
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_codec_and_keys(shared_broker: BrokerProcess, codec: str) -> None:
    topic = new_topic(shared_broker, 3)
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "compression.type": codec, "linger.ms": 5}
    )
    for i in range(600):
        producer.produce(topic, key=f"key-{i % 11}", value=f"{codec}-{i}".encode())
    assert producer.flush(15) == 0
    msgs = consume_all(shared_broker, topic, 3, 600)
    assert sorted(m.value() for m in msgs) == sorted(f"{codec}-{i}".encode() for i in range(600))
    partitions_by_key: dict[bytes, set[int]] = {}
    for m in msgs:
        partitions_by_key.setdefault(m.key(), set()).add(m.partition())
    assert all(len(ps) == 1 for ps in partitions_by_key.values())
    assert len({p for ps in partitions_by_key.values() for p in ps}) > 1
    for p in range(3):  # per partition, offsets are dense and in order
        offsets = [m.offset() for m in msgs if m.partition() == p]
        assert offsets == list(range(len(offsets)))


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_codec(shared_broker: BrokerProcess, codec: str) -> None:
    topic = new_topic(shared_broker)
    lines = [f"k{i % 3}:{codec}-value-{i}" for i in range(200)]
    kcat_round_trip(
        shared_broker.bootstrap, [], topic, lines, ["-K:", "-z", codec], ["-f", "%k:%s\n"]
    )


def test_kcat_metadata_listing(shared_broker: BrokerProcess) -> None:
    topic = new_topic(shared_broker, 2)
    out = subprocess.run(
        ["kcat", "-b", shared_broker.bootstrap, "-L", "-t", topic],
        text=True,
        capture_output=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert f'topic "{topic}" with 2 partitions' in out.stdout


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_kafka_python_codec(shared_broker: BrokerProcess, codec: str | None) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTopicPartition

    topic = new_topic(shared_broker)
    producer = KafkaProducer(bootstrap_servers=shared_broker.bootstrap, compression_type=codec)
    for i in range(150):
        producer.send(topic, key=b"k", value=f"v{i}".encode())
    producer.flush(15)
    producer.close()
    consumer = KafkaConsumer(
        bootstrap_servers=shared_broker.bootstrap, consumer_timeout_ms=3000, fetch_max_wait_ms=100
    )
    consumer.assign([KTopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    values = [m.value for m in consumer]
    consumer.close()
    assert values == [f"v{i}".encode() for i in range(150)]


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_aiokafka_codec(shared_broker: BrokerProcess, codec: str | None) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka import TopicPartition as ATopicPartition

    topic = new_topic(shared_broker)

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(
            bootstrap_servers=shared_broker.bootstrap, compression_type=codec
        )
        await producer.start()
        try:
            for i in range(150):
                await producer.send(topic, key=b"k", value=f"v{i}".encode())
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=shared_broker.bootstrap, fetch_max_wait_ms=100
        )
        await consumer.start()
        values: list[bytes] = []
        try:
            consumer.assign([ATopicPartition(topic, 0)])
            await consumer.seek_to_beginning()
            deadline = time.monotonic() + 20
            while len(values) < 150 and time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=500)
                for msgs in batch.values():
                    values.extend(m.value for m in msgs)
        finally:
            await consumer.stop()
        return values

    assert asyncio.run(run()) == [f"v{i}".encode() for i in range(150)]


def test_offsets_for_times(shared_broker: BrokerProcess) -> None:
    topic = new_topic(shared_broker)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    base = recent_timestamp_ms()
    for i in range(10):
        producer.produce(topic, value=f"v{i}".encode(), timestamp=base + i * 1000)
        producer.flush(5)  # one batch per message: the time index sees each timestamp
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "unused"})
    try:
        for ts, offset in ((base + 4500, 5), (base, 0), (base + 9000, 9)):
            found = consumer.offsets_for_times([TopicPartition(topic, 0, ts)], 10)
            assert found[0].offset == offset
        late = consumer.offsets_for_times([TopicPartition(topic, 0, base + 99_000)], 10)
        assert late[0].offset == -1  # end of log
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), 10)
        assert (low, high) == (0, 10)
    finally:
        consumer.close()


def test_list_offsets_max_timestamp(shared_broker: BrokerProcess) -> None:
    """OffsetSpec.max_timestamp() (ListOffsets -3, v7+): the first record carrying the greatest
    timestamp, wherever it sits; librdkafka's admin, then a raw v10 request (flexible)."""
    topic = new_topic(shared_broker)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    base = recent_timestamp_ms()
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    tp = TopicPartition(topic, 0)

    def max_timestamp() -> tuple[int, int]:
        info = admin.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(10)
        return info.offset, info.timestamp

    assert max_timestamp() == (-1, -1)  # empty partition
    for i, delta in enumerate((3, 9, 1, 9, 4)):  # the greatest, 9 s, at offsets 1 and 3
        producer.produce(topic, value=f"v{i}".encode(), timestamp=base + delta * 1000)
        producer.flush(5)
    assert max_timestamp() == (1, base + 9000)
    latest = admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(10)
    assert latest.offset == 5
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -3}]}],
        "timeout_ms": 5000,
    }
    part = request(shared_broker.port, LIST_OFFSETS, 10, body)["topics"][0]["partitions"][0]
    assert (part["error_code"], part["offset"], part["timestamp"]) == (0, 1, base + 9000)


def test_list_offsets_without_an_offset_answers_no_leader_epoch(
    shared_broker: BrokerProcess,
) -> None:
    """A lookup that finds no offset (a timestamp after every record, -3 on an empty
    partition) answers offset -1 with leader epoch -1, as Kafka's buildErrorResponse; a found
    offset keeps its epoch. librdkafka passed the epoch 0 of such an answer on to the user."""
    topic = new_topic(shared_broker)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    base = recent_timestamp_ms()
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "unused"})

    def raw(timestamp: int) -> tuple[int, int, int]:
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": timestamp}]}
            ],
        }
        answer = request(shared_broker.port, LIST_OFFSETS, 5, body)
        part = answer["topics"][0]["partitions"][0]
        assert part["error_code"] == 0
        return part["offset"], part["timestamp"], part["leader_epoch"]

    try:
        assert raw(-3) == (-1, -1, -1)  # empty partition: no record has a greatest timestamp
        producer.produce(topic, value=b"v0", timestamp=base)
        producer.flush(5)
        assert raw(base + 1000) == (-1, -1, -1)  # after every record
        assert raw(base) == (0, base, 0)
        late = consumer.offsets_for_times([TopicPartition(topic, 0, base + 1000)], 10)[0]
        assert (late.offset, late.leader_epoch) == (-1, None)  # None: librdkafka's -1
        found = consumer.offsets_for_times([TopicPartition(topic, 0, base)], 10)[0]
        assert (found.offset, found.leader_epoch) == (0, 0)
    finally:
        consumer.close()


def test_idempotent_producer_and_raw_retry(shared_broker: BrokerProcess) -> None:
    topic = new_topic(shared_broker)
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "enable.idempotence": True, "acks": "all"}
    )
    for i in range(100):
        producer.produce(topic, value=f"v{i}".encode())
    assert producer.flush(15) == 0
    assert len(consume_all(shared_broker, topic, 1, 100)) == 100

    pid = request(
        shared_broker.port, 22, 1, {"transactional_id": None, "transaction_timeout_ms": 1000}
    )["producer_id"]
    records = encode_batch(
        [(None, b"once", [], None), (None, b"twice?", [], None)],
        producer_id=pid,
        producer_epoch=0,
        base_sequence=0,
    )
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    answers = [request(shared_broker.port, 0, 8, body) for _ in range(2)]
    parts = [a["responses"][0]["partition_responses"][0] for a in answers]
    assert [p["error_code"] for p in parts] == [0, 0]
    assert parts[0]["base_offset"] == parts[1]["base_offset"] == 100
    fetched = request(shared_broker.port, FETCH, 11, fetch_body(topic, 100))
    data = fetched["responses"][0]["partitions"][0]
    assert data["high_watermark"] == 102
    values = [r.value for _, rs in decode_batches(data["records"]) for r in rs]
    assert values == [b"once", b"twice?"]


def test_many_concurrent_producers(shared_broker: BrokerProcess) -> None:
    """Twenty producers at once (one connection each) on four partitions: nothing lost, and
    each producer's messages keep their order within a partition."""
    import threading

    topic = new_topic(shared_broker, 4)
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            p = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 1})
            for i in range(300):
                p.produce(topic, key=f"w{worker}".encode(), value=f"{worker}:{i}".encode())
            assert p.flush(30) == 0
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    msgs = consume_all(shared_broker, topic, 4, 6000)
    assert len(msgs) == 6000
    by_worker: dict[str, list[int]] = {}
    for m in sorted(msgs, key=lambda m: (m.partition(), m.offset())):
        worker, i = m.value().decode().split(":")
        by_worker.setdefault(worker, []).append(int(i))
    assert all(seq == list(range(300)) for seq in by_worker.values())
