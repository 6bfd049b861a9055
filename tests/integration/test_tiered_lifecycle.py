"""Tiered storage through failures, on SeaweedFS: retention and topic deletion empty the bucket,
an S3 outage keeps hot data served and local segments kept until uploads resume, a SIGKILL in
the middle of uploads resumes without duplicate or missing segments, and a manifest written by
a later leader epoch fences this broker's uploader (a stale writer is refused)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import (
    PREFIX,
    TieredBroker,
    check_manifest,
    message,
    wait_until,
)
from tiered_mq.cold import layout
from tiered_mq.cold.manifest_writer import FencedError, ManifestWriter
from tiered_mq.cold.object_store import open_object_store
from tiered_mq.topic_partition import TopicPartition as TP

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def consume_all(bootstrap: str, topic: str, start: int, end: int) -> list[tuple[int, bytes, bytes]]:
    """Messages at offsets [start, end) read with confluent-kafka (fails on a stall)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"all-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, start)])
    got: list[tuple[int, bytes, bytes]] = []
    try:
        while len(got) < end - start:
            batch = consumer.consume(1000, timeout=15)
            assert batch, f"stalled after {len(got)} messages"
            for m in batch:
                assert m.error() is None, m.error()
                got.append((m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    return got


def expected(start: int, end: int) -> list[tuple[int, bytes, bytes]]:
    return [(i, *message(i)) for i in range(start, end)]


def live_objects(b: TieredBroker, topic: str) -> set[str]:
    manifest = b.manifest(topic)
    assert manifest is not None
    return {k for s in manifest.readable_segments() for k in s.objects.values() if k}


def segment_objects(b: TieredBroker, topic: str) -> list[str]:
    return [k for k in b.objects(topic) if not k.endswith(".json")]


def test_retention_deletes_objects_and_topic_deletion_empties_the_prefix(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    topic = "expiring"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic, **{"retention.ms": "600000", "local.retention.bytes": "1"})
        b.produce(topic, 0, 1500)  # CreateTime two hours ago: past retention.ms
        now_base = (int(time.time()) - 1500) * 1000
        b.produce(topic, 1500, 1500, base_ts=now_base)  # recent: kept
        # the old segments were uploaded, then expired from the bucket
        wait_until(
            lambda: (
                b.metric("tiered_mq_remote_delete_segments_total") > 0
                and len(b.local_segments(topic)) == 1
            ),
            what="remote retention",
        )
        # no object of a deleted segment is left behind (deletion runs in the background)
        wait_until(lambda: set(segment_objects(b, topic)) == live_objects(b, topic))
        manifest = b.manifest(topic)
        assert manifest is not None
        check_manifest(manifest)
        start = manifest.remote_log_start_offset()
        assert start is not None and 0 < start <= 1500
        assert b.list_offset(topic, -2) == (0, start)
        assert b.fetch(topic, 0)["error_code"] == 1  # below the log start: OFFSET_OUT_OF_RANGE
        assert consume_all(b.bootstrap, topic, start, 3000) == expected(start, 3000)

        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.delete_topics([topic])[topic].result(timeout=20)
        wait_until(lambda: not b.objects(topic), what="the topic's prefix to empty")
        assert not (b.process.data_dir / f"{topic}-0").exists()


def test_s3_outage_keeps_hot_data_and_resumes_uploads(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    topic = "outage"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic, **{"local.retention.bytes": "1"})
        b.produce(topic, 0, 1000)
        wait_until(lambda: len(b.local_segments(topic)) == 1, what="first uploads")
        uploaded_before = b.remote_segments(topic)[-1].end_offset
        seaweedfs.stop()
        try:
            b.produce(topic, 1000, 2000)
            # hot data is served while the bucket is away
            assert consume_all(b.bootstrap, topic, 1000, 3000) == expected(1000, 3000)
            wait_until(
                lambda: b.metric("tiered_mq_remote_copy_lag_segments", topic) >= 5,
                what="the copy lag to grow",
            )
            assert b.metric("tiered_mq_remote_upload_errors_total") > 0
            # local segments are kept: nothing below the upload bound is deleted
            locals_ = b.local_segments(topic)
            assert len(locals_) >= 6
            assert int(locals_[0].stem) <= uploaded_before + 1
        finally:
            seaweedfs.start()
        wait_until(
            lambda: (
                b.metric("tiered_mq_remote_copy_lag_segments", topic) == 0
                and len(b.local_segments(topic)) == 1
            ),
            timeout=60,
            what="uploads to resume",
        )
        manifest = b.manifest(topic)
        assert manifest is not None
        check_manifest(manifest)
        assert manifest.remote_log_start_offset() == 0
        assert consume_all(b.bootstrap, topic, 0, 3000) == expected(0, 3000)


def test_sigkill_during_uploads_resumes_without_duplicates_or_gaps(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    topic = "killed"
    rate = "remote.log.manager.copy.max.bytes.per.second=150000"
    with TieredBroker(tmp_path, seaweedfs, rate) as b:
        b.create_topic(topic, **{"local.retention.bytes": "1"})
        b.produce(topic, 0, 3000)
        wait_until(lambda: len(b.remote_segments(topic)) >= 2, what="some uploads")
        assert b.metric("tiered_mq_remote_copy_lag_segments", topic) > 0  # mid-way
        b.process.kill()
        b.process.start()
        wait_until(
            lambda: (
                len(b.local_segments(topic)) == 1
                and b.metric("tiered_mq_remote_copy_lag_segments", topic) == 0
            ),
            timeout=60,
            what="uploads to finish after the restart",
        )
        manifest = b.manifest(topic)
        assert manifest is not None
        check_manifest(manifest)
        segments = manifest.readable_segments()
        assert segments[0].base_offset == 0
        assert segments[-1].end_offset + 1 == int(b.local_segments(topic)[0].stem)
        assert set(segment_objects(b, topic)) == live_objects(b, topic)  # no orphan
        assert consume_all(b.bootstrap, topic, 0, 3000) == expected(0, 3000)


def test_later_leader_epoch_fences_the_uploader(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    topic = "fenced"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic, **{"local.retention.bytes": "1"})
        b.produce(topic, 0, 1000)
        wait_until(lambda: len(b.local_segments(topic)) == 1, what="first uploads")
        end_before = b.remote_segments(topic)[-1].end_offset
        store = open_object_store(f"s3://{b.bucket}", **seaweedfs.store_options())
        tp = TP(topic, 0)

        async def take_over_then_write_stale() -> None:
            successor = ManifestWriter(store, PREFIX, tp, leader_epoch=7)
            await successor.commit(lambda m: None)
            stale = ManifestWriter(store, PREFIX, tp, leader_epoch=0)
            with pytest.raises(FencedError):
                await stale.commit(lambda m: None)
            await store.close()

        asyncio.run(take_over_then_write_stale())
        b.produce(topic, 1000, 1000)
        wait_until(lambda: "deposed leader" in b.process.log_tail(200), what="the fencing")
        time.sleep(1)
        manifest = b.manifest(topic)
        assert manifest is not None
        assert manifest.leader_epoch == 7
        assert manifest.end_offset() == end_before  # the deposed leader wrote nothing more
        assert len(b.local_segments(topic)) > 1  # and deleted no un-uploaded local segment
        assert layout.manifest_key(PREFIX, topic, 0) in b.objects(topic)
        assert consume_all(b.bootstrap, topic, 0, 2000) == expected(0, 2000)
