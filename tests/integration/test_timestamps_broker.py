"""Record timestamps as users who replay by time meet them, through confluent-kafka: retention
by a segment's largest timestamp (the active segment included) and the produce-time window."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    Consumer,
    KafkaError,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, request
from tiered_mq.record.records import encode_batch

DAY = 86_400_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = Path(tmp_path_factory.mktemp("timestamps")) / "data"
    args = ["--config", "log.retention.check.interval.ms=200"]
    with BrokerProcess(data, extra_args=args) as b:
        yield b


def create(broker: BrokerProcess, topic: str, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(timeout=30)


def produce(broker: BrokerProcess, topic: str, timestamps: list[int]) -> list[KafkaError | None]:
    """One batch of records stamped ``timestamps``; the delivery error of each."""
    errors: list[KafkaError | None] = []
    conf = {"bootstrap.servers": broker.bootstrap, "linger.ms": 200, "retries": 0}
    producer = Producer(conf)
    for ts in timestamps:
        producer.produce(topic, b"v", timestamp=ts, on_delivery=lambda e, _m: errors.append(e))
    assert producer.flush(30) == 0
    return errors


def watermarks(broker: BrokerProcess, topic: str) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "watermarks"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        return int(low), int(high)
    finally:
        consumer.close()


def test_expired_records_in_the_active_segment_are_deleted(broker: BrokerProcess) -> None:
    """Kafka rolls and deletes an active segment past retention.ms; it was kept until
    segment.ms (7 days) rolled it."""
    create(broker, "expired-active", **{"retention.ms": "60000", "file.delete.delay.ms": "0"})
    now = int(time.time() * 1000)
    assert produce(broker, "expired-active", [now - 2 * DAY, now - 2 * DAY + 1]) == [None, None]
    deadline = time.monotonic() + 15
    while watermarks(broker, "expired-active") != (2, 2) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert watermarks(broker, "expired-active") == (2, 2)
    assert produce(broker, "expired-active", [now]) == [None]  # the log goes on at offset 2
    assert watermarks(broker, "expired-active") == (2, 3)


def test_an_old_record_after_the_first_of_its_batch_is_refused(broker: BrokerProcess) -> None:
    """message.timestamp.before.max.ms judges every record, as Kafka's LogValidator: a batch
    whose second record is two days old was appended, its first being new."""
    create(broker, "before-max", **{"message.timestamp.before.max.ms": str(DAY)})
    now = int(time.time() * 1000)
    errors = produce(broker, "before-max", [now, now - 2 * DAY, now - 1])
    assert [e and e.code() for e in errors] == [KafkaError.INVALID_TIMESTAMP] * 3
    assert watermarks(broker, "before-max") == (0, 0)
    assert produce(broker, "before-max", [now, now - DAY // 2]) == [None, None]
    assert watermarks(broker, "before-max") == (0, 2)


def test_a_backfill_rolls_segments_by_record_time(broker: BrokerProcess) -> None:
    """segment.ms counts record time (Kafka's timeWaitedForRoll): ten batches stamped 90
    minutes apart, sent in a second, fill ten one-hour segments, and retention.ms then deletes
    the six whose records are older than six hours. Before, they shared one segment, kept whole
    while its newest record was young."""
    config = {"segment.ms": "3600000", "retention.ms": str(13 * 1_800_000)}  # 6.5 hours
    create(broker, "backfill", **config, **{"file.delete.delay.ms": "0"})
    now = int(time.time() * 1000)
    for i in range(10):
        assert produce(broker, "backfill", [now - 15 * 3_600_000 + i * 5_400_000]) == [None]
    deadline = time.monotonic() + 15
    while watermarks(broker, "backfill")[0] != 6 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert watermarks(broker, "backfill") == (6, 10)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "backfill"})
    try:  # a lookup before the retained records answers the first of them
        asked = TopicPartition("backfill", 0, now - 20 * 3_600_000)
        assert consumer.offsets_for_times([asked], timeout=10)[0].offset == 6
    finally:
        consumer.close()


def raw_produce(broker: BrokerProcess, topic: str, records: bytes) -> int:
    """Produce v8 of ``records`` to partition 0; the partition's error code."""
    data = [{"name": topic, "partition_data": [{"index": 0, "records": records}]}]
    body = {"acks": -1, "timeout_ms": 1000, "topic_data": data}
    answer = request(broker.port, 0, 8, body)["responses"][0]["partition_responses"][0]
    return int(answer["error_code"])


def test_a_producer_batch_flagged_log_append_time(broker: BrokerProcess) -> None:
    """Kafka's LogValidator: a LogAppendTime topic refuses it (INVALID_TIMESTAMP); a CreateTime
    topic stores it as CreateTime, so consumers see each record's own timestamp. It was
    accepted (restamped) by the first, and stored as LogAppendTime by the second."""
    now = int(time.time() * 1000)
    flagged = encode_batch(
        [(b"k", b"a", [], now - 2000), (b"k", b"b", [], now - 1000)],
        log_append_time=True,
        append_time=now,
    )
    create(broker, "flagged-lat", **{"message.timestamp.type": "LogAppendTime"})
    assert raw_produce(broker, "flagged-lat", flagged) == KafkaError.INVALID_TIMESTAMP
    assert watermarks(broker, "flagged-lat") == (0, 0)
    create(broker, "flagged-ct")
    assert raw_produce(broker, "flagged-ct", flagged) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "flagged"})
    try:
        consumer.assign([TopicPartition("flagged-ct", 0, 0)])
        seen = []
        deadline = time.monotonic() + 15
        while len(seen) < 2 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen.append(message.timestamp())
    finally:
        consumer.close()
    assert seen == [(TIMESTAMP_CREATE_TIME, now - 2000), (TIMESTAMP_CREATE_TIME, now - 1000)]
