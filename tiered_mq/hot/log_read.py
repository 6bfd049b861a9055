"""Read paths of LocalLog: fetch assembly, header scans and timestamp lookup.

Reads never modify the log. A fetch answer is a list of FileRegions (file, position, length)
of *whole* record batches, sent as they lie on disk (sendfile); a batch is never split and a
batch is never skipped for a smaller one in a later segment. The regions stay valid while a
segment is deleted or replaced (its files are renamed ``.deleted`` and closed later).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from tiered_mq.errors import OffsetOutOfRangeError
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.file_records import FileRegion
from tiered_mq.record.records import decode_batch


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """Whole batches to send; ``first_offset`` is the base offset of the first batch (<= the
    fetch offset), or the fetch offset itself when nothing is returned. ``more``: the byte limit
    stopped the read in front of a batch below ``max_offset`` (more data was there; a fetch
    counts such a partition as holding its whole limit toward ``min_bytes``, as Kafka's slice
    of exactly the limit would)."""

    first_offset: int
    regions: list[FileRegion] = field(default_factory=list)
    size: int = 0
    more: bool = False


def next_segment_base(segments: LogSegments, segment: LogSegment, log_end_offset: int) -> int:
    """The offset after ``segment``'s data: the next base offset, or the log end offset."""
    following = segments.higher(segment.base_offset)
    return following.base_offset if following else log_end_offset


def read_batches(
    segments: LogSegments,
    start_offset: int,
    max_bytes: int,
    max_offset: int | None,
    local_log_start_offset: int,
    log_end_offset: int,
    min_one_batch: bool,
) -> FetchDataInfo:
    """Whole batches from the one holding ``start_offset`` up to ``max_offset`` (exclusive;
    None: the log end offset), at most ``max_bytes`` unless the first batch alone is larger and
    ``min_one_batch``. Raises OffsetOutOfRangeError when ``start_offset`` is below the local
    log start offset or above the log end offset."""
    if start_offset < local_log_start_offset or start_offset > log_end_offset:
        raise OffsetOutOfRangeError(
            f"offset {start_offset} outside [{local_log_start_offset}, {log_end_offset}]"
        )
    limit = log_end_offset if max_offset is None else min(max_offset, log_end_offset)
    # built once at the end (a frozen dataclass's __init__ costs a setattr per field)
    first_offset = start_offset
    regions: list[FileRegion] = []
    offset, remaining = start_offset, max_bytes
    more = False
    for segment in segments.from_offset(start_offset):
        if offset >= limit:
            break
        following = next_segment_base(segments, segment, log_end_offset)
        max_position = segment.size
        if limit < following:
            found = segment.translate_offset(limit)
            max_position = found[0] if found else segment.size
        got = segment.read(offset, remaining, max_position, min_one_batch and not regions)
        if got is None:
            found = segment.translate_offset(offset)
            if found is not None:
                # its next batch does not fit in what is left (or lies at the limit):
                # stop here, never skip it for a smaller batch of a later segment
                more = found[0] < max_position
                break
            offset = following  # nothing at or above offset here
            continue
        first, region = got
        if not regions:
            first_offset = first
        regions.append(region)
        remaining -= region.length
        end = region.position + region.length
        if remaining <= 0 or end < max_position:
            more = end < max_position or following < limit
            break
        offset = following
    return FetchDataInfo(first_offset, regions, sum(r.length for r in regions), more)


def iter_batch_headers(segments: LogSegments, start: int) -> Iterator[BatchHeader]:
    """Headers of every batch from the one holding ``start`` to the log end."""
    for segment in segments.from_offset(start):
        found = segment.translate_offset(start)
        if found is None:
            continue
        for _, header in segment.iter_headers(found[0]):
            yield header


def offset_for_timestamp(
    segments: LogSegments, timestamp: int, start_offset: int = 0
) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record at or above ``start_offset`` whose timestamp
    is >= ``timestamp``. ``start_offset`` is the log start offset: records below it are
    deleted (DeleteRecords may move it into a segment, even into a batch) and never found,
    as in Kafka's ``LogSegment.findOffsetByTimestamp``.

    Batch max timestamps (time index, then headers) find the batch; only that batch is
    decoded, to pick the record (not a hot path: ListOffsets).
    """
    for segment in segments.from_offset(start_offset):
        if segment.max_timestamp() < timestamp:
            continue
        found = segment.find_by_timestamp(timestamp)
        if found is None:
            continue
        for position, header in segment.iter_headers(found[0]):
            if header.max_timestamp < timestamp or header.last_offset < start_offset:
                continue
            if header.is_log_append_time:
                return max(header.base_offset, start_offset), header.max_timestamp
            data = os.pread(segment.file.fileno(), header.size, position)
            for record in decode_batch(data)[1]:
                if record.timestamp >= timestamp and record.offset >= start_offset:
                    return record.offset, record.timestamp
    return None


def offset_of_max_timestamp(segments: LogSegments) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record carrying the log's greatest timestamp, None
    when the log is empty (ListOffsets -3, KIP-734).

    The segments' max timestamps name the greatest one; the record is then the first whose
    timestamp is >= it, so one batch is decoded, as for any timestamp lookup.
    """
    greatest = max((segment.max_timestamp() for segment in segments), default=-1)
    return None if greatest < 0 else offset_for_timestamp(segments, greatest)
