"""Lookups in uploaded index objects and the summary of a segment's .log (pure; Spark-safe).

The ``.index`` and ``.timeindex`` objects are byte copies of the broker's files (formats in
tiered_mq/hot/offset_index.py and time_index.py): 8-byte entries ``(u32 relative offset,
u32 position)`` and 12-byte entries ``(i64 timestamp, u32 relative offset)``, big-endian,
sorted, sparse. They are parsed once per segment into arrays and searched with bisect.
An index object whose length is not a whole number of entries, or whose columns do not
increase, is rejected (the reader then scans from position 0, which is always correct).
"""

from __future__ import annotations

import operator
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import islice

import crc32c

from tiered_mq.record.batch import iter_batches

_OFFSET_ENTRY = 8
_TIME_ENTRY = 12
_TIME = struct.Struct(">qI")


@dataclass(frozen=True)
class OffsetIndexView:
    base_offset: int
    relative_offsets: array[int]
    positions: array[int]

    @classmethod
    def parse(cls, base_offset: int, data: bytes) -> OffsetIndexView:
        usable = len(data) - len(data) % _OFFSET_ENTRY
        both = array("I")
        both.frombytes(data[:usable])
        if sys.byteorder == "little":
            both.byteswap()
        rel, pos = both[0::2], both[1::2]
        if not (_increasing(rel) and _increasing(pos)):
            return cls(base_offset, array("I"), array("I"))
        return cls(base_offset, rel, pos)

    def lookup(self, offset: int) -> int:
        """File position of the greatest entry at or below ``offset`` (0 when none): the batch
        holding ``offset`` starts at or after it."""
        i = bisect_right(self.relative_offsets, offset - self.base_offset) - 1
        return 0 if i < 0 else self.positions[i]

    def __len__(self) -> int:
        return len(self.positions)


@dataclass(frozen=True)
class TimeIndexView:
    base_offset: int
    timestamps: array[int]
    offsets: array[int]  # absolute offsets

    @classmethod
    def parse(cls, base_offset: int, data: bytes) -> TimeIndexView:
        entries = _TIME.iter_unpack(data[: len(data) - len(data) % _TIME_ENTRY])
        timestamps, offsets = array("q"), array("q")
        for ts, rel in entries:
            timestamps.append(ts)
            offsets.append(base_offset + rel)
        if not (_increasing(timestamps) and _increasing(offsets, strict=False)):
            return cls(base_offset, array("q"), array("q"))
        return cls(base_offset, timestamps, offsets)

    def lookup(self, timestamp: int) -> int:
        """An offset from which a scan finds the first record with timestamp >= ``timestamp``:
        one past the greatest entry whose timestamp is < ``timestamp`` (else the base offset)."""
        i = bisect_left(self.timestamps, timestamp) - 1
        return self.base_offset if i < 0 else self.offsets[i] + 1


def _increasing(column: array[int], *, strict: bool = True) -> bool:
    """Each value above (``strict``) or at least its predecessor, compared in C."""
    compare = operator.lt if strict else operator.le
    return all(map(compare, column, islice(column, 1, None)))


@dataclass(frozen=True)
class SegmentSummary:
    """What the manifest records about a .log, computed from its batch headers."""

    base_offset: int
    end_offset: int
    first_timestamp: int
    max_timestamp: int
    record_count: int
    leader_epochs: list[tuple[int, int]]
    crc32c: int
    size_bytes: int


def summarize_log(data: bytes | memoryview) -> SegmentSummary:
    """Validate every batch (CRC-32C) of a whole .log and summarize it; raises
    CorruptRecordError on a bad batch, ValueError when empty."""
    batches = iter_batches(data, validate=True)
    if not batches:
        raise ValueError("empty segment")
    epochs: list[tuple[int, int]] = []
    max_ts = -1
    count = 0
    for _, header in batches:
        if not epochs or header.partition_leader_epoch != epochs[-1][0]:
            epochs.append((header.partition_leader_epoch, header.base_offset))
        max_ts = max(max_ts, header.max_timestamp)
        count += header.records_count
    first, last = batches[0][1], batches[-1][1]
    return SegmentSummary(
        base_offset=first.base_offset,
        end_offset=last.last_offset,
        first_timestamp=first.base_timestamp,
        max_timestamp=max_ts,
        record_count=count,
        leader_epochs=epochs,
        crc32c=crc32c.crc32c(data),
        size_bytes=len(data),
    )
