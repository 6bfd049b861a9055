"""ChunkCache: a bounded on-disk cache of fixed-size chunks of remote objects.

An object of ``size`` bytes is cut into chunks ``[i * chunk_size, (i + 1) * chunk_size)``;
each chunk is fetched with one ranged GET and kept as one file ``{sha1(key)}-{i}`` in
``cache_dir``. Chunks are evicted least recently used first, by bytes, so the directory never
holds much more than ``max_bytes`` (plus the chunks being read at that moment). Concurrent
readers of a missing chunk share one GET (single flight).

Read-ahead for sequential replay: when a read reaches the last cached chunk the reader asked
for, the next ``read_ahead`` chunks are fetched in the background, so a consumer replaying a
segment from the bucket finds the next chunk local.

Objects are immutable (layout.py never overwrites a segment key), so a cached chunk never goes
stale. Crash behaviour: the cache is not persistent: ``cache_dir`` is emptied at start. A
chunk file corrupted on disk is caught by the caller's CRC check, which calls ``invalidate``
and reads again from the bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
from collections import OrderedDict
from pathlib import Path

from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.rate_limiter import TokenBucket

DEFAULT_CHUNK_SIZE = 1024 * 1024


class ChunkCache:
    def __init__(
        self,
        store: ObjectStore,
        cache_dir: Path | str,
        max_bytes: int,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        read_ahead: int = 2,
        limiter: TokenBucket | None = None,
        metrics: RemoteMetrics | None = None,
    ) -> None:
        if chunk_size <= 0 or max_bytes < chunk_size:
            raise ValueError(f"cache of {max_bytes} bytes cannot hold a {chunk_size}-byte chunk")
        self.store = store
        self.dir = Path(cache_dir)
        self.max_bytes = max_bytes
        self.chunk_size = chunk_size
        self.read_ahead = read_ahead
        self._limiter = limiter or TokenBucket(0)
        self._metrics = metrics or RemoteMetrics()
        self._entries: OrderedDict[tuple[str, int], int] = OrderedDict()  # -> chunk bytes
        self._bytes = 0
        self._inflight: dict[tuple[str, int], asyncio.Future[bytes]] = {}
        self._background: set[asyncio.Task[None]] = set()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def _path(self, key: str, index: int) -> Path:
        return self.dir / f"{hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()}-{index}"

    async def read(self, key: str, object_size: int, start: int, length: int) -> bytes:
        """Bytes ``[start, start + length)`` of the object (fewer at its end)."""
        end = min(start + length, object_size)
        if start >= end:
            return b""
        first, last = start // self.chunk_size, (end - 1) // self.chunk_size
        chunks = await asyncio.gather(
            *(self._chunk(key, object_size, i) for i in range(first, last + 1))
        )
        self._read_ahead(key, object_size, last)
        data = b"".join(chunks)
        offset = start - first * self.chunk_size
        return data[offset : offset + (end - start)]

    def invalidate(self, key: str) -> None:
        """Forget every cached chunk of ``key`` (its bytes failed a check)."""
        for entry in [e for e in self._entries if e[0] == key]:
            self._drop(entry)

    def _read_ahead(self, key: str, object_size: int, last: int) -> None:
        n_chunks = (object_size + self.chunk_size - 1) // self.chunk_size
        for i in range(last + 1, min(last + 1 + self.read_ahead, n_chunks)):
            if (key, i) in self._entries or (key, i) in self._inflight:
                continue
            task = asyncio.create_task(self._prefetch(key, object_size, i))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _prefetch(self, key: str, object_size: int, index: int) -> None:
        with contextlib.suppress(Exception):
            await self._chunk(key, object_size, index)

    async def _chunk(self, key: str, object_size: int, index: int) -> bytes:
        entry = (key, index)
        if entry in self._entries:
            try:
                data = await asyncio.to_thread(self._path(key, index).read_bytes)
            except OSError:
                self._drop(entry)
            else:
                self._entries.move_to_end(entry)
                self._metrics.cache_hits.inc()
                return data
        pending = self._inflight.get(entry)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._inflight[entry] = future
        try:
            data = await self._fetch(key, object_size, index)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning without waiters
            raise
        else:
            future.set_result(data)
            return data
        finally:
            del self._inflight[entry]

    async def _fetch(self, key: str, object_size: int, index: int) -> bytes:
        self._metrics.cache_misses.inc()
        start = index * self.chunk_size
        end = min(start + self.chunk_size, object_size) - 1
        await self._limiter.acquire(end - start + 1)
        data = await self.store.get_range(key, start, end)
        self._metrics.get_bytes.inc(len(data))
        if len(data) == end - start + 1:  # a short object is not cached (wrong size in manifest)
            await asyncio.to_thread(self._path(key, index).write_bytes, data)
            self._insert((key, index), len(data))
        return data

    def _insert(self, entry: tuple[str, int], size: int) -> None:
        if entry in self._entries:
            self._entries.move_to_end(entry)
            return
        self._entries[entry] = size
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            oldest = next(iter(self._entries))
            self._drop(oldest)
        self._metrics.cache_bytes.set(self._bytes)

    def _drop(self, entry: tuple[str, int]) -> None:
        size = self._entries.pop(entry, None)
        if size is None:
            return
        self._bytes -= size
        with contextlib.suppress(OSError):
            self._path(*entry).unlink()
        self._metrics.cache_bytes.set(self._bytes)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
