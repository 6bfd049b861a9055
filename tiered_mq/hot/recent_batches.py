"""Where the last batches appended to a segment start, so a fetch near the log end skips the
header scan.

A consumer that follows the log end fetches from one of the last few batches appended. The
offset index only names a position every ``index.interval.bytes`` (4 KiB by default), so
finding such a batch from the index means decoding the header of every batch after the last
entry: dozens of small batches per fetch. ``RecentBatches`` remembers the position and last
offset of the last ``KEPT`` to ``2 * KEPT`` batches appended (per batch, never per record; 16
bytes a batch, at most 512 per segment) and answers for an offset from the first of them on.

Invariant: the batches are recorded in append order and are the last ones of the segment, back
to back (offsets grow batch after batch): the first batch whose last offset is >= an offset at
or above the first recorded batch's base offset is one of them. The owner calls ``clear`` when
that stops being true (truncation, recovery).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Final

KEPT: Final = 16  # at least this many of the last batches are remembered


class RecentBatches:
    __slots__ = ("_first_base", "_last_offsets", "_positions")

    def __init__(self) -> None:
        self._first_base = -1  # base offset of the first recorded batch; -1: none recorded
        self._last_offsets = array("q")
        self._positions = array("q")

    def add(self, position: int, base_offset: int, last_offset: int) -> None:
        """A batch of offsets ``base_offset``..``last_offset`` appended at ``position``."""
        if not self._positions:
            self._first_base = base_offset
        elif len(self._positions) >= 2 * KEPT:  # drop the oldest KEPT: amortised O(1)
            self._first_base = self._last_offsets[KEPT - 1] + 1
            del self._positions[:KEPT]
            del self._last_offsets[:KEPT]
        self._positions.append(position)
        self._last_offsets.append(last_offset)

    def find(self, offset: int) -> int | None:
        """Position of the first batch whose last offset is >= ``offset``, or None when
        ``offset`` is below the first recorded batch or past the last one."""
        if self._first_base < 0 or offset < self._first_base:
            return None
        i = bisect_left(self._last_offsets, offset)
        return self._positions[i] if i < len(self._positions) else None

    def clear(self) -> None:
        self._first_base = -1
        del self._last_offsets[:]
        del self._positions[:]
