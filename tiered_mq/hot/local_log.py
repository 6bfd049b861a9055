"""LocalLog: one partition's log on local disk; synchronous, not thread-safe.

The caller (the broker's Partition) holds the partition lock around every call.

Offsets: ``log_start_offset`` is the first offset a consumer may read (it may be below the
local segments when older ones live in the object store); ``local_log_start_offset`` is the
first offset held on this disk; ``log_end_offset`` is the offset the next appended record gets.
The last segment is the active segment; appends go there and it is rolled (a new segment
started at the log end offset) *before* an append that would overflow ``segment.bytes``, or
the index, or the 32-bit relative offset, or after ``segment.ms`` (``maybe_roll``).

Durability follows Kafka: writes go to the page cache and are fsynced only by ``flush()``, on
roll (the rolled segment), on ``close()``, and after ``flush.messages`` records or ``flush.ms``
when those are set. The recovery point (all offsets below it are on disk) is kept in the file
``recovery-point-offset-checkpoint``; it is written on roll, truncation and close, and at most
once a minute by flush. On open, ``recovery.recover_log`` validates batches past the recovery
point (see recovery.py): a crash loses at most unflushed data, never flushed data, and the log
always reopens readable and appendable.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tiered_mq.errors import (
    CorruptRecordError,
    InvalidTimestampError,
    KafkaError,
    KafkaStorageError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    UnknownServerError,
)
from tiered_mq.hot import log_files
from tiered_mq.hot import retention as _retention
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments
from tiered_mq.hot.recovery import recover_log
from tiered_mq.record.batch import (
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    assign_offset_and_epoch,
    iter_batches,
    set_log_append_time,
)
from tiered_mq.record.file_records import FileRegion
from tiered_mq.record.records import decode_batch

INT_MAX = 2**31 - 1
CHECKPOINT_INTERVAL_MS = 60_000

Batches = Sequence[tuple[int, BatchHeader]]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class UnexpectedAppendOffsetError(KafkaError):
    """A follower append whose first offset is below the log end offset (UNKNOWN_SERVER_ERROR
    on the wire, as in Kafka)."""

    errno = UnknownServerError.errno


@dataclass(frozen=True, slots=True)
class AppendInfo:
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    valid_bytes: int
    log_append_time_ms: int = -1  # the broker's time when message.timestamp.type=LogAppendTime
    records_count: int = 0


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """Whole batches to send; ``first_offset`` is the base offset of the first batch (<= the
    fetch offset), or the fetch offset itself when nothing is returned."""

    first_offset: int
    regions: list[FileRegion] = field(default_factory=list)
    size: int = 0


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
    ) -> None:
        self.dir = dir
        self.config = config
        self._segments = segments
        self.on_roll = on_roll
        self.clock = clock
        active = segments.last()
        assert active is not None
        self._log_end_offset = active.next_offset()
        self.log_start_offset = log_start_offset
        self.recovery_point = min(recovery_point, self._log_end_offset)
        self._unflushed_messages = 0
        self._last_flush_ms = clock()
        self._last_checkpoint_ms = 0
        self._pending_deletes: list[tuple[int, LogSegment]] = []
        self._checkpointed: tuple[int | None, int | None] = (None, None)
        self._closed = False

    @classmethod
    def open(
        cls,
        dir: Path,
        config: LogConfig,
        on_roll: Callable[[int], None] | None = None,
        *,
        clock: Callable[[], int] = now_ms,
    ) -> LocalLog:
        """Open (creating if needed) the log in ``dir`` and recover its tail."""
        dir = Path(dir)
        dir.mkdir(parents=True, exist_ok=True)
        recovery_point = log_files.read_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT)
        start = log_files.read_checkpoint(dir / log_files.LOG_START_OFFSET_CHECKPOINT)
        result = recover_log(
            dir, recovery_point or 0, start or 0, config.index_interval_bytes, clock()
        )
        first = result.segments.first()
        assert first is not None
        log_start = first.base_offset if start is None else start
        if not config.remote_storage_enable:
            log_start = max(log_start, first.base_offset)
        log = cls(dir, config, result.segments, log_start, recovery_point or 0, on_roll, clock)
        log.log_start_offset = min(log.log_start_offset, log.log_end_offset)
        log._checkpointed = (recovery_point, start)
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
        active = self._segments.last()
        assert active is not None
        return active

    def segments(self) -> list[LogSegment]:
        """Every local segment, oldest first; the last is the active segment."""
        return self._segments.all()

    def size_bytes(self) -> int:
        return self._segments.size_bytes()

    def next_segment_base(self, segment: LogSegment) -> int:
        """The offset after ``segment``'s data: the next base offset, or the log end offset."""
        following = self._segments.higher(segment.base_offset)
        return following.base_offset if following else self._log_end_offset

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
        self._check_batches(records, batches)
        now = self.clock()
        append_time = now if self.config.log_append_time else -1
        offset = self._log_end_offset
        assigned: list[tuple[int, BatchHeader]] = []
        for position, header in batches:
            assign_offset_and_epoch(records, position, offset, leader_epoch)
            changes: dict[str, int] = {
                "base_offset": offset,
                "partition_leader_epoch": leader_epoch,
            }
            if append_time >= 0:
                set_log_append_time(records, position, append_time)
                changes["attributes"] = header.attributes | TIMESTAMP_TYPE_MASK
                changes["max_timestamp"] = append_time
            else:
                self._check_timestamp(header, now)
            assigned.append((position, dataclasses.replace(header, **changes)))
            offset += header.last_offset_delta + 1
        return self._append(records, assigned, now, append_time)

    def append_as_follower(self, records: bytearray | memoryview | bytes) -> AppendInfo:
        """Append batches with the offsets and epochs they carry (replication)."""
        batches = iter_batches(records, validate=True)
        self._check_batches(records, batches)
        expected = self._log_end_offset
        for _, header in batches:
            if header.base_offset < expected:
                raise UnexpectedAppendOffsetError(
                    f"batch base offset {header.base_offset} below expected {expected}"
                )
            expected = header.next_offset
        return self._append(records, batches, self.clock(), -1)

    def _check_batches(self, records: bytearray | memoryview | bytes, batches: Batches) -> None:
        if not batches:
            raise CorruptRecordError("no record batch in the records")
        position = batches[0][0]
        for pos, header in batches:
            if pos != position:
                raise CorruptRecordError(f"batches not contiguous at position {pos}")
            if header.size > self.config.max_message_bytes:
                raise MessageTooLargeError(
                    f"batch of {header.size} bytes exceeds max.message.bytes "
                    f"{self.config.max_message_bytes}"
                )
            position += header.size
        if position > len(records):
            raise CorruptRecordError("batches overrun the records")

    def _check_timestamp(self, header: BatchHeader, now: int) -> None:
        config = self.config
        if (
            config.message_timestamp_before_max_ms < LONG_MAX
            and header.base_timestamp < now - config.message_timestamp_before_max_ms
        ) or (
            config.message_timestamp_after_max_ms < LONG_MAX
            and header.max_timestamp > now + config.message_timestamp_after_max_ms
        ):
            raise InvalidTimestampError(f"batch timestamps out of range at {now}")

    def _append(
        self, records: bytes | bytearray | memoryview, batches: Batches, now: int, append_time: int
    ) -> AppendInfo:
        first, last = batches[0][1], batches[-1][1]
        size = batches[-1][0] + last.size - batches[0][0]
        active = self._maybe_roll_for(size, len(batches), last.last_offset, now)
        active.append(records, batches)
        self._log_end_offset = last.next_offset
        max_ts, max_ts_offset, count = -1, first.base_offset, 0
        for _, header in batches:
            count += header.records_count
            if header.max_timestamp > max_ts:
                max_ts, max_ts_offset = header.max_timestamp, header.last_offset
        self._unflushed_messages += count
        if self._unflushed_messages >= self.config.flush_messages or (
            self.config.flush_ms < LONG_MAX and now - self._last_flush_ms >= self.config.flush_ms
        ):
            self.flush()
        return AppendInfo(
            first.base_offset, last.last_offset, max_ts, max_ts_offset, size, append_time, count
        )

    # ---- roll -------------------------------------------------------------------------------

    def _maybe_roll_for(self, size: int, n_batches: int, last_offset: int, now: int) -> LogSegment:
        active = self.active_segment
        config = self.config
        if active.size > 0 and (
            active.size + size > config.segment_bytes
            or now - active.created_ms >= config.segment_ms
            or last_offset - active.base_offset > INT_MAX
            or (len(active.offset_index) + n_batches) * 8 > config.segment_index_bytes
            or (len(active.time_index) + n_batches + 1) * 12 > config.segment_index_bytes
        ):
            return self.roll()
        return active

    def maybe_roll(self, now_ms: int) -> bool:
        """Roll when the active segment is non-empty and older than ``segment.ms``."""
        self._delete_expired(now_ms)
        active = self.active_segment
        if active.size > 0 and now_ms - active.created_ms >= self.config.segment_ms:
            self.roll()
            return True
        return False

    def roll(self) -> LogSegment:
        """Seal the active segment (fsynced) and start a new one at the log end offset; then
        call ``on_roll(new_base_offset)``. No-op when the active segment is empty."""
        active = self.active_segment
        if active.size == 0:
            return active
        active.on_become_inactive()
        active.flush()
        new_base = self._log_end_offset
        segment = LogSegment.create(
            self.dir, new_base, self.config.index_interval_bytes, self.clock()
        )
        self._segments.add(segment)
        log_files.fsync_dir(self.dir)
        self.recovery_point = max(self.recovery_point, new_base)
        self.checkpoint()
        if self.on_roll is not None:
            self.on_roll(new_base)
        return segment

    # ---- durability -------------------------------------------------------------------------

    def flush(self) -> None:
        """fsync every segment holding data past the recovery point; advance the recovery point."""
        if self.recovery_point < self._log_end_offset:
            for segment in self._segments.from_offset(self.recovery_point):
                segment.flush()
        self.recovery_point = self._log_end_offset
        self._unflushed_messages = 0
        self._last_flush_ms = now = self.clock()
        if now - self._last_checkpoint_ms >= CHECKPOINT_INTERVAL_MS:
            self.checkpoint()

    def maybe_flush(self, now_ms: int) -> bool:
        """Flush when ``flush.ms`` has passed since the last flush (for a periodic task)."""
        if self.config.flush_ms < LONG_MAX and now_ms - self._last_flush_ms >= self.config.flush_ms:
            self.flush()
            return True
        return False

    def checkpoint(self) -> None:
        """Write the recovery point and log start offset checkpoint files (when changed)."""
        state = (self.recovery_point, self.log_start_offset)
        if state != self._checkpointed:
            try:
                log_files.write_checkpoint(
                    self.dir / log_files.RECOVERY_POINT_CHECKPOINT, self.recovery_point
                )
                log_files.write_checkpoint(
                    self.dir / log_files.LOG_START_OFFSET_CHECKPOINT, self.log_start_offset
                )
            except OSError as exc:
                raise KafkaStorageError(f"{self.dir}: checkpoint failed: {exc}") from exc
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
        if start_offset < self.local_log_start_offset or start_offset > self._log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {start_offset} outside [{self.local_log_start_offset}, "
                f"{self._log_end_offset}]"
            )
        limit = (
            self._log_end_offset if max_offset is None else min(max_offset, self._log_end_offset)
        )
        info = FetchDataInfo(start_offset)
        offset, remaining = start_offset, max_bytes
        for segment in self._segments.from_offset(start_offset):
            if offset >= limit:
                break
            max_position = segment.size
            if limit < self.next_segment_base(segment):
                found = segment.translate_offset(limit)
                max_position = found[0] if found else segment.size
            got = segment.read(offset, remaining, max_position, min_one_batch and not info.regions)
            if got is None:
                if segment.translate_offset(offset) is not None:
                    # its next batch does not fit in what is left (or lies at the limit):
                    # stop here, never skip it for a smaller batch of a later segment
                    break
                offset = self.next_segment_base(segment)  # nothing at or above offset here
                continue
            first, region = got
            if not info.regions:
                info = FetchDataInfo(first)
            info.regions.append(region)
            remaining -= region.length
            if remaining <= 0 or region.position + region.length < max_position:
                break
            offset = self.next_segment_base(segment)
        return dataclasses.replace(info, size=sum(r.length for r in info.regions))

    def iter_batch_headers(self, from_offset: int = 0) -> Iterator[BatchHeader]:
        """Headers of every batch from the one holding ``from_offset`` to the log end."""
        start = max(from_offset, self.local_log_start_offset)
        for segment in self._segments.from_offset(start):
            found = segment.translate_offset(start)
            if found is None:
                continue
            for _, header in segment.iter_headers(found[0]):
                yield header

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first local record whose timestamp is >= ``timestamp``.

        Batch max timestamps (time index, then headers) find the batch; only that batch is
        decoded, to pick the record (not a hot path: ListOffsets).
        """
        for segment in self._segments:
            if segment.max_timestamp() < timestamp:
                continue
            found = segment.find_by_timestamp(timestamp)
            if found is None:
                continue
            for position, header in segment.iter_headers(found[0]):
                if header.max_timestamp < timestamp:
                    continue
                if header.is_log_append_time:
                    return header.base_offset, header.max_timestamp
                data = os.pread(segment.file.fileno(), header.size, position)
                for record in decode_batch(data)[1]:
                    if record.timestamp >= timestamp:
                        return record.offset, record.timestamp
        return None

    # ---- truncation and retention -----------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Remove every batch holding an offset >= ``offset`` (a follower's truncation). The log
        end offset becomes the start of the batch holding ``offset`` (<= ``offset``)."""
        if offset >= self._log_end_offset:
            return
        if offset <= self.local_log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return
        for segment in reversed(self._segments.all()):
            if segment.base_offset >= offset and segment.base_offset > self.local_log_start_offset:
                self._segments.remove(segment.base_offset)
                self._schedule_delete(segment, delay=False)
        active = self.active_segment
        active.truncate_to(offset)
        self._log_end_offset = active.next_offset()
        self.recovery_point = min(self.recovery_point, self._log_end_offset)
        self.checkpoint()
        self._delete_expired(self.clock())

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start an empty one at ``offset`` (also the log start)."""
        for segment in self._segments.all():
            self._segments.remove(segment.base_offset)
            self._schedule_delete(segment, delay=False)
        segment = LogSegment.create(
            self.dir, offset, self.config.index_interval_bytes, self.clock()
        )
        self._segments.add(segment)
        log_files.fsync_dir(self.dir)
        self._log_end_offset = self.log_start_offset = self.recovery_point = offset
        self.checkpoint()
        self._delete_expired(self.clock())

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
        """Oldest segments (never the active one) past ``retention_ms`` or beyond
        ``retention_bytes``, or wholly below the log start offset; only segments whose data is
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
        retention settings bound by ``upper_bound_offset``, else retention.ms/bytes."""
        if not self.config.delete:
            return self.delete_segments(
                self.retention_candidates(now_ms, -1, -1, upper_bound_offset)
            )
        if self.config.remote_storage_enable:
            if upper_bound_offset is None:
                return []
            candidates = self.retention_candidates(
                now_ms,
                self.config.effective_local_retention_ms,
                self.config.effective_local_retention_bytes,
                upper_bound_offset,
            )
        else:
            candidates = self.retention_candidates(
                now_ms, self.config.retention_ms, self.config.retention_bytes
            )
        return self.delete_segments(candidates)

    def delete_segments(
        self, which: Sequence[LogSegment] | Callable[[LogSegment], bool]
    ) -> list[LogSegment]:
        """Delete the oldest consecutive segments in ``which`` (a list, or a predicate), never
        the active segment. Files are renamed ``.deleted`` now and removed after
        ``file.delete.delay.ms`` (reads in flight keep working meanwhile)."""
        if callable(which):
            predicate = which
        else:
            chosen = {id(s) for s in which}

            def predicate(segment: LogSegment) -> bool:
                return id(segment) in chosen

        deleted: list[LogSegment] = []
        for segment in self._segments.all()[:-1]:
            if not predicate(segment):
                break
            deleted.append(segment)
        for segment in deleted:
            self._segments.remove(segment.base_offset)
            self._schedule_delete(segment, delay=True)
        if deleted:
            log_files.fsync_dir(self.dir)
            first = self._segments.first()
            assert first is not None
            if not self.config.remote_storage_enable:
                self.log_start_offset = max(self.log_start_offset, first.base_offset)
            self.checkpoint()
        self._delete_expired(self.clock())
        return deleted

    def replace_segments(self, old: Sequence[LogSegment], new_base: int) -> LogSegment:
        """Swap compaction output in for ``old`` (Kafka's ``replaceSegments``); returns it.

        ``old`` are consecutive non-active segments of this log, oldest first, and
        ``new_base == old[0].base_offset``; ``<new_base>.log.swap`` (and optionally
        ``.index.swap``, ``.timeindex.swap``, ``.txnindex.swap``) are written and fsynced by
        the caller and hold exactly the surviving batches of ``old``. Steps: the old segments
        leave the map and their files are renamed ``.deleted`` (closed and removed after
        ``file.delete.delay.ms``, so reads in flight finish); the swap files are renamed to
        their final names, the ``.log`` last; the directory is fsynced. A crash at any step
        leaves a ``.swap`` (recovery completes the swap) or the finished swap.
        """
        if not old or old[0].base_offset != new_base:
            raise ValueError(f"replacement at {new_base} does not start the old segments")
        bases = self._segments.base_offsets()
        first = bases.index(new_base) if new_base in bases else -1
        if (
            first < 0
            or first + len(old) >= len(bases)  # the active segment is never replaced
            or any(
                self._segments.get(b) is not s
                for b, s in zip(bases[first : first + len(old)], old, strict=True)
            )
        ):
            raise ValueError(f"segments from {new_base} changed; replacement abandoned")
        for segment in old:
            self._segments.remove(segment.base_offset)
            self._schedule_delete(segment, delay=True)
        stem = log_files.file_name(new_base)
        for ext in (*log_files.SEGMENT_SUFFIXES[1:], log_files.LOG_SUFFIX):
            swap = self.dir / (stem + ext + log_files.SWAP_SUFFIX)
            if swap.exists():
                swap.replace(self.dir / (stem + ext))
        log_files.fsync_dir(self.dir)
        segment = LogSegment.open(
            self.dir, new_base, self.config.index_interval_bytes, self.clock()
        )
        self._segments.add(segment)
        return segment

    def _schedule_delete(self, segment: LogSegment, delay: bool) -> None:
        segment.rename_suffix(log_files.DELETED_SUFFIX)
        deadline = self.clock() + (self.config.file_delete_delay_ms if delay else 0)
        self._pending_deletes.append((deadline, segment))

    def _delete_expired(self, now_ms: int) -> None:
        keep: list[tuple[int, LogSegment]] = []
        for deadline, segment in self._pending_deletes:
            if deadline <= now_ms:
                segment.close()
                segment.delete_files(log_files.DELETED_SUFFIX)
            else:
                keep.append((deadline, segment))
        self._pending_deletes = keep

    # ---- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Flush, checkpoint and close every file."""
        if self._closed:
            return
        self.flush()
        self.checkpoint()
        self._delete_expired(LONG_MAX)
        for segment in self._segments:
            segment.close()
        self._closed = True

    def delete(self) -> None:
        """Close and remove the partition directory (topic deletion)."""
        self._delete_expired(LONG_MAX)
        for segment in self._segments:
            segment.close()
        self._closed = True
        shutil.rmtree(self.dir, ignore_errors=True)
