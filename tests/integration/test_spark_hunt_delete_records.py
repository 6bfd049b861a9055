"""Spark after DeleteRecords, compared with what the REAL broker answers (ListOffsets, a
confluent-kafka consumer) for the same range: the bucket was written by ``tiered-mq dev``
tiering to SeaweedFS.

A deleted record (offset 1) carries a late CreateTime. Kafka searches from the log start, so
that record counts for no timestamp bound. Found by the Spark bug hunt: Spark returned every
record from the log start for startingTimestamp, and nothing for endingTimestamp.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, wait_until
from tests.unit.spark.spark_support import spark_session

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

TOPIC = "late-clock"
COUNT = 1200  # ~360 KB: several 64 KiB segments
LOW = 2  # DeleteRecords up to here: inside the first batch
T0 = (int(time.time()) - 3600) * 1000
LATE = T0 + 100_000  # offset 1's clock is ahead; record i is stamped T0 + 10 * i otherwise


def stamp(i: int) -> int:
    return LATE if i == 1 else T0 + 10 * i


@pytest.fixture(scope="module")
def broker(
    tmp_path_factory: pytest.TempPathFactory,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> Iterator[TieredBroker]:
    with TieredBroker(tmp_path_factory.mktemp("late"), seaweedfs) as tiered:
        # local.retention.bytes=1: the bucket alone holds the sealed segments, so the new log
        # start, inside one of them, reaches the manifest
        tiered.create_topic(TOPIC, **{"local.retention.bytes": "1"})
        producer = Producer(
            {"bootstrap.servers": tiered.bootstrap, "linger.ms": 50, "batch.size": 16384}
        )
        for i in range(COUNT):
            producer.produce(TOPIC, partition=0, value=b"v%d|" % i + b"x" * 300, timestamp=stamp(i))
        assert producer.flush(30) == 0
        admin = AdminClient({"bootstrap.servers": tiered.bootstrap})
        for future in admin.delete_records([TopicPartition(TOPIC, 0, LOW)]).values():
            assert future.result(10).low_watermark == LOW
        wait_until(
            lambda: (
                (m := tiered.manifest(TOPIC)) is not None
                and m.log_start_offset == LOW
                and len(m.segments) >= 3
            ),
            timeout=60,
            what="segments and the new log start in the bucket",
        )
        yield tiered


def uploaded_end(broker: TieredBroker) -> int:
    manifest = broker.manifest(TOPIC)
    assert manifest is not None
    return manifest.next_offset()


def consumed(broker: TieredBroker, start: int, end: int) -> list[int]:
    """Offsets ``[start, end)`` as a confluent-kafka consumer reads them through the broker."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"v-{time.time()}"})
    consumer.assign([TopicPartition(TOPIC, 0, start)])
    out: list[int] = []
    deadline = time.monotonic() + 30
    try:
        while start < end and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if msg.offset() >= end:
                break
            out.append(msg.offset())
            if msg.offset() == end - 1:
                break
    finally:
        consumer.close()
    return out


def spark_offsets(broker: TieredBroker, topic: str = TOPIC, **options: str) -> list[int]:
    reader = (
        spark_session()
        .read.format("tiered-mq")
        .option("path", f"s3://{broker.bucket}/{PREFIX}")
        .option("s3.endpoint", broker.seaweedfs.endpoint_url)
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
        .option("topic", topic)
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(r.offset for r in reader.load().select("offset").collect())


def test_start_timestamp_as_the_broker_resolves_it(broker: TieredBroker) -> None:
    end = uploaded_end(broker)
    ts = T0 + 10 * 500
    error, first = broker.list_offset(TOPIC, ts)
    assert (error, first) == (0, 500)  # the deleted late record does not count
    ending = json.dumps({TOPIC: {"0": end}})
    expected = consumed(broker, first, end)
    assert expected == list(range(500, end))
    assert spark_offsets(broker, startingTimestamp=str(ts), endingOffsets=ending) == expected
    by_partition = json.dumps({TOPIC: {"0": ts}})
    got = spark_offsets(broker, startingOffsetsByTimestamp=by_partition, endingOffsets=ending)
    assert got == expected


def test_end_timestamp_as_the_broker_resolves_it(broker: TieredBroker) -> None:
    ts = T0 + 10 * 700
    error, stop = broker.list_offset(TOPIC, ts)
    assert (error, stop) == (0, 700)
    expected = consumed(broker, LOW, stop)
    assert expected == list(range(LOW, 700))
    assert spark_offsets(broker, endingTimestamp=str(ts)) == expected
    assert spark_offsets(broker, startingTimestamp=str(T0 + 10 * 300), endingTimestamp=str(ts)) == (
        list(range(300, 700))
    )


def test_delete_records_inside_local_data_reaches_the_bucket(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    """DeleteRecords to offset 100 while the local log still holds the data (no local
    retention yet), the segments already uploaded: the consumer starts at 100, and so must
    Spark, which reads the bucket alone. The manifest's log start stayed at 0 (the uploader
    wrote a new log start only when it was not the local log start), so Spark returned the
    100 deleted records; startingOffsets 50 passed failOnDataLoss."""
    topic = "deleted-while-local"
    with TieredBroker(tmp_path, seaweedfs) as tiered:
        tiered.create_topic(topic)
        producer = Producer(
            {"bootstrap.servers": tiered.bootstrap, "linger.ms": 20, "batch.size": 16384}
        )
        for i in range(1000):
            producer.produce(topic, partition=0, value=b"v%d|" % i + b"x" * 300)
        assert producer.flush(30) == 0
        wait_until(
            lambda: (m := tiered.manifest(topic)) is not None and len(m.segments) >= 3,
            timeout=60,
            what="segments in the bucket",
        )
        admin = AdminClient({"bootstrap.servers": tiered.bootstrap})
        for future in admin.delete_records([TopicPartition(topic, 0, 100)]).values():
            assert future.result(10).low_watermark == 100
        assert tiered.list_offset(topic, -2) == (0, 100)
        # the uploader's passes (every 200 ms) carry the log start to the manifest; Spark
        # below says whether they did
        with contextlib.suppress(AssertionError):
            wait_until(
                lambda: (m := tiered.manifest(topic)) is not None and m.log_start_offset == 100,
                timeout=10,
            )
        end = uploaded_end_of(tiered, topic)
        got = spark_offsets(tiered, topic=topic)
        assert got == list(range(100, end))
        with pytest.raises(Exception, match="offsets 50-99 were deleted"):
            spark_offsets(tiered, topic=topic, startingOffsets=json.dumps({topic: {"0": 50}}))


def uploaded_end_of(broker: TieredBroker, topic: str) -> int:
    manifest = broker.manifest(topic)
    assert manifest is not None
    return manifest.next_offset()
