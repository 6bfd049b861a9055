"""DeleteRecords on a tiered topic, to an offset inside a segment that is only in the bucket:
neither a consumer through the broker nor a Spark replay straight from the bucket returns a
deleted record; both start at the new log start offset."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, message, wait_until
from tests.unit.spark.spark_support import spark_session

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

TOPIC = "trimmed"
COUNT = 3000  # ~660 KB: about ten 64 KiB segments


def consume_from_earliest(broker: TieredBroker) -> list[tuple[int, bytes | None]]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"trimmed-{time.time()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
        }
    )
    consumer.subscribe([TOPIC])
    got: list[tuple[int, bytes | None]] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and (not got or got[-1][0] < COUNT - 1):
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                got.append((msg.offset(), msg.value()))
    finally:
        consumer.close()
    return got


def spark_offsets(broker: TieredBroker) -> list[int]:
    df = (
        spark_session()
        .read.format("tiered-mq")
        .option("path", f"s3://{broker.bucket}/{PREFIX}")
        .option("topic", TOPIC)
        .option("s3.endpoint", broker.seaweedfs.endpoint_url)
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
        .load()
    )
    rows: list[Any] = df.select("offset").collect()
    return sorted(r.offset for r in rows)


def test_delete_records_inside_a_remote_segment(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as broker:
        broker.create_topic(TOPIC, **{"local.retention.bytes": "1"})
        broker.produce(TOPIC, 0, COUNT)
        wait_until(
            lambda: (
                len(broker.remote_segments(TOPIC)) >= 3 and len(broker.local_segments(TOPIC)) == 1
            ),
            timeout=60,
            what="segments to move to the bucket",
        )
        second = broker.remote_segments(TOPIC)[1]
        low = second.base_offset + 10  # inside a segment held by the bucket alone
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        futures = admin.delete_records([TopicPartition(TOPIC, 0, low)])
        for future in futures.values():
            assert future.result(10).low_watermark == low

        assert broker.list_offset(TOPIC, -2) == (0, low)
        got = consume_from_earliest(broker)
        assert got == [(i, message(i)[1]) for i in range(low, COUNT)]
        # the segment wholly below the new log start goes from the bucket (the pass that
        # deletes it wrote the new log start to the manifest first); Spark, reading the bucket
        # alone, starts at the new log start too, not at the remote segment's base
        wait_until(
            lambda: broker.remote_segments(TOPIC)[0].base_offset == second.base_offset,
            timeout=30,
            what="the remote segment below the log start to be deleted",
        )
        offsets = spark_offsets(broker)
        uploaded_end = max(s.end_offset for s in broker.remote_segments(TOPIC))
        assert offsets == list(range(low, uploaded_end + 1))
