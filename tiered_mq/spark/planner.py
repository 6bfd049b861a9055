"""Planning a bucket read on the driver: topics -> partition manifests -> splits.

One :class:`SegmentSplit` per remote segment (a ``.log`` object), or per byte range of a segment
larger than ``maxBytesPerSplit``: the segment's ``.index`` object is fetched and the log is cut at
index positions (each one a batch start), so every split holds whole batches. A segment that the
read's offsets cover only in part (the range starts or ends inside it) is bounded the same way:
its split is a ranged GET from the index entry at or below the start to the first entry past the
end, not the whole object.

Pruning, in order (each one means fewer objects read):

- topics and partitions: options and pushed-down ``topic`` / ``partition`` filters; a
  partition manifest whose topic id is not topic.json's (a deleted topic of the same name whose
  objects are still in the bucket, cold/manifest.py) is not read;
- offsets: ``[start, end)`` from startingOffsets / endingOffsets and pushed-down ``offset``
  filters against each segment's ``[base_offset, end_offset]`` from the manifest, and against a
  byte range's conservative offset range from the index entries around it;
- timestamps: segments whose ``max_timestamp`` is below startingTimestamp (or a pushed-down
  lower bound on ``timestamp``) are skipped; segments after the first one whose
  ``max_timestamp`` reaches endingTimestamp are skipped. The boundaries are found from
  startingOffsets on, never from a pushed-down ``offset`` bound: a filter must not move them,
  so the segments holding them are read from there. In the segments holding those
  boundaries, the ``.timeindex`` narrows them to a window of byte ranges; the split covering a
  window carries the timestamp and the executor finds the exact record. Before that the bounds
  are checked as Spark checks them once resolved (timestamps.py): a start timestamp no record
  reaches fails the read (startingOffsetsByTimestampStrategy=error), and so does a start that
  resolves past the end; where that check had to read the exact offset of a timestamp (on the
  driver, one index-bounded byte window), the bound becomes that offset.

read_committed: each partition's end offset is lowered to the bucket's last stable offset (the
first batch of an undecided transaction, stable_offset.py), so every split of the partition
stops there.

Segments whose offset ranges overlap (a new leader re-uploaded) hold equal data there; each
offset is read from the first segment that covers it.
Manifest and index reads happen here, on the driver, and so do the ``.log`` reads of the last
segments for read_committed; executors read only ``.log`` objects.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from pyspark.sql.datasource import InputPartition

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import (
    VERSION,
    ManifestFormatError,
    PartitionManifest,
    RemoteSegment,
    is_foreign,
    parse_partition_manifest,
    parse_topic_manifest,
)
from tiered_mq.cold.remote_index import OffsetIndexView, TimeIndexView
from tiered_mq.errors import ObjectNotFoundError
from tiered_mq.spark.bucket import Bucket
from tiered_mq.spark.options import EARLIEST, LATEST, ReadOptions
from tiered_mq.spark.stable_offset import stable_end
from tiered_mq.spark.timestamps import resolve
from tiered_mq.spark.transactions import (
    LOOKAHEAD_SEGMENTS,
    AbortedTxn,
    overlapping,
    parse_txn_index,
)


class DataLossError(ValueError):
    """Records the read asks for are no longer in the bucket (``failOnDataLoss=true``)."""


@dataclass(frozen=True)
class Pushed:
    """Bounds taken from pushed-down filters (None = unbounded)."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    offset_low: int | None = None  # inclusive
    offset_high: int | None = None  # exclusive
    min_timestamp_us: int | None = None  # rows below may exist; batches wholly below are skipped


@dataclass
class SegmentSplit(InputPartition):  # type: ignore[misc]
    """A byte range ``[start_position, end_position)`` of one ``.log`` object and the offsets
    ``[start_offset, end_offset)`` to return from it (``end_position`` None = to the end)."""

    topic: str
    partition: int
    log_key: str
    start_position: int
    end_position: int | None
    start_offset: int
    end_offset: int
    start_timestamp: int | None = None
    end_timestamp: int | None = None
    min_timestamp_us: int | None = None
    aborted: tuple[AbortedTxn, ...] = ()
    object_crc32c: int | None = None  # checked when the whole object is read
    read_committed: bool = True
    fail_on_data_loss: bool = True  # False: a .log object missing at read time is skipped
    size_bytes: int = 0
    # read_committed: byte ranges after this split (key, start, end) where markers may lie
    later: tuple[tuple[str, int, int], ...] = ()


def list_topics(bucket: Bucket, opts: ReadOptions) -> list[str]:
    if opts.topics:
        return list(opts.topics)
    assert opts.topic_pattern is not None
    pattern = re.compile(opts.topic_pattern)
    names = bucket.list_dirs(layout.topics_prefix(bucket.url.prefix))
    return [t for t in names if pattern.fullmatch(t)]


def topic_partitions(bucket: Bucket, topic: str) -> tuple[list[int], str | None]:
    """Partitions from the topic manifest, else the partition folders present; and the
    topic id of the topic manifest (None without one)."""
    prefix = bucket.url.prefix
    key = layout.topic_manifest_key(prefix, topic)
    try:
        manifest = parse_topic_manifest(bucket.get(key))
        return list(range(manifest.partition_count)), manifest.topic_id
    except ObjectNotFoundError:
        folders = bucket.list_dirs(layout.topic_prefix(prefix, topic))
        return sorted(int(f) for f in folders if f.isdigit()), None
    except ManifestFormatError as exc:
        raise _unreadable(bucket, key, exc) from exc


def assigned(wanted: tuple[int, ...], topic: str, partitions: list[int]) -> list[int]:
    """Option ``assign``'s partitions of ``topic``, each one a partition it has."""
    missing = sorted(set(wanted) - set(partitions))
    if missing:
        raise ValueError(
            f"assign names partition(s) {', '.join(map(str, missing))} of topic {topic!r}, "
            f"which has {len(partitions)} partition(s) in the bucket"
        )
    return list(wanted)


def load_manifest(bucket: Bucket, topic: str, partition: int) -> PartitionManifest | None:
    key = layout.manifest_key(bucket.url.prefix, topic, partition)
    try:
        return parse_partition_manifest(bucket.get(key))
    except ObjectNotFoundError:
        return None  # nothing of this partition was uploaded yet
    except ManifestFormatError as exc:
        raise _unreadable(bucket, key, exc) from exc


def _unreadable(bucket: Bucket, key: str, exc: ManifestFormatError) -> ManifestFormatError:
    """``exc`` naming the object, and the format this reader knows (a manifest written by a
    newer tiered-mq needs that version where Spark runs)."""
    return ManifestFormatError(
        f"{bucket.url.describe(key)}: {exc} (this tiered-mq reads manifest version {VERSION})"
    )


def plan(bucket: Bucket, opts: ReadOptions, pushed: Pushed) -> list[SegmentSplit]:
    """The read's splits. With ``minPartitions`` above their number (Spark's option: about that
    many tasks), planned again with ``maxBytesPerSplit`` lowered to the bytes to read divided
    by ``minPartitions``: objects are then cut at offset-index positions, so the count is
    approximate (an object without an ``.index`` stays whole)."""
    splits = _plan(bucket, opts, pushed)
    wanted = opts.min_partitions
    if wanted is None or len(splits) >= wanted:
        return splits
    total = sum(_bytes(s) for s in splits)
    target = max(1, total // wanted)
    if target >= opts.max_bytes_per_split:
        return splits
    return _plan(bucket, replace(opts, max_bytes_per_split=target), pushed)


def _bytes(split: SegmentSplit) -> int:
    end = split.size_bytes if split.end_position is None else split.end_position
    return end - split.start_position


def _plan(bucket: Bucket, opts: ReadOptions, pushed: Pushed) -> list[SegmentSplit]:
    """Every topic's partitions are listed when a per-partition JSON is in effect, filtered
    out or not: the JSON must name them all (Spark applies it before any filter)."""
    every_topic = bool(opts.specific_limits())
    read: dict[str, tuple[list[int], str | None]] = {}
    for topic in list_topics(bucket, opts):
        if not every_topic and pushed.topics is not None and topic not in pushed.topics:
            continue
        partitions, topic_id = topic_partitions(bucket, topic)
        if opts.assign is not None:
            partitions = assigned(opts.assign[topic], topic, partitions)
        read[topic] = partitions, topic_id
    opts.check_assigned({topic: partitions for topic, (partitions, _) in read.items()})
    splits: list[SegmentSplit] = []
    for topic, (partitions, topic_id) in read.items():
        if pushed.topics is not None and topic not in pushed.topics:
            continue
        for partition in partitions:
            if pushed.partitions is not None and partition not in pushed.partitions:
                continue
            manifest = load_manifest(bucket, topic, partition)
            # a manifest of another topic id is a deleted topic's of the same name
            if manifest is not None and not is_foreign(manifest.topic_id, topic_id):
                splits += plan_partition(bucket, opts, pushed, manifest)
    return splits


def plan_partition(
    bucket: Bucket, opts: ReadOptions, pushed: Pushed, manifest: PartitionManifest
) -> list[SegmentSplit]:
    segments = sorted(manifest.readable_segments(), key=lambda s: (s.base_offset, s.end_offset))
    if not segments:
        return []
    topic, partition = manifest.topic, manifest.partition
    earliest = max(manifest.log_start_offset, segments[0].base_offset)
    latest = max(s.end_offset for s in segments) + 1
    bounds = opts.bounds(topic, partition)
    start = {EARLIEST: earliest, LATEST: latest}.get(bounds.start, bounds.start)
    end = {EARLIEST: earliest, LATEST: latest}.get(bounds.end, bounds.end)
    if (
        opts.fail_on_data_loss
        and bounds.start not in (EARLIEST, LATEST)
        and bounds.start < earliest
    ):
        raise DataLossError(
            f"startingOffsets for {topic}-{partition} is {bounds.start}, but the bucket's log "
            f"start offset is {earliest}: offsets {bounds.start}-{earliest - 1} were deleted "
            "(retention or DeleteRecords). Set failOnDataLoss=false to read from the log start"
        )
    start_ts, end_ts = bounds.start_timestamp, bounds.end_timestamp
    if start_ts is not None or end_ts is not None:
        start, end, start_ts, end_ts = resolve(
            bucket,
            (topic, partition),
            _cover(segments, earliest, latest),
            (start, end, start_ts, end_ts),
            end_given=bounds.end != LATEST,
            latest=latest,
            no_match_latest=opts.no_match_latest,
        )
    start, end = max(start, earliest), min(end, latest)
    # A pushed lower bound on offset prunes only after the timestamp boundaries are placed: they
    # are the first records at or after startingOffsets, which may lie below the filter.
    low = start if pushed.offset_low is None else max(start, pushed.offset_low)
    if pushed.offset_high is not None:
        end = min(end, pushed.offset_high)
    if opts.read_committed:  # stop at the first undecided transaction, as Kafka's LSO does
        end = stable_end(bucket, segments, end)
    if low >= end:
        return []

    chosen = _cover(segments, start, end)

    # Timestamps: skip segments wholly below the start, and those after the end's segment.
    start_marker: RemoteSegment | None = None
    end_marker: RemoteSegment | None = None
    if start_ts is not None:
        first = next((i for i, (s, _) in enumerate(chosen) if s.max_timestamp >= start_ts), None)
        chosen = [] if first is None else chosen[first:]
        start_marker = chosen[0][0] if chosen else None
    if end_ts is not None:
        last = next((i for i, (s, _) in enumerate(chosen) if s.max_timestamp >= end_ts), None)
        if last is not None:
            chosen = chosen[: last + 1]
            end_marker = chosen[-1][0]
    chosen = _prune_pushed(chosen, pushed, low, (start_marker, end_marker))

    aborted: list[AbortedTxn] = []
    if opts.read_committed and chosen:
        aborted = _aborted_after(bucket, segments, chosen[0][0].base_offset)

    splits: list[SegmentSplit] = []
    following = {id(s): _later(segments, i) for i, s in enumerate(segments)}
    for seg, first_offset in chosen:
        log_key = seg.key(layout.LOG)
        if log_key is None:
            continue
        split_end = min(end, seg.end_offset + 1)
        base = SegmentSplit(
            topic=topic,
            partition=partition,
            log_key=log_key,
            start_position=0,
            end_position=None,
            start_offset=first_offset,
            end_offset=split_end,
            min_timestamp_us=pushed.min_timestamp_us,
            aborted=overlapping(aborted, first_offset, split_end),
            object_crc32c=seg.crc32c,
            read_committed=opts.read_committed,
            fail_on_data_loss=opts.fail_on_data_loss,
            size_bytes=seg.size_bytes,
            later=following[id(seg)] if opts.read_committed else (),
        )
        large = seg.size_bytes > opts.max_bytes_per_split
        partial = first_offset > seg.base_offset or split_end <= seg.end_offset
        if (large or partial) and seg.key(layout.INDEX) is not None:
            ranges = _byte_ranges(bucket, seg, base, opts.max_bytes_per_split)
        else:
            ranges = [Range(base, first_offset, split_end - 1)]
        s_ts = start_ts if seg is start_marker else None
        e_ts = end_ts if seg is end_marker else None
        if ranges and (s_ts is not None or e_ts is not None):
            ranges = place_markers(bucket, seg, ranges, s_ts, e_ts)
        splits += [r.split for r in ranges]
    return splits


def _cover(segments: list[RemoteSegment], start: int, end: int) -> list[tuple[RemoteSegment, int]]:
    """(segment, first offset to read from it) covering ``[start, end)``: offsets, then
    overlaps (each offset from the first segment that holds it)."""
    chosen: list[tuple[RemoteSegment, int]] = []
    covered = start
    for seg in segments:
        if seg.end_offset < covered or seg.base_offset >= end:
            continue
        chosen.append((seg, max(covered, seg.base_offset)))
        covered = seg.end_offset + 1
    return chosen


def _prune_pushed(
    chosen: list[tuple[RemoteSegment, int]],
    pushed: Pushed,
    low: int,
    markers: tuple[RemoteSegment | None, RemoteSegment | None],
) -> list[tuple[RemoteSegment, int]]:
    """``chosen`` without the segments that pushed-down filters rule out: those wholly below
    the pushed offset ``low`` or the pushed minimum timestamp; the others start at ``low``.

    Run after the timestamp boundaries are placed, which the filters must not move (Spark
    applies the filters again; dropping or narrowing a read must not change its rows). A
    segment holding a boundary is read from its first chosen offset, so that the executor
    meets the first record at or above the timestamp even when it lies below ``low``. A
    boundary segment wholly below ``low`` is dropped like any other: a start there means every
    record from ``low`` on qualifies; an end there means no segment is left (those after the
    end's segment are gone already)."""
    min_ms = None if pushed.min_timestamp_us is None else pushed.min_timestamp_us // 1000
    out: list[tuple[RemoteSegment, int]] = []
    for seg, first in chosen:
        if seg.end_offset < low or (min_ms is not None and seg.max_timestamp < min_ms):
            continue
        marker = any(seg is m for m in markers)
        out.append((seg, first if marker else max(first, low)))
    return out


def _aborted_after(
    bucket: Bucket, segments: Iterable[RemoteSegment], from_offset: int
) -> list[AbortedTxn]:
    """Aborted transactions of every segment from ``from_offset`` on (markers come later)."""
    out: list[AbortedTxn] = []
    for seg in segments:
        key = seg.key(layout.TXN_INDEX)
        if key is None or seg.end_offset < from_offset:
            continue
        try:
            out += parse_txn_index(bucket.get(key))
        except ObjectNotFoundError:
            continue
    return out


class Range(NamedTuple):
    """A split and a conservative range ``[low, high]`` of the offsets it may hold."""

    split: SegmentSplit
    low: int
    high: int


def _byte_ranges(
    bucket: Bucket, seg: RemoteSegment, base: SegmentSplit, max_bytes: int
) -> list[Range]:
    """Cut a large segment at offset-index positions about ``max_bytes`` apart.

    Range j = ``[P_j, P_j+1)`` holds offsets above the index entry just before P_j and below the
    entry at P_j+1 (an entry names a batch's last offset and where the batch starts; the same
    bounds hold if a writer indexed base offsets); ranges whose conservative offset range misses
    ``[start_offset, end_offset)`` are dropped. The first range kept starts at the greatest
    entry at or below ``start_offset``, and every range ends at the first entry whose
    predecessor reaches ``end_offset - 1`` (the batches from there on lie past the end): a read
    that starts or ends inside a segment is one ranged GET of about the bytes it needs, not the
    whole object. An index object missing since the manifest was read: one whole range.
    """
    index_key = seg.key(layout.INDEX)
    assert index_key is not None
    try:
        index = OffsetIndexView.parse(seg.base_offset, bucket.get(index_key))
    except ObjectNotFoundError:
        return [Range(base, base.start_offset, base.end_offset - 1)]
    positions, rel = index.positions, index.relative_offsets
    # batches from position ``stop`` on hold only offsets >= end_offset (None: read to the end)
    after = bisect_left(rel, base.end_offset - 1 - seg.base_offset) + 1
    stop = positions[after] if after < len(positions) else None
    cuts: list[int] = [-1]  # index entries where ranges start; -1 = position 0
    for i, position in enumerate(positions):
        if position - (0 if cuts[-1] < 0 else positions[cuts[-1]]) >= max_bytes:
            cuts.append(i)
    out: list[Range] = []
    for j, cut in enumerate(cuts):
        begin = 0 if cut < 0 else positions[cut]
        last = j + 1 == len(cuts)
        end_pos = None if last else positions[cuts[j + 1]]
        low = seg.base_offset if cut <= 0 else seg.base_offset + rel[cut - 1] + 1
        high = seg.end_offset if last else seg.base_offset + rel[cuts[j + 1]] - 1
        if high < base.start_offset or low >= base.end_offset:
            continue
        if base.start_offset > low:  # start at the batch holding start_offset
            begin = max(begin, index.lookup(base.start_offset))
        if stop is not None and (end_pos is None or stop < end_pos):
            end_pos = stop
        if end_pos is not None and begin >= end_pos:
            continue
        rest = () if end_pos is None else ((base.log_key, end_pos, seg.size_bytes),)
        split = replace(base, start_position=begin, end_position=end_pos, later=rest + base.later)
        out.append(Range(split, max(low, base.start_offset), min(high, base.end_offset - 1)))
    return out


def place_markers(
    bucket: Bucket,
    seg: RemoteSegment,
    ranges: list[Range],
    start_ts: int | None,
    end_ts: int | None,
) -> list[Range]:
    """Give the start / end timestamps to the ranges that may hold the boundary records.

    The ``.timeindex`` bounds where the first record with timestamp >= T lies: after the
    greatest entry below T (every record up to an entry's offset is at most its timestamp) and
    at or before the first entry at or above T. Ranges before the start window and after the
    end window are dropped, the ranges of each window are merged into one split carrying the
    timestamp, and the ranges in between are read as they are. Without a usable time index the
    segment is read as one split carrying both timestamps.
    """
    view = None
    time_key = seg.key(layout.TIME_INDEX)
    if len(ranges) > 1 and time_key is not None:
        view = TimeIndexView.parse(seg.base_offset, bucket.get(time_key))
    if view is None or not view.timestamps:
        return [_merge(ranges, 0, len(ranges) - 1, start_ts, end_ts)]
    first, last = 0, len(ranges) - 1
    groups: list[tuple[int, int, int | None, int | None]] = []
    for ts, is_start in ((start_ts, True), (end_ts, False)):
        if ts is None:
            continue
        low = view.lookup(ts)
        i = bisect_left(view.timestamps, ts)
        high = view.offsets[i] if i < len(view.timestamps) else seg.end_offset
        a = next((k for k, r in enumerate(ranges) if r.high >= low), len(ranges) - 1)
        b = max(a, max((k for k, r in enumerate(ranges) if r.low <= high), default=a))
        groups.append((a, b, ts if is_start else None, None if is_start else ts))
        first, last = (a, last) if is_start else (first, b)
    out: list[Range] = []
    k = first
    while k <= last:
        hits = [g for g in groups if g[0] <= k <= g[1]]
        if not hits:
            out.append(ranges[k])
            k += 1
            continue
        end = k
        while any(g[0] <= end + 1 <= g[1] for g in groups) and end + 1 <= last:
            end += 1
        touched = [g for g in groups if g[0] <= end and g[1] >= k]
        s = next((g[2] for g in touched if g[2] is not None), None)
        e = next((g[3] for g in touched if g[3] is not None), None)
        out.append(_merge(ranges, k, min(end, last), s, e))
        k = end + 1
    return out


def _merge(ranges: list[Range], i: int, j: int, start_ts: int | None, end_ts: int | None) -> Range:
    split = replace(
        ranges[i].split,
        end_position=ranges[j].split.end_position,
        later=ranges[j].split.later,
        start_timestamp=start_ts,
        end_timestamp=end_ts,
    )
    return Range(split, ranges[i].low, ranges[j].high)


def _later(segments: list[RemoteSegment], i: int) -> tuple[tuple[str, int, int], ...]:
    out = []
    for seg in segments[i + 1 : i + 1 + LOOKAHEAD_SEGMENTS]:
        key = seg.key(layout.LOG)
        if key is not None:
            out.append((key, 0, seg.size_bytes))
    return tuple(out)
