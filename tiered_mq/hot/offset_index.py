"""OffsetIndex: the sparse map from offset to file position of one segment (``.index``).

Entry layout (8 bytes, big-endian, Kafka's format)::

    0  relativeOffset  u32   offset - segment base offset
    4  position        u32   byte position in the .log of the batch holding that offset

Like Kafka, an entry is added at most once per batch, for the batch's *last* offset, when more
than ``index.interval.bytes`` have been appended since the previous entry; the index is sparse,
so a lookup returns the greatest entry at or below the target and the reader scans batch
headers forward from its position. Both columns strictly increase. Not checksummed: after a
crash it is sanity-checked or rebuilt from the log (see log_segment.py).
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from typing import ClassVar

from tiered_mq.hot.index_file import IndexFile


class OffsetIndex(IndexFile):
    ENTRY: ClassVar[struct.Struct] = struct.Struct(">II")
    KEY_TYPECODE: ClassVar[str] = "I"

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the greatest entry with offset <= ``offset``, else (base, 0)."""
        self._ensure_loaded()
        i = bisect_right(self._keys, offset - self.base_offset) - 1
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self._keys[i], self._values[i]

    def lookup_by_position(self, position: int) -> tuple[int, int]:
        """(offset, position) of the greatest entry at or before ``position``, else (base, 0)."""
        self._ensure_loaded()
        i = bisect_right(self._values, position) - 1
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self._keys[i], self._values[i]

    def last_entry(self) -> tuple[int, int]:
        self._ensure_loaded()
        if not self._keys:
            return self.base_offset, 0
        return self.base_offset + self._keys[-1], self._values[-1]

    def entries(self) -> list[tuple[int, int]]:
        """Every (absolute offset, position) pair, oldest first."""
        return [(self.base_offset + k, v) for k, v in self.raw_entries()]

    def append(self, entries: list[tuple[int, int]]) -> None:
        """Append (offset, position) entries; each must exceed the last in both columns."""
        self._ensure_loaded()
        last_key = self._keys[-1] if self._keys else -1
        last_pos = self._values[-1] if self._values else -1
        keys: list[int] = []
        values: list[int] = []
        for offset, position in entries:
            rel = offset - self.base_offset
            if rel <= last_key or position <= last_pos or rel > 0xFFFFFFFF:
                raise ValueError(f"index entry ({offset}, {position}) out of order in {self.path}")
            keys.append(rel)
            values.append(position)
            last_key, last_pos = rel, position
        self._append_raw(keys, values)

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        self._ensure_loaded()
        self._truncate_entries(bisect_left(self._keys, offset - self.base_offset))

    def truncate_to_position(self, position: int) -> None:
        """Drop entries pointing at positions >= ``position``."""
        self._ensure_loaded()
        self._truncate_entries(bisect_left(self._values, position))

    def is_sane(self, log_size: int) -> bool:
        """Both columns strictly increase and every position lies inside the log."""
        self._ensure_loaded()
        keys, values = self._keys, self._values
        if any(keys[i] >= keys[i + 1] or values[i] >= values[i + 1] for i in range(len(keys) - 1)):
            return False
        return not values or values[-1] < log_size
