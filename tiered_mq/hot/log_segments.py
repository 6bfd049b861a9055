"""LogSegments: a partition's segments by base offset, with floor lookup; not thread-safe.

Invariant: base offsets are unique and kept in a sorted list beside a dict, so the segment
holding an offset is found with ``bisect`` (the greatest base offset <= the offset). The last
segment is the active segment.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator

from tiered_mq.hot.log_segment import LogSegment


class LogSegments:
    def __init__(self) -> None:
        self._bases: list[int] = []
        self._by_base: dict[int, LogSegment] = {}

    def __len__(self) -> int:
        return len(self._bases)

    def __iter__(self) -> Iterator[LogSegment]:
        return (self._by_base[b] for b in self._bases)

    def __contains__(self, base_offset: object) -> bool:
        return base_offset in self._by_base

    def add(self, segment: LogSegment) -> None:
        """Add or replace the segment with this base offset."""
        if segment.base_offset not in self._by_base:
            insort(self._bases, segment.base_offset)
        self._by_base[segment.base_offset] = segment

    def remove(self, base_offset: int) -> LogSegment:
        segment = self._by_base.pop(base_offset)
        del self._bases[bisect_left(self._bases, base_offset)]
        return segment

    def get(self, base_offset: int) -> LogSegment | None:
        return self._by_base.get(base_offset)

    def first(self) -> LogSegment | None:
        return self._by_base[self._bases[0]] if self._bases else None

    def last(self) -> LogSegment | None:
        return self._by_base[self._bases[-1]] if self._bases else None

    def active(self) -> LogSegment:
        """The last segment: the active segment (IndexError when empty; a log never is)."""
        return self._by_base[self._bases[-1]]

    def floor(self, offset: int) -> LogSegment | None:
        """The segment with the greatest base offset <= ``offset``."""
        i = bisect_right(self._bases, offset) - 1
        return self._by_base[self._bases[i]] if i >= 0 else None

    def higher(self, base_offset: int) -> LogSegment | None:
        """The segment after the one with this base offset."""
        i = bisect_right(self._bases, base_offset)
        return self._by_base[self._bases[i]] if i < len(self._bases) else None

    def from_offset(self, offset: int) -> list[LogSegment]:
        """The segment holding ``offset`` (or the first after it) and every later one."""
        i = max(bisect_right(self._bases, offset) - 1, 0)
        return [self._by_base[b] for b in self._bases[i:]]

    def at_or_above(self, offset: int) -> list[LogSegment]:
        """Segments whose base offset is >= ``offset``."""
        return [self._by_base[b] for b in self._bases[bisect_left(self._bases, offset) :]]

    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def all(self) -> list[LogSegment]:
        return [self._by_base[b] for b in self._bases]

    def size_bytes(self) -> int:
        return sum(s.size for s in self._by_base.values())
