"""Recovery on open: turn whatever a crash left in a partition directory into valid segments.

Steps, in order (each is idempotent, so a crash during recovery is recovered by the next one):

1. Delete ``*.cleaned`` files (unfinished compaction output), ``*.deleted`` files (segments
   already scheduled for deletion) and ``*.tmp`` checkpoint leftovers.
2. Complete swaps: a ``X.log.swap`` is finished compaction output; every segment whose base
   offset lies in its offset range is deleted, then it is renamed to ``X.log`` (its indexes are
   rebuilt; other ``X.*.swap`` files are renamed, index swaps dropped). A ``X.log.swap`` that
   holds no whole batch (the cleaner never writes one: a zeroed or hand-emptied file) has no
   offset range: it is deleted with its other ``X.*.swap`` files and every segment is kept.
3. Delete index files whose ``.log`` is missing.
4. Open every segment; those at or beyond the recovery point (the greatest base offset <= it,
   and every later one) are scanned batch by batch: headers are checked for every batch, the
   CRC-32C for batches at offsets >= the recovery point, and the file is truncated at the first
   torn or corrupt batch; their indexes are rebuilt. Segments after a truncated one are deleted
   (their data cannot follow a hole). Older segments are trusted; their indexes are checked
   lazily on first use. So is the segment holding the recovery point when its batches end
   exactly there (LogSegment.ends_at, which reads the headers after its last index entry
   only): after a clean shutdown (the recovery point at the log end offset) nothing of it
   lies past the recovery point, as Kafka skips recovery after a clean shutdown; the whole
   active segment's headers were read again at every start (a 32 MiB segment of one-record
   batches: 1.3-2 s).
5. A log whose recovered end lies below its checkpointed log start offset (the unflushed
   tail was lost in a power failure after DeleteRecords or retention had moved the start past
   it, or segment files were deleted by hand) loses every segment and producer snapshot, and
   starts empty at that log start offset, as Kafka's ``LogLoader.recoverLog`` does: offsets
   below a log start offset that was acknowledged (a DeleteRecords low watermark) are never
   given out again, and the log start never moves back (open_log).
6. An empty directory gets one empty segment at ``start_offset``; the directory is fsynced then
   (its files survive a crash), unless the caller fsyncs it itself (``sync_dir`` False: the
   broker groups the fsyncs of the partitions it creates together, replica_manager.py). Lost
   in a crash before that fsync, the files are created again by the next open: the same empty
   segment.

A stop during recovery (``abandon`` set: the broker's start given up, abandonable.py) ends the
scan of step 4 at its next read (every 64 KiB, or every larger batch) with AbandonedError,
before the segment being scanned is changed: its ``.log`` keeps its size, its index files
their bytes. The segments scanned before it were recovered whole (indexes rebuilt; none of them
was truncated, or the scan would have stopped there); the checkpoints are not written, so the
next open recovers from the same recovery point and finds what a crash at that moment would
have left: steps 1-3 done (idempotent) and the same tail to scan. Every segment file opened is
closed again.

:func:`open_log` is what ``LocalLog.open`` starts from: it reads the recovery point and log
start offset checkpoints (a missing or unreadable one counts as absent: recovery then
validates every segment and the log starts at its first segment), recovers, and derives the
log start offset to open with.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from tiered_mq.hot import log_files
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments
from tiered_mq.record.batch import HEADER_SIZE, read_header

log = logging.getLogger(__name__)


@dataclass
class RecoveryResult:
    segments: LogSegments
    truncated_bytes: int = 0
    deleted_segments: int = 0
    recovered_segments: int = 0
    created: bool = False


class OpenedLog(NamedTuple):
    """A recovered partition directory: its segments, the log start offset (within the log
    end offset; below the first segment only with remote storage), the checkpointed recovery
    point (0 when absent), the checkpoint values as read (None when absent) and whether its
    first segment was created (recover_log)."""

    segments: LogSegments
    log_start_offset: int
    recovery_point: int
    checkpointed: tuple[int | None, int | None]
    created: bool


def _names(dir: Path) -> set[str]:
    with os.scandir(dir) as entries:
        return {entry.name for entry in entries}


def _remove_transient_files(dir: Path, names: set[str]) -> None:
    """Step 1 on ``names`` (the directory's entries; those removed leave it)."""
    for name in list(names):
        if name.endswith((log_files.CLEANED_SUFFIX, log_files.DELETED_SUFFIX, ".tmp")):
            log.info("recovery: removing %s", dir / name)
            (dir / name).unlink(missing_ok=True)
            names.discard(name)


def _swap_next_offset(path: Path) -> int | None:
    """One past the last offset of the batches in a swap file (header scan, no CRC)."""
    next_offset = None
    with open(path, "rb", buffering=0) as f:
        fd, size, position = f.fileno(), os.fstat(f.fileno()).st_size, 0
        while position + HEADER_SIZE <= size:
            header = read_header(os.pread(fd, HEADER_SIZE, position))
            if position + header.size > size or header.batch_length <= 0:
                break
            next_offset = header.next_offset
            position += header.size
    return next_offset


def _complete_swaps(dir: Path, names: set[str]) -> bool:
    """Step 2; whether ``names`` held a swap file (the directory changed: list it again)."""
    swaps = sorted(dir / name for name in names if name.endswith(log_files.SWAP_SUFFIX))
    for swap in swaps:
        if not swap.exists():  # discarded with its .log.swap below
            continue
        name = swap.name[: -len(log_files.SWAP_SUFFIX)]
        if name.endswith((log_files.INDEX_SUFFIX, log_files.TIME_INDEX_SUFFIX)):
            swap.unlink()  # rebuilt from the log
            continue
        if not name.endswith(log_files.LOG_SUFFIX):
            swap.replace(dir / name)
            continue
        base = log_files.offset_from_file_name(name)
        if base is None:
            continue
        end = _swap_next_offset(swap)
        if end is None:  # no whole batch (zeroed or emptied by hand): nothing to swap in
            log.warning("recovery: discarding %s, which holds no whole batch", swap)
            for ext in log_files.SEGMENT_SUFFIXES:
                (dir / (log_files.file_name(base) + ext + log_files.SWAP_SUFFIX)).unlink(
                    missing_ok=True
                )
            continue
        for path in list(dir.iterdir()):
            other = log_files.offset_from_file_name(path.name)
            if log_files.is_log_file(path.name) and other is not None and base <= other < end:
                stem = log_files.file_name(other)
                for ext in log_files.SEGMENT_SUFFIXES:
                    (dir / (stem + ext)).unlink(missing_ok=True)
        for ext in (log_files.INDEX_SUFFIX, log_files.TIME_INDEX_SUFFIX):
            (dir / (log_files.file_name(base) + ext)).unlink(missing_ok=True)
        log.info("recovery: completing swap %s", swap)
        swap.replace(dir / name)
    if swaps:
        log_files.fsync_dir(dir)
    return bool(swaps)


def _remove_orphan_indexes(dir: Path, names: set[str]) -> None:
    """Step 3 on ``names`` (the directory's entries; those removed leave it)."""
    for name in list(names):
        if name.endswith(
            (log_files.INDEX_SUFFIX, log_files.TIME_INDEX_SUFFIX, log_files.TXN_INDEX_SUFFIX)
        ):
            base = log_files.offset_from_file_name(name)
            if base is not None and log_files.file_name(base) + log_files.LOG_SUFFIX not in names:
                (dir / name).unlink()
                names.discard(name)


def _first_segment(
    dir: Path,
    start_offset: int,
    index_interval_bytes: int,
    now_ms: int,
    sync_dir: bool,
    index_files: bool = True,
) -> LogSegments:
    """An empty directory's one empty segment at ``start_offset`` (step 6), its directory
    fsynced unless the caller does it (``sync_dir`` False)."""
    segments = LogSegments()
    segments.add(LogSegment.create(dir, start_offset, index_interval_bytes, now_ms, index_files))
    if sync_dir:
        log_files.fsync_dir(dir)
    return segments


def recover_log(
    dir: Path,
    recovery_point: int,
    start_offset: int,
    index_interval_bytes: int,
    now_ms: int,
    sync_dir: bool = True,
    abandon: threading.Event | None = None,
) -> RecoveryResult:
    """Recover the segments in ``dir`` (see the module docstring); ``created`` in the result
    tells that it held none and got its first, empty segment. AbandonedError once ``abandon``
    is set (module docstring), every segment opened closed again."""
    dir.mkdir(parents=True, exist_ok=True)
    names = _names(dir)  # listed once (again only after a swap was completed)
    _remove_transient_files(dir, names)
    if _complete_swaps(dir, names):
        names = _names(dir)
    _remove_orphan_indexes(dir, names)
    bases = sorted(
        b
        for name in names
        if log_files.is_log_file(name) and (b := log_files.offset_from_file_name(name)) is not None
    )
    if not bases:
        first = _first_segment(dir, start_offset, index_interval_bytes, now_ms, sync_dir)
        return RecoveryResult(first, created=True)
    result = RecoveryResult(LogSegments())
    try:
        _recover_segments(dir, bases, recovery_point, index_interval_bytes, now_ms, result, abandon)
    except BaseException:
        for segment in result.segments:
            segment.close()
        raise
    return result


def _recover_segments(
    dir: Path,
    bases: list[int],
    recovery_point: int,
    index_interval_bytes: int,
    now_ms: int,
    result: RecoveryResult,
    abandon: threading.Event | None,
) -> None:
    """Step 4 on the segments at ``bases`` (sorted), into ``result``."""
    first_to_recover = max((b for b in bases if b <= recovery_point), default=bases[0])
    for i, base in enumerate(bases):
        segment = LogSegment.open(dir, base, index_interval_bytes, now_ms)
        result.segments.add(segment)
        if base < first_to_recover:
            continue
        if base == first_to_recover and segment.ends_at(recovery_point):
            continue  # flushed whole (a clean shutdown): trusted, nothing to recover
        result.recovered_segments += 1
        removed = segment.recover(recovery_point, abandon)
        if removed:
            log.warning(
                "recovery: truncated %d bytes of %s at position %d",
                removed,
                segment.log_path,
                segment.size,
            )
            result.truncated_bytes += removed
            for later in bases[i + 1 :]:
                log.warning("recovery: deleting segment %d after a truncated one", later)
                stem = log_files.file_name(later)
                for ext in log_files.SEGMENT_SUFFIXES:
                    (dir / (stem + ext)).unlink(missing_ok=True)
                result.deleted_segments += 1
            break


def _start_empty_at(dir: Path, segments: LogSegments, start: int, end: int) -> None:
    """Step 5: close and delete every segment and producer snapshot of ``dir``, whose log
    end ``end`` lies below its log start offset ``start`` (the caller then recovers an empty
    directory, which gets its first segment at ``start``)."""
    log.warning(
        "recovery: deleting all segments of %s: their log end offset %d is below the log start "
        "offset %d (unflushed data lost in a crash, or segment files deleted); the log starts "
        "empty at %d",
        dir,
        end,
        start,
        start,
    )
    for segment in segments:
        segment.close()
    for path in list(dir.iterdir()):
        base = log_files.offset_from_file_name(path.name)
        if base is not None and path.name.endswith(
            (*log_files.SEGMENT_SUFFIXES, log_files.SNAPSHOT_SUFFIX)
        ):
            path.unlink()
    log_files.fsync_dir(dir)


def _age_from_first_batch(segment: LogSegment, now_ms: int) -> None:
    """Date a reopened segment from its first batch's max timestamp (Kafka's
    ``rollingBasedTimestamp``) when that is set and not in the future, so ``segment.ms`` and
    ``max.compaction.lag.ms`` count from the segment's first record, not from the broker's
    restart: a broker restarted more often than them would otherwise never roll a quiet log."""
    for _, header in segment.iter_headers():
        if 0 <= header.max_timestamp < now_ms:
            segment.created_ms = header.max_timestamp
        return


def open_log(
    dir: Path,
    index_interval_bytes: int,
    remote_storage_enable: bool,
    now_ms: int,
    sync_dir: bool = True,
    new: bool = False,
    abandon: threading.Event | None = None,
) -> OpenedLog:
    """Read the checkpoints of ``dir`` (created if needed) and recover its segments. With
    ``new`` the caller has just created ``dir`` (so it is empty): it gets its first segment at
    offset 0 without the reads and scans, which would find nothing, and the segment's ``.log``
    only (its index files come with their first entries: LogSegment.create). AbandonedError
    once ``abandon`` is set (module docstring)."""
    if new:
        fresh = _first_segment(dir, 0, index_interval_bytes, now_ms, sync_dir, index_files=False)
        return OpenedLog(fresh, 0, 0, (None, None), True)
    dir.mkdir(parents=True, exist_ok=True)
    recovery_point = log_files.read_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT)
    start = log_files.read_checkpoint(dir / log_files.LOG_START_OFFSET_CHECKPOINT)
    segments = recover_log(
        dir, recovery_point or 0, start or 0, index_interval_bytes, now_ms, sync_dir, abandon
    )
    end = segments.segments.active().next_offset()
    checkpointed = (recovery_point, start)
    if start is not None and start > end:
        _start_empty_at(dir, segments.segments, start, end)
        segments = recover_log(dir, start, start, index_interval_bytes, now_ms, sync_dir, abandon)
        recovery_point = start
    first, active = segments.segments.first(), segments.segments.last()
    assert first is not None and active is not None
    _age_from_first_batch(active, now_ms)
    log_start = first.base_offset if start is None else start
    if not remote_storage_enable:
        log_start = max(log_start, first.base_offset)
    log_start = min(log_start, active.next_offset())
    return OpenedLog(
        segments.segments, log_start, recovery_point or 0, checkpointed, segments.created
    )
