"""The aborted-transaction index of a segment (``{base_offset:020d}.txnindex``), Kafka's format.

One entry per transaction aborted by an ABORT marker written into the segment, in marker
order (the log cleaner leaves out a transaction once it removed its data, so an entry's marker
is always in the segment: compaction/txn_filter.py), 34 bytes, big-endian (Kafka's
``AbortedTxn``)::

    version             i16  = 0
    producer_id         i64
    first_offset        i64  offset of the transaction's first batch (may be in an older segment)
    last_offset         i64  offset of the ABORT marker
    last_stable_offset  i64  the partition's last stable offset once the transaction ended

A read_committed fetch lists the aborted transactions overlapping the range it returns, so the
consumer drops their records. Entries are appended without fsync: a torn trailing entry (a
crash mid-write) is ignored on load, and entries for markers past a truncated log end are
dropped (:meth:`TransactionIndex.truncate_to`), as are entries that name no ABORT marker of
their producer (a zeroed tail decodes as producer 0's transaction at offset 0:
:meth:`TransactionIndex.retain`, broker/txn/partition_txn.py); on open the partition restores
the missing entries of every segment the log's recovery re-read, from the log's markers
(:meth:`TransactionIndex.rewrite`, see broker/txn/partition_txn.py). A flush fsyncs the file
with its segment (LogSegment.flush).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Final

from tiered_mq.durable_file import replace_durably
from tiered_mq.hot import log_files

ENTRY: Final = struct.Struct(">hqqqq")
ENTRY_SIZE: Final = ENTRY.size  # 34
VERSION: Final = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return ENTRY.pack(
            VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )

    def overlaps(self, start_offset: int, end_offset: int) -> bool:
        """True when the transaction touches [start_offset, end_offset)."""
        return self.last_offset >= start_offset and self.first_offset < end_offset


def unpack_entries(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """The fields (version, producer_id, first_offset, last_offset, last_stable_offset) of
    every whole entry of ``data``; a torn trailing entry is ignored. For readers that keep
    entries as objects of their own (the Spark reader's): one object per entry, not two.

    Raises ValueError for an entry of an unknown version."""
    whole = len(data) - len(data) % ENTRY_SIZE
    fields = list(ENTRY.iter_unpack(memoryview(data)[:whole]))
    if any(map(VERSION.__ne__, map(itemgetter(0), fields))):  # no Python loop per entry
        i, version = next((i, e[0]) for i, e in enumerate(fields) if e[0] != VERSION)
        raise ValueError(f"transaction index entry version {version} at byte {i * ENTRY_SIZE}")
    return fields


def decode_entries(data: bytes) -> list[AbortedTxn]:
    """Every whole entry of ``data``; a torn trailing entry is ignored.

    Raises ValueError for an entry of an unknown version."""
    return [AbortedTxn(pid, first, last, lso) for _, pid, first, last, lso in unpack_entries(data)]


class TransactionIndex:
    """The ``.txnindex`` file of the segment whose base offset is ``base_offset``."""

    def __init__(self, dir: Path, base_offset: int) -> None:
        self.base_offset = base_offset
        self.path = log_files.txn_index_file(dir, base_offset)

    def entries(self) -> list[AbortedTxn]:
        try:
            return decode_entries(self.path.read_bytes())
        except FileNotFoundError:
            return []

    def append(self, entry: AbortedTxn, sync: bool = False) -> None:
        """Append ``entry`` (page cache; fsynced with ``sync``); OSError when the disk refuses."""
        with open(self.path, "ab") as f:
            size = f.tell()
            if size % ENTRY_SIZE:  # a torn entry from a crash: cut it first
                f.truncate(size - size % ENTRY_SIZE)
            f.write(entry.encode())
            if sync:
                f.flush()
                os.fdatasync(f.fileno())

    def rewrite(self, added: list[AbortedTxn]) -> list[AbortedTxn]:
        """Add ``added`` to the file's entries (one per ABORT marker: an entry of the same
        producer and marker offset is replaced), all in marker order, and write them durably:
        a temporary file, fsynced, renamed over the file, the directory fsynced (a crash
        leaves the old file or the new one). Returns the entries written; OSError when the
        disk refuses."""
        by_marker = {(e.producer_id, e.last_offset): e for e in self.entries()}
        by_marker.update({(e.producer_id, e.last_offset): e for e in added})
        entries = sorted(by_marker.values(), key=lambda e: e.last_offset)
        try:
            replace_durably(self.path, b"".join(e.encode() for e in entries))
        except OSError:
            self.path.with_name(self.path.name + ".tmp").unlink(missing_ok=True)
            raise
        return entries

    def truncate_to(self, offset: int) -> list[AbortedTxn]:
        """Drop entries whose marker is at or above ``offset``; return the kept ones."""
        return self.retain(lambda e: e.last_offset < offset)

    def retain(self, keep: Callable[[AbortedTxn], bool]) -> list[AbortedTxn]:
        """Drop the entries ``keep`` refuses (the file is rewritten, a torn trailing entry
        cut); return the kept ones."""
        entries = self.entries()
        kept = [e for e in entries if keep(e)]
        if len(kept) != len(entries) or (
            self.path.exists() and self.path.stat().st_size != len(entries) * ENTRY_SIZE
        ):
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_bytes(b"".join(e.encode() for e in kept))
            tmp.replace(self.path)
        return kept

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)
