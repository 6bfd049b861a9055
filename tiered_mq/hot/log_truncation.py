"""Truncation of a LocalLog (replication) and the start of new segments (roll, truncation).

Like the other parts of LocalLog (log_append, log_read, ...), these functions are given the
pieces of the log's state they work on (the segment map, the directory) and return what
changed; LocalLog applies the result to its own offsets and checkpoints, under the partition
lock. ``remove`` is LocalLog's way to take a segment out of the map and schedule its deletion
(segment_removal.PendingDeletes: files renamed ``.deleted`` at once, removed at the deadline).

Kafka's two truncations of a follower's log:

- :func:`truncate_to` (the follower's log diverged from the leader's): every segment whose base
  offset is >= the truncation offset leaves the map, except the first local segment; the new
  last segment (the active segment) is cut at the start of the batch holding the offset
  (``LogSegment.truncate_to``: ``ftruncate`` of the .log, both indexes cut). The new log end
  offset is that batch's base offset, <= the truncation offset: batches are never split.
- :func:`truncate_fully` (the offset is at or below the local log start offset, e.g. the
  leader's log start moved past the follower's log end): every segment leaves the map and one
  empty segment starts at the offset, which becomes the log end offset and the log start offset.

Invariants after either: the map is not empty, its last segment is the active segment, the
log end offset is its next offset, and the recovery point is <= the log end offset (LocalLog
lowers it and writes the checkpoints before returning, so no append follows a truncation that
recovery would trust without validating).

Crash behaviour. Nothing is fsynced in the middle of a truncation; the checkpoints are written
(fsynced, renamed) at its end. A crash part-way leaves some of: segments renamed ``.deleted``
(recovery removes them), segments not yet renamed (they come back whole, data above the
truncation offset included), an active ``.log`` cut or not (an ``ftruncate`` not yet on disk
may be undone). Whatever comes back was written by earlier appends and is checked again by
recovery from the old or the lowered recovery point (cut at the first torn batch), so the log
reopens valid, but its log end offset may be above the truncation offset: truncation is not
durable until it returns, and the caller repeats it after a restart (as Kafka's follower does
when it next compares its log with the leader's). A crash in ``truncate_fully`` after every
segment was renamed and before the new one exists leaves no ``.log``: recovery starts an empty
log at the checkpointed log start offset.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments


def start_segment(
    dir: Path, segments: LogSegments, base_offset: int, index_interval_bytes: int, now_ms: int
) -> LogSegment:
    """Create an empty segment at ``base_offset`` (the log end offset: it becomes the active
    segment), add it to ``segments`` and fsync ``dir`` so that its files survive a crash."""
    segment = LogSegment.create(dir, base_offset, index_interval_bytes, now_ms)
    segments.add(segment)
    log_files.fsync_dir(dir)
    return segment


def truncate_to(
    segments: LogSegments,
    offset: int,
    local_log_start_offset: int,
    remove: Callable[[LogSegment], None],
) -> int:
    """Remove every batch holding an offset >= ``offset``, where ``local_log_start_offset <
    offset < log end offset``; returns the new log end offset (<= ``offset``)."""
    for segment in reversed(segments.all()):
        if segment.base_offset >= offset and segment.base_offset > local_log_start_offset:
            remove(segment)
    active = segments.active()  # the first local segment is never removed
    active.truncate_to(offset)
    return active.next_offset()


def truncate_fully(
    segments: LogSegments,
    offset: int,
    remove: Callable[[LogSegment], None],
    start_segment: Callable[[int], LogSegment],
) -> LogSegment:
    """Remove every segment, then start an empty one at ``offset`` with ``start_segment``
    (LocalLog's binding of :func:`start_segment`); returns it. The removal comes first: the
    new segment may have the base offset, and so the file names, of a removed one."""
    for segment in segments.all():
        remove(segment)
    return start_segment(offset)
