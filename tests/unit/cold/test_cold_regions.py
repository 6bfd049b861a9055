"""Cold reads as FileRegions over the chunk cache's files: the bytes equal the local log's, cut
at whole batches within max_bytes; corrupt chunks are re-read, corrupt objects refused; a
region pinned for a send keeps its bytes when its chunk file is evicted and written anew."""

from __future__ import annotations

import gc
import os
import uuid
from pathlib import Path

import pytest

from tests.unit.cold.helpers import fill, local_bytes, open_log, tiered_rlm
from tiered_mq.cold.chunk_cache import ChunkFile
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.errors import ObjectStoreError
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.file_records import FileRegion
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("regions", 0)
CHUNK = 512


async def tiered(tmp_path: Path, cache_bytes: int = 1 << 20) -> tuple[RemoteLogManager, LocalLog]:
    log = open_log(tmp_path / "regions-0")
    fill(log, 4, batches_per_segment=8, records_per_batch=6)
    rlm = await tiered_rlm(
        ThreadedStore(MemoryStore.named(uuid.uuid4().hex), inline=True),
        TP,
        log,
        tmp_path / "cache",
        cache_bytes,
        CHUNK,
    )
    return rlm, log


def joined(regions: list[FileRegion]) -> bytes:
    return b"".join(r.read() for r in regions)


@pytest.mark.parametrize("offset", [0, 17, 40])
@pytest.mark.parametrize("max_bytes", [1, 700, 3000, 1 << 20])
async def test_regions_hold_the_local_logs_whole_batches(
    tmp_path: Path, offset: int, max_bytes: int
) -> None:
    rlm, log = await tiered(tmp_path)
    read = await rlm.read_regions(TP, offset, max_bytes, span=True)
    regions = read.regions
    data = joined(regions)
    batches = iter_batches(data)
    assert read.size == len(data)
    assert read.next_offset == batches[-1][1].next_offset
    assert batches[0][1].base_offset <= offset <= batches[0][1].last_offset
    assert data == local_bytes(log, batches[0][1].base_offset)[: len(data)]
    assert sum(b.size for _, b in batches) == len(data)  # cut at a batch boundary
    assert len(data) <= max(max_bytes, batches[0][1].size)
    for r in regions:  # regions over chunk files, within one chunk each
        assert isinstance(r.file, ChunkFile)
        assert r.length > 0 and r.position + r.length <= CHUNK
    if max_bytes == 1 << 20:  # everything uploaded, across segments
        assert data == local_bytes(log, batches[0][1].base_offset)
    if max_bytes >= 3000:
        assert max_bytes == 1 << 20 or len(data) > max_bytes - 300  # filled, across segments
        ends = set()
        pos = 0
        for _, b in batches:
            pos += b.size
            ends.add(pos)
        cuts = {sum(r.length for r in regions[: i + 1]) for i in range(len(regions) - 1)}
        assert cuts - ends  # some batch spans two chunk files
    await rlm.close()
    log.close()


async def test_corrupt_cached_chunk_is_read_again_from_the_bucket(tmp_path: Path) -> None:
    rlm, log = await tiered(tmp_path)
    expected = joined((await rlm.read_regions(TP, 0, 3000, span=True)).regions)
    files = sorted(p for p in rlm.cache.dir.iterdir() if not p.name.endswith(".tmp"))
    for path in files:  # damage every cached chunk on disk
        with open(path, "r+b") as f:
            f.seek(100)
            f.write(b"\xff" * 8)
    assert joined((await rlm.read_regions(TP, 0, 3000, span=True)).regions) == expected
    await rlm.close()
    log.close()


async def test_corrupt_object_in_a_later_segment_is_refused(tmp_path: Path) -> None:
    rlm, log = await tiered(tmp_path)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    key = uploader.manifest.segments[1].key("log")
    assert key is not None
    store = rlm.reader.store
    assert isinstance(store, ThreadedStore)
    mem = store.sync
    assert isinstance(mem, MemoryStore)
    mem.corrupt(key, 100)
    with pytest.raises(ObjectStoreError) as info:
        await rlm.read_regions(TP, 0, 1 << 20, span=True)
    assert info.value.key == key
    await rlm.close()
    log.close()


async def test_pinned_regions_keep_their_bytes_through_eviction(tmp_path: Path) -> None:
    rlm, log = await tiered(tmp_path, cache_bytes=8 * CHUNK)
    regions = (await rlm.read_regions(TP, 0, 3000, span=True)).regions
    expected = local_bytes(log, 0)[: sum(r.length for r in regions)]
    pinned = [(os.dup(r.file.fileno()), r) for r in regions]  # as server.py pins a response
    try:
        uploader = rlm.uploader(TP)
        assert uploader is not None
        for segment in uploader.manifest.segments:
            key = segment.key("log")
            assert key is not None
            rlm.cache.invalidate(key)  # evicted: the chunk files are unlinked
        # other reads fill the cache (evicting again) and write the same paths anew
        for offset in (90, 150, 0, 40):
            await rlm.read_regions(TP, offset, 3000, span=True)
        sent = b"".join(os.pread(fd, r.length, r.position) for fd, r in pinned)
        assert sent == expected
        assert joined(regions) == expected
        assert rlm.cache.size_bytes <= 8 * CHUNK
    finally:
        for fd, _ in pinned:
            os.close(fd)
    await rlm.close()
    log.close()


async def test_chunk_files_close_with_their_last_region(tmp_path: Path) -> None:
    rlm, log = await tiered(tmp_path)
    regions = (await rlm.read_regions(TP, 0, 3000, span=True)).regions
    opened = {}
    for r in regions:
        st = os.fstat(r.file.fileno())
        opened[r.file.fileno()] = (st.st_dev, st.st_ino)
    del regions, r
    gc.collect()
    for fd, identity in opened.items():
        try:  # closed; or its number already reused for another file (a read-ahead's)
            st = os.fstat(fd)
        except OSError:
            continue
        assert (st.st_dev, st.st_ino) != identity, f"fd {fd} still open on its chunk file"
    await rlm.close()
    log.close()
