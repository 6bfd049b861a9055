"""ChunkCache: a bounded on-disk cache of fixed-size chunks of remote objects.

An object of ``size`` bytes is cut into chunks ``[i * chunk_size, (i + 1) * chunk_size)``;
each chunk is fetched with one ranged GET and kept as one file ``{sha1(key)}-{i}`` in
``cache_dir``. Chunks are evicted least recently used first, by bytes, so the directory never
holds much more than ``max_bytes`` (plus the chunks being read at that moment). Concurrent
readers of a missing chunk share one GET (single flight).

A read copies each chunk's part straight into one buffer (a cached chunk with one ranged file
read, in a worker thread; the chunks of a read in parallel) and returns a memoryview of it.
``open_range`` instead returns the chunk files themselves (``ChunkFile``: an open fd, closed
when the last FileRegion over it is dropped), fetching missing chunks in parallel, so a fetch
can be sent with sendfile and validated with bounded ``pread_range`` pieces: the bytes are
never all in memory. A chunk file is opened on the event loop right after it is known cached
(no await in between), so eviction cannot slip between the two; once open it stays readable
after eviction unlinks it (Linux keeps an unlinked open file), and nothing ever truncates or
rewrites a chunk file in place, so a fetch in flight always sends the bytes it validated.

Read-ahead for sequential replay: after a read, the chunks of the window that follows it are
fetched in the background with parallel ranged GETs (one per chunk, single flight), so a
consumer replaying a segment finds its next fetch local. The window is ``read_ahead`` chunks,
or as long as the read itself when that was longer (a filled fetch), at most a quarter of the
cache, so the chunks being read and those ahead never evict each other. ``prefetch`` lets the
reader start on the next segment when the window passes a segment's end.

Objects are immutable (layout.py never overwrites a segment key), so a cached chunk never goes
stale; a chunk file is written whole under a temporary name and renamed, never rewritten in
place. Crash behaviour: the cache is not persistent: ``cache_dir`` is emptied at start. A
chunk file corrupted on disk is caught by the caller's CRC check, which calls ``invalidate``
and reads again from the bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import weakref
from collections import OrderedDict
from pathlib import Path

from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.rate_limiter import TokenBucket
from tiered_mq.errors import CorruptRecordError, ObjectStoreError

DEFAULT_CHUNK_SIZE = 1024 * 1024


class ChunkFile:
    """A read-only fd on one chunk file, closed when the object is collected (or ``close``):
    the FileRegions of a fetch response hold it while the server sends from it."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    def fileno(self) -> int:
        if not self._finalizer.alive:
            raise ValueError("chunk file closed")
        return self._fd

    def close(self) -> None:
        self._finalizer()


def pread_range(files: dict[int, ChunkFile], chunk_size: int, lo: int, hi: int) -> bytearray:
    """Object bytes ``[lo, hi)`` read from the chunk files holding them (indexes into
    ``files``); CorruptRecordError when a chunk file is short (damaged on disk)."""
    out = bytearray(hi - lo)
    view = memoryview(out)
    pos = lo
    while pos < hi:
        index, at = divmod(pos, chunk_size)
        n = min(hi - pos, chunk_size - at)
        got = os.preadv(files[index].fileno(), [view[pos - lo : pos - lo + n]], at)
        if got != n:
            raise CorruptRecordError(f"chunk {index} short: {at + got} of {at + n} bytes")
        pos += n
    return out


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

    async def read(self, key: str, object_size: int, start: int, length: int) -> memoryview:
        """Bytes ``[start, start + length)`` of the object (fewer at its end), in one buffer.

        Each chunk's part is copied straight into the buffer (cached chunks with one ranged
        file read each, in parallel), then the read-ahead window after it is scheduled."""
        end = min(start + length, object_size)
        if start >= end:
            return memoryview(b"")
        first, last = start // self.chunk_size, (end - 1) // self.chunk_size
        out = memoryview(bytearray(end - start))
        await asyncio.gather(
            *(self._copy_chunk(key, object_size, i, out, start) for i in range(first, last + 1))
        )
        self.prefetch(key, object_size, (last + 1) * self.chunk_size, self.ahead_bytes(end - start))
        return out

    async def open_range(
        self, key: str, object_size: int, start: int, length: int
    ) -> dict[int, ChunkFile]:
        """The chunk files (by chunk index) holding ``[start, start + length)`` of the object,
        open; missing chunks are fetched in parallel (single flight). The read-ahead is the
        caller's (``prefetch``)."""
        end = min(start + length, object_size)
        if start >= end:
            return {}
        first, last = start // self.chunk_size, (end - 1) // self.chunk_size
        files = await asyncio.gather(
            *(self._open_chunk(key, object_size, i) for i in range(first, last + 1))
        )
        return dict(zip(range(first, last + 1), files, strict=True))

    async def _open_chunk(self, key: str, object_size: int, index: int) -> ChunkFile:
        entry = (key, index)
        for _ in range(3):  # evicted by other readers between the fetch and the open: again
            if entry in self._entries:
                try:  # no await between the membership test and the open
                    fd = os.open(self._path(key, index), os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    self._drop(entry)
                else:
                    self._entries.move_to_end(entry)
                    self._metrics.cache_hits.inc()
                    return ChunkFile(fd)
            data = await self._chunk(key, object_size, index)
            expected = min(self.chunk_size, object_size - index * self.chunk_size)
            if len(data) != expected:
                raise ObjectStoreError(key, f"short read of chunk {index}: {len(data)} bytes")
        raise ObjectStoreError(key, f"chunk {index} evicted before it could be opened")

    def ahead_bytes(self, length: int) -> int:
        """Read-ahead window after a read of ``length`` bytes: at least ``read_ahead`` chunks,
        as much as the read itself when it was larger (a filled sequential fetch), at most a
        quarter of the cache (the chunks being read and those ahead never evict each other)."""
        if self.read_ahead <= 0:
            return 0
        window = max(self.read_ahead * self.chunk_size, length)
        return min(window, max(self.max_bytes // 4, self.chunk_size))

    def prefetch(self, key: str, object_size: int, start: int, length: int) -> None:
        """Fetch the chunks of ``[start, start + length)`` not cached in the background, with
        parallel ranged GETs (one per chunk; a chunk already on its way is not asked twice)."""
        if length <= 0 or start >= object_size:
            return
        first = start // self.chunk_size
        last = (min(start + length, object_size) - 1) // self.chunk_size
        for i in range(first, last + 1):
            if (key, i) in self._entries or (key, i) in self._inflight:
                continue
            task = asyncio.create_task(self._prefetch(key, object_size, i))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def invalidate(self, key: str) -> None:
        """Forget every cached chunk of ``key`` (its bytes failed a check)."""
        for entry in [e for e in self._entries if e[0] == key]:
            self._drop(entry)

    async def _copy_chunk(
        self, key: str, object_size: int, index: int, out: memoryview, start: int
    ) -> None:
        """Copy chunk ``index``'s part of ``[start, start + len(out))`` into ``out``."""
        chunk_start = index * self.chunk_size
        lo, hi = max(start, chunk_start), min(start + len(out), chunk_start + self.chunk_size)
        target = out[lo - start : hi - start]
        entry = (key, index)
        if entry in self._entries:
            path = self._path(key, index)
            if await asyncio.to_thread(_read_into, path, lo - chunk_start, target):
                if entry in self._entries:  # evicted meanwhile: the bytes read are still right
                    self._entries.move_to_end(entry)
                self._metrics.cache_hits.inc()
                return
            self._drop(entry)
        data = await self._chunk(key, object_size, index)
        if len(data) < hi - chunk_start:
            raise ObjectStoreError(key, f"short read of chunk {index}: {len(data)} bytes")
        target[:] = memoryview(data)[lo - chunk_start : hi - chunk_start]

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
                if entry in self._entries:  # evicted meanwhile: the bytes read are still right
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
            await asyncio.to_thread(_write_atomically, self._path(key, index), data)
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


def _read_into(path: Path, position: int, target: memoryview) -> bool:
    """Fill ``target`` from ``path`` at ``position``; False when the file is gone or short."""
    try:
        with open(path, "rb", buffering=0) as f:
            f.seek(position)
            done = 0
            while done < len(target):
                n = f.readinto(target[done:])
                if not n:
                    return False
                done += n
    except OSError:
        return False
    return True


def _write_atomically(path: Path, data: bytes) -> None:
    """A chunk file appears whole or not at all, and is never rewritten in place."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
