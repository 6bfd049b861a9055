"""A Fetch of several partitions whose offsets are in the bucket keeps within its byte limits,
as one over local data does (KIP-74): only the first partition with data may pass them, by
its first batch.

A later cold partition used to get at least one batch as well, whatever was left of
``max_bytes``: with large records the response outgrew ``fetch.max.bytes`` and librdkafka's
``receive.message.max.bytes`` (at least fetch.max.bytes + 512), so a confluent-kafka consumer
of those partitions dropped each response as too large and never got a record."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import request
from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, wait_until
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import parse_partition_manifest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "big-cold"
PARTITIONS = 3
PER_PARTITION = 8
RECORD = 60_000  # one record a batch and a segment (segment.bytes 100000)
LIMIT = 100_000  # fetch.max.bytes and max.partition.fetch.bytes: room for one batch


def value(partition: int, i: int) -> bytes:
    return (f"{partition}:{i:06d}|".encode() * (RECORD // 9 + 1))[:RECORD]


def uploaded_end(b: TieredBroker, partition: int) -> int:
    try:
        data, _ = b.store.get(layout.manifest_key(PREFIX, TOPIC, partition))
    except Exception:
        return -1
    return parse_partition_manifest(data).end_offset()


def local_segment_count(b: TieredBroker, partition: int) -> int:
    return len(list((b.process.data_dir / f"{TOPIC}-{partition}").glob("*.log")))


def cold_fetch_sizes(b: TieredBroker) -> list[int]:
    """Record bytes per partition of one Fetch v11 at offset 0 of every partition."""
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": LIMIT,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "forgotten_topics_data": [],
        "rack_id": "",
        "topics": [
            {
                "topic": TOPIC,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": LIMIT,
                    }
                    for p in range(PARTITIONS)
                ],
            }
        ],
    }
    answer = request(b.process.port, 1, 11, body, timeout=30)
    parts = sorted(answer["responses"][0]["partitions"], key=lambda p: p["partition_index"])
    assert [p["error_code"] for p in parts] == [0] * PARTITIONS
    return [len(p["records"] or b"") for p in parts]


def test_cold_fetch_of_several_partitions_keeps_to_max_bytes(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        configs = {
            "remote.storage.enable": "true",
            "local.retention.ms": "1000",
            "segment.bytes": "100000",
        }
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        new = NewTopic(TOPIC, PARTITIONS, 1, config=configs)
        admin.create_topics([new])[TOPIC].result(timeout=10)
        # batch.size below 2 records: one record a batch
        producer = Producer({"bootstrap.servers": b.bootstrap, "batch.size": RECORD + 10_000})
        failed: list[object] = []
        for p in range(PARTITIONS):
            for i in range(PER_PARTITION):
                producer.produce(
                    TOPIC,
                    value=value(p, i),
                    partition=p,
                    on_delivery=lambda err, _msg: failed.append(err) if err else None,
                )
        assert producer.flush(30) == 0
        assert not failed, failed[:3]
        # every record only in the bucket: the quiet active segment, past local.retention.ms,
        # is rolled, uploaded and deleted too (Kafka's deletableSegments shouldRoll)
        wait_until(
            lambda: all(
                uploaded_end(b, p) == PER_PARTITION - 1 and local_segment_count(b, p) == 1
                for p in range(PARTITIONS)
            ),
            what="uploads and local retention",
        )

        sizes = cold_fetch_sizes(b)
        assert sizes[0] > RECORD  # the first partition: its one batch (KIP-74)
        assert sum(sizes) <= LIMIT, sizes  # the others nothing: no room for their batch

        consumer = Consumer(
            {
                "bootstrap.servers": b.bootstrap,
                "group.id": "big-cold",
                "enable.auto.commit": False,
                "fetch.max.bytes": LIMIT,
                "max.partition.fetch.bytes": LIMIT,
                "receive.message.max.bytes": LIMIT + 512,  # librdkafka's least
                "message.max.bytes": 1000,
            }
        )
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        got: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        deadline = time.monotonic() + 60
        try:
            while sum(map(len, got.values())) < PARTITIONS * PER_PARTITION:
                assert time.monotonic() < deadline, {p: len(v) for p, v in got.items()}
                msg = consumer.poll(1)
                if msg is None:
                    continue
                assert msg.error() is None, msg.error()
                got[msg.partition()].append((msg.offset(), msg.value()))
        finally:
            consumer.close()
        for p in range(PARTITIONS):
            assert got[p] == [(i, value(p, i)) for i in range(PER_PARTITION)]
