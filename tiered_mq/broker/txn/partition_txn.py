"""The transactional side of one partition: aborted transactions and marker replay.

The producer state (broker/producer_state.py) knows each producer's ongoing transaction; the
last stable offset (LSO) is the smallest first offset of the ongoing transactions, else the
high watermark. This module keeps the partition's aborted transactions:

- in memory, every :class:`AbortedTxn` of the local segments (a few per aborted transaction;
  tiny), for read_committed fetches (:meth:`PartitionTxns.aborted_between`). Entries that end
  below the local log start offset are dropped (retention, or a tiered topic's local
  retention: cold reads take those from the bucket's ``.txnindex`` objects), so the list
  stays as long as the local log, as it is after a restart;
- on disk, in the ``.txnindex`` of the segment holding each ABORT marker (Kafka's format, see
  hot/transaction_index.py), which the cold tier uploads with the segment.

The log cleaner rewrites the ``.txnindex`` of the segments it replaces (an aborted transaction
whose data it removed is no longer listed; compaction/txn_filter.py); the partition then
reloads that offset range from the new file (:meth:`PartitionTxns.reload_range`), so the list
stays the union of the segments' indexes.

Recovery (:meth:`PartitionTxns.load` then :func:`replay`), as Kafka's ``LogLoader`` rebuilds
the transaction index of every segment it recovers: every segment's ``.txnindex`` is read,
entries at or past the log end offset (truncated log) or naming no ABORT marker of their
producer (a zeroed or damaged file: :func:`names_abort`) dropped; then the log is replayed
batch header by batch header from the producer snapshot at or below the start of the first
segment the log's recovery re-read (``LocalLog.recovered_from``: the segment holding the
recovery point, so a segment whose ``.txnindex`` may lack an entry is always among them), and
for each control batch (small: one record) the marker is read (ABORT or COMMIT, and its
coordinator epoch). The aborted transactions of each replayed segment, with the producer state
at its markers (the transaction's first offset, the last stable offset), are compared with its
``.txnindex``; one that lacks any (an ABORT whose entry was never written: a full disk, or a
crash between the marker and its entry) is rewritten in marker order, fsynced with its
directory (:meth:`PartitionTxns.restore`).

Durability: entries are appended without fsync; ``LogSegment.flush`` (a flush, a roll) fsyncs
the file with the segment, so the recovery point passes an entry only once it is on disk (an
entry whose marker's append was itself flushed, ``flush.messages``, is fsynced at once). An
append that fails (ENOSPC) keeps the transaction in memory, raises KAFKA_STORAGE_ERROR, and
holds the log's recovery point at the segment's base offset
(``LocalLog.txn_index_write_failed``): the next open re-reads that segment and restores the
entry, whatever rolled or was snapshotted meanwhile.
"""

from __future__ import annotations

import logging
import os
import threading
from bisect import bisect_left
from functools import partial

from tiered_mq.abandonable import AbandonedError
from tiered_mq.broker.producer_state import CompletedTxn, ProducerStateManager
from tiered_mq.errors import KafkaStorageError
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.transaction_index import AbortedTxn, TransactionIndex
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.control import ControlRecord, ControlType, decode_control_record
from tiered_mq.record.records import decode_batches

log = logging.getLogger(__name__)


def read_marker(segment: LogSegment, position: int, header: BatchHeader) -> ControlRecord:
    """The marker of the control batch at ``position`` (type UNKNOWN when it cannot be
    decoded)."""
    data = os.pread(segment.file.fileno(), header.size, position)
    try:
        for _, records in decode_batches(data):
            for record in records:
                return decode_control_record(record)
    except Exception as exc:  # a corrupt marker is logged, never fatal to recovery
        log.warning("%s: undecodable control batch at %d: %s", segment.dir, position, exc)
    return ControlRecord(ControlType.UNKNOWN, -1)


def names_abort(segment: LogSegment, end: int, entry: AbortedTxn) -> bool:
    """Whether ``entry``'s marker offset holds an ABORT marker of its producer in
    ``segment`` (whose data ends at ``end``), its transaction starting at or before it."""
    if not (
        entry.first_offset <= entry.last_offset and segment.base_offset <= entry.last_offset < end
    ):
        return False
    found = segment.translate_offset(entry.last_offset)
    if found is None:
        return False
    position, header = found
    return (
        header.is_control
        and header.base_offset == entry.last_offset
        and header.producer_id == entry.producer_id
        and read_marker(segment, position, header).type is ControlType.ABORT
    )


class PartitionTxns:
    """Aborted transactions of one partition (under the partition lock)."""

    def __init__(self, log_: LocalLog) -> None:
        self.log = log_
        self.aborted: list[AbortedTxn] = []
        self._known: set[tuple[int, int]] = set()  # (producer id, marker offset)

    def load(self) -> None:
        """Read every segment's ``.txnindex``, keeping the entries whose marker is an ABORT
        of their producer in that segment below the log end offset (:func:`names_abort`);
        the others (a truncated log, a zeroed or damaged file) are dropped from the file."""
        segments = self.log.segments()
        self.aborted, self._known = [], set()
        for segment in segments:
            index = TransactionIndex(self.log.dir, segment.base_offset)
            if not index.path.exists():
                continue
            end = self.log.next_segment_base(segment)
            try:
                count = len(index.entries())
                entries = index.retain(partial(names_abort, segment, end))
            except ValueError as exc:
                log.warning("%s: unreadable transaction index, rebuilt: %s", index.path, exc)
                index.delete()
                continue
            if len(entries) != count:
                log.warning(
                    "%s: dropped %d entries that name no ABORT marker of their producer below "
                    "the log end offset",
                    index.path,
                    count - len(entries),
                )
            for e in entries:
                self._remember(e)

    def _remember(self, entry: AbortedTxn) -> None:
        self.aborted.append(entry)
        self._known.add((entry.producer_id, entry.last_offset))

    def record_abort(self, txn: CompletedTxn, last_stable_offset: int, segment_base: int) -> None:
        """Note an aborted transaction whose ABORT marker is in segment ``segment_base``:
        in memory first, then in its ``.txnindex``, whose write failure (a full disk) is raised
        with reads already filtering the transaction."""
        if (txn.producer_id, txn.last_offset) in self._known:
            return
        entry = AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset)
        self._remember(entry)
        index = TransactionIndex(self.log.dir, segment_base)
        try:
            # the marker's own append flushed (flush.messages): the recovery point has passed
            # the marker already, so its entry is made as durable as the marker at once
            index.append(entry, sync=self.log.recovery_point > txn.last_offset)
        except OSError as exc:
            self.log.txn_index_write_failed(segment_base)
            raise KafkaStorageError(f"{index.path}: {exc}") from exc

    def restore(self, segment_base: int, rebuilt: list[AbortedTxn]) -> None:
        """Recovery: ``rebuilt`` are the aborted transactions of the markers of the segment at
        ``segment_base`` that the replay went through, in marker order. Those not known yet
        are added in memory, and the segment's ``.txnindex`` is rewritten with them, in marker
        order, fsynced with its directory; a write that fails holds the recovery point back
        (``LocalLog.txn_index_write_failed``), and the next open tries again."""
        missing = [e for e in rebuilt if (e.producer_id, e.last_offset) not in self._known]
        if not missing:
            return
        for entry in missing:
            self._remember(entry)
        self.aborted.sort(key=lambda e: e.last_offset)
        index = TransactionIndex(self.log.dir, segment_base)
        log.warning(
            "%s: restoring %d aborted transaction(s) missing from it, at marker offsets %s",
            index.path,
            len(missing),
            [e.last_offset for e in missing],
        )
        try:
            index.rewrite(missing)
        except OSError:
            log.exception("%s: rewriting the transaction index failed", index.path)
            self.log.txn_index_write_failed(segment_base)

    def reload_range(self, base_offset: int, end_offset: int) -> None:
        """Replace the entries whose marker is in [base_offset, end_offset) by those of the
        ``.txnindex`` of the segment at ``base_offset`` (compaction swapped it in for that
        range)."""
        entries = TransactionIndex(self.log.dir, base_offset).entries()
        self.aborted = [
            *(e for e in self.aborted if e.last_offset < base_offset),
            *(e for e in entries if base_offset <= e.last_offset < end_offset),
            *(e for e in self.aborted if e.last_offset >= end_offset),
        ]
        self._known = {(e.producer_id, e.last_offset) for e in self.aborted}

    def aborted_between(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [start_offset, end_offset), by first offset.

        ``aborted`` is in marker order (markers are appended, loaded and reloaded in log order),
        so the search starts at the first marker at or above ``start_offset`` and ends, as
        Kafka's ``TransactionIndex.collectAbortedTxns``, at the first entry whose last stable
        offset reaches ``end_offset`` (every transaction begun below it had ended): a fetch
        costs the entries of its range, not of the whole log."""
        if not self.aborted:
            return []
        floor = self.log.local_log_start_offset
        if self.aborted[0].last_offset < floor:  # segments deleted by (local) retention
            self.aborted = [e for e in self.aborted if e.last_offset >= floor]
            self._known = {(e.producer_id, e.last_offset) for e in self.aborted}
        out = []
        for i in range(
            bisect_left(self.aborted, start_offset, key=_last_offset), len(self.aborted)
        ):
            entry = self.aborted[i]
            if entry.first_offset < end_offset:
                out.append(entry)
            if entry.last_stable_offset >= end_offset:
                break
        if len(out) > 1:
            out.sort(key=_first_offset)
        return out


def _last_offset(entry: AbortedTxn) -> int:
    return entry.last_offset


def _first_offset(entry: AbortedTxn) -> int:
    return entry.first_offset


def stable_offset_after(ps: ProducerStateManager, marker_offset: int) -> int:
    first = ps.first_unstable_offset()
    return marker_offset + 1 if first is None else min(first, marker_offset + 1)


def replay(
    log_: LocalLog,
    ps: ProducerStateManager,
    txns: PartitionTxns,
    start: int,
    abandon: threading.Event | None = None,
) -> None:
    """Replay the local log from the batch holding ``start`` (at least the first local
    segment's base offset) into the producer state, and restore the aborted transactions
    of every segment replayed that its ``.txnindex`` lacks (:meth:`PartitionTxns.restore`).
    Per batch header; only a control batch is read further (its one marker record).
    AbandonedError at the next batch once ``abandon`` is set (a segment's ``.txnindex`` is
    restored after its whole scan, so never in part)."""
    for segment in log_.segments():
        if log_.next_segment_base(segment) <= start:
            continue
        found = segment.translate_offset(start)
        if found is None:
            continue
        aborted: list[AbortedTxn] = []
        for position, header in segment.iter_headers(found[0]):
            if abandon is not None and abandon.is_set():
                raise AbandonedError(f"{log_.dir}: producer state replay abandoned")
            if not header.is_control:
                ps.update(header, header.base_offset)
                continue
            marker = read_marker(segment, position, header)
            completed = ps.update(header, header.base_offset, marker.coordinator_epoch)
            if completed is not None and marker.type is ControlType.ABORT:
                lso = stable_offset_after(ps, header.base_offset)
                first, last = completed.first_offset, completed.last_offset
                aborted.append(AbortedTxn(completed.producer_id, first, last, lso))
        if aborted:
            txns.restore(segment.base_offset, aborted)
