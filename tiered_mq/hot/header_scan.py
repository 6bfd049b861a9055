"""The batch header scan of a ``.log`` file, shared by LogSegment and the log cleaner.

A ``.log`` holds record batches v2 back to back (record/batch.py): a batch is its 12-byte
offset and length prefix plus ``batch_length`` bytes, so a batch of ``header.size`` bytes at
position p is followed by the next batch at p + ``header.size``. The scan decodes only the
61-byte header of each batch (never its records, never its CRC-32C: validation is recovery's
job) and reads the file ``SCAN_CHUNK`` bytes at a time, so one ``os.pread`` serves many small
batches.

It reads through a bare file descriptor with ``os.pread`` (no file position is moved), up to an
``end`` fixed by the caller when the scan starts: LogSegment passes its own descriptor and size
(under the partition lock); the cleaner passes a ``dup`` of the descriptor and the size the
segment had when planned, so it can run without the lock (non-active segments never grow).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from tiered_mq.record.batch import HEADER_SIZE, BatchHeader, read_header

SCAN_CHUNK = 64 * 1024  # bytes per pread; more than one header
assert SCAN_CHUNK >= HEADER_SIZE


def scan_headers(
    fd: int, position: int, end: int, corrupt: Callable[[int, str], Exception]
) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of every batch starting at ``position`` (a batch boundary) and below
    ``end``.

    Raises ``corrupt(position, reason)`` where a batch starts but fewer than a header's bytes
    can be read, and where a batch length is below the header's (the scan would not advance).
    """
    buf, buf_start = b"", position
    while position < end:
        rel = position - buf_start
        if rel + HEADER_SIZE > len(buf):
            buf, buf_start, rel = os.pread(fd, SCAN_CHUNK, position), position, 0
            if len(buf) < HEADER_SIZE:
                raise corrupt(position, "truncated batch header")
        header = read_header(buf, rel)
        if header.size < HEADER_SIZE:
            raise corrupt(position, f"batch length {header.batch_length} below header size")
        yield position, header
        position += header.size
