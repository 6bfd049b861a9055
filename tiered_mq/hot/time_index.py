"""TimeIndex: the sparse map from timestamp to offset of one segment (``.timeindex``).

Entry layout (12 bytes, big-endian, Kafka's format)::

    0  timestamp       i64   the greatest batch max timestamp seen so far in the segment
    8  relativeOffset  u32   offset of that batch's last record - segment base offset

Entries are appended at the offset index points (and once more when the segment is rolled),
only when the timestamp grows past the last entry: timestamps strictly increase, offsets do
not decrease. Every record at or below an entry's offset has a timestamp <= the entry's
timestamp, so the first record with timestamp >= T lies after the offset of the greatest
entry whose timestamp is < T. Not checksummed: rebuilt from the log after a crash.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_left
from typing import ClassVar

from tiered_mq.hot.index_file import IndexFile

NO_TIMESTAMP = -1


class TimeIndex(IndexFile):
    ENTRY: ClassVar[struct.Struct] = struct.Struct(">qI")
    KEY_TYPECODE: ClassVar[str] = "q"

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the greatest entry with timestamp < ``timestamp``.

        Every record at or below the returned offset is older than ``timestamp``, so the first
        record with a timestamp >= ``timestamp`` lies after it. (-1, base offset) when none.
        """
        self._ensure_loaded()
        i = bisect_left(self._keys, timestamp) - 1
        if i < 0:
            return NO_TIMESTAMP, self.base_offset
        return self._keys[i], self.base_offset + self._values[i]

    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry, or (-1, base offset) when empty."""
        self._ensure_loaded()
        if not self._keys:
            return NO_TIMESTAMP, self.base_offset
        return self._keys[-1], self.base_offset + self._values[-1]

    def peek_last_timestamp(self, next_offset: int) -> int:
        """The last entry's timestamp read from the file without loading it (one ``pread`` of
        the last two entries), or -1 when it cannot be trusted as a timestamp some batch below
        ``next_offset`` carries: no file, no entry, a torn last entry (a length that is not a
        whole number of entries), the last two entries out of order, a negative timestamp or
        an offset at or past ``next_offset``. When the index is loaded, its last entry under
        the same offset check. Nothing is changed: the file is not loaded, trimmed nor marked
        checked, so its first use still loads and sanity-checks it (LogSegment)."""
        if self._loaded:
            ts, offset = self.last_entry()
            return ts if offset < next_offset else NO_TIMESTAMP
        size = self.ENTRY.size
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return NO_TIMESTAMP
        try:
            length = os.fstat(fd).st_size
            if length == 0 or length % size:
                return NO_TIMESTAMP
            start = max(0, length - 2 * size)
            data = os.pread(fd, length - start, start)
        finally:
            os.close(fd)
        if len(data) != length - start:
            return NO_TIMESTAMP
        entries = list(self.ENTRY.iter_unpack(data))
        ts, rel = entries[-1]
        if len(entries) == 2 and (entries[0][0] >= ts or entries[0][1] > rel):
            return NO_TIMESTAMP
        return ts if ts >= 0 and self.base_offset + rel < next_offset else NO_TIMESTAMP

    def entries(self) -> list[tuple[int, int]]:
        """Every (timestamp, absolute offset) pair, oldest first."""
        return [(k, self.base_offset + v) for k, v in self.raw_entries()]

    def maybe_append(self, entries: list[tuple[int, int]]) -> None:
        """Append those (timestamp, offset) entries whose timestamp exceeds the last one."""
        self._ensure_loaded()
        last_ts = self._keys[-1] if self._keys else NO_TIMESTAMP
        last_rel = self._values[-1] if self._values else 0
        keys: list[int] = []
        values: list[int] = []
        for timestamp, offset in entries:
            rel = offset - self.base_offset
            if timestamp <= last_ts:
                continue
            if rel < last_rel or rel > 0xFFFFFFFF:
                raise ValueError(f"time index offset {offset} out of order in {self.path}")
            keys.append(timestamp)
            values.append(rel)
            last_ts, last_rel = timestamp, rel
        self._append_raw(keys, values)

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        self._ensure_loaded()
        self._truncate_entries(bisect_left(self._values, offset - self.base_offset))

    def is_sane(self, next_offset: int | None = None) -> bool:
        """Timestamps strictly increase, offsets do not decrease (and stay below next_offset)."""
        self._ensure_loaded()
        keys, values = self._keys, self._values
        if any(keys[i] >= keys[i + 1] or values[i] > values[i + 1] for i in range(len(keys) - 1)):
            return False
        if next_offset is not None and values:
            return self.base_offset + values[-1] < next_offset
        return True
