"""Sequential replay from the bucket: each byte is fetched from the store once (read-ahead
included, across segment ends), filled reads span segments within max_bytes, the fetch cap."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.unit.cold.helpers import fill, local_bytes, open_log, tiered_rlm
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("replay", 0)
CHUNK = 512


class RangeCountingStore(ThreadedStore):
    def __init__(self) -> None:
        super().__init__(MemoryStore.named(uuid.uuid4().hex), inline=True)
        self.ranges: list[tuple[str, int, int]] = []
        self.gets: list[str] = []

    async def get(self, key: str) -> tuple[bytes, str]:
        self.gets.append(key)
        return await super().get(key)

    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        self.ranges.append((key, start, end_inclusive))
        return await super().get_range(key, start, end_inclusive)

    def log_bytes_fetched(self) -> int:
        return sum(e - s + 1 for k, s, e in self.ranges if k.endswith(".log"))


@pytest.fixture
def store() -> RangeCountingStore:
    return RangeCountingStore()


async def tiered(
    store: RangeCountingStore, tmp_path: Path, cache_bytes: int = 1 << 20, **kw: int
) -> tuple[RemoteLogManager, LocalLog]:
    log = open_log(tmp_path / "replay-0")
    fill(log, 5, batches_per_segment=8, records_per_batch=6)
    rlm = await tiered_rlm(store, TP, log, tmp_path / "cache", cache_bytes, CHUNK, **kw)
    return rlm, log


@pytest.fixture
async def rlm_log(
    store: RangeCountingStore, tmp_path: Path
) -> AsyncIterator[tuple[RemoteLogManager, LocalLog]]:
    rlm, log = await tiered(store, tmp_path, read_ahead_chunks=2)
    yield rlm, log
    await rlm.close()
    log.close()


async def settle(rlm: RemoteLogManager) -> None:
    for _ in range(50):
        await asyncio.sleep(0)
    await asyncio.gather(*rlm.cache._background)


async def replay(rlm: RemoteLogManager, max_bytes: int, span: bool) -> tuple[bytes, int]:
    end = rlm.highest_uploaded_offset(TP) + 1
    offset, out, fetches = 0, bytearray(), 0
    while offset < end:
        read = await rlm.read_regions(TP, offset, max_bytes, span=span)
        data = b"".join(r.read() for r in read.regions)
        assert read.size == len(data) <= max(max_bytes, iter_batches(data)[0][1].size)
        out += data
        assert read.next_offset == iter_batches(data)[-1][1].next_offset
        offset = read.next_offset
        fetches += 1
        await asyncio.sleep(0)  # the consumer's turn: read-ahead runs meanwhile
    return bytes(out), fetches


@pytest.mark.parametrize(("max_bytes", "span"), [(300, False), (2000, True), (5000, True)])
async def test_replay_fetches_each_byte_once(
    rlm_log: tuple[RemoteLogManager, LocalLog],
    store: RangeCountingStore,
    max_bytes: int,
    span: bool,
) -> None:
    rlm, log = rlm_log
    data, _ = await replay(rlm, max_bytes, span)
    await settle(rlm)
    uploaded = sum(s.size_bytes for s in rlm.reader._manifests[TP][0].readable_segments())  # type: ignore[union-attr]
    assert data == local_bytes(log, 0)[: len(data)] and len(data) == uploaded
    # read-ahead included (it crosses segment ends), no byte of a .log is fetched twice
    assert store.log_bytes_fetched() == uploaded
    keys = {k for k, _, _ in store.ranges}
    assert len(store.ranges) == sum(-(-size // CHUNK) for size in _sizes(rlm, keys))


def _sizes(rlm: RemoteLogManager, keys: set[str]) -> list[int]:
    manifest = rlm.reader._manifests[TP][0]
    assert manifest is not None
    return [s.size_bytes for s in manifest.readable_segments() if s.key("log") in keys]


@pytest.mark.parametrize(("budget", "kept"), [(1 << 20, True), (1, False)])
async def test_index_cache_holds_index_objects_up_to_its_byte_budget(
    store: RangeCountingStore, tmp_path: Path, budget: int, kept: bool
) -> None:
    """A second replay finds every .index in the cache when they fit the budget, and fetches
    them all again when the budget holds only the last one."""
    rlm, log = await tiered(store, tmp_path, index_cache_bytes=budget)
    try:
        await replay(rlm, 300, span=False)
        first = [k for k in store.gets if k.endswith(".index")]
        await replay(rlm, 300, span=False)
        both = [k for k in store.gets if k.endswith(".index")]
        assert len(set(first)) == len(first) == len(_sizes(rlm, {k[:-5] + "log" for k in first}))
        assert both == (first if kept else first + first)
        assert rlm.reader._index_bytes <= budget or len(rlm.reader._indexes) == 1
    finally:
        await rlm.close()
        log.close()


async def test_spanning_read_stays_within_max_bytes(
    rlm_log: tuple[RemoteLogManager, LocalLog],
) -> None:
    rlm, log = rlm_log
    manifest = rlm.reader._manifests[TP][0]
    assert manifest is not None
    first = manifest.readable_segments()[0]
    # one byte past the segment leaves no room for the next segment's first batch
    read = await rlm.read_regions(TP, 0, first.size_bytes + 1, span=True)
    assert read.size == sum(r.length for r in read.regions) == first.size_bytes
    assert read.next_offset == first.end_offset + 1
    for max_bytes in (first.size_bytes + 600, first.size_bytes * 2 + 100, 1 << 20):
        read = await rlm.read_regions(TP, 0, max_bytes, span=True)
        data = b"".join(r.read() for r in read.regions)
        assert first.size_bytes < len(data) <= max_bytes
        assert read.next_offset == iter_batches(data)[-1][1].next_offset
        assert data == local_bytes(log, 0)[: len(data)]
        batches = iter_batches(data)
        assert [b.next_offset for _, b in batches[:-1]] == [b.base_offset for _, b in batches[1:]]
    # without span a read stops at the segment's end, as in Kafka
    assert len(await rlm.read(TP, 0, 1 << 20)) == first.size_bytes


async def test_fetch_cap_is_bounded_by_the_cache(store: RangeCountingStore, tmp_path: Path) -> None:
    rlm, log = await tiered(store, tmp_path, cache_bytes=8192, fetch_max_bytes=1 << 20)
    assert rlm.fetch_max_bytes == 4096  # half the cache (a fill pins its chunk files)
    assert rlm.cache.ahead_bytes(100) == 2 * CHUNK  # read_ahead chunks (default 2)
    assert rlm.cache.ahead_bytes(1 << 20) == 2048  # a big read: as much ahead, cache / 4
    await rlm.close()
    log.close()
    rlm, log = await tiered(store, tmp_path / "2", cache_bytes=1 << 20, fetch_max_bytes=3000)
    assert rlm.fetch_max_bytes == 3000
    await rlm.close()
    log.close()
