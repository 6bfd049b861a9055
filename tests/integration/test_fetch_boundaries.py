"""Fetches that span segments of very different sizes never skip data, hot or cold.

Regression test of a consumer that "stalled" in benchmarks/bench_spark_replay.py: a fetch
whose byte budget ran out in front of a segment with a big first batch went on to a later
segment whose smaller batch fitted, so the response skipped whole segments and the consumer
jumped ahead (past the end of the range it was counting, where it then waited forever).

The log here alternates big batches (~480 KB) and tiny ones, one batch a segment (see
``ONE_BATCH_A_SEGMENT``), so a 1 MiB fetch budget always runs out in front of a big batch. Checked:
raw Fetch v11 answers start at the batch holding the fetch offset and are gap-free, and a
default confluent-kafka consumer reads every offset exactly once from 0 while the cold tier
uploads and local retention deletes the segments it is reading (the remote/local boundary
moves under it).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker
from tiered_mq.record.batch import iter_batches

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROUNDS = 10
BIG = 400  # records of a big batch
SMALL = 2  # records of a tiny batch
VALUE_BYTES = 1200
TOTAL = ROUNDS * (BIG + SMALL)
# Topic configs that put every batch in a segment of its own: segment.bytes holds a big batch
# (a batch above it would be refused, RECORD_LIST_TOO_LARGE), and an index of 12 bytes has room
# for no second time index entry, so every append to a non-empty segment rolls it first.
ONE_BATCH_A_SEGMENT = {"segment.bytes": str(1 << 20), "segment.index.bytes": "12"}


def value(i: int) -> bytes:
    return i.to_bytes(8, "big") + bytes([i % 251]) * (VALUE_BYTES - 8)


def produce_alternating(bootstrap: str, topic: str, first: int = 0, rounds: int = ROUNDS) -> None:
    """``rounds`` batches of BIG and SMALL records in turn from record ``first`` (each flushed
    alone: one batch each)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "batch.num.messages": 10_000,
            "message.max.bytes": 2_000_000,
        }
    )
    i = first
    for _ in range(rounds):
        for count in (BIG, SMALL):
            for _ in range(count):
                producer.produce(topic, value(i), partition=0)
                i += 1
            assert producer.flush(30) == 0


def fetched_batches(records: bytes) -> list[tuple[int, int]]:
    return [(h.base_offset, h.last_offset) for _, h in iter_batches(records)]


@pytest.fixture(scope="module")
def broker(
    tmp_path_factory: pytest.TempPathFactory,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> Iterator[TieredBroker]:
    with TieredBroker(
        tmp_path_factory.mktemp("fetch-boundaries"), seaweedfs, "message.max.bytes=2000000"
    ) as b:
        yield b


def test_fetch_budget_stops_in_front_of_a_big_batch(broker: TieredBroker) -> None:
    topic = "hot-mixed"
    broker.create_topic(topic, **{"remote.storage.enable": "false", **ONE_BATCH_A_SEGMENT})
    produce_alternating(broker.bootstrap, topic)
    offset = 0
    while offset < TOTAL:
        part = broker.fetch(topic, offset, max_bytes=1 << 20)
        assert part["error_code"] == 0
        batches = fetched_batches(bytes(part["records"]))
        assert batches, f"empty answer at offset {offset} below the high watermark"
        assert batches[0][0] <= offset <= batches[0][1]
        for (_, last), (base, _) in itertools.pairwise(batches):
            assert base == last + 1, f"fetch at {offset} skipped {last + 1}..{base - 1}"
        offset = batches[-1][1] + 1


def test_default_consumer_reads_every_offset_while_segments_leave_the_disk(
    broker: TieredBroker,
) -> None:
    topic = "moving-boundary"
    broker.create_topic(topic, **{"local.retention.bytes": "1", **ONE_BATCH_A_SEGMENT})
    half = ROUNDS // 2
    produce_alternating(broker.bootstrap, topic, 0, half)  # a backlog: fetches span segments
    producer = threading.Thread(
        target=produce_alternating,
        args=(broker.bootstrap, topic, half * (BIG + SMALL), ROUNDS - half),
    )
    producer.start()
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "fetch-boundaries",
            "enable.auto.commit": False,
            "auto.offset.reset": "error",  # an unexpected OFFSET_OUT_OF_RANGE fails the test
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    expected = 0
    deadline = time.monotonic() + 90
    try:
        while expected < TOTAL and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                assert msg.error() is None, msg.error()
                assert msg.offset() == expected, f"expected offset {expected}, got {msg.offset()}"
                assert msg.value() == value(expected)
                expected += 1
    finally:
        consumer.close()
        producer.join(60)
    assert expected == TOTAL, f"consumer stopped at {expected} of {TOTAL}"
    # the bucket served part of it: segments were uploaded and deleted locally meanwhile
    assert broker.remote_segments(topic)
