"""The log cleaner's work on one log: plan, pass 1 (offset map), pass 2 (rewrite segments).

Sections of a compacted log (Kafka's names)::

    [local log start .. first dirty offset)   clean: already compacted by an earlier pass
    [first dirty offset .. end offset)        dirty: not yet compacted, cleanable
    [end offset .. log end offset)            uncleanable: the active segment, data at or above
                                              the high watermark / last stable offset, segments
                                              younger than min.compaction.lag.ms

The first dirty offset is kept per log in ``cleaner-offset-checkpoint`` (partition directory,
the one-entry format of log_files.write_checkpoint); the end offset is always a segment
boundary. A log is cleanable when dirty bytes / (clean + dirty bytes) >
``min.cleanable.dirty.ratio``, or, whatever that ratio, when the first batch of a dirty segment
is older than ``max.compaction.lag.ms`` (KIP-354; LogConfig.max_segment_ms rolls the active
segment after that lag, so no record escapes it).

Pass 1 (:func:`build_offset_map`) reads the dirty section batch by batch and maps each key to
the offset of its latest record. Control batches and the batches of aborted transactions are
skipped (txn_filter.py: a record of an aborted transaction never supersedes a committed one);
committed transactional records count as ordinary ones. Without the partition's aborted
transactions (``aborted`` None) every transactional batch is skipped, which only keeps more.
The map may fill up: pass 1 then stops at a segment boundary and the end offset moves down to
it (the next pass continues from there).

Pass 2 (rewriting the segments, crash behaviour): segment_rewrite.py.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tiered_mq.compaction.offset_map import OffsetMap
from tiered_mq.compaction.txn_filter import AbortedTxns
from tiered_mq.errors import CorruptRecordError
from tiered_mq.hot import log_files
from tiered_mq.hot.header_scan import scan_headers
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.record.batch import (
    BatchHeader,
)
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.record.records import decode_batch

CLEANER_CHECKPOINT: Final = "cleaner-offset-checkpoint"
INT_MAX: Final = 2**31 - 1


class CleaningAbortedError(Exception):
    """The cleaner was closed (a broker stop) while it read or rewrote a log (Kafka's
    LogCleaningAbortedException): the pass ends at the next batch, its ``.cleaned`` files
    removed, nothing swapped."""


def check_not_aborted(abort: threading.Event | None) -> None:
    """Raise CleaningAbortedError once ``abort`` is set (looked at once a batch)."""
    if abort is not None and abort.is_set():
        raise CleaningAbortedError("log cleaner closed")


@dataclass
class CleanerStats:
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_removed: int = 0
    segments_replaced: int = 0
    next_horizon_ms: int | None = None  # earliest delete horizon not yet passed

    def horizon(self, ms: int) -> None:
        if self.next_horizon_ms is None or ms < self.next_horizon_ms:
            self.next_horizon_ms = ms


@dataclass(frozen=True)
class CleaningPlan:
    segments: list[LogSegment]  # every segment below end_offset, oldest first
    first_dirty_offset: int
    end_offset: int
    clean_bytes: int
    dirty_bytes: int
    must_clean: bool = False  # a dirty segment is past max.compaction.lag.ms

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


@dataclass
class SegmentSource:
    """A segment to read without the partition lock: its own duplicate of the file descriptor
    (a concurrent close of the segment cannot redirect reads to another file), and the size and
    next base offset it had when planned (non-active segments never grow)."""

    segment: LogSegment
    next_base: int
    size: int
    fd: int
    index_bytes: int

    @classmethod
    def of(cls, log: LocalLog, segment: LogSegment) -> SegmentSource:
        """Under the partition lock."""
        index_bytes = len(segment.offset_index) * 8 + len(segment.time_index) * 12
        fd = os.dup(segment.file.fileno())
        return cls(segment, log.next_segment_base(segment), segment.size, fd, index_bytes)

    @property
    def base_offset(self) -> int:
        return self.segment.base_offset

    def iter_headers(self) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of every batch below the planned size (through the dup'ed fd)."""
        return scan_headers(self.fd, 0, self.size, self._corruption)

    def _corruption(self, position: int, reason: str) -> Exception:
        return CorruptRecordError(f"segment {self.base_offset} at {position}: {reason}")

    def read(self, position: int, size: int) -> bytes:
        return os.pread(self.fd, size, position)

    def close(self) -> None:
        close_quietly(self.fd)


def checkpoint_path(dir: Path) -> Path:
    return dir / CLEANER_CHECKPOINT


def read_cleaner_checkpoint(dir: Path) -> int | None:
    return log_files.read_checkpoint(checkpoint_path(dir))


def write_cleaner_checkpoint(dir: Path, offset: int) -> None:
    log_files.write_checkpoint(checkpoint_path(dir), offset)


def plan_cleaning(
    log: LocalLog, checkpoint: int | None, max_offset: int, now_ms: int, force: bool = False
) -> CleaningPlan | None:
    """What one pass would clean; None when nothing is cleanable (call under the lock).

    ``max_offset`` is the high watermark or last stable offset: no data at or above it is
    cleaned. ``force`` plans even with no dirty bytes (to drop tombstones past their horizon).
    The plan's ``must_clean`` says the log is due whatever its dirty ratio
    (:func:`past_max_compaction_lag`).
    """
    segments = log.segments()[:-1]  # never the active segment
    start = log.local_log_start_offset
    first_dirty = checkpoint if checkpoint is not None else start
    if first_dirty < start or first_dirty > log.log_end_offset:
        first_dirty = start
    lag = log.config.min_compaction_lag_ms
    cleanable: list[LogSegment] = []
    dirty: list[LogSegment] = []
    clean_bytes = dirty_bytes = 0
    end = start
    for segment in segments:
        next_base = log.next_segment_base(segment)
        if next_base > max_offset:
            break
        if next_base > first_dirty and lag > 0 and segment.max_timestamp() > now_ms - lag:
            break
        cleanable.append(segment)
        end = next_base
        if next_base <= first_dirty:
            clean_bytes += segment.size
        else:
            dirty_bytes += segment.size
            dirty.append(segment)
    if not cleanable or (dirty_bytes == 0 and not force):
        return None
    must_clean = dirty_bytes > 0 and past_max_compaction_lag(
        dirty, log.config.max_compaction_lag_ms, now_ms
    )
    return CleaningPlan(cleanable, min(first_dirty, end), end, clean_bytes, dirty_bytes, must_clean)


def past_max_compaction_lag(dirty: Sequence[LogSegment], max_lag_ms: int, now_ms: int) -> bool:
    """Whether the first batch of a dirty segment is older than ``max.compaction.lag.ms``
    (Kafka's ``LogCleanerManager.maxCompactionDelay`` > 0): the log is then cleaned whatever
    its dirty ratio. A batch's age is its max timestamp's; batches without one (-1) never
    count. Reads one batch header per dirty segment, and none while the lag cannot be past."""
    until = now_ms - max_lag_ms
    if until <= 0:  # the default lag (Long.MAX_VALUE)
        return False
    for segment in dirty:
        for _, header in segment.iter_headers():
            if 0 < header.max_timestamp < until:
                return True
            break
    return False


def _skipped(header: BatchHeader, aborted: AbortedTxns | None) -> bool:
    """Control batches and aborted (or, without ``aborted``, all) transactional batches."""
    if header.is_control:
        return True
    if not header.is_transactional:
        return False
    return aborted is None or aborted.is_aborted(header.producer_id, header.base_offset)


def build_offset_map(
    sources: Sequence[SegmentSource],
    first_dirty: int,
    end: int,
    omap: OffsetMap,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    aborted: AbortedTxns | None = None,
    abort: threading.Event | None = None,
) -> int:
    """Pass 1: map keys of the records in [first_dirty, end) to their latest offsets.

    Returns the offset the map covers up to (``end``, or a lower segment boundary when the map
    filled up). Raises CleaningAbortedError at the first batch read after ``abort`` is set.
    """
    for source in sources:
        if source.next_base <= first_dirty:
            continue
        if source.base_offset >= end:
            break
        for position, header in source.iter_headers():
            if header.next_offset <= first_dirty or _skipped(header, aborted):
                continue
            if header.base_offset >= end:
                break
            check_not_aborted(abort)
            data = source.read(position, header.size)
            for record in decode_batch(data, max_size=max_size)[1]:
                if record.key is not None and record.offset >= first_dirty:
                    omap.put(record.key, record.offset)
        if omap.full and source.next_base < end:
            return source.next_base
    return end


def group_segments(
    sources: Sequence[SegmentSource], config: LogConfig
) -> list[list[SegmentSource]]:
    """Consecutive segments whose sizes sum to at most ``segment.bytes``, whose indexes fit
    ``segment.index.bytes`` and whose offsets fit a 32-bit relative offset; each group becomes
    one segment."""
    groups: list[list[SegmentSource]] = []
    current: list[SegmentSource] = []
    size = index_bytes = 0
    for source in sources:
        if current and (
            size + source.size > config.segment_bytes
            or source.next_base - 1 - current[0].base_offset > INT_MAX
            or index_bytes + source.index_bytes > config.segment_index_bytes
        ):
            groups.append(current)
            current, size, index_bytes = [], 0, 0
        current.append(source)
        size += source.size
        index_bytes += source.index_bytes
    if current:
        groups.append(current)
    return groups


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
