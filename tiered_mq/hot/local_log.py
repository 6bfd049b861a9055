"""LocalLog: one partition's log on local disk; synchronous, not thread-safe.

The caller (the broker's Partition) holds the partition lock around every call.

Offsets: ``log_start_offset`` is the first offset a consumer may read (it may be below the
local segments when older ones live in the object store); ``local_log_start_offset`` is the
first offset held on this disk; ``log_end_offset`` is the offset the next appended record gets.
The last segment is the active segment; appends go there and it is rolled (a new segment
started at the log end offset) *before* an append that would overflow ``segment.bytes``, or
the index, or the 32-bit relative offset, or after ``segment.ms`` (``maybe_roll``) less the
segment's jitter: as in Kafka, each segment draws once, uniformly in [0, min(segment.jitter.ms,
segment.ms)), the milliseconds taken off its roll age (``randrange``, injectable), so that
partitions created together do not all roll at once. An append
larger than ``segment.bytes`` itself fits no segment: it is refused with RECORD_LIST_TOO_LARGE
and nothing is written (Kafka's UnifiedLog.append).

Durability follows Kafka: writes go to the page cache and are fsynced by ``flush()``, on roll
and close, and as ``flush.messages`` / ``flush.ms`` ask (log_durability); the recovery point
(every offset below it is on disk) is checkpointed on roll, truncation and close, and at most
once a minute by flush. A crash loses at most unflushed data, never flushed data, and the log
always reopens readable and appendable (``open``: recovery.py). A flush fsyncs a segment's
``.txnindex`` with it (LogSegment.flush), so the recovery point passes an aborted transaction's
entry only once it is on disk; a ``.txnindex`` write that failed (a full disk:
:meth:`LocalLog.txn_index_write_failed`) holds the recovery point at that segment's base offset
until the log is reopened, so recovery re-reads the segment and its owner rebuilds the entry
(``recovered_from``; broker/txn/partition_txn.py).

Parts live in their own modules: append validation and offset assignment in ``log_append``,
fetch assembly and lookups in ``log_read``, the flush policy and checkpoint files in
``log_durability``, delayed deletion and compaction's segment swap in ``segment_removal``,
truncation and the start of new segments in ``log_truncation``, opening (checkpoints read,
tail recovered) in ``recovery``, retention rules in ``retention``. Their public names
(AppendInfo, FetchDataInfo, UnexpectedAppendOffsetError) are re-exported here.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from tiered_mq.errors import OffsetOutOfRangeError
from tiered_mq.hot import (
    log_append,
    log_dir_deletion,
    log_durability,
    log_files,
    log_read,
    log_truncation,
)
from tiered_mq.hot import retention as _retention
from tiered_mq.hot import segment_removal as _removal
from tiered_mq.hot.log_append import INT_MAX, AppendInfo, Batches, UnexpectedAppendOffsetError
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.hot.log_durability import CHECKPOINT_INTERVAL_MS, flush_due, flush_ms_due
from tiered_mq.hot.log_read import FetchDataInfo
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments
from tiered_mq.hot.recovery import open_log
from tiered_mq.record.batch import BatchHeader, iter_batches

__all__ = ["CHECKPOINT_INTERVAL_MS", "INT_MAX", "AppendInfo", "Batches", "FetchDataInfo"]
__all__ += ["LocalLog", "UnexpectedAppendOffsetError", "now_ms"]

logger = logging.getLogger(__name__)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class LocalLog:
    def __init__(
        self,
        dir: Path,
        config: LogConfig,
        segments: LogSegments,
        log_start_offset: int,
        recovery_point: int,
        on_roll: Callable[[int], None] | None,
        clock: Callable[[], int],
        randrange: Callable[[int], int] = random.randrange,
    ) -> None:
        self.dir = dir
        self.config = config
        self._segments = segments
        self.on_roll = on_roll
        # called with the new local log start offset after segments were deleted (retention,
        # DeleteRecords, the cold tier's local retention): the partition drops its producer
        # snapshots below it, as Kafka's deleteSegments deletes those of the deleted segments
        self.on_segments_deleted: Callable[[int], None] | None = None
        self.clock = clock
        self.randrange = randrange  # n -> [0, n): each segment's roll jitter (roll_jitter)
        self._log_end_offset = segments.active().next_offset()
        self.log_start_offset = log_start_offset
        # the base offset of the oldest segment whose .txnindex lacks an entry (a failed write):
        # the recovery point never passes it (txn_index_write_failed)
        self._txn_index_unwritten_from: int | None = None
        self.recovery_point = min(recovery_point, self._log_end_offset)
        # the base offset of the first segment open's recovery re-read (the one holding the
        # recovery point): its owner rebuilds the .txnindex of that segment and every later one
        self.recovered_from = segments.from_offset(self.recovery_point)[0].base_offset
        self._unflushed_messages = 0
        self._last_flush_ms = clock()
        self._last_checkpoint_ms = 0
        self._pending_deletes = _removal.PendingDeletes()
        self._checkpointed: tuple[int | None, int | None] = (None, None)
        self._closed = False
        self.created = False  # open created the first segment (see open)

    @classmethod
    def open(
        cls,
        dir: Path,
        config: LogConfig,
        on_roll: Callable[[int], None] | None = None,
        *,
        clock: Callable[[], int] = now_ms,
        sync_dir: bool = True,
        new: bool = False,
        randrange: Callable[[int], int] = random.randrange,
        abandon: threading.Event | None = None,
    ) -> LocalLog:
        """Open (creating if needed) the log in ``dir`` and recover its tail.

        A new log writes no checkpoint file (:meth:`checkpoint`: absent files read as a new
        log's values); Kafka writes none at log creation either. With ``sync_dir`` False the
        files of a new log are not fsynced here: the caller fsyncs ``dir`` (``created`` tells
        it to), as the broker does for all the partitions it creates together; a crash before
        that fsync leaves a directory the next open fills with the same empty segment
        (recovery.py). ``new``: the caller has just created ``dir``, empty (recovery.open_log
        skips its scans). Once ``abandon`` is set the recovery scan stops at its next read
        and AbandonedError is raised, the log as it was (recovery.py)."""
        dir = Path(dir)
        opened = open_log(
            dir,
            config.index_interval_bytes,
            config.remote_storage_enable,
            clock(),
            sync_dir,
            new,
            abandon,
        )
        log = cls(
            dir,
            config,
            opened.segments,
            opened.log_start_offset,
            opened.recovery_point,
            on_roll,
            clock,
            randrange,
        )
        log.created = opened.created
        log._checkpointed = opened.checkpointed
        log.checkpoint()
        return log

    # ---- state ------------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def local_log_start_offset(self) -> int:
        first = self._segments.first()
        assert first is not None
        return max(first.base_offset, self.log_start_offset)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments.active()

    def segments(self) -> list[LogSegment]:
        """Every local segment, oldest first; the last is the active segment."""
        return self._segments.all()

    def size_bytes(self) -> int:
        return self._segments.size_bytes()

    def next_segment_base(self, segment: LogSegment) -> int:
        """The offset after ``segment``'s data: the next base offset, or the log end offset."""
        return log_read.next_segment_base(self._segments, segment, self._log_end_offset)

    def update_config(self, config: LogConfig) -> None:
        self.config = config

    # ---- appends ----------------------------------------------------------------------------

    def append_as_leader(
        self,
        records: bytearray | memoryview,
        leader_epoch: int,
        batches: Batches | None = None,
    ) -> AppendInfo:
        """Assign offsets from the log end offset and append (per batch, never per record).

        ``batches`` are ``(position, header)`` pairs already validated by the caller; without
        them every batch is validated (CorruptRecordError, nothing appended). Rewrites only the
        base offset and leader epoch of each batch, plus, when ``message.timestamp.type`` is
        LogAppendTime, the max timestamp and timestamp-type bit (and so the CRC).
        """
        if batches is None:
            batches = iter_batches(records, validate=True)
        log_append.check_batches(records, batches, self.config.max_message_bytes)
        now = self.clock()
        assigned, append_time = log_append.assign_leader_offsets(
            records, batches, self._log_end_offset, leader_epoch, self.config, now
        )
        return self._append(records, assigned, now, append_time)

    def append_as_follower(self, records: bytearray | memoryview | bytes) -> AppendInfo:
        """Append batches with the offsets and epochs they carry (replication)."""
        batches = iter_batches(records, validate=True)
        log_append.check_batches(records, batches, self.config.max_message_bytes)
        log_append.check_follower_offsets(batches, self._log_end_offset)
        return self._append(records, batches, self.clock(), -1)

    def _append(
        self, records: bytes | bytearray | memoryview, batches: Batches, now: int, append_time: int
    ) -> AppendInfo:
        last = batches[-1][1]
        size = batches[-1][0] + last.size - batches[0][0]
        log_append.check_segment_size(size, self.config.segment_bytes, self.dir.name)
        info = log_append.append_info(batches, size, append_time)
        active = self.active_segment
        if log_append.must_roll(
            active,
            self.config,
            size,
            len(batches),
            last.last_offset,
            now,
            info.max_timestamp,
            self.roll_jitter(active),
        ):
            active = self.roll()
        active.append(records, batches)
        self._log_end_offset = last.next_offset
        self._unflushed_messages += info.records_count
        if flush_due(self.config, self._unflushed_messages, self._last_flush_ms, now):
            self.flush()
        return info

    # ---- roll -------------------------------------------------------------------------------

    def maybe_roll(self, now_ms: int) -> bool:
        """Roll when the active segment is non-empty and older than ``segment.ms`` (on a
        compacted log: or ``max.compaction.lag.ms``, LogConfig.max_segment_ms) less its
        jitter."""
        self._pending_deletes.delete_expired(now_ms)
        active = self.active_segment
        age = now_ms - active.created_ms
        if active.size > 0 and age >= self.config.max_segment_ms - self.roll_jitter(active):
            self.roll()
            return True
        return False

    def roll_jitter(self, segment: LogSegment) -> int:
        """``segment``'s roll jitter, drawn on first use from the config of that moment
        (Kafka draws it when the segment is created or loaded, LogConfig.randomSegmentJitter);
        a segment opened again after a restart draws anew, as in Kafka."""
        jitter = segment.roll_jitter_ms
        if jitter is None:
            jitter = segment.roll_jitter_ms = self.config.random_segment_jitter(self.randrange)
        return jitter

    def roll(self) -> LogSegment:
        """Seal the active segment (fsynced) and start a new one at the log end offset; then
        call ``on_roll(new_base_offset)``. No-op when the active segment is empty."""
        active = self.active_segment
        if active.size == 0:
            return active
        active.on_become_inactive()  # fsyncs it
        new_base = self._log_end_offset
        segment = self._start_segment(new_base)
        self._set_recovery_point(max(self.recovery_point, new_base))
        self.checkpoint()
        if self.on_roll is not None:
            self.on_roll(new_base)
        return segment

    # ---- durability -------------------------------------------------------------------------

    def flush(self) -> None:
        """fsync every segment holding data past the recovery point; advance the recovery point."""
        log_durability.flush_segments(self._segments, self.recovery_point, self._log_end_offset)
        self._set_recovery_point(self._log_end_offset)
        self._unflushed_messages = 0
        self._last_flush_ms = now = self.clock()
        if now - self._last_checkpoint_ms >= CHECKPOINT_INTERVAL_MS:
            self.checkpoint()

    def maybe_flush(self, now_ms: int) -> bool:
        """Flush when ``flush.ms`` has passed since the last flush (for a periodic task)."""
        if flush_ms_due(self.config, self._last_flush_ms, now_ms):
            self.flush()
            return True
        return False

    @property
    def txn_index_unwritten_from(self) -> int | None:
        """The base offset of the oldest segment whose ``.txnindex`` lacks an entry (a write
        failed since the log was opened: txn_index_write_failed), None when there is none;
        the cold tier uploads no segment from there on."""
        return self._txn_index_unwritten_from

    def _set_recovery_point(self, offset: int) -> None:
        """Move the recovery point to ``offset``, but never past the base offset of a segment
        whose ``.txnindex`` lacks an entry (txn_index_write_failed)."""
        unwritten = self._txn_index_unwritten_from
        self.recovery_point = offset if unwritten is None else min(offset, unwritten)

    def txn_index_write_failed(self, segment_base: int) -> None:
        """The ``.txnindex`` of the segment at ``segment_base`` could not be written (a full
        disk): from now until the log is reopened, the recovery point stays at or below
        ``segment_base``, so the next open re-reads that segment and rebuilds its entries from
        the log's markers (Kafka takes the log directory offline instead; here the aborted
        transaction is kept in memory and reads stay right meanwhile)."""
        unwritten = self._txn_index_unwritten_from
        if unwritten is None or segment_base < unwritten:
            self._txn_index_unwritten_from = segment_base
        if self.recovery_point > segment_base:
            self.recovery_point = segment_base
            self.checkpoint()

    def checkpoint(self) -> None:
        """Write the recovery point and log start offset checkpoint files, unless the next
        open would take the log's values from them as they are. An absent (or unreadable) file
        reads as recovery point 0 and log start offset at the first local segment (recovery.py
        open_log), so a new log writes neither until one of them moves or its first segment
        goes; a log whose files were lost rewrites them only then (a full disk does not stop
        its open)."""
        state = (self.recovery_point, self.log_start_offset)
        recovery_point, log_start = self._checkpointed
        first = self._segments.first()
        as_reopened = (
            0 if recovery_point is None else recovery_point,
            first.base_offset if log_start is None and first is not None else log_start,
        )
        if state != as_reopened:
            log_durability.write_checkpoints(self.dir, self.recovery_point, self.log_start_offset)
            self._checkpointed = state
        self._last_checkpoint_ms = self.clock()

    # ---- reads ------------------------------------------------------------------------------

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> FetchDataInfo:
        """Whole batches from the batch holding ``start_offset`` (may span segments).

        At most ``max_bytes`` unless the first batch alone is larger and ``min_one_batch``;
        only batches below ``max_offset`` (exclusive, e.g. the high watermark). Raises
        OffsetOutOfRangeError below the local log start offset or above the log end offset.
        """
        return log_read.read_batches(
            self._segments,
            start_offset,
            max_bytes,
            max_offset,
            self.local_log_start_offset,
            self._log_end_offset,
            min_one_batch,
        )

    def iter_batch_headers(
        self, from_offset: int = 0, below_log_start: bool = False
    ) -> Iterator[BatchHeader]:
        """Headers of every batch from the one holding ``from_offset`` to the log end; never
        below the local log start offset, unless ``below_log_start``: then from the first
        local segment's base, so that the batches DeleteRecords left below the log start
        offset in a segment still held are read too (ListOffsets -3 may answer them)."""
        first = self._segments.first()
        assert first is not None
        floor = first.base_offset if below_log_start else self.local_log_start_offset
        return log_read.iter_batch_headers(self._segments, max(from_offset, floor))

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first local record at or above the log start offset
        whose timestamp is >= ``timestamp`` (one batch decoded; not a hot path: ListOffsets)."""
        return log_read.offset_for_timestamp(self._segments, timestamp, self.log_start_offset)

    def offset_of_max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first local record with the greatest timestamp."""
        return log_read.offset_of_max_timestamp(self._segments)

    # ---- truncation and retention -----------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Remove every batch holding an offset >= ``offset`` (a follower's truncation). The log
        end offset becomes the start of the batch holding ``offset`` (<= ``offset``); at or
        below the local log start offset, truncates fully (crash behaviour: log_truncation)."""
        if offset >= self._log_end_offset:
            return
        if offset <= self.local_log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return
        self._log_end_offset = log_truncation.truncate_to(
            self._segments, offset, self.local_log_start_offset, self._remove
        )
        self.recovery_point = min(self.recovery_point, self._log_end_offset)
        self.checkpoint()
        self._pending_deletes.delete_expired(self.clock())

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start an empty one at ``offset`` (also the log start)."""
        log_truncation.truncate_fully(self._segments, offset, self._remove, self._start_segment)
        self._log_end_offset = self.log_start_offset = self.recovery_point = offset
        self._txn_index_unwritten_from = None  # its segment is gone
        self.checkpoint()
        self._pending_deletes.delete_expired(self.clock())

    def set_log_start_offset(self, offset: int) -> None:
        """Raise the log start offset (DeleteRecords, remote retention). With remote storage the
        cold tier may also lower it to the first offset it holds. Segments wholly below it
        become retention candidates."""
        if offset > self._log_end_offset:
            raise OffsetOutOfRangeError(
                f"log start offset {offset} above log end offset {self._log_end_offset}"
            )
        if offset > self.log_start_offset or self.config.remote_storage_enable:
            self.log_start_offset = offset
            self.checkpoint()

    def retention_candidates(
        self,
        now_ms: int,
        retention_ms: int,
        retention_bytes: int,
        upper_bound_offset: int | None = None,
    ) -> list[LogSegment]:
        """Oldest segments past ``retention_ms`` or beyond ``retention_bytes``, or wholly below
        the log start offset (retention.deletable_segments); the active segment among them
        when it holds data and breaches the time or size rule. Only segments whose data is
        all below ``upper_bound_offset`` (the first offset not yet uploaded) when given."""
        return _retention.deletable_segments(
            self._segments.all(),
            now_ms,
            retention_ms,
            retention_bytes,
            self.log_start_offset,
            upper_bound_offset,
        )

    def apply_retention(
        self, now_ms: int, upper_bound_offset: int | None = None
    ) -> list[LogSegment]:
        """Delete what the config's retention allows: with ``remote.storage.enable`` the local
        retention settings bound by ``upper_bound_offset``, else (or with
        ``remote.log.copy.disable``) retention.ms/bytes. An active segment that breaches them
        is rolled first, as Kafka does: deleted at once when nothing bounds it, else left for
        the uploader (and deleted by a later pass)."""
        limits = _retention.retention_limits(self.config, upper_bound_offset)
        if limits is None:
            return []
        candidates = self.retention_candidates(now_ms, *limits)
        segments = self._segments.all()
        if (candidates and candidates[-1] is segments[-1]) or _retention.must_roll_active(
            segments, candidates, now_ms, limits[0], limits[1]
        ):
            logger.info("%s: rolling the active segment, which breaches retention", self.dir.name)
            self.roll()
        return self.delete_segments(candidates)

    def delete_segments(
        self, which: Sequence[LogSegment] | Callable[[LogSegment], bool]
    ) -> list[LogSegment]:
        """Delete the oldest consecutive segments in ``which`` (a list, or a predicate), never
        the active segment. Files are renamed ``.deleted`` now and removed after
        ``file.delete.delay.ms`` (reads in flight keep working meanwhile); then
        ``on_segments_deleted`` is called with the new local log start offset."""
        deleted = _removal.oldest_prefix(self._segments.all(), which)
        for segment in deleted:
            self._remove(segment, delay=True)
        if deleted:
            log_files.fsync_dir(self.dir)
            if not self.config.remote_copy_enabled:  # Kafka's incrementStartOffset
                self.log_start_offset = self.local_log_start_offset
            unwritten = self._txn_index_unwritten_from
            if unwritten is not None and unwritten < self.local_log_start_offset:
                self._txn_index_unwritten_from = None  # its segment is gone
            self.checkpoint()
            if self.on_segments_deleted is not None:
                self.on_segments_deleted(self.local_log_start_offset)
        self._pending_deletes.delete_expired(self.clock())
        return deleted

    def replace_segments(self, old: Sequence[LogSegment], new_base: int) -> LogSegment:
        """Swap compaction output in for ``old`` (Kafka's ``replaceSegments``); returns it.

        ``old`` are consecutive non-active segments of this log, oldest first, and
        ``new_base == old[0].base_offset``; ``<new_base>.log.swap`` (and optionally
        ``.index.swap``, ``.timeindex.swap``, ``.txnindex.swap``) are written and fsynced by
        the caller and hold exactly the surviving batches of ``old``. The old segments leave
        the map and are deleted after ``file.delete.delay.ms``; the swap files are installed
        (crash behaviour: see segment_removal).
        """
        _removal.check_replacement(self._segments, old, new_base)
        for segment in old:
            self._remove(segment, delay=True)
        _removal.install_swap_files(self.dir, new_base)
        segment = LogSegment.open(
            self.dir, new_base, self.config.index_interval_bytes, self.clock()
        )
        self._segments.add(segment)
        return segment

    def _remove(self, segment: LogSegment, delay: bool = False) -> None:
        """Take ``segment`` out of the map; its files are renamed ``.deleted`` now and removed
        after ``file.delete.delay.ms`` (``delay``), else at the next ``delete_expired``."""
        self._segments.remove(segment.base_offset)
        deadline = self.clock() + (self.config.file_delete_delay_ms if delay else 0)
        self._pending_deletes.schedule(segment, deadline)

    def _start_segment(self, base_offset: int) -> LogSegment:
        """A new empty segment at ``base_offset`` (the log end offset), in the map and on disk."""
        interval = self.config.index_interval_bytes
        return log_truncation.start_segment(
            self.dir, self._segments, base_offset, interval, self.clock()
        )

    # ---- lifecycle --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Closed or deleted: nothing may be appended or read any more."""
        return self._closed

    def close(self) -> None:
        """Flush, checkpoint and close every file."""
        if self._closed:
            return
        self.flush()
        self.checkpoint()
        self._close_files()

    def close_unflushed(self) -> None:
        """Close every file without a flush or a checkpoint: an open given up after the
        recovery (Partition.open abandoned), whose checkpoints stay as they were so that the
        next open recovers the same tail again."""
        self._close_files()

    def delete(self) -> Path | None:
        """Topic deletion: close every file (nothing is flushed) and rename the directory to
        its ``-delete`` name, durably (log_dir_deletion.py); returns that path for the caller
        to remove, None when the directory was gone. Raises OSError when the rename fails:
        the log is closed all the same and the directory keeps its name."""
        try:
            self._close_files()
        except OSError:  # the directory goes all the same, and what is left in it with it
            logger.exception("%s: closing the log for deletion failed", self.dir)
            self._closed = True
        return log_dir_deletion.rename_for_deletion(self.dir)

    def _close_files(self) -> None:
        self._pending_deletes.delete_expired(LONG_MAX)
        for segment in self._segments:
            segment.close()
        self._closed = True
