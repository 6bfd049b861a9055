"""The tiering path end to end on a real hot.LocalLog and a memory store."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.unit.cold.helpers import T0, Clock, fill, local_bytes, open_log
from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import SegmentState, parse_partition_manifest
from tiered_mq.cold.manifest_writer import FencedError
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.scrub import scrub
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.errors import ObjectStoreError, OffsetOutOfRangeError
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)
PREFIX = "cluster1"


@pytest.fixture
def mem() -> MemoryStore:
    return MemoryStore.named(uuid.uuid4().hex)


@pytest.fixture
async def rlm(mem: MemoryStore, tmp_path: Path) -> AsyncIterator[RemoteLogManager]:
    manager = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        tmp_path / "cache",
        cache_bytes=4096,
        chunk_size=512,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=Clock(),
    )
    await manager.start()
    yield manager
    await manager.close()


async def _one_pass(rlm: RemoteLogManager, tp: TopicPartition = TP) -> None:
    uploader = rlm.uploader(tp)
    assert uploader is not None
    await uploader.stop()  # no background pass racing the explicit one
    await uploader.run_pass()


async def test_uploads_rolled_segments_below_hwm(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 3)
    expected_logs = [s.log_path.read_bytes() for s in log.segments()[:-1]]
    rlm.on_become_leader(TP, log, log.config, lambda: 45, leader_epoch=2)
    await _one_pass(rlm)
    manifest = parse_partition_manifest(mem.get(layout.manifest_key(PREFIX, "orders", 0))[0])
    # Segments 0-19 and 20-39 are wholly below the HWM 45; 40-59 is not.
    assert [(s.base_offset, s.end_offset) for s in manifest.segments] == [(0, 19), (20, 39)]
    assert all(s.state == SegmentState.COPY_FINISHED for s in manifest.segments)
    assert manifest.leader_epoch == 2
    for seg, expected in zip(manifest.segments, expected_logs, strict=False):
        assert seg.record_count == 20
        assert seg.first_timestamp == T0 + seg.base_offset * 1000
        assert seg.max_timestamp == T0 + seg.end_offset * 1000
        assert seg.leader_epochs == [(0, seg.base_offset)]
        log_key = seg.key("log")
        assert log_key is not None
        assert mem.get(log_key)[0] == expected
        parsed = layout.parse_key(PREFIX, log_key)
        assert parsed is not None
        assert (parsed.base_offset, parsed.leader_epoch, parsed.suffix) == (
            seg.base_offset,
            2,
            "log",
        )
        for suffix in ("index", "timeindex"):
            key = seg.key(suffix)
            assert key is not None and mem.head(key) is not None
    assert rlm.upload_bound(TP) == 40
    status = rlm.status()[0]
    assert (status.remote_segments, status.copy_lag_segments) == (2, 1)
    assert status.copy_lag_bytes == log.segments()[2].size


async def test_read_from_bucket_matches_local_bytes(rlm: RemoteLogManager, tmp_path: Path) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 4, batches_per_segment=6)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(rlm)
    # Replay the whole remote log sequentially with small fetches, as a consumer would.
    offset, replayed = 0, bytearray()
    while offset < 96:
        data = await rlm.read(TP, offset, 300)
        batches = iter_batches(data)
        assert batches, offset
        assert batches[0][1].base_offset <= offset <= batches[0][1].last_offset
        replayed += data
        offset = batches[-1][1].next_offset
    assert bytes(replayed) == local_bytes(log, 0, 1 << 20)[: len(replayed)]
    # A read from the middle of a batch starts at that batch.
    data = await rlm.read(TP, 13, 1)
    first = iter_batches(data)
    assert len(first) == 1
    assert first[0][1].base_offset <= 13 <= first[0][1].last_offset
    with pytest.raises(OffsetOutOfRangeError):
        await rlm.read(TP, 96, 100)  # in the active segment: never uploaded


async def test_local_retention_deletes_only_uploaded(mem: MemoryStore, tmp_path: Path) -> None:
    log = open_log(tmp_path / "orders-0", local_retention_bytes="0")
    fill(log, 3)
    store = ThreadedStore(mem, inline=True)
    manager = RemoteLogManager(
        store,
        PREFIX,
        tmp_path / "c",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600),
        clock=Clock(),
    )
    manager.on_become_leader(TP, log, log.config, lambda: 30)
    await _one_pass(manager)
    # Only 0-19 is uploaded (20-39 reaches above the HWM), so only it may go locally.
    assert [s.base_offset for s in log.segments()] == [20, 40, 60]
    assert log.log_start_offset == 0
    assert log.local_log_start_offset == 20
    data = await manager.read(TP, 0, 1 << 20)
    assert iter_batches(data)[-1][1].last_offset == 19
    await manager.close()


async def test_upload_failure_is_cleaned_up_and_retried(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    mem.fail_next("put", ObjectStoreError("x", "injected"), times=1)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    # The .timeindex put (third object) fails: nothing of that attempt may stay behind.
    mem.fail_next("put", ObjectStoreError("x", "injected"), times=0)
    calls = {"n": 0}
    original = mem.put

    def flaky_put(key: str, data: bytes) -> str:
        calls["n"] += 1
        if calls["n"] == 3:
            raise ObjectStoreError(key, "injected")
        return original(key, data)

    mem.put = flaky_put  # type: ignore[method-assign]
    mem._faults.clear()
    with pytest.raises(ObjectStoreError, match="injected"):
        await uploader.run_pass()
    manifest = uploader.manifest
    assert manifest.segments == []
    assert [
        k.key for k in mem.list(f"{PREFIX}/topics/orders/0/") if not k.key.endswith(".json")
    ] == []
    await uploader.run_pass()
    assert [(s.base_offset, s.state) for s in uploader.manifest.segments] == [
        (0, SegmentState.COPY_FINISHED),
        (20, SegmentState.COPY_FINISHED),
    ]
    report = scrub(mem, PREFIX)
    assert report.orphans == []


async def test_background_retry_with_backoff(mem: MemoryStore, tmp_path: Path) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 1)
    mem.fail_next("put_if_absent", ObjectStoreError("m", "bucket down"), times=2)
    manager = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        tmp_path / "c",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600, retry_initial_s=0.01, retry_max_s=0.05),
        clock=Clock(),
    )
    manager.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    for _ in range(200):
        if manager.highest_uploaded_offset(TP) == 19:
            break
        await asyncio.sleep(0.01)
    assert manager.highest_uploaded_offset(TP) == 19
    assert manager.metrics.upload_errors._value.get() == 2
    await manager.close()


async def test_stop_beside_a_wake_ends_the_uploader(mem: MemoryStore, tmp_path: Path) -> None:
    """A roll's wake() and a stop() in the same loop turn, while the uploader waits for its
    next pass: the stop wins. With asyncio.wait_for (Python 3.11) the wait returned normally,
    the cancellation was lost and stop() awaited the task for ever (a topic deletion hung)."""
    log = open_log(tmp_path / "orders-0")
    fill(log, 1)
    manager = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        tmp_path / "c",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600),
        clock=Clock(),
    )
    manager.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    for _ in range(200):  # the first pass done: the uploader waits for a wake
        if manager.highest_uploaded_offset(TP) == 19:
            break
        await asyncio.sleep(0.01)
    uploader = manager.uploader(TP)
    assert uploader is not None and manager.highest_uploaded_offset(TP) == 19
    await asyncio.sleep(0.01)
    routine = uploader._task
    assert routine is not None
    uploader.wake()
    stopping = asyncio.ensure_future(uploader.stop())
    done, _ = await asyncio.wait({stopping}, timeout=2)
    ended = routine.done()
    routine.cancel()  # (a second cancel: ends a routine that lost the first one)
    await asyncio.gather(stopping, return_exceptions=True)
    assert stopping in done and ended and uploader.state == "stopped"
    await manager.close()


async def test_deposed_leader_is_fenced(mem: MemoryStore, tmp_path: Path) -> None:
    store = ThreadedStore(mem, inline=True)
    settings = UploaderSettings(check_interval_s=3600, local_retention=False)
    old_log = open_log(tmp_path / "old" / "orders-0")
    new_log = open_log(tmp_path / "new" / "orders-0")
    fill(old_log, 2)
    fill(new_log, 3)
    old = RemoteLogManager(
        store, PREFIX, tmp_path / "c1", 1 << 20, settings=settings, clock=Clock()
    )
    new = RemoteLogManager(
        store, PREFIX, tmp_path / "c2", 1 << 20, settings=settings, clock=Clock()
    )
    old_hwm = {"value": 20}
    old.on_become_leader(TP, old_log, old_log.config, lambda: old_hwm["value"], leader_epoch=1)
    await _one_pass(old)  # uploads 0-19 under epoch 1
    new.on_become_leader(TP, new_log, new_log.config, lambda: 60, leader_epoch=2)
    await _one_pass(new)  # takes over: uploads 20-59 under epoch 2
    old_uploader = old.uploader(TP)
    assert old_uploader is not None
    old_hwm["value"] = 40  # it believes it may upload 20-39
    with pytest.raises(FencedError):
        await old_uploader.run_pass()  # its next write loses and finds epoch 2
    manifest = parse_partition_manifest(mem.get(layout.manifest_key(PREFIX, "orders", 0))[0])
    assert manifest.leader_epoch == 2
    assert [s.base_offset for s in manifest.segments] == [0, 20, 40]
    # Starting a pass from scratch as the old epoch is refused at once too.
    old.on_become_leader(TP, old_log, old_log.config, lambda: 40, leader_epoch=1)
    for _ in range(100):
        if old.status()[0].state == "fenced":
            break
        await asyncio.sleep(0.01)
    assert old.status()[0].state == "fenced"
    await old.close()
    await new.close()


async def test_remote_retention_by_bytes_and_time(mem: MemoryStore, tmp_path: Path) -> None:
    clock = Clock(T0 + 100_000)
    log = open_log(tmp_path / "orders-0", clock=clock, retention_bytes="2500")
    fill(log, 4)
    manager = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        tmp_path / "c",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600),
        clock=clock,
    )
    manager.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(manager)
    # 960 + 3 x 1000 bytes, retention.bytes 2500: only the oldest goes (what is left must
    # still reach retention.bytes, as in Kafka).
    uploader = manager.uploader(TP)
    assert uploader is not None
    manifest = uploader.manifest
    assert [s.base_offset for s in manifest.segments] == [20, 40, 60]
    assert manifest.log_start_offset == 20
    assert log.log_start_offset == 20
    names = [o.key.split("/")[-1] for o in mem.list(f"{PREFIX}/topics/orders/0/")]
    assert not [n for n in names if n.startswith("00000000000000000000")]
    with pytest.raises(OffsetOutOfRangeError):
        await manager.read(TP, 5, 100)
    # Time: everything older than retention.ms (max timestamp T0 + 59_000) goes.
    log.update_config(log.config.__class__.from_properties({"retention.ms": "10000"}, log.config))
    uploader.config = log.config
    clock.now = T0 + 70_000
    await uploader.run_pass()
    assert [s.base_offset for s in uploader.manifest.segments] == [60]
    assert log.log_start_offset == 60
    assert scrub(mem, PREFIX).orphans == []
    await manager.close()


async def test_corrupt_object_is_never_served(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 1)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(rlm)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    key = uploader.manifest.segments[0].key("log")
    assert key is not None
    mem.corrupt(key, 100)  # inside the first batch's records
    with pytest.raises(ObjectStoreError) as info:
        await rlm.read(TP, 0, 1 << 20)
    assert info.value.key == key
    assert "CRC" in str(info.value)


async def test_offset_for_timestamp_on_remote_data(rlm: RemoteLogManager, tmp_path: Path) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 3)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(rlm)
    for target in (0, 1, 7, 20, 33, 59):
        assert await rlm.offset_for_timestamp(TP, T0 + target * 1000) == (
            target,
            T0 + target * 1000,
        )
    assert await rlm.offset_for_timestamp(TP, T0 + 7 * 1000 - 1) == (7, T0 + 7000)
    assert await rlm.offset_for_timestamp(TP, T0 + 60 * 1000) is None


async def test_offset_for_timestamp_honours_a_log_start_not_yet_in_the_manifest(
    rlm: RemoteLogManager, tmp_path: Path
) -> None:
    """Right after a DeleteRecords the manifest still has the old log start offset; the
    partition's, passed by ListOffsets, bounds the answer (Kafka's findOffsetByTimestamp)."""
    log = open_log(tmp_path / "orders-0")
    fill(log, 3)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(rlm)
    assert await rlm.offset_for_timestamp(TP, T0 + 3000) == (3, T0 + 3000)
    assert await rlm.offset_for_timestamp(TP, T0 + 3000, 10) == (10, T0 + 10_000)
    assert await rlm.offset_for_timestamp(TP, T0 + 3000, 25) == (25, T0 + 25_000)
    assert await rlm.offset_for_timestamp(TP, T0 + 30_000, 10) == (30, T0 + 30_000)


async def test_new_leader_lowers_log_start_to_bucket(mem: MemoryStore, tmp_path: Path) -> None:
    store = ThreadedStore(mem, inline=True)
    settings = UploaderSettings(check_interval_s=3600, local_retention=False)
    first_log = open_log(tmp_path / "a" / "orders-0")
    fill(first_log, 3)
    a = RemoteLogManager(store, PREFIX, tmp_path / "c1", 1 << 20, settings=settings, clock=Clock())
    a.on_become_leader(TP, first_log, first_log.config, lambda: 60, leader_epoch=1)
    await _one_pass(a)
    # The follower kept only 40.. locally (it truncated the rest after upload).
    follower_log = open_log(tmp_path / "b" / "orders-0")
    follower_log.truncate_fully_and_start_at(40)
    fill(follower_log, 1)
    b = RemoteLogManager(store, PREFIX, tmp_path / "c2", 1 << 20, settings=settings, clock=Clock())
    b.on_become_leader(TP, follower_log, follower_log.config, lambda: 60, leader_epoch=2)
    await _one_pass(b)
    assert follower_log.log_start_offset == 0
    assert b.remote_log_start_offset(TP) == 0
    assert iter_batches(await b.read(TP, 0, 10))[0][1].base_offset == 0
    await a.close()
    await b.close()


def _leading(mem: MemoryStore, cache_dir: Path, log: LocalLog) -> RemoteLogManager:
    """A manager over ``mem`` leading TP on ``log``, its uploader's loop idle (hourly)."""
    manager = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        cache_dir,
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600),
        clock=Clock(),
    )
    manager.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    return manager


async def test_log_start_raised_to_the_local_log_start_stays(
    mem: MemoryStore, tmp_path: Path
) -> None:
    """Only a new leader lowers the log start offset to the bucket's: one raised later to the
    local log start (DeleteRecords, local retention with remote.log.copy.disable) stays, and
    the remote segments below it go."""
    log = open_log(tmp_path / "orders-0", local_retention_bytes="1000", retention_ms="-1")
    fill(log, 3)
    manager = _leading(mem, tmp_path / "c", log)
    await _one_pass(manager)
    assert (log.log_start_offset, log.local_log_start_offset) == (0, 40)
    log.set_log_start_offset(40)  # DeleteRecords up to the local log start
    uploader = manager.uploader(TP)
    assert uploader is not None
    for _ in range(2):
        await uploader.run_pass()
        assert log.log_start_offset == 40
    assert [s.base_offset for s in uploader.manifest.readable_segments()] == [40]
    await manager.close()


async def test_log_start_raised_inside_a_remote_segment_goes_to_the_manifest(
    mem: MemoryStore, tmp_path: Path
) -> None:
    """DeleteRecords to an offset inside a remote segment: the bucket's manifest, which Spark
    reads alone, starts there too, and the remote segment wholly below it goes."""
    log = open_log(tmp_path / "orders-0", local_retention_bytes="1000", retention_ms="-1")
    fill(log, 3)
    manager = _leading(mem, tmp_path / "c", log)
    await _one_pass(manager)
    assert (log.log_start_offset, log.local_log_start_offset) == (0, 40)
    log.set_log_start_offset(25)  # DeleteRecords into the remote segment 20-39
    uploader = manager.uploader(TP)
    assert uploader is not None
    await uploader.run_pass()
    stored = parse_partition_manifest(mem.get(layout.manifest_key(PREFIX, "orders", 0))[0])
    assert stored.log_start_offset == 25
    assert stored.remote_log_start_offset() == 25
    assert stored.readable_segments()[0].base_offset == 20  # 0-19 deleted
    assert log.log_start_offset == 25
    await manager.close()


async def test_re_enabling_after_an_interrupted_delete_on_disable_keeps_local_data(
    mem: MemoryStore, tmp_path: Path
) -> None:
    """remote.storage.enable=false with remote.log.delete.on.disable, the deletion cut short
    (bucket unreachable, broker restarted), then remote storage on again: the records that
    stayed readable locally (40-59) are uploaded again, never dropped."""
    tiered = {"local_retention_bytes": "1000", "retention_ms": "-1"}
    log = open_log(tmp_path / "orders-0", **tiered)
    fill(log, 3)
    a = _leading(mem, tmp_path / "c1", log)
    await _one_pass(a)
    assert (log.log_start_offset, log.local_log_start_offset) == (0, 40)
    off = LogConfig.from_properties(
        {
            **log.config.to_properties(),
            "remote.storage.enable": "false",
            "remote.log.delete.on.disable": "true",
        }
    )
    log.update_config(off)
    a.on_become_leader(TP, log, off, lambda: log.log_end_offset)
    mem.fail_next("delete_many", ObjectStoreError("x", "bucket down"))
    with pytest.raises(ObjectStoreError, match="bucket down"):
        await _one_pass(a)
    assert log.log_start_offset == 40
    await a.close()
    log.close()

    # Restarted with remote storage on again.
    log = open_log(tmp_path / "orders-0", **tiered)
    assert (log.log_start_offset, log.local_log_start_offset) == (40, 40)
    b = _leading(mem, tmp_path / "c2", log)
    uploader = b.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    for _ in range(2):
        await uploader.run_pass()
        assert log.log_start_offset == 40
    assert [s.base_offset for s in uploader.manifest.readable_segments()] == [40]
    assert iter_batches(await b.read(TP, 40, 100))[0][1].base_offset == 40
    await b.close()
    log.close()


async def test_delete_topic_removes_every_object(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    other = TopicPartition("keep", 0)
    other_log = open_log(tmp_path / "keep-0")
    fill(other_log, 1)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    rlm.on_become_leader(other, other_log, other_log.config, lambda: other_log.log_end_offset)
    await _one_pass(rlm, TP)
    await _one_pass(rlm, other)
    await rlm.write_topic_manifest("orders", 1, {"retention.ms": "-1"})
    deleted = await rlm.delete_topic("orders")
    assert deleted == 1 + 1 + 2 * 3  # topic.json, manifest.json, 2 x (log, index, timeindex)
    assert mem.list(f"{PREFIX}/topics/orders/") == []
    assert len(mem.list(f"{PREFIX}/topics/keep/")) == 4
    assert rlm.uploader(TP) is None


async def test_topic_manifest_is_removed_only_without_segment_objects(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    """remove_topic_manifest keeps topic.json while any segment object of the topic is in the
    bucket (an orphan that a scrub has not removed yet counts too), and is idempotent."""
    log = open_log(tmp_path / "orders-0")
    fill(log, 1)
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    await _one_pass(rlm, TP)
    await rlm.write_topic_manifest("orders", 1, {"remote.storage.enable": "false"})
    topic_json = layout.topic_manifest_key(PREFIX, "orders")

    def keys() -> list[str]:
        return [o.key for o in mem.list(layout.topic_prefix(PREFIX, "orders"))]

    assert not await rlm.remove_topic_manifest("orders")
    orphan = next(k for k in keys() if k.endswith(".log"))
    mem.delete_many([k for k in keys() if k not in (orphan, topic_json)])  # no manifest.json
    assert not await rlm.remove_topic_manifest("orders")  # an unreferenced .log is still data
    assert topic_json in keys()
    mem.delete_many([orphan])
    assert await rlm.remove_topic_manifest("orders")
    assert await rlm.remove_topic_manifest("orders")
    assert keys() == []


async def test_broker_partition_seam(
    rlm: RemoteLogManager, mem: MemoryStore, tmp_path: Path
) -> None:
    """``on_become_leader(tp, partition)`` with the broker's Partition, as ARCHITECTURE.md
    has it: uploads below the partition's last stable offset, producer snapshots included;
    ``on_stop`` is synchronous; remote.storage.enable=false partitions are left alone."""
    from tiered_mq.broker.partition import Partition
    from tiered_mq.hot.log_config import LogConfig

    config = LogConfig.from_properties({"remote.storage.enable": "true"})
    partition = Partition.open(TP, tmp_path / "orders-0", config, leader_epoch=4)
    fill(partition.log, 2)
    partition.high_watermark = 20
    rlm.on_become_leader(TP, partition)
    await _one_pass(rlm)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    [segment] = uploader.manifest.segments
    assert (segment.base_offset, segment.end_offset, segment.uploader_epoch) == (0, 19, 4)
    snapshot = segment.key("snapshot")
    assert snapshot is not None and mem.head(snapshot) is not None
    rlm.on_stop(TP)
    assert rlm.uploader(TP) is None

    off = TopicPartition("plain", 0)
    plain = Partition.open(off, tmp_path / "plain-0", LogConfig(), leader_epoch=1)
    fill(plain.log, 2)
    plain.high_watermark = plain.log_end_offset
    rlm.on_become_leader(off, plain)
    await _one_pass(rlm, off)
    assert mem.list(f"{PREFIX}/topics/plain/") == []
    await rlm.stop_partition(off)
    partition.close()
    plain.close()
