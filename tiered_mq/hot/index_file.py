"""IndexFile: the shared mechanics of the offset index and the time index.

An index file is a flat array of fixed-size big-endian entries ``(key, value)`` with keys
sorted; it has no header and no checksum. Files are append-only here (not preallocated), so
a rolled segment's index is already its final size. Entries are mirrored in two in-memory
arrays searched with bisect; the file is loaded lazily on first use.

Crash behaviour: an index is only a cache of facts in the .log file. A crash can leave a
torn last entry or entries for batches that never reached the disk; recovery trims the file
to a whole number of entries, drops entries that fail the sanity check, and rebuilds the index
from the .log when in doubt (see log_segment.py).
"""

from __future__ import annotations

import os
import struct
from array import array
from pathlib import Path
from typing import ClassVar

from tiered_mq.durable_file import write_fully
from tiered_mq.errors import KafkaStorageError


class IndexFile:
    """Sorted (key, value) entries of one index file; not thread-safe."""

    ENTRY: ClassVar[struct.Struct]
    KEY_TYPECODE: ClassVar[str]

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self._keys: array[int] = array(self.KEY_TYPECODE)
        self._values: array[int] = array("I")
        self._fd: int | None = None
        self._loaded = False

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        whole = len(data) - len(data) % self.ENTRY.size
        for key, value in self.ENTRY.iter_unpack(memoryview(data)[:whole]):
            self._keys.append(key)
            self._values.append(value)
        if whole != len(data):  # a torn last entry
            os.truncate(self.path, whole)

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._keys)

    def raw_entries(self) -> list[tuple[int, int]]:
        """Stored (key, value) pairs, keys as in the file (relative offsets are relative)."""
        self._ensure_loaded()
        return list(zip(self._keys, self._values, strict=True))

    @property
    def size_bytes(self) -> int:
        return len(self) * self.ENTRY.size

    def _open_for_append(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def _append_raw(self, keys: list[int], values: list[int]) -> None:
        """Write entries at the end of the file; on failure the file is trimmed back."""
        if not keys:
            return
        self._ensure_loaded()
        data = b"".join(self.ENTRY.pack(k, v) for k, v in zip(keys, values, strict=True))
        fd = self._open_for_append()
        try:
            write_fully(fd, data)
        except OSError as exc:
            os.ftruncate(fd, self.size_bytes)
            raise KafkaStorageError(f"{self.path}: {exc}") from exc
        self._keys.extend(keys)
        self._values.extend(values)

    def _truncate_entries(self, count: int) -> None:
        self._ensure_loaded()
        if count >= len(self._keys):
            return
        del self._keys[count:]
        del self._values[count:]
        os.truncate(self.path, count * self.ENTRY.size)

    def reset(self, keys: list[int], values: list[int]) -> None:
        """Replace every entry (used when an index is rebuilt from the log)."""
        self.close()
        self._keys = array(self.KEY_TYPECODE)
        self._values = array("I")
        self._loaded = True
        with open(self.path, "wb"):
            pass
        self._append_raw(keys, values)

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the append handle; entries stay readable in memory."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def rename(self, path: Path) -> None:
        if self.path.exists():
            self.path.replace(path)
        self.path = path
