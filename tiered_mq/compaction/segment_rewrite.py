"""Pass 2 of the log cleaner (cleaner.py plans and runs pass 1): rewrite segments.

:func:`clean_group` rewrites the segments below the end offset in groups (consecutive
segments whose sizes sum to at most ``segment.bytes`` and whose offsets fit a 32-bit relative
offset, as Kafka's ``groupSegmentsBySize``) into one segment named after the group's first base
offset. Per batch (headers first, records decoded only for data batches and empty markers):

- a record is kept iff it has a key and no later record with the same key is in the map;
- a tombstone (null value) that is kept gets a delete horizon: the batch is re-encoded with
  ``DELETE_HORIZON_FLAG`` and base timestamp = now + ``delete.retention.ms`` (KIP-534; record
  timestamps are deltas from it, so they do not change). Once a later pass runs after the
  horizon, the tombstone is dropped;
- surviving records keep their offsets, the batch keeps its base offset, last offset delta,
  producer id, epoch, base sequence, partition leader epoch, codec and transactional flag, so
  offsets stay monotonic and the idempotent producer state stays valid;
- a batch that retains no record (left empty now, or by an earlier pass) is dropped (Kafka's
  DELETE_EMPTY), with two exceptions, kept empty: the batch an active producer's state was last
  built from (Kafka's RETAIN_EMPTY, :func:`producer_last_batches`: the data batch holding the
  producer's last data offset, or, when its last entry is a marker, that marker), so replaying
  the log still restores the producer's epoch and last sequence and a retried duplicate is
  answered with its original offsets; and the group's last batch, so the new segment ends at
  the old group's end offset, which recovery reads from the swap. So a log whose keys are
  overwritten again and again keeps at most one empty batch per group and per active producer:
  its size stops growing;
- the records of aborted transactions are removed (as Kafka);
- a control batch (transaction marker) is kept while any batch of its transaction is in the
  log: :class:`~tiered_mq.compaction.txn_filter.TxnMarkers` follows, across the groups of one
  pass, which producers had a transactional batch read since their last marker (Kafka's
  CleanedTransactionMetadata). A marker whose transaction has no batch left is empty: it gets
  a delete horizon like a tombstone, and a pass after the horizon drops it (unless it is kept
  for its producer's state or is its group's last batch). Data go one pass, their marker at
  the earliest the next: a loader replaying the log always finds a surviving transactional
  record followed by its marker;
- the group's ``.txnindex`` is rebuilt, not copied: it lists, in marker order, the aborted
  transactions whose ABORT marker in the group is kept because a batch of the transaction is
  still in the log (Kafka's CleanedTransactionMetadata builds the cleaned index the same way;
  txn_filter.py says why). An entry whose marker is gone, or whose transaction has no batch
  left, is not carried over; a group whose index changes is rewritten even when no batch does,
  so the next pass repairs an index that names a removed marker (as older versions left it);
- a batch that keeps every record and needs no horizon is copied byte for byte.

Payloads decompress to at most ``max_size`` bytes (the broker's ``message.max.decompressed.bytes``):
a bigger batch raises DecompressedTooLargeError, which fails the pass like a corrupt batch
(nothing is swapped in; the manager logs it and retries after the backoff).

Crash behaviour: output is written as ``<base>.log.cleaned`` (+ ``.index``, ``.timeindex``,
and ``.txnindex`` unless it has no entry), fsynced, renamed to ``.swap`` and the directory
fsynced; the partition then swaps it in with its ``replace_segments`` under its lock (which
also reloads the aborted transactions of the replaced range from the new ``.txnindex``).
Recovery deletes ``.cleaned`` files (the old segments are intact) and completes ``.swap`` files
(hot/recovery.py), so a crash at any step leaves either the old segments or the new one, never
both, never neither; the old segments' ``.txnindex`` files go with them. The checkpoint is
written after the swap: a crash before it only repeats the (idempotent) pass.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from tiered_mq.compaction.cleaner import (
    CleanerStats,
    SegmentSource,
    check_not_aborted,
    close_quietly,
)
from tiered_mq.compaction.offset_map import OffsetMap
from tiered_mq.compaction.txn_filter import AbortedTxns, TxnMarkers
from tiered_mq.durable_file import write_fully
from tiered_mq.hot import log_files
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_segment import IndexPoints, LogSegment
from tiered_mq.hot.offset_index import OffsetIndex
from tiered_mq.hot.time_index import NO_TIMESTAMP, TimeIndex
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.record.batch import (
    DELETE_HORIZON_FLAG,
    BatchHeader,
    read_header,
    set_attribute_flags,
)
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.record.records import Record, decode_batch, reencode_batch


@dataclass
class CleanedGroup:
    """Compaction output for ``old`` (renamed to ``.swap``), ready for replace_segments."""

    old: list[LogSegment]
    base_offset: int
    files: list[Path] = field(default_factory=list)


class LastRecord(NamedTuple):
    """What an active producer's state was last built from (Kafka's ``LastRecord``): the last
    offset of its last data batch, or None when its last entry is a marker (an epoch bump since
    its last data batch, or a producer that only wrote markers and sequence-less batches), and
    its current epoch."""

    last_data_offset: int | None
    producer_epoch: int


def producer_last_batches(
    sources: Sequence[SegmentSource], active: Mapping[int, LastRecord] | None = None
) -> dict[int, int]:
    """Producer id -> base offset of the batch in ``sources`` kept even when it retains no
    record (Kafka's RETAIN_EMPTY, ``LogCleaner.checkBatchRetention``), one per active producer
    at most (header scan):

    - a producer with a last data offset: the data batch whose last offset it is (it carries
      the producer's last sequence);
    - a producer whose last entry is a marker: the last control batch of its current epoch in
      ``sources`` (Kafka keeps every marker of that epoch; one is enough to restore the epoch,
      and more would pile up for the group coordinator's sequence-less transactional offset
      commits, which the producer state does not list as data batches);
    - a producer not in ``active`` (no longer active): none, its batches go like any other.

    ``active`` is the partition's ``last_records_of_active_producers()``, taken under its lock
    when the pass was planned. Without one (a partition that keeps no producer state) every
    producer in ``sources`` counts as active, with the last record the headers show.
    """
    if active is None:
        active = _last_records(sources)
    kept: dict[int, int] = {}
    for source in sources:
        for _, h in source.iter_headers():
            record = active.get(h.producer_id) if h.producer_id >= 0 else None
            if record is None:
                continue
            if record.last_data_offset is not None:
                if not h.is_control and h.last_offset == record.last_data_offset:
                    kept[h.producer_id] = h.base_offset
            elif h.is_control and h.producer_epoch == record.producer_epoch:
                kept[h.producer_id] = h.base_offset
    return kept


def _last_records(sources: Sequence[SegmentSource]) -> dict[int, LastRecord]:
    """The last record of every producer in ``sources``, as its headers replayed would leave
    the producer state (a new epoch forgets the earlier data batches)."""
    out: dict[int, LastRecord] = {}
    for source in sources:
        for _, h in source.iter_headers():
            if h.producer_id < 0:
                continue
            previous = out.get(h.producer_id)
            last_data = None
            if previous is not None and previous.producer_epoch == h.producer_epoch:
                last_data = previous.last_data_offset
            if not h.is_control:
                last_data = h.last_offset
            out[h.producer_id] = LastRecord(last_data, h.producer_epoch)
    return out


def _reencode(h: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    """Re-encode; with a ``horizon`` (the base timestamp) also set DELETE_HORIZON_FLAG."""
    data = reencode_batch(h, records, base_timestamp=horizon)
    if horizon is None:
        return data
    out = bytearray(data)
    set_attribute_flags(out, 0, DELETE_HORIZON_FLAG)
    return bytes(out)


class _SegmentWriter:
    """Writes ``<base>.log.cleaned`` and its indexes, as LogSegment.append would."""

    def __init__(self, dir: Path, base: int, index_interval_bytes: int) -> None:
        self.dir, self.base = dir, base
        stem = log_files.file_name(base)
        self.log_path = dir / (stem + log_files.LOG_SUFFIX + log_files.CLEANED_SUFFIX)
        self.fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.position = 0
        self.points = IndexPoints(index_interval_bytes, 0, NO_TIMESTAMP, base)
        self.pending: list[bytes] = []
        self.pending_bytes = 0

    def write(self, data: bytes, header: BatchHeader) -> None:
        self.points.add(self.position, header, len(data))
        self.position += len(data)
        self.pending.append(data)
        self.pending_bytes += len(data)
        if self.pending_bytes >= 1 << 20:
            self._drain()

    def _drain(self) -> None:
        write_fully(self.fd, b"".join(self.pending))
        self.pending, self.pending_bytes = [], 0

    def finish(self, txn_index: bytes) -> list[Path]:
        """fsync everything; return the .cleaned files (the .log first)."""
        self._drain()
        os.fsync(self.fd)
        os.close(self.fd)
        stem = self.dir / log_files.file_name(self.base)
        files = [self.log_path]
        cleaned = log_files.CLEANED_SUFFIX
        index = OffsetIndex(Path(f"{stem}{log_files.INDEX_SUFFIX}{cleaned}"), self.base)
        times = TimeIndex(Path(f"{stem}{log_files.TIME_INDEX_SUFFIX}{cleaned}"), self.base)
        index.reset([], [])
        points = self.points
        index.append(points.index_entries)
        times.reset([], [])
        times.maybe_append([*points.time_entries, (points.max_ts, points.max_ts_offset)])
        for idx in (index, times):
            idx.flush()
            idx.close()
            files.append(idx.path)
        if txn_index:
            path = Path(f"{stem}{log_files.TXN_INDEX_SUFFIX}{log_files.CLEANED_SUFFIX}")
            with open(path, "wb") as f:
                f.write(txn_index)
                f.flush()
                os.fsync(f.fileno())
            files.append(path)
        return files


def clean_group(
    dir: Path,
    group: Sequence[SegmentSource],
    omap: OffsetMap,
    last_batches: dict[int, int],
    config: LogConfig,
    now_ms: int,
    stats: CleanerStats,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    aborted: AbortedTxns | None = None,
    markers: TxnMarkers | None = None,
    abort: threading.Event | None = None,
) -> CleanedGroup | None:
    """Pass 2 for one group: write its compacted segment as ``.swap`` files.

    Returns None (and leaves no file) when nothing would change (a single segment whose
    batches are all kept as they are). The groups of one pass share ``markers`` and are
    cleaned in offset order (default: a fresh one, for a pass of one group). Once ``abort``
    is set, the next batch raises CleaningAbortedError, the ``.cleaned`` files removed.
    """
    markers = TxnMarkers() if markers is None else markers
    base = group[0].base_offset
    writer = _SegmentWriter(dir, base, config.index_interval_bytes)
    changed = len(group) > 1
    index: list[AbortedTxn] = []  # the cleaned .txnindex, in marker order
    try:
        for i, source in enumerate(group):
            headers = list(source.iter_headers())
            for j, (position, header) in enumerate(headers):
                check_not_aborted(abort)
                data = source.read(position, header.size)
                stats.bytes_read += len(data)
                stats.records_read += header.records_count
                last = i == len(group) - 1 and j == len(headers) - 1
                out: bytes | None
                if header.is_control:
                    if not markers.on_marker(header):  # its transaction still has data here
                        out = data
                        index.extend(_retained_abort(aborted, header))
                    else:
                        out = _clean_empty_marker(
                            data, header, last_batches, last, config, now_ms, stats
                        )
                else:
                    markers.on_data(header)
                    out = _clean_batch(
                        data,
                        header,
                        omap,
                        last_batches,
                        last,
                        config,
                        now_ms,
                        stats,
                        max_size,
                        aborted,
                    )
                if out is None:
                    changed = True
                    continue
                if out is not data:  # index it by what is written: a re-encoded batch's
                    changed = True  # max timestamp is its kept records' (Kafka's filterTo)
                    header = read_header(out)
                writer.write(out, header)
        txn_index = b"".join(e.encode() for e in index)
        if txn_index != b"".join(
            _read_or_empty(log_files.txn_index_file(dir, s.base_offset)) for s in group
        ):
            changed = True
        files = writer.finish(txn_index)
    except BaseException:
        close_quietly(writer.fd)
        _unlink_cleaned(dir, base)
        raise
    if not changed:
        _unlink_cleaned(dir, base)
        return None
    swapped = []
    for path in files:
        target = path.with_name(path.name[: -len(log_files.CLEANED_SUFFIX)] + log_files.SWAP_SUFFIX)
        path.replace(target)
        swapped.append(target)
    log_files.fsync_dir(dir)
    stats.bytes_written += writer.position
    return CleanedGroup([s.segment for s in group], base, swapped)


def _clean_batch(
    data: bytes,
    header: BatchHeader,
    omap: OffsetMap,
    last_batches: dict[int, int],
    last_of_group: bool,
    config: LogConfig,
    now_ms: int,
    stats: CleanerStats,
    max_size: int,
    aborted: AbortedTxns | None = None,
) -> bytes | None:
    """The batch to write for data batch ``data`` (``data`` itself when unchanged), or None
    to drop it."""
    drop_all = (
        aborted is not None
        and header.is_transactional
        and aborted.is_aborted(header.producer_id, header.base_offset)
    )
    h, records = decode_batch(data, max_size=max_size)
    horizon = h.delete_horizon
    expired = horizon is not None and now_ms >= horizon
    kept: list[Record] = []
    for record in records:
        if record.key is None or drop_all:
            continue
        latest = omap.get(record.key)
        if latest is not None and record.offset < latest:
            continue
        if record.value is None and expired:
            continue
        kept.append(record)
    stats.records_removed += len(records) - len(kept)
    new_horizon = None
    tombstones = any(r.value is None for r in kept)
    if tombstones:  # then the batch's horizon (if any) has not passed: expired ones were dropped
        new_horizon = horizon if horizon is not None else now_ms + config.delete_retention_ms
        stats.horizon(new_horizon)
    if not kept:  # checked first: a batch that was empty already "kept all its 0 records"
        keep_empty = last_of_group or (
            h.producer_id >= 0 and last_batches.get(h.producer_id) == h.base_offset
        )
        if not keep_empty:
            return None
        return data if not records else _reencode(h, [], None)
    if len(kept) == len(records) and (not tombstones or horizon is not None):
        return data
    return _reencode(h, kept, new_horizon)


def _retained_abort(aborted: AbortedTxns | None, header: BatchHeader) -> list[AbortedTxn]:
    """The cleaned index entry of a marker kept for its data: its aborted transaction, if the
    marker is an ABORT (none for a COMMIT, or without the partition's aborted transactions)."""
    entry = None if aborted is None else aborted.ended_by(header.producer_id, header.base_offset)
    return [] if entry is None else [entry]


def _clean_empty_marker(
    data: bytes,
    header: BatchHeader,
    last_batches: dict[int, int],
    last_of_group: bool,
    config: LogConfig,
    now_ms: int,
    stats: CleanerStats,
) -> bytes | None:
    """The control batch to write for a marker whose transaction has no batch left (``data``
    itself when unchanged), or None to drop it."""
    horizon = header.delete_horizon
    if horizon is not None:
        if now_ms < horizon:
            stats.horizon(horizon)
            return data
        if last_of_group or last_batches.get(header.producer_id) == header.base_offset:
            return data
        stats.records_removed += header.records_count
        return None
    horizon = now_ms + config.delete_retention_ms
    stats.horizon(horizon)
    h, records = decode_batch(data)  # a marker: one tiny uncompressed record
    return _reencode(h, records, horizon)


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _unlink_cleaned(dir: Path, base: int) -> None:
    stem = log_files.file_name(base)
    for ext in log_files.SEGMENT_SUFFIXES:
        (dir / (stem + ext + log_files.CLEANED_SUFFIX)).unlink(missing_ok=True)


def discard_swap(dir: Path, base: int) -> None:
    """Remove the ``.swap`` files of an abandoned replacement (under the partition lock)."""
    stem = log_files.file_name(base)
    for ext in log_files.SEGMENT_SUFFIXES:
        (dir / (stem + ext + log_files.SWAP_SUFFIX)).unlink(missing_ok=True)
    log_files.fsync_dir(dir)
