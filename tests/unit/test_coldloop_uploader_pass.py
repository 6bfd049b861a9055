"""What a tiering pass does on the event loop for a partition with nothing to upload.

A start with ~1,000 tiered partitions spent about a second of the event loop in the
uploaders' first passes: each asked every rolled segment for its next offset, which for a
segment opened from disk loads its ``.index`` and ``.timeindex`` and reads its tail, although
the manifest already held all of it. And every idle pass (one a second per partition) set
four labelled gauges and handed the reader a manifest that had not changed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.unit.cold.helpers import T0, Clock, fill, open_log
from tiered_mq.cold import layout, manifest_writer
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.remote_reader import RemoteReader
from tiered_mq.cold.uploader import PartitionUploader, UploaderSettings
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)


def _rlm(store: ThreadedStore, tmp_path: Path, registry: CollectorRegistry) -> RemoteLogManager:
    return RemoteLogManager(
        store,
        "p",
        tmp_path / "cache",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        registry=registry,
        clock=Clock(),
    )


async def _leader(rlm: RemoteLogManager, log: LocalLog) -> PartitionUploader:
    """The uploader of TP on ``log``, its own loop stopped (the test runs the passes)."""
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    return uploader


async def test_a_pass_reads_no_index_of_an_uploaded_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ThreadedStore(MemoryStore(), inline=True)
    log = open_log(tmp_path / "orders-0")
    fill(log, 4)
    rlm = _rlm(store, tmp_path, CollectorRegistry())
    await (await _leader(rlm, log)).run_pass()
    await rlm.close()
    log.close()

    # the broker starts again: its segments are opened from disk, their indexes unread
    reads: list[str] = []
    original = Path.read_bytes

    def counted(path: Path) -> bytes:
        if path.suffix in (".index", ".timeindex"):
            reads.append(path.name)
        return original(path)

    monkeypatch.setattr(Path, "read_bytes", counted)
    log = open_log(tmp_path / "orders-0")
    rlm = _rlm(store, tmp_path, CollectorRegistry())
    uploader = await _leader(rlm, log)
    await uploader.run_pass()
    await uploader.run_pass()
    assert uploader.manifest.end_offset() == log.log_end_offset - 1  # all of it was uploaded
    assert (uploader.copy_lag_segments, uploader.copy_lag_bytes) == (0, 0)
    assert reads == []  # the old code read both indexes of each of the 4 rolled segments

    # a segment rolled now is still found, uploaded, and counted in the lag until then
    fill(log, 1)
    await uploader.run_pass()
    assert uploader.manifest.end_offset() == log.log_end_offset - 1
    assert len(uploader.manifest.readable_segments()) == 5
    await rlm.close()
    log.close()


async def test_an_idle_pass_publishes_nothing_a_change_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[PartitionManifest] = []
    original_handed = RemoteReader.manifest_updated

    def counted_handed(reader: RemoteReader, tp: TopicPartition, m: PartitionManifest) -> None:
        handed.append(m)
        original_handed(reader, tp, m)

    monkeypatch.setattr(RemoteReader, "manifest_updated", counted_handed)
    store = ThreadedStore(MemoryStore.named(f"coldloop-{uuid.uuid4().hex}"), inline=True)
    registry = CollectorRegistry()
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    rlm = _rlm(store, tmp_path, registry)
    uploader = await _leader(rlm, log)
    await uploader.run_pass()
    labels = {"topic": TP.topic, "partition": str(TP.partition)}
    size = registry.get_sample_value("tiered_mq_remote_log_bytes", labels)
    assert size is not None and size > 0
    assert registry.get_sample_value("tiered_mq_remote_log_segments", labels) == 2

    assert handed and handed[-1] is uploader.manifest
    handed.clear()
    gauges: list[tuple[str, ...]] = []
    for gauge in (rlm.metrics.copy_lag_bytes, rlm.metrics.copy_lag_segments):
        original_labels = gauge.labels

        def counted_labels(*values: str, _original=original_labels):  # type: ignore[no-untyped-def]
            gauges.append(values)
            return _original(*values)

        monkeypatch.setattr(gauge, "labels", counted_labels)
    original_size = rlm.metrics.set_log_size
    sizes: list[int] = []

    def counted_size(topic: str, partition: int, size_bytes: int, segments: int) -> None:
        sizes.append(size_bytes)
        original_size(topic, partition, size_bytes, segments)

    monkeypatch.setattr(rlm.metrics, "set_log_size", counted_size)
    for _ in range(5):
        await uploader.run_pass()
    assert (handed, gauges, sizes) == ([], [], [])  # the old code: 5 of each, 10 gauges

    # a new segment: the reader gets the new manifest and the metrics its size
    fill(log, 1)
    await uploader.run_pass()
    assert handed and handed[-1] is uploader.manifest
    assert (await rlm.remote_manifest(TP)) is uploader.manifest
    assert registry.get_sample_value("tiered_mq_remote_log_segments", labels) == 3
    assert registry.get_sample_value("tiered_mq_remote_log_bytes", labels) == sizes[-1] > size
    assert registry.get_sample_value("tiered_mq_remote_copy_lag_segments", labels) == 0
    await rlm.close()
    log.close()


class _CountedEntries(list[RemoteSegment]):
    """A manifest's entry list that counts the scans of it."""

    scans = 0

    def __iter__(self) -> Iterator[RemoteSegment]:
        _CountedEntries.scans += 1
        return super().__iter__()


def _entry(base: int) -> RemoteSegment:
    return RemoteSegment(
        base_offset=base,
        end_offset=base + 99,
        first_timestamp=T0 + base,
        max_timestamp=T0 + base + 99,
        size_bytes=4096,
        record_count=100,
        leader_epochs=[(0, base)],
        upload_id=f"{base:016x}",
        uploader_epoch=0,
        objects={"log": f"p/topics/orders/0/{base:020d}.log", "index": None, "snapshot": None},
        crc32c=1,
        state=SegmentState.COPY_FINISHED,
    )


async def test_an_idle_pass_scans_no_manifest_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition kept for months has thousands of remote segments: each idle pass walked
    all their entries several times (unfinished copies and deletions, entries below the log
    start offset), about 6 ms a pass at 10,000 entries, every second, on the event loop."""
    store = ThreadedStore(MemoryStore(), inline=True)
    written = PartitionManifest(TP.topic, TP.partition)
    written.segments = [_entry(i * 100) for i in range(500)]
    await store.put(layout.manifest_key("p", TP.topic, TP.partition), written.to_json())
    original = manifest_writer.parse_partition_manifest

    def counted(data: bytes | str) -> PartitionManifest:
        found = original(data)
        found.segments = _CountedEntries(found.segments)
        return found

    monkeypatch.setattr(manifest_writer, "parse_partition_manifest", counted)
    log = open_log(tmp_path / "orders-0")
    log.truncate_fully_and_start_at(500 * 100)  # the older data is in the bucket only
    rlm = _rlm(store, tmp_path, CollectorRegistry())
    uploader = await _leader(rlm, log)
    await uploader.run_pass()  # loads the manifest and checks it once
    assert uploader.manifest.segments == written.segments
    _CountedEntries.scans = 0
    for _ in range(5):
        await uploader.run_pass()
    assert _CountedEntries.scans == 0  # the old code: 4 scans a pass
    assert rlm.remote_log_start_offset(TP) == 0
    assert rlm.highest_uploaded_offset(TP) == 500 * 100 - 1

    # an uploaded segment below a log start offset raised by DeleteRecords still goes
    log.set_log_start_offset(250)
    await uploader.run_pass()
    assert rlm.remote_log_start_offset(TP) == 250
    assert [s.base_offset for s in uploader.manifest.segments[:2]] == [200, 300]
    await rlm.close()
    log.close()
