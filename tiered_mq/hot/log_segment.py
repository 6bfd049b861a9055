"""LogSegment: one ``.log`` file with its ``.index`` and ``.timeindex``; not thread-safe.

The .log holds record batches v2 back to back, exactly as appended (see record/batch.py);
byte 0 is the batch holding the segment's base offset (the file name). The segment tracks the
size of its valid bytes, its next offset, the greatest batch max timestamp and the offset of
that batch's last record (Kafka's "shallow" offset of the max timestamp).

Appends are one ``pwrite`` of whole batches at ``size``; index entries are computed per batch
header (never per record) and appended after the data. A failed write (ENOSPC, EIO) truncates
the .log and both indexes back to their previous sizes and raises KafkaStorageError, so the
segment stays readable.

Reads never copy data: ``read`` finds the batch holding an offset (offset index floor lookup,
then a short scan of 61-byte headers with ``os.pread``) and returns a FileRegion over the open
file for sendfile. The last batches appended are remembered (recent_batches.py; forgotten when
the segment is truncated, recovered or rolled): a fetch from one of them, a consumer following
the log end, reads that batch's header alone instead of scanning from the index entry.

Crash behaviour: data written but not fsynced may be lost or torn; indexes may hold entries
for lost data or a torn last entry. ``recover(validate_from)`` scans the batch headers from
byte 0, checks every batch with base offset >= ``validate_from`` with its CRC-32C, truncates
the file at the first torn or invalid batch, and rebuilds both indexes. A batch whose offsets
do not follow the previous batch's, or lie more than INT_MAX past the segment's base offset
(appends roll before that: such a base offset, which the CRC does not cover, is corrupt), is
invalid. A segment below the recovery point is trusted, and so is one that ends exactly at
it (``ends_at``: a clean shutdown's active segment); on first use its indexes are
sanity-checked and rebuilt from the headers if they fail, and a torn tail (its last batch or
header cut short: damage on disk, which Kafka's reads take as the segment's end) is
truncated.
"""

from __future__ import annotations

import io
import logging
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from tiered_mq import abandonable
from tiered_mq.errors import CorruptRecordError, KafkaStorageError, LogCorruptionError
from tiered_mq.hot import log_files
from tiered_mq.hot.header_scan import SCAN_CHUNK, scan_headers
from tiered_mq.hot.log_config import INT_MAX
from tiered_mq.hot.offset_index import OffsetIndex
from tiered_mq.hot.recent_batches import RecentBatches
from tiered_mq.hot.time_index import NO_TIMESTAMP, TimeIndex
from tiered_mq.record.batch import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    read_header,
    validate_batch,
)
from tiered_mq.record.file_records import FileRegion

log = logging.getLogger(__name__)
_LENGTH = struct.Struct(">qi")
_NO_VALIDATION = 2**63 - 1


class IndexPoints:
    """Index entries for batches appended back to back: one offset index and one time index
    entry once more than ``interval`` bytes were written since the last entry (per batch header,
    as Kafka's ``index.interval.bytes``), and the running max timestamp and its offset."""

    __slots__ = ("index_entries", "interval", "max_ts", "max_ts_offset", "since", "time_entries")

    def __init__(self, interval: int, since: int, max_ts: int, max_ts_offset: int) -> None:
        self.interval, self.since = interval, since
        self.max_ts, self.max_ts_offset = max_ts, max_ts_offset
        self.index_entries: list[tuple[int, int]] = []
        self.time_entries: list[tuple[int, int]] = []

    def add(self, position: int, header: BatchHeader, size: int) -> None:
        """A batch of ``size`` bytes written at ``position`` (offsets and max timestamp from
        ``header``)."""
        if header.max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = header.max_timestamp, header.last_offset
        if self.since > self.interval:
            self.index_entries.append((header.last_offset, position))
            self.time_entries.append((self.max_ts, self.max_ts_offset))
            self.since = 0
        self.since += size


class LogSegment:
    """A segment of a partition's log. Create with :meth:`create` or :meth:`open`."""

    def __init__(
        self, dir: Path, base_offset: int, file: io.FileIO, index_interval_bytes: int, now_ms: int
    ) -> None:
        self.dir = dir
        self.base_offset = base_offset
        self.file = file
        self._fd = file.fileno()
        self.size = os.fstat(self._fd).st_size
        self.index_interval_bytes = index_interval_bytes
        self.offset_index = OffsetIndex(log_files.offset_index_file(dir, base_offset), base_offset)
        self.time_index = TimeIndex(log_files.time_index_file(dir, base_offset), base_offset)
        self.created_ms = now_ms
        # Tail state, computed lazily for segments opened from disk.
        self._tail_known = False
        self._indexes_checked = False
        self._indexes_missing = False
        self._next_offset = base_offset
        self._max_timestamp = NO_TIMESTAMP
        self._offset_of_max_timestamp = base_offset
        self._bytes_since_last_index_entry = 0
        self._recent = RecentBatches()  # the last batches appended (see translate_offset)
        self._rolling_ts: int | None = None  # first batch's max timestamp; None: not read yet
        # ms taken off segment.ms for this segment's roll (Kafka's rollJitterMs), drawn once
        # by the log when first needed (LocalLog.roll_jitter); None: not drawn yet
        self.roll_jitter_ms: int | None = None
        self._txn_index_path: str | None = None  # for flush; computed on its first use

    @classmethod
    def create(
        cls,
        dir: Path,
        base_offset: int,
        index_interval_bytes: int,
        now_ms: int,
        index_files: bool = True,
    ) -> LogSegment:
        """A new empty segment (empty files, replacing leftovers of the same name). Without
        ``index_files`` only the ``.log`` is created, in a directory that holds no index of
        that name: each index file is created by its first entry (an absent index is an empty
        one, IndexFile), which saves a new partition two file creations."""
        fd = os.open(
            log_files.log_file(dir, base_offset), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644
        )
        if index_files:
            for path in (
                log_files.offset_index_file(dir, base_offset),
                log_files.time_index_file(dir, base_offset),
            ):
                with open(path, "wb"):
                    pass
        file = open(fd, "r+b", buffering=0)  # noqa: SIM115 (owned by the segment)
        segment = cls(dir, base_offset, file, index_interval_bytes, now_ms)
        segment._tail_known = segment._indexes_checked = True
        return segment

    @classmethod
    def open(
        cls, dir: Path, base_offset: int, index_interval_bytes: int, now_ms: int
    ) -> LogSegment:
        """An existing segment; its indexes are loaded and checked lazily."""
        fd = os.open(log_files.log_file(dir, base_offset), os.O_RDWR)
        file = open(fd, "r+b", buffering=0)  # noqa: SIM115 (owned by the segment)
        segment = cls(dir, base_offset, file, index_interval_bytes, now_ms)
        segment._indexes_missing = segment.size > 0 and not (
            segment.offset_index.path.exists() and segment.time_index.path.exists()
        )
        return segment

    @property
    def log_path(self) -> Path:
        return log_files.log_file(self.dir, self.base_offset)

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"

    # ---- tail state -------------------------------------------------------------------------

    def _check_indexes(self) -> None:
        """On first use of a segment opened from disk: rebuild its indexes when missing or
        insane, and truncate a torn tail (a header or batch cut short: a segment below the
        recovery point damaged on disk), so that ``size`` is a batch boundary and a read never
        sends the torn bytes followed by the next segment's batches."""
        if self._indexes_checked:
            return
        self._indexes_checked = True
        if self._indexes_missing or not (
            self.offset_index.is_sane(self.size) and self.time_index.is_sane()
        ):
            self.recover(_NO_VALIDATION)
        elif not self._tail_is_whole():
            removed = self.recover(_NO_VALIDATION)
            log.warning("%s: truncated a torn tail of %d bytes", self.log_path, removed)

    def _tail_is_whole(self) -> bool:
        """Whether the batches from the last offset index entry end exactly at ``size``."""
        _, position = self.offset_index.last_entry()
        try:
            for at, header in self.iter_headers(position):
                position = at + header.size
        except LogCorruptionError:
            return False
        return position == self.size

    def ends_at(self, recovery_point: int) -> bool:
        """Whether the segment's batches end exactly at ``recovery_point`` (which lies past its
        base offset): every byte of it lies below the recovery point, so it was flushed whole
        (a clean shutdown's active segment) and is trusted as a segment below the recovery
        point is (indexes and tail checked lazily, on first use). Its indexes must be there,
        sane, without an entry at or past the recovery point and with every entry the appends
        made (none missing after the last one: ``index.interval.bytes``, as IndexPoints); the
        headers are read from the last offset index entry only. Anything else (a batch at or
        past the recovery point, a header that does not follow, a torn tail, an index cut
        short) answers False: the caller recovers the segment."""
        if self._indexes_missing or self.base_offset >= recovery_point:
            return False
        if not (self.offset_index.is_sane(self.size) and self.time_index.is_sane()):
            return False
        last, position = self.offset_index.last_entry()
        if last >= recovery_point or self.time_index.last_entry()[1] >= recovery_point:
            return False
        next_offset, since = -1, 0
        try:
            for at, header in self.iter_headers(position):
                if header.magic != MAGIC or header.base_offset < next_offset:
                    return False
                if header.last_offset_delta < 0 or header.next_offset > recovery_point:
                    return False
                if since > self.index_interval_bytes:  # an entry here is missing
                    return False
                position, next_offset = at + header.size, header.next_offset
                since += header.size
        except LogCorruptionError:
            return False
        return position == self.size and next_offset == recovery_point

    def _ensure_tail(self) -> None:
        """Next offset, max timestamp and bytes since the last index entry, from the last index
        point onwards (batches before it are summarised by the time index's last entry)."""
        if self._tail_known:
            return
        self._check_indexes()
        if self._tail_known:  # recover() ran
            return
        _, position = self.offset_index.last_entry()
        max_ts, max_ts_offset = self.time_index.last_entry()
        next_offset = self.base_offset
        for _, header in self.iter_headers(position):
            if header.max_timestamp > max_ts:
                max_ts, max_ts_offset = header.max_timestamp, header.last_offset
            next_offset = header.next_offset
        self._next_offset = next_offset
        self._max_timestamp, self._offset_of_max_timestamp = max_ts, max_ts_offset
        self._bytes_since_last_index_entry = self.size - position
        self._tail_known = True

    def next_offset(self) -> int:
        """One past the last offset in the segment (the base offset when empty)."""
        self._ensure_tail()
        return self._next_offset

    def max_timestamp(self) -> int:
        """Greatest batch max timestamp in the segment, -1 when empty."""
        self._ensure_tail()
        return self._max_timestamp

    def max_timestamp_at_least(self, end_offset: int) -> int:
        """A cheap lower bound of :meth:`max_timestamp` for a segment whose offsets all lie
        below ``end_offset`` (the next segment's base offset): the exact value when the tail is
        known, else the time index's last entry read from its file alone
        (TimeIndex.peek_last_timestamp: no index loaded, no sanity check, no header scanned,
        which the first real use still does); -1 when unknown (an index missing, an empty
        segment, an entry that cannot be trusted). Every time index entry is some batch's
        max timestamp, so the segment's max timestamp is at least it: a caller may keep a
        segment by it, but must ask :meth:`max_timestamp` before acting on its age
        (retention.py). Kafka's ``maxTimestampSoFar`` starts from the same entry."""
        if self._tail_known:
            return self._max_timestamp
        if self._indexes_missing or self.size == 0:
            return NO_TIMESTAMP
        return self.time_index.peek_last_timestamp(end_offset)

    def offset_of_max_timestamp(self) -> int:
        self._ensure_tail()
        return self._offset_of_max_timestamp

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        """How long the segment has waited to be rolled, as Kafka's ``timeWaitedForRoll``:
        ``message_timestamp`` (the greatest timestamp of the records being appended) minus
        the first batch's max timestamp (``rollingBasedTimestamp``), so records stamped with
        an older time (a backfill) roll segments by their own clock; ``now_ms - created_ms``
        when the first batch carries no timestamp (or the segment is empty)."""
        if self._rolling_ts is None and self.size:
            for _, header in self.iter_headers():
                self._rolling_ts = header.max_timestamp
                break
        first = NO_TIMESTAMP if self._rolling_ts is None else self._rolling_ts
        return message_timestamp - first if first >= 0 else now_ms - self.created_ms

    def last_modified_ms(self) -> int:
        """The ``.log`` file's last modification time (ms): retention's date of a segment
        whose batches carry no timestamp."""
        return os.fstat(self._fd).st_mtime_ns // 1_000_000

    # ---- reads ------------------------------------------------------------------------------

    def iter_headers(self, position: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of every batch from ``position`` (a batch boundary) to the size
        the segment has now (header_scan.scan_headers; LogCorruptionError on a torn header)."""
        return scan_headers(self._fd, position, self.size, self._corruption)

    def _corruption(self, position: int, reason: str) -> LogCorruptionError:
        return LogCorruptionError(str(self.log_path), position, reason)

    def translate_offset(
        self, offset: int, start_position: int = 0
    ) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= ``offset``."""
        recent = self._recent.find(offset)
        if recent is not None and recent >= start_position:
            data = os.pread(self._fd, HEADER_SIZE, recent)
            if len(data) == HEADER_SIZE:  # (else the scan below reports the torn header)
                return recent, read_header(data)
        self._check_indexes()
        _, position = self.offset_index.lookup(offset)
        for pos, header in self.iter_headers(max(position, start_position)):
            if header.last_offset >= offset:
                return pos, header
        return None

    def _boundary_at_or_below(self, limit: int, known: int) -> int:
        """The greatest batch boundary <= ``limit``, scanning from the boundary ``known``."""
        if limit >= self.size:
            return self.size
        _, position = self.offset_index.lookup_by_position(limit)
        position = max(position, known)
        buf, buf_start = b"", position
        while True:
            rel = position - buf_start
            if rel + LOG_OVERHEAD > len(buf):
                buf = os.pread(self._fd, SCAN_CHUNK, position)
                buf_start, rel = position, 0
                if len(buf) < LOG_OVERHEAD:
                    return position
            _, length = _LENGTH.unpack_from(buf, rel)
            end = position + length + LOG_OVERHEAD
            if end > limit:
                return position
            position = end

    def read(
        self, start_offset: int, max_bytes: int, max_position: int, min_one_batch: bool
    ) -> tuple[int, FileRegion] | None:
        """Whole batches from the one holding ``start_offset``, at most ``max_bytes`` and ending at
        or before ``max_position`` (a batch boundary); the first batch whole if it alone exceeds
        ``max_bytes`` and ``min_one_batch``. Returns (base offset of the first batch, region)."""
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        position, header = found
        if position >= max_position:
            return None
        first_end = position + header.size
        limit = min(max_position, position + max_bytes)
        if first_end > limit:
            if not min_one_batch:
                return None
            end = first_end
        else:
            end = self._boundary_at_or_below(limit, first_end)
        return header.base_offset, FileRegion(self.file, position, end - position)  # type: ignore[arg-type]

    def find_by_timestamp(self, timestamp: int) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose max timestamp is >= ``timestamp``."""
        self._check_indexes()
        found_ts, offset = self.time_index.lookup(timestamp)
        start = offset + 1 if found_ts != NO_TIMESTAMP else self.base_offset
        found = self.translate_offset(start)
        if found is None:
            return None
        for position, header in self.iter_headers(found[0]):
            if header.max_timestamp >= timestamp:
                return position, header
        return None

    # ---- writes -----------------------------------------------------------------------------

    def append(
        self, buf: bytes | bytearray | memoryview, batches: Sequence[tuple[int, BatchHeader]]
    ) -> None:
        """Append ``batches`` (positions in ``buf``, back to back, offsets already assigned)."""
        if not batches:
            return
        self._ensure_tail()
        start = self.size
        points = IndexPoints(
            self.index_interval_bytes,
            self._bytes_since_last_index_entry,
            self._max_timestamp,
            self._offset_of_max_timestamp,
        )
        position = start
        for _, header in batches:
            points.add(position, header, header.size)
            position += header.size
        first = batches[0][0]
        data = memoryview(buf)[first : first + position - start]
        try:
            written = start
            while data:
                n = os.pwrite(self._fd, data, written)
                written += n
                data = data[n:]
            if points.index_entries:  # one entry per index.interval.bytes, not per batch
                self.offset_index.append(points.index_entries)
                self.time_index.maybe_append(points.time_entries)
        except (OSError, KafkaStorageError) as exc:
            self._undo_append(start)
            if isinstance(exc, KafkaStorageError):
                raise
            raise KafkaStorageError(f"{self.log_path}: {exc}") from exc
        self.size = position
        at = start
        for _, header in batches:
            self._recent.add(at, header.base_offset, header.last_offset)
            at += header.size
        self._next_offset = batches[-1][1].next_offset
        self._max_timestamp, self._offset_of_max_timestamp = points.max_ts, points.max_ts_offset
        self._bytes_since_last_index_entry = points.since

    def _undo_append(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self.offset_index.truncate_to_position(size)
        self.time_index.truncate_to(self._next_offset)

    def truncate_to(self, offset: int) -> int:
        """Remove the batch holding ``offset`` and every later one; returns bytes removed."""
        found = self.translate_offset(offset)
        if found is None:
            return 0
        position, header = found
        removed = self.size - position
        self._recent.clear()
        self._rolling_ts = None
        os.ftruncate(self._fd, position)
        self.size = position
        self.offset_index.truncate_to_position(position)
        self.time_index.truncate_to(header.base_offset)
        self._tail_known = False
        self._ensure_tail()
        if self._next_offset == self.base_offset and self.size == 0:
            self._max_timestamp, self._offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        return removed

    def recover(self, validate_from: int, abandon: threading.Event | None = None) -> int:
        """Rebuild the indexes from the headers, CRC-checking batches with base offset >=
        ``validate_from``; truncate at the first torn or invalid batch. Returns bytes removed.

        ``abandon`` is looked at before each read of the scan (every ``SCAN_CHUNK`` bytes, or
        every batch larger than that): once set, AbandonedError is raised before anything is
        changed (the scan writes only after its last read): the ``.log`` keeps its size, the
        index files their bytes, and the next recovery scans the segment again."""
        file_size = os.fstat(self._fd).st_size
        self._recent.clear()
        self._rolling_ts = None
        buffer, buffer_start = b"", 0

        def get(pos: int, n: int) -> memoryview:
            nonlocal buffer, buffer_start
            if pos < buffer_start or pos + n > buffer_start + len(buffer):
                abandonable.check(abandon, f"recovery of {self.log_path}")
                buffer, buffer_start = os.pread(self._fd, max(n, SCAN_CHUNK), pos), pos
            return memoryview(buffer)[pos - buffer_start : pos - buffer_start + n]

        position, next_offset = 0, self.base_offset
        points = IndexPoints(self.index_interval_bytes, 0, NO_TIMESTAMP, self.base_offset)
        while position + HEADER_SIZE <= file_size:
            header = read_header(get(position, HEADER_SIZE))
            if (
                header.magic != MAGIC
                or header.batch_length < HEADER_SIZE - LOG_OVERHEAD
                or position + header.size > file_size
                or header.base_offset < next_offset
                or header.last_offset_delta < 0
                or header.last_offset - self.base_offset > INT_MAX  # not in a 32-bit index
            ):
                break
            if header.base_offset >= validate_from:
                try:
                    validate_batch(get(position, header.size))
                except CorruptRecordError:
                    break
            points.add(position, header, header.size)
            position += header.size
            next_offset = header.next_offset
        if position < file_size:
            os.ftruncate(self._fd, position)
        self.size = position
        self.offset_index.reset([], [])
        self.offset_index.append(points.index_entries)
        self.time_index.reset([], [])
        self.time_index.maybe_append(points.time_entries)
        self._next_offset = next_offset
        self._max_timestamp, self._offset_of_max_timestamp = points.max_ts, points.max_ts_offset
        self._bytes_since_last_index_entry = points.since
        self._tail_known = self._indexes_checked = True
        return file_size - position

    def on_become_inactive(self) -> None:
        """On roll: record the final max timestamp in the time index, fsync the .log and both
        indexes (a rolled segment is below the recovery point, so recovery trusts them as
        they are), then release the write handles (and the memory of the last batches
        appended). KafkaStorageError when the disk refuses the fsync."""
        self._recent.clear()
        self._ensure_tail()
        if self.size:
            self.time_index.maybe_append([(self._max_timestamp, self._offset_of_max_timestamp)])
        self.flush()
        self.offset_index.close()
        self.time_index.close()

    def flush(self) -> None:
        """fsync the .log, both indexes and the ``.txnindex`` when there is one (its entries
        are appended by the partition, hot/transaction_index.py: a flush makes them as durable
        as the data, so the recovery point never passes an entry that is not on disk)."""
        try:
            os.fdatasync(self._fd)
            self.offset_index.flush()
            self.time_index.flush()
            self._flush_txn_index()
        except OSError as exc:
            raise KafkaStorageError(f"{self.log_path}: flush failed: {exc}") from exc

    def _flush_txn_index(self) -> None:
        path = self._txn_index_path
        if path is None:
            path = self._txn_index_path = str(log_files.txn_index_file(self.dir, self.base_offset))
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fdatasync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        self.offset_index.close()
        self.time_index.close()
        self.file.close()

    def rename_suffix(self, suffix: str) -> None:
        """Append ``suffix`` (e.g. ``.deleted``) to every file of the segment."""
        txn_index = log_files.txn_index_file(self.dir, self.base_offset)
        for path in (self.log_path, self.offset_index.path, self.time_index.path, txn_index):
            if path.exists():
                path.replace(path.with_name(path.name + suffix))
        self.offset_index.path = self.offset_index.path.with_name(
            self.offset_index.path.name + suffix
        )
        self.time_index.path = self.time_index.path.with_name(self.time_index.path.name + suffix)
        self.offset_index.close()
        self.time_index.close()

    def delete_files(self, suffix: str = "") -> None:
        """Unlink the segment's files (named with ``suffix``) and its sidecar files."""
        stem = log_files.file_name(self.base_offset)
        for ext in log_files.SEGMENT_SUFFIXES:
            (self.dir / (stem + ext + suffix)).unlink(missing_ok=True)
