"""Tiered storage end to end on SeaweedFS: segments leave the local disk for the bucket and
every client reads them back from offset 0, byte for byte and in order; timestamp seeks and
ListOffsets -2/-4/-5 see the bucket; the cold-tier metrics are on the broker's endpoint."""

from __future__ import annotations

import itertools
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from kafka import KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import (
    BASE_TS,
    TieredBroker,
    check_manifest,
    message,
    wait_until,
)
from tiered_mq.record.batch import iter_batches

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "cold-reads"
KCAT = ["kcat", "-C", "-q", "-e", "-p", "0", "-o", "beginning"]
COUNT = 3000  # ~660 KB: about ten 64 KiB segments


@pytest.fixture(scope="module")
def tiered(
    tmp_path_factory: pytest.TempPathFactory,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> Iterator[TieredBroker]:
    with TieredBroker(tmp_path_factory.mktemp("reads"), seaweedfs) as b:
        b.create_topic(TOPIC, **{"local.retention.bytes": "1"})
        b.produce(TOPIC, 0, COUNT)
        # every rolled segment uploaded and deleted locally: only the active one is left
        wait_until(
            lambda: len(b.local_segments(TOPIC)) == 1 and b.remote_segments(TOPIC),
            what="segments to move to the bucket",
        )
        yield b


def expected(start: int = 0) -> list[tuple[int, bytes, bytes]]:
    return [(i, *message(i)) for i in range(start, COUNT)]


def test_segments_move_to_the_bucket(tiered: TieredBroker) -> None:
    manifest = tiered.manifest(TOPIC)
    assert manifest is not None
    check_manifest(manifest)
    segments = manifest.readable_segments()
    assert len(segments) >= 5
    assert segments[0].base_offset == 0
    local_start = int(tiered.local_segments(TOPIC)[0].stem)
    assert local_start == segments[-1].end_offset + 1  # bucket and disk join, no gap
    assert tiered.list_offset(TOPIC, -2) == (0, 0)  # log start offset includes the bucket
    assert tiered.list_offset(TOPIC, -4) == (0, local_start)  # earliest local
    assert tiered.list_offset(TOPIC, -5) == (0, segments[-1].end_offset)  # latest tiered
    assert tiered.list_offset(TOPIC, -1) == (0, COUNT)
    # the bucket holds the local bytes: .log, .index, .timeindex per segment
    keys = tiered.objects(TOPIC)
    assert sum(k.endswith(".log") for k in keys) == len(segments)
    assert tiered.metric("tiered_mq_remote_copy_lag_segments", TOPIC) == 0
    assert tiered.metric("tiered_mq_remote_log_segments", TOPIC) == len(segments)
    assert tiered.metric("tiered_mq_remote_upload_bytes_total") >= manifest.size_bytes()


def test_confluent_kafka_reads_from_offset_zero(tiered: TieredBroker) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": tiered.bootstrap,
            "group.id": "cold-confluent",
            "enable.auto.commit": False,
            "max.partition.fetch.bytes": 20_000,  # many fetches, across segment ends
        }
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got: list[tuple[int, bytes, bytes]] = []
    try:
        while len(got) < COUNT:
            batch = consumer.consume(500, timeout=10)
            assert batch, f"stalled at {len(got)}"
            for m in batch:
                assert m.error() is None, m.error()
                got.append((m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    assert got == expected()
    assert tiered.metric("tiered_mq_remote_fetch_bytes_total") > 0


def test_kafka_python_reads_from_offset_zero(tiered: TieredBroker) -> None:
    consumer = KafkaConsumer(
        bootstrap_servers=tiered.bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000
    )
    tp = KpTopicPartition(TOPIC, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    got = []
    try:
        for m in consumer:
            got.append((m.offset, m.key, m.value))
            if len(got) == COUNT:
                break
    finally:
        consumer.close()
    assert got == expected()


def test_kcat_reads_from_offset_zero(tiered: TieredBroker) -> None:
    out = subprocess.run(
        [*KCAT, "-b", tiered.bootstrap, "-t", TOPIC, "-f", "%o %k %s\n"],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    want = b"".join(b"%d %s %s\n" % (i, k, v) for i, k, v in expected())
    assert out == want


def test_timestamp_seek_lands_on_cold_data(tiered: TieredBroker) -> None:
    tier_end = tiered.remote_segments(TOPIC)[-1].end_offset
    for target in (0, 17, tier_end // 2, tier_end):
        assert tiered.list_offset(TOPIC, BASE_TS + target * 1000) == (0, target)
        # between two records: the next one
        assert tiered.list_offset(TOPIC, BASE_TS + target * 1000 - 500) == (0, target)
    assert tiered.list_offset(TOPIC, BASE_TS + (COUNT - 1) * 1000) == (0, COUNT - 1)
    assert tiered.list_offset(TOPIC, BASE_TS + COUNT * 1000) == (0, -1)
    consumer = Consumer({"bootstrap.servers": tiered.bootstrap, "group.id": "cold-ts"})
    try:
        want = tier_end // 3
        (found,) = consumer.offsets_for_times(
            [TopicPartition(TOPIC, 0, BASE_TS + want * 1000)], timeout=10
        )
        assert found.offset == want
        consumer.assign([found])
        m = consumer.poll(10)
        assert m is not None and m.error() is None
        assert (m.offset(), m.key(), m.value()) == (want, *message(want))
    finally:
        consumer.close()


def test_max_timestamp_held_only_by_the_bucket(tiered: TieredBroker) -> None:
    """ListOffsets -3 (OffsetSpec.max_timestamp()) finds the greatest timestamp in a segment
    that is no longer on local disk."""
    topic = "cold-max-ts"
    # Kafka 4 refuses timestamps over an hour ahead by default; this topic allows them
    after = {"message.timestamp.after.max.ms": str(2**63 - 1)}
    tiered.create_topic(topic, **{"local.retention.bytes": "1"}, **after)
    future = BASE_TS + 10**9
    tiered.produce(topic, 0, 1, base_ts=future)  # offset 0 carries the greatest timestamp
    tiered.produce(topic, 1, 1500)
    wait_until(
        lambda: len(tiered.local_segments(topic)) == 1 and tiered.remote_segments(topic),
        what="segments to move to the bucket",
    )
    assert int(tiered.local_segments(topic)[0].stem) > 0  # offset 0 is only in the bucket
    admin = AdminClient({"bootstrap.servers": tiered.bootstrap})
    tp = TopicPartition(topic, 0)
    info = admin.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(10)
    assert (info.offset, info.timestamp) == (0, future)


def test_fetch_below_the_log_start_is_out_of_range(tiered: TieredBroker) -> None:
    answer = tiered.fetch(TOPIC, 0, max_bytes=4096)
    assert answer["error_code"] == 0
    assert answer["log_start_offset"] == 0
    assert len(answer["records"]) > 0
    assert tiered.fetch(TOPIC, -1)["error_code"] == 1  # OFFSET_OUT_OF_RANGE
    assert tiered.fetch(TOPIC, COUNT + 10)["error_code"] == 1


def test_a_filled_fetch_goes_on_from_the_bucket_into_the_local_log(tiered: TieredBroker) -> None:
    local_start = int(tiered.local_segments(TOPIC)[0].stem)
    assert 0 < local_start < COUNT  # the bucket holds [0, local_start), the disk the rest
    limits = {"max_bytes": 8 << 20, "partition_max_bytes": 16 << 10}
    with socket.create_connection(("127.0.0.1", tiered.process.port), timeout=30) as sock:
        first = tiered.fetch(TOPIC, 0, sock=sock, **limits)
        assert first["error_code"] == 0
        after = [h.last_offset for _, h in iter_batches(bytes(first["records"]))][-1] + 1
        assert after < local_start  # Kafka's limit: a few batches of the first segment
        time.sleep(1.0)  # as a consumer that waited out librdkafka's queue backoff: filled
        part = tiered.fetch(TOPIC, after, sock=sock, **limits)
    assert part["error_code"] == 0
    batches = [(h.base_offset, h.last_offset) for _, h in iter_batches(bytes(part["records"]))]
    assert batches[0][0] <= after <= batches[0][1]
    for (_, last), (base, _) in itertools.pairwise(batches):
        assert base == last + 1, f"gap {last + 1}..{base - 1}"
    assert batches[-1][1] == COUNT - 1  # one answer: the rest of the bucket, then the disk
