"""A large partition manifest is parsed off the event loop, and the start's opening of a
``file://`` cold tier (its walk of the bucket directory) and of the chunk cache too.

A partition kept for months holds thousands of segment entries: parsing its manifest on the
event loop, at each leader's first pass, held every other request for tens of milliseconds."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.remote_tier import start_remote_tier, stop_remote_tier
from tiered_mq.cold import layout, manifest, manifest_writer
from tiered_mq.cold.local_stores import FileStore, MemoryStore
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.manifest_writer import ManifestWriter, load_manifest
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 3)


def _entry(base: int) -> RemoteSegment:
    return RemoteSegment(
        base_offset=base,
        end_offset=base + 99,
        first_timestamp=base,
        max_timestamp=base + 99,
        size_bytes=4096,
        record_count=100,
        leader_epochs=[(0, base)],
        upload_id=f"{base:016x}",
        uploader_epoch=0,
        objects={"log": f"p/topics/orders/3/{base:020d}.log", "index": None, "snapshot": None},
        crc32c=1,
        state=SegmentState.COPY_FINISHED,
    )


def _manifest(entries: int) -> PartitionManifest:
    m = PartitionManifest(TP.topic, TP.partition, leader_epoch=2, log_start_offset=100)
    for i in range(entries):
        m.upsert(_entry(i * 100))
    return m


def _threads_of_parse(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = manifest_writer.parse_partition_manifest

    def recorded(data: bytes | str) -> PartitionManifest:
        seen.append(threading.current_thread().name)
        return original(data)

    monkeypatch.setattr(manifest_writer, "parse_partition_manifest", recorded)
    return seen


@pytest.mark.parametrize("entries", [3, 2000])
async def test_a_large_manifest_is_parsed_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch, entries: int
) -> None:
    store = ThreadedStore(MemoryStore(), inline=True)
    written = _manifest(entries)
    data = written.to_json()
    await store.put(layout.manifest_key("p", TP.topic, TP.partition), data)
    seen = _threads_of_parse(monkeypatch)

    found, etag = await load_manifest(store, "p", TP)
    assert found == written and etag is not None
    assert found.readable_segments() == written.readable_segments()
    assert found.segment_for_offset(150) == (written.segments[1] if entries > 1 else None)
    assert len(seen) == 1
    if entries > 100:  # about 0.3 KiB of JSON an entry: far above the threshold
        assert len(data) > 4 * 64 * 1024
        assert seen[0] != threading.main_thread().name  # the old code parsed it on the loop

    writer = ManifestWriter(store, "p", TP, leader_epoch=2)  # the leader's load goes the same way
    assert await writer.load() == written


async def test_the_start_opens_a_file_cold_tier_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[str] = []
    original = FileStore.remove_stale_temp_files

    def recorded(store: FileStore, min_age_s: float = 60.0) -> list[Path]:
        walks.append(threading.current_thread().name)
        return original(store, min_age_s)

    monkeypatch.setattr(FileStore, "remove_stale_temp_files", recorded)
    config = BrokerConfig(tmp_path / "data", port=0, cold_url=f"file://{tmp_path}/bucket")
    rlm = await start_remote_tier(config)
    try:
        assert rlm is not None
        await rlm.store.put("p/x", b"y")
        assert (await rlm.store.get("p/x"))[0] == b"y"
    finally:
        await stop_remote_tier(rlm)
    assert len(walks) == 1 and walks[0] != threading.main_thread().name  # old: the loop's


async def test_a_written_manifest_is_indexed_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each upload writes the manifest twice; the new version's query index (every readable
    entry) was built on the event loop at its first query, 6 ms at 10,000 entries."""
    store = ThreadedStore(MemoryStore(), inline=True)
    writer = ManifestWriter(store, "p", TP, leader_epoch=2)
    await writer.load()
    await writer.commit(lambda m: setattr(m, "segments", _manifest(2000).segments))
    built: list[str] = []
    original = manifest._ReadableIndex

    class Recorded(original):  # type: ignore[valid-type, misc]
        def __init__(self, m: PartitionManifest) -> None:
            built.append(threading.current_thread().name)
            super().__init__(m)

    monkeypatch.setattr(manifest, "_ReadableIndex", Recorded)
    await writer.commit(lambda m: m.upsert(_entry(2000 * 100)))
    assert writer.manifest.end_offset() == 2000 * 100 + 99  # the uploader's queries
    assert writer.manifest.upload_bound() == 2000 * 100 + 100
    assert len(writer.manifest.readable_segments()) == 2001
    assert built and threading.main_thread().name not in built  # old: built on the loop
    reread, _ = await load_manifest(store, "p", TP)
    assert reread == writer.manifest
