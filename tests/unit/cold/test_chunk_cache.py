"""ChunkCache bounds, single flight, read-ahead; TokenBucket pacing."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

from tiered_mq.cold.chunk_cache import ChunkCache
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.rate_limiter import TokenBucket


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir())


class CountingStore(ThreadedStore):
    def __init__(self) -> None:
        super().__init__(MemoryStore.named(uuid.uuid4().hex), inline=True)
        self.ranges: list[tuple[str, int, int]] = []

    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        self.ranges.append((key, start, end_inclusive))
        await asyncio.sleep(0.001)
        return await super().get_range(key, start, end_inclusive)


async def test_reads_are_exact_and_bounded(tmp_path: Path) -> None:
    store = CountingStore()
    data = bytes(range(256)) * 40  # 10240 bytes
    await store.put("obj", data)
    cache = ChunkCache(store, tmp_path, max_bytes=4096, chunk_size=1024, read_ahead=0)
    for start, length in [(0, 10), (1000, 100), (5000, 3000), (10200, 100), (20000, 5)]:
        assert await cache.read("obj", len(data), start, length) == data[start : start + length]
    assert cache.size_bytes <= 4096
    assert await asyncio.to_thread(_dir_bytes, tmp_path) == cache.size_bytes
    fetched = len(store.ranges)
    assert await cache.read("obj", len(data), 10200, 10) == data[10200:10210]  # cached
    assert len(store.ranges) == fetched
    await cache.close()


async def test_single_flight_and_read_ahead(tmp_path: Path) -> None:
    store = CountingStore()
    data = b"z" * 8192
    await store.put("obj", data)
    cache = ChunkCache(store, tmp_path, max_bytes=1 << 20, chunk_size=1024, read_ahead=2)
    results = await asyncio.gather(*(cache.read("obj", len(data), 0, 100) for _ in range(5)))
    assert all(r == data[:100] for r in results)
    await asyncio.sleep(0.05)  # let the read-ahead finish
    assert sorted(r[1] for r in store.ranges) == [0, 1024, 2048]  # chunk 0 once, then 1 and 2
    await cache.read("obj", len(data), 1024, 2048)
    await asyncio.sleep(0.05)
    assert len(store.ranges) == 3 + 2  # chunks 1-2 were local; read-ahead fetched 3 and 4
    cache.invalidate("obj")
    assert cache.size_bytes == 0
    await cache.close()


async def test_token_bucket_paces_bytes() -> None:
    bucket = TokenBucket(100_000, burst=10_000)
    start = time.monotonic()
    for _ in range(5):
        await bucket.acquire(10_000)  # 50 KB at 100 KB/s, 10 KB burst: about 0.4 s
    elapsed = time.monotonic() - start
    assert 0.3 < elapsed < 1.5
    unlimited = TokenBucket(0)
    start = time.monotonic()
    await unlimited.acquire(10**12)
    assert time.monotonic() - start < 0.05
