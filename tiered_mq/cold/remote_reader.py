"""RemoteReader: fetches and ListOffsets-by-timestamp served from the bucket.

A read for ``offset``: manifest -> the readable segment holding it -> the segment's offset
index (fetched once, kept in a small LRU of parsed indexes) -> the position of the greatest
index entry at or below ``offset`` -> batch headers scanned forward through the chunk cache to
the batch holding ``offset`` -> whole batches from there, up to ``max_bytes`` (at least one
batch, like a local fetch, unless ``min_one=False``: a fetch's later partitions, KIP-74, get
nothing when their first batch is larger than what is left of the response, as in Kafka's
RemoteLogManager.read), by default never past the segment's end (a fetch returns data of
one segment, as in Kafka; the consumer's next fetch continues in the next one). A filled fetch
(``read_regions(..., span=True)``) goes on into the following segments while ``max_bytes`` has
room for their next batch, and starts the read-ahead of the next segment when its window
passes the end. ``read_regions`` returns a RemoteRead: FileRegions over the chunk cache's files
(one per chunk part; a batch may span two, consecutive regions concatenate), which the server
sends with sendfile, with their size and the offset after their last batch. The batches are
validated by streaming those files with pread in pieces of about ``SCAN_PIECE`` bytes (or one
batch), so a fill is never held in memory. ``read`` joins the regions' bytes for callers that
need them.

Every batch returned is checked (length, magic, CRC-32C, record.batch.validate_batch; offsets
rising within the segment's range, as the base offset is not covered by the CRC). A batch
failing the check makes the reader drop the object's cached chunks and read once more from the
bucket; if it fails again the read raises ObjectStoreError naming the object key and position:
wrong bytes are never served. The regions hold the very chunk files (open fds) that were
validated; eviction only unlinks them, so the bytes sent are the bytes checked.

Manifests: partitions this broker leads get theirs from the uploader after every write
(``manifest_updated``); others are read from the bucket and kept ``manifest_ttl_s`` seconds.
A manifest read from the bucket whose topic id is not the live topic's (``topic_ids``; a
deleted topic of the same name, manifest.py) is read as no manifest: an empty partition.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from tiered_mq.cold import layout
from tiered_mq.cold.chunk_cache import ChunkCache, ChunkFile, pread_range
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, is_foreign
from tiered_mq.cold.manifest_writer import load_manifest
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.remote_index import OffsetIndexView, TimeIndexView
from tiered_mq.errors import (
    CorruptRecordError,
    ObjectNotFoundError,
    ObjectStoreError,
    OffsetOutOfRangeError,
)
from tiered_mq.record.batch import HEADER_SIZE, BatchHeader, read_header, validate_batch
from tiered_mq.record.file_records import FileRegion
from tiered_mq.record.records import decode_batch
from tiered_mq.topic_partition import TopicPartition

_V = TypeVar("_V")
DEFAULT_INDEX_CACHE_BYTES = 64 * 1024 * 1024

SCAN_PIECE = 1024 * 1024  # bytes read at once while validating a fetch from chunk files


@dataclass(frozen=True, slots=True)
class RemoteRead:
    """A cold read: ``regions`` concatenate to ``size`` bytes of whole, validated batches;
    ``next_offset`` is one past the last offset they hold (None when they hold none)."""

    regions: list[FileRegion]
    size: int
    next_offset: int | None


class RemoteReader:
    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        cache: ChunkCache,
        metrics: RemoteMetrics,
        *,
        manifest_ttl_s: float = 5.0,
        index_cache_bytes: int = DEFAULT_INDEX_CACHE_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
        topic_ids: Callable[[str], str | None] = lambda _topic: None,
    ) -> None:
        self.store = store
        self._topic_ids = topic_ids
        self.prefix = prefix
        self.cache = cache
        self._metrics = metrics
        self._ttl = manifest_ttl_s
        self._monotonic = monotonic
        self._manifests: dict[TopicPartition, tuple[PartitionManifest | None, float, bool]] = {}
        # parsed index objects by key, least recently used first, with their object sizes
        self._indexes: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self._index_bytes = 0
        self._index_budget = index_cache_bytes

    # ---- manifests ----------------------------------------------------------------------

    def manifest_updated(self, tp: TopicPartition, manifest: PartitionManifest) -> None:
        """The leader's latest manifest (kept until ``forget``)."""
        self._manifests[tp] = (manifest, float("inf"), True)

    def forget(self, tp: TopicPartition) -> None:
        self._manifests.pop(tp, None)

    def forget_topic(self, topic: str) -> None:
        for tp in [tp for tp in self._manifests if tp.topic == topic]:
            del self._manifests[tp]

    async def manifest(self, tp: TopicPartition, *, refresh: bool = False) -> PartitionManifest:
        cached = self._manifests.get(tp)
        now = self._monotonic()
        if cached is not None and (cached[2] or (not refresh and cached[1] > now)):
            found = cached[0]
        else:
            found, _ = await load_manifest(self.store, self.prefix, tp)
            if found is not None and is_foreign(found.topic_id, self._topic_ids(tp.topic)):
                found = None  # a deleted incarnation's: nothing of it is served
            self._manifests[tp] = (found, now + self._ttl, False)
        if found is None:
            return PartitionManifest(tp.topic, tp.partition)
        return found

    async def _segment_for(self, tp: TopicPartition, offset: int) -> RemoteSegment:
        manifest = await self.manifest(tp)
        segment = manifest.segment_for_offset(offset)
        if segment is None:
            manifest = await self.manifest(tp, refresh=True)
            segment = manifest.segment_for_offset(offset)
        if segment is None:
            start = manifest.remote_log_start_offset()
            raise OffsetOutOfRangeError(
                f"{tp}: offset {offset} not in the bucket (remote log start {start}, "
                f"end {manifest.end_offset()})"
            )
        return segment

    # ---- indexes ------------------------------------------------------------------------

    async def _offset_index(self, segment: RemoteSegment) -> OffsetIndexView:
        return await self._index(segment, layout.INDEX, OffsetIndexView.parse)

    async def _time_index(self, segment: RemoteSegment) -> TimeIndexView:
        return await self._index(segment, layout.TIME_INDEX, TimeIndexView.parse)

    async def _index(
        self, segment: RemoteSegment, suffix: str, parse: Callable[[int, bytes], _V]
    ) -> _V:
        """The parsed index ``suffix`` of ``segment``, from the LRU cache or the bucket.

        The cache holds at most ``index_cache_bytes`` of index objects (Kafka's
        ``remote.log.index.file.cache.total.size.bytes``), both kinds together; the parsed
        arrays take about as much memory as the objects."""
        key = segment.key(suffix)
        if key is None:
            return parse(segment.base_offset, b"")
        cached = self._indexes.get(key)
        if cached is not None:
            self._indexes.move_to_end(key)
            return cast(_V, cached[0])  # the key's suffix fixes the kind
        data, _ = await self.store.get(key)
        view = parse(segment.base_offset, data)
        if key not in self._indexes:  # another reader may have filled it meanwhile
            self._indexes[key] = (view, len(data))
            self._index_bytes += len(data)
            while self._index_bytes > self._index_budget and len(self._indexes) > 1:
                _, (_, size) = self._indexes.popitem(last=False)
                self._index_bytes -= size
        return view

    # ---- reads --------------------------------------------------------------------------

    async def _header_at(self, segment: RemoteSegment, key: str, position: int) -> BatchHeader:
        data = await self.cache.read(key, segment.size_bytes, position, HEADER_SIZE)
        try:
            return read_header(data)
        except CorruptRecordError as e:
            raise ObjectStoreError(key, f"corrupt batch header at position {position}: {e}") from e

    async def _position_of(self, segment: RemoteSegment, key: str, offset: int) -> int:
        """Position of the batch holding ``offset`` (or the first batch after it)."""
        position = (await self._offset_index(segment)).lookup(offset)
        while position < segment.size_bytes:
            header = await self._header_at(segment, key, position)
            if header.last_offset >= offset:
                return position
            position += header.size
        return segment.size_bytes

    async def read(self, tp: TopicPartition, offset: int, max_bytes: int) -> bytes:
        """``read_regions`` read into one byte string (for callers that need the bytes)."""
        return b"".join(r.read() for r in (await self.read_regions(tp, offset, max_bytes)).regions)

    async def read_regions(
        self,
        tp: TopicPartition,
        offset: int,
        max_bytes: int,
        *,
        span: bool = False,
        min_one: bool = True,
    ) -> RemoteRead:
        """Whole batches from the one holding ``offset``: at least one (none with
        ``min_one=False`` when it is larger than ``max_bytes``), else up to ``max_bytes``, as
        FileRegions over chunk files (consecutive regions concatenate; a batch may span two).
        Without ``span`` the read stops at the end of the segment holding
        ``offset`` (as in Kafka); with it, it goes on into the next segments while
        ``max_bytes`` leaves room for their first batch. Raises OffsetOutOfRangeError when the
        bucket does not hold ``offset`` (also when remote retention deleted its segment during
        the read: an object gone and the offset no longer in the manifest), ObjectStoreError on
        a store failure or corrupt object."""
        regions: list[FileRegion] = []
        total = 0
        next_offset: int | None = None
        requested = offset
        self._metrics.fetch_requests.inc()
        self._metrics.topic(tp.topic).fetch_requests += 1
        try:
            segment = await self._segment_for(tp, offset)
            while True:
                key = segment.key(layout.LOG)
                if key is None:
                    raise ObjectStoreError(
                        layout.manifest_key(self.prefix, *tp), "segment has no .log"
                    )
                start = await self._position_of(segment, key, offset)
                if (regions or not min_one) and start < segment.size_bytes:
                    first = await self._header_at(segment, key, start)
                    if first.size > max_bytes - total:
                        break  # an oversized first batch of a later segment: the next fetch
                got, end = await self._validated_regions(segment, key, start, max_bytes - total)
                size = sum(r.length for r in got)
                regions.extend(got)
                total += size
                next_offset = end if end is not None else next_offset
                nxt = await self._next_segment(tp, segment) if span else None
                if nxt is None or total >= max_bytes:
                    self._read_ahead_across(segment, key, start + size, nxt, size)
                    break
                segment, offset = nxt, nxt.base_offset
        except OffsetOutOfRangeError:
            raise
        except ObjectNotFoundError as e:
            if (await self.manifest(tp, refresh=True)).segment_for_offset(requested) is None:
                raise OffsetOutOfRangeError(
                    f"{tp}: offset {requested} deleted from the bucket during the read"
                ) from e
            self._metrics.fetch_errors.inc()  # an object of a readable segment is lost
            self._metrics.topic(tp.topic).fetch_errors += 1
            raise
        except Exception:
            self._metrics.fetch_errors.inc()
            self._metrics.topic(tp.topic).fetch_errors += 1
            raise
        self._metrics.fetch_bytes.inc(total)
        self._metrics.topic(tp.topic).fetch_bytes += total
        return RemoteRead(regions, total, next_offset)

    async def _validated_regions(
        self, segment: RemoteSegment, key: str, start: int, max_bytes: int
    ) -> tuple[list[FileRegion], int | None]:
        """Regions of the validated whole batches from ``start`` (at least one, else up to
        ``max_bytes``), checked by streaming the chunk files in bounded pieces, and the offset
        after the last of them (None when there is none)."""
        if start >= segment.size_bytes:
            return [], None
        chunk = self.cache.chunk_size
        for attempt in (1, 2):
            try:
                first = await self._header_at(segment, key, start)
                length = min(max(max_bytes, first.size), segment.size_bytes - start)
                files = await self.cache.open_range(key, segment.size_bytes, start, length)
                end, last_offset = await asyncio.to_thread(
                    _scan, files, chunk, segment, start, start + length, max_bytes
                )
            except CorruptRecordError as e:
                self.cache.invalidate(key)
                if attempt == 2:
                    raise ObjectStoreError(key, f"corrupt object: {e}") from e
                continue
            regions = []
            pos = start
            while pos < end:
                index, at = divmod(pos, chunk)
                n = min(end - pos, chunk - at)
                regions.append(FileRegion(files[index], at, n))  # type: ignore[arg-type]
                pos += n
            return regions, last_offset + 1
        raise AssertionError("unreachable")

    async def _next_segment(
        self, tp: TopicPartition, segment: RemoteSegment
    ) -> RemoteSegment | None:
        manifest = await self.manifest(tp)
        return manifest.segment_for_offset(segment.end_offset + 1)

    def _read_ahead_across(
        self,
        segment: RemoteSegment,
        key: str,
        position: int,
        nxt: RemoteSegment | None,
        length: int,
    ) -> None:
        """Prefetch the read-ahead window after ``position``; when it passes the segment's end,
        start on the next segment's first chunks (a replay goes on there with its next fetch)."""
        window = self.cache.ahead_bytes(length)
        chunk = self.cache.chunk_size
        ahead_from = -(-position // chunk) * chunk  # the chunk after the last one read
        self.cache.prefetch(key, segment.size_bytes, ahead_from, position + window - ahead_from)
        beyond = position + window - segment.size_bytes
        next_key = nxt.key(layout.LOG) if nxt is not None else None
        if nxt is not None and next_key is not None and beyond > 0:
            self.cache.prefetch(next_key, nxt.size_bytes, 0, beyond)

    async def offset_for_timestamp(
        self,
        tp: TopicPartition,
        timestamp: int,
        log_start_offset: int = 0,
        *,
        whole_segments: bool = False,
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record in the bucket with timestamp >= ``timestamp``
        and offset >= both the manifest's and the caller's ``log_start_offset`` (the partition's,
        which a DeleteRecords raises before the next manifest version records it).

        ``whole_segments``: every record of the readable segments counts, those below the log
        start offset in the segment holding it included (ListOffsets -3: Kafka's MAX_TIMESTAMP
        counts the records of a segment that DeleteRecords left below the log start offset,
        whose timestamps the segment's max timestamp still holds)."""
        manifest = await self.manifest(tp)
        floor = 0 if whole_segments else max(manifest.log_start_offset, log_start_offset)
        for segment in manifest.offset_for_timestamp_candidates(timestamp):
            key = segment.key(layout.LOG)
            if key is None or segment.end_offset < floor:
                continue
            from_offset = max((await self._time_index(segment)).lookup(timestamp), floor)
            position = await self._position_of(segment, key, from_offset)
            while position < segment.size_bytes:
                header = await self._header_at(segment, key, position)
                if header.max_timestamp >= timestamp and header.last_offset >= from_offset:
                    if header.is_log_append_time:
                        return max(header.base_offset, from_offset), header.max_timestamp
                    regions, _ = await self._validated_regions(segment, key, position, header.size)
                    for record in decode_batch(b"".join(r.read() for r in regions))[1]:
                        if record.timestamp >= timestamp and record.offset >= from_offset:
                            return record.offset, record.timestamp
                position += header.size
        return None


def _scan(
    files: dict[int, ChunkFile],
    chunk_size: int,
    segment: RemoteSegment,
    start: int,
    end: int,
    max_bytes: int,
) -> tuple[int, int]:
    """End position and last offset of the validated whole batches in ``[start, end)`` of the
    segment (at least one, then while under ``max_bytes``), read in pieces of about
    ``SCAN_PIECE`` bytes (or one batch, if larger) from the chunk files. Raises
    CorruptRecordError."""
    pos, buf_start = start, start
    buf = bytearray()
    previous_last = segment.base_offset - 1
    while end - pos >= HEADER_SIZE:
        if pos + HEADER_SIZE > buf_start + len(buf):
            buf_start = pos
            buf = pread_range(files, chunk_size, pos, min(end, pos + SCAN_PIECE))
        header = read_header(buf, pos - buf_start)
        if pos + header.size > end:
            break
        if pos + header.size > buf_start + len(buf):
            buf_start = pos
            buf = pread_range(files, chunk_size, pos, min(end, pos + max(SCAN_PIECE, header.size)))
        try:
            validate_batch(buf, pos - buf_start)
        except CorruptRecordError as e:
            raise CorruptRecordError(f"batch at position {pos}: {e}") from e
        # the base offset is outside the CRC: offsets must rise within the segment's range
        if not previous_last < header.base_offset <= header.last_offset <= segment.end_offset:
            raise CorruptRecordError(
                f"batch at position {pos}: offsets {header.base_offset}-{header.last_offset} "
                f"outside segment {segment.base_offset}-{segment.end_offset} "
                f"(after {previous_last})"
            )
        previous_last = header.last_offset
        pos += header.size
        if pos - start >= max_bytes:
            break
    if pos == start:
        raise CorruptRecordError(f"truncated batch at position {start}")
    return pos, previous_last
