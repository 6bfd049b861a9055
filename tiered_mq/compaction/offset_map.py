"""OffsetMap: record key -> offset of its latest record in the dirty section of a log.

Pass 1 of a cleaning (cleaner.py) fills it from the dirty section, oldest batch first, so the
value for a key is the offset of the key's last record below the cleaning's end offset. Pass 2
keeps a record iff its offset is >= the map's value for its key (or its key is absent).

Keys of at most 16 bytes are stored as they are; longer keys as ``b"#"`` plus their 16-byte
BLAKE2b digest (17 bytes, so they never collide with a short key). Like Kafka's MD5 map, a digest
collision between two long keys would merge them; at 128 bits that is not a practical concern.

Capacity is counted in entries (``log.cleaner.dedupe.buffer.size`` / ``BYTES_PER_ENTRY``, an
estimate of a Python dict entry with its key). It is a soft bound: pass 1 only stops at a segment
boundary once the map is full, so one segment may take it past the bound.
"""

from __future__ import annotations

import hashlib
from typing import Final

SHORT_KEY: Final = 16
BYTES_PER_ENTRY: Final = 128


def map_key(key: bytes) -> bytes:
    """The map's form of a record key (see the module docstring)."""
    if len(key) <= SHORT_KEY:
        return key
    return b"#" + hashlib.blake2b(key, digest_size=16).digest()


class OffsetMap:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"offset map capacity {capacity} < 1")
        self.capacity = capacity
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    @classmethod
    def for_buffer(cls, buffer_bytes: int) -> OffsetMap:
        return cls(max(1, buffer_bytes // BYTES_PER_ENTRY))

    def __len__(self) -> int:
        return len(self._map)

    @property
    def full(self) -> bool:
        return len(self._map) >= self.capacity

    def put(self, key: bytes, offset: int) -> None:
        """Record ``offset`` as the latest for ``key`` (offsets arrive in increasing order)."""
        self._map[map_key(key)] = offset
        if offset > self.latest_offset:
            self.latest_offset = offset

    def get(self, key: bytes) -> int | None:
        return self._map.get(map_key(key))

    def clear(self) -> None:
        self._map.clear()
        self.latest_offset = -1
