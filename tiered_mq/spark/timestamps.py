"""Kafka's offsetsForTimes over the bucket, on the driver: where a timestamp bound resolves.

Spark's Kafka source asks the broker (ListOffsets by timestamp) for the first offset of each
partition whose record has a timestamp at or after T, over the whole partition (from its log
start), and compares the resolved start and end offsets. This module answers the same question
from the bucket, for the planner (planner.py), when the answer decides whether a read fails:

- :func:`has_match`: whether any record reaches T, from the manifest alone when it can say
  (the first segment whose ``max_timestamp`` reaches T is read from its base offset: it holds
  such a record); None when that segment is read part-way (the log start or an overlap falls
  inside it: its max timestamp may be a deleted record's, which ListOffsets does not count);
- :func:`offset_for_time`: the exact offset. The first segment whose ``max_timestamp`` reaches T
  is read: only the byte window that its ``.timeindex`` and ``.index`` bound (the first record
  at or after T lies after the greatest time-index entry below T and at or before the first
  entry at or above it), else the whole object. Batch headers are walked, and the records of
  the first batch whose max timestamp reaches T are decoded.

As in Kafka, every batch counts, control batches included, and a LogAppendTime batch's records
all carry its max timestamp. Reads are checked as the executors' are (segment_reader.fetch: the
CRC-32C of a whole object, the length of a range); corruption raises LogCorruptionError naming
the object.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import RemoteSegment
from tiered_mq.cold.remote_index import OffsetIndexView, TimeIndexView
from tiered_mq.errors import CorruptRecordError, LogCorruptionError
from tiered_mq.record.records import decode_batch
from tiered_mq.spark.bucket import Bucket
from tiered_mq.spark.segment_reader import fetch, walk_headers

#: (segment, first offset read from it): a partition's segments in offset order, each offset once
Cover = Sequence[tuple[RemoteSegment, int]]


class OffsetRangeError(ValueError):
    """The read's start resolves past its end (Spark's RESOLVED_START_OFFSET_GREATER_THAN_
    END_OFFSET), or a start timestamp that no record reaches (Spark's "No offset matched")."""


def resolve(
    bucket: Bucket,
    where: tuple[str, int],
    cover: Cover,
    bounds: tuple[int, int, int | None, int | None],
    *,
    end_given: bool,
    latest: int,
    no_match_latest: bool,
) -> tuple[int, int, int | None, int | None]:
    """Check a partition's bounds as Spark does once it has resolved them, and return them,
    resolved where that took a read.

    ``bounds`` = (start, end, start timestamp, end timestamp): offsets (``start`` from
    startingOffsets or the log start, ``end`` from endingOffsets or ``latest``) and the
    timestamps, which take precedence. ``end_given``: ``end`` came from an endingOffsets JSON.
    Returned: the same four, a timestamp replaced by its exact offset (and None) when it was
    resolved here; otherwise the executor finds the record (segment_reader.py).

    Raises OffsetRangeError: with ``startingOffsetsByTimestampStrategy=error`` (the default)
    when no record reaches the start timestamp (with ``latest``, the start is ``latest``); and
    when the start resolves past the end: an end timestamp whose first record (over the whole
    partition, as Kafka's ListOffsets finds it) lies before the start, a start timestamp whose
    first record lies after an endingOffsets offset. A start equal to the end reads nothing.
    """
    topic, partition = where
    start, end, start_ts, end_ts = bounds
    start_what = "startingOffsets"
    if start_ts is not None:
        start_what = f"the start timestamp {start_ts}"
        found = has_match(cover, start_ts)
        if found is None:
            exact = offset_for_time(bucket, cover, start_ts)
            if exact is not None:
                start, start_ts = exact, None
            found = exact is not None
        if not found:
            if not no_match_latest:
                raise OffsetRangeError(
                    f"No offset matched from request of topic-partition {topic}-{partition} "
                    f"and timestamp {start_ts}: no record of the partition in the bucket has a "
                    "timestamp at or after it. Set startingOffsetsByTimestampStrategy=latest "
                    "to start such partitions at their latest offset"
                )
            start_what = f"the latest offset (no record reaches the start timestamp {start_ts})"
            start, start_ts = latest, None

    def fail(s: int, e: int, end_what: str) -> OffsetRangeError:
        return OffsetRangeError(
            f"The resolved start offset {s} is greater than the resolved end offset {e} for "
            f"topic {topic} partition {partition}: the start is {start_what}, the end is "
            f"{end_what}"
        )

    if end_ts is not None:
        end_what = f"the first record at or after the end timestamp {end_ts}"
        if start_ts is None:
            if has_match(cover, end_ts, high=start) is False and has_match(cover, end_ts):
                return start, end, start_ts, end_ts  # the end lies at or after the start
            e = _exact(bucket, cover, end_ts, latest)
            if e < start:
                raise fail(start, e, end_what)
            return start, e, None, None
        if end_ts >= start_ts:
            return start, end, start_ts, end_ts  # a later timestamp's first record is later
        s = _exact(bucket, cover, start_ts, latest)
        e = _exact(bucket, cover, end_ts, latest)
        if e < s:
            raise fail(s, e, end_what)
        return s, e, None, None
    if end_given:
        if start_ts is None:
            if start > end:
                raise fail(start, end, "endingOffsets")
            return start, end, start_ts, end_ts
        if has_match(cover, start_ts, high=end + 1) is True:
            return start, end, start_ts, end_ts  # the start's record lies at or before the end
        s = _exact(bucket, cover, start_ts, latest)
        if s > end:
            raise fail(s, end, "endingOffsets")
        return s, end, None, None
    return start, end, start_ts, end_ts


def _exact(bucket: Bucket, cover: Cover, timestamp: int, latest: int) -> int:
    found = offset_for_time(bucket, cover, timestamp)
    return latest if found is None else found


def has_match(cover: Cover, timestamp: int, low: int = 0, high: int | None = None) -> bool | None:
    """Whether a record of ``cover`` at an offset in ``[low, high)`` has a timestamp >=
    ``timestamp``; None when only a read can say. True only when the first segment that may
    hold one is read whole and lies in the range: the executors then find the record by its
    timestamp from that segment on (planner.py hands the timestamp to its split). A segment read
    part-way (the log start, moved by DeleteRecords, or an overlap falls inside it) may owe its
    ``max_timestamp`` to a record below the read, which Kafka's ListOffsets does not count:
    then None, and the caller reads the exact offset."""
    candidates = [
        (seg, first)
        for seg, first in cover
        if seg.max_timestamp >= timestamp
        and seg.end_offset >= low
        and (high is None or first < high)
    ]
    if not candidates:
        return False
    seg, first = candidates[0]
    if first <= seg.base_offset and low <= first and (high is None or seg.end_offset < high):
        return True  # the record with the segment's max timestamp lies in the range
    return None


def offset_for_time(bucket: Bucket, cover: Cover, timestamp: int) -> int | None:
    """The first offset of ``cover`` whose record has a timestamp >= ``timestamp``; None when
    no record has one."""
    for seg, first in cover:
        if seg.max_timestamp < timestamp:
            continue
        found = _in_segment(bucket, seg, first, timestamp)
        if found is not None:
            return found
    return None


def _in_segment(bucket: Bucket, seg: RemoteSegment, first: int, timestamp: int) -> int | None:
    window = _window(bucket, seg, first, timestamp)
    if window is not None:
        found = _scan(bucket, seg, first, timestamp, *window)
        if found is not None:
            return found
    # no usable indexes, or indexes that do not match the log: read the whole object
    return _scan(bucket, seg, first, timestamp, 0, None)


def _window(
    bucket: Bucket, seg: RemoteSegment, first: int, timestamp: int
) -> tuple[int, int | None] | None:
    """Byte positions ``[begin, end)`` (None = the object's end) holding the first record of
    the segment at or after ``timestamp``, from the indexes; None without both of them."""
    time_key, index_key = seg.key(layout.TIME_INDEX), seg.key(layout.INDEX)
    if time_key is None or index_key is None:
        return None
    times = TimeIndexView.parse(seg.base_offset, bucket.get(time_key))
    index = OffsetIndexView.parse(seg.base_offset, bucket.get(index_key))
    if not times.timestamps or not len(index):
        return None
    begin = index.lookup(max(first, times.lookup(timestamp)))
    i = bisect_left(times.timestamps, timestamp)
    if i >= len(times.timestamps):
        return begin, None
    high = times.offsets[i] - seg.base_offset
    # the batch holding ``high`` ends where the first index entry past it starts
    j = bisect_left(index.relative_offsets, high) + 1
    return begin, (index.positions[j] if j < len(index.positions) else None)


def _scan(
    bucket: Bucket,
    seg: RemoteSegment,
    first: int,
    timestamp: int,
    begin: int,
    end: int | None,
) -> int | None:
    from tiered_mq.spark.planner import SegmentSplit  # planner.py imports this module

    log_key = seg.key(layout.LOG)
    if log_key is None:
        return None
    split = SegmentSplit(
        topic="",
        partition=-1,
        log_key=log_key,
        start_position=begin,
        end_position=end,
        start_offset=first,
        end_offset=seg.end_offset + 1,
        object_crc32c=seg.crc32c,
        size_bytes=seg.size_bytes,
    )
    data = fetch(bucket, split)
    name = bucket.url.describe(log_key)
    for pos, header in walk_headers(data, name, begin):
        if header.last_offset < first or header.max_timestamp < timestamp:
            continue
        try:
            _header, records = decode_batch(data, pos)
        except CorruptRecordError as exc:
            raise LogCorruptionError(name, begin + pos, str(exc)) from exc
        for record in records:
            stamp = header.max_timestamp if header.is_log_append_time else record.timestamp
            if record.offset >= first and stamp >= timestamp:
                return record.offset
    return None
