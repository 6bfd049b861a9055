"""One partition replica on this broker: its LocalLog, producer state and high watermark.

Invariants (single node today, ISR-ready):

- every mutation of ``log`` and ``producer_state`` happens with ``lock`` held; the log is
  synchronous and appends run on the event loop (a page-cache write); with ``flush.messages``
  set, LocalLog fsyncs inside the append, so the producer waits for the flush;
- ``high_watermark`` <= ``log.log_end_offset``; with no followers the ISR is this broker alone, so
  ``maybe_advance_high_watermark`` sets it to the log end offset right after each append;
- the last stable offset (LSO) is the smallest first offset of the ongoing transactions, else
  the high watermark; ABORT markers are indexed in ``.txnindex`` (broker/txn/partition_txn.py);
- the producer-state map covers exactly the log below ``log_end_offset`` (it is snapshotted on
  every roll, at clean shutdown, and rebuilt from the newest snapshot plus a header replay on open).

Producer snapshots (``{offset:020d}.snapshot``, producer_state.py) are bounded by the segments:
a roll writes one at the new segment's base offset; the log cleaner's ``replace_segments``
deletes those of the replaced segments but the first (Kafka's ``deleteProducerSnapshots``); the
ones below the local log start offset go when it moves, but the newest of them; opening deletes
every other one that is not at a segment base offset (Kafka's ``removeStraySnapshots``: those
written at the log end offset on close or recovery, or left by a crash between a swap and its
snapshot deletion). The newest snapshot, recovery's starting point, is never deleted: a
crash at any step leaves it, or (a torn one) an older one and a longer replay.

Append path (leader, per batch, never per record): ``validate_records`` (CRC-32C, magic, size,
codec) -> producer-state check (duplicates answered with their original offsets and, as
``log_append_time``, the max timestamp recorded for them, as Kafka) ->
``LocalLog.append_as_leader`` (offsets and leader epoch rewritten in place; RECORD_LIST_TOO_LARGE
above ``segment.bytes``) -> producer-state update -> high watermark -> waiters woken. An append
whose batches are written but whose flush then fails (``flush.messages``/``flush.ms``: fsync or
checkpoint, KAFKA_STORAGE_ERROR) records them in the producer state and moves the high watermark
before raising, as Kafka updates its producer state before that flush: the producer's retry is
answered as a duplicate, never written twice (a COMMIT/ABORT marker likewise ends its
transaction).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tiered_mq.abandonable import AbandonedError
from tiered_mq.broker.producer_state import ProducerStateManager, list_snapshots, snapshot_path
from tiered_mq.broker.txn.partition_txn import PartitionTxns, replay, stable_offset_after
from tiered_mq.compaction.segment_rewrite import LastRecord
from tiered_mq.errors import (
    CorruptRecordError,
    InvalidProducerEpochError,
    MessageTooLargeError,
    NotLeaderOrFollowerError,
    TransactionCoordinatorFencedError,
    UnsupportedCompressionTypeError,
    invalid_record,
)
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.record.batch import (
    HEADER_SIZE,
    MAGIC,
    BatchHeader,
    iter_batches,
    peek_size,
    read_header,
    validate_batch,
)
from tiered_mq.record.control import encode_control_batch
from tiered_mq.record.records import check_records_start
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
_MAGIC_AT = 16  # the magic byte follows baseOffset i64, batchLength i32, partitionLeaderEpoch i32


@dataclass(frozen=True, slots=True)
class AppendResult:
    base_offset: int
    last_offset: int
    log_start_offset: int
    duplicate: bool = False
    log_append_time: int = -1


def validate_records(
    records: bytes | bytearray | memoryview, max_message_bytes: int, api_version: int = 8
) -> list[tuple[int, BatchHeader]]:
    """Batch-level checks of produced records (Kafka's ProduceRequest and LogValidator rules);
    raises the Kafka error the client must see. Reads headers only, no record.

    Exactly one batch per partition (Produce v3+) of magic 2, base offset 0, at least one
    record, a record count that matches the offset range (``last_offset_delta + 1``), no
    control batch and no producer id without a sequence: else INVALID_RECORD (produce v8+,
    KIP-467), CORRUPT_MESSAGE before, as Kafka's ProduceRequest.validateRecords, UnifiedLog and
    LogValidator.validateBatch refuse them (InvalidRecordException; a Java producer does not
    retry it, CORRUPT_MESSAGE it would). A batch breaking them would move the high watermark by
    its ``last_offset_delta`` while serving other offsets. A bad CRC or length stays
    CORRUPT_MESSAGE, as in Kafka; a negative record count or last offset delta in a batch whose
    CRC holds is INVALID_RECORD (LogValidator.validateBatch, after the CRC)."""
    if len(records) == 0:
        raise invalid_record(
            f"produce v{api_version} needs at least one record batch per partition", api_version
        )
    if len(records) > _MAGIC_AT and records[_MAGIC_AT] != MAGIC:
        raise invalid_record(
            f"produce v{api_version} takes record batches of magic {MAGIC} only, "
            f"not {records[_MAGIC_AT]}",
            api_version,
        )
    h = validate_batch(records, 0, counts=False)  # the first only: a second one is refused unread
    if h.size != len(records):
        following = peek_size(records, h.size)
        if following is None or h.size + following > len(records):
            raise CorruptRecordError(f"truncated batch at {h.size} of {len(records)} bytes")
        raise invalid_record(
            "produce v3+ carries exactly one record batch per partition", api_version
        )
    if h.size > max_message_bytes:
        raise MessageTooLargeError(
            f"batch of {h.size} bytes exceeds max.message.bytes {max_message_bytes}"
        )
    if h.compression > 4:
        raise UnsupportedCompressionTypeError(f"unknown compression codec {h.compression}")
    if h.base_offset != 0:  # Kafka's UnifiedLog.analyzeAndValidateRecords, for client appends
        raise invalid_record(
            f"The baseOffset of the record batch should be 0, but it is {h.base_offset}",
            api_version,
        )
    if h.last_offset_delta < 0:  # LogValidator.validateBatch's order: offsets, count, both
        raise invalid_record(
            f"Batch has an invalid offset range: [0, {h.last_offset_delta}]", api_version
        )
    if h.records_count <= 0:
        raise invalid_record(
            f"Invalid reported count for record batch: {h.records_count}", api_version
        )
    if h.records_count != h.last_offset_delta + 1:
        raise invalid_record(
            f"inconsistent batch: {h.records_count} records, offset range 0..{h.last_offset_delta}",
            api_version,
        )
    if h.is_control:
        raise invalid_record("clients may not produce control batches", api_version)
    if h.producer_id >= 0 and h.base_sequence < 0:
        raise invalid_record(
            f"invalid sequence number {h.base_sequence} in a batch of producer {h.producer_id}",
            api_version,
        )
    check_records_start(h, memoryview(records)[HEADER_SIZE : h.size])
    return [(0, h)]


class Partition:
    """A leader replica; create with :meth:`open` (blocking: call it in a worker thread)."""

    def __init__(self, tp: TopicPartition, log: LocalLog, leader_epoch: int = 0) -> None:
        self.tp = tp
        self.log = log
        self.leader_epoch = leader_epoch
        self.lock = asyncio.Lock()
        self.producer_state = ProducerStateManager(log.dir)
        self.txns = PartitionTxns(log)
        self.high_watermark = log.log_end_offset
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()  # the assignment (ids); empty: this broker alone
        self.on_append: Callable[[TopicPartition], None] | None = None
        self.on_roll: Callable[[TopicPartition], None] | None = None
        self._latest_snapshot: int | None = None  # offset of the newest snapshot file
        self._snapshots_pruned_below = -1  # local log start offset at the last pruning

    def effective_min_isr(self) -> int:
        """The in-sync replicas an acks=all append needs (Kafka 3.7+'s Partition.effectiveMinIsr,
        KAFKA-15583): ``min.insync.replicas`` capped at the replica count, which Kafka lets a
        topic set above its replication factor. A one-replica topic with
        ``min.insync.replicas=2`` takes acks=all; a partition of replicas [0, 1] whose ISR is
        [0] still refuses it (NOT_ENOUGH_REPLICAS), and counts as under min ISR."""
        return min(self.log.config.min_insync_replicas, len(self.replicas) or 1)

    @classmethod
    def open(
        cls,
        tp: TopicPartition,
        dir: Path,
        config: LogConfig,
        leader_epoch: int = 0,
        sync_dir: bool = True,
        new: bool = False,
        abandon: threading.Event | None = None,
    ) -> Partition:
        """Open the replica in ``dir`` (``sync_dir``, ``new``: see LocalLog.open). A new log
        writes no file but its empty segment: no checkpoint (LocalLog.open) and no producer
        snapshot (an absent one is an empty state, which a new log has). With ``new`` (a
        directory just created, empty) there is no state to look for either.

        Once ``abandon`` is set (a stop during the broker's start) the log's recovery scan and
        the producer state's replay stop at their next read or batch and AbandonedError is
        raised, every file closed. Nothing that a next open would trust was written: the
        checkpoints are as they were (so the next open recovers and replays the same tail
        again), no producer snapshot was taken, and an aborted transaction's ``.txnindex``
        entries were rewritten whole or not at all (PartitionTxns.restore, per segment)."""
        holder: list[Partition] = []

        def on_roll(new_base_offset: int) -> None:
            if holder:
                holder[0]._snapshot_on_roll(new_base_offset)

        local_log = LocalLog.open(
            dir, config, on_roll=on_roll, sync_dir=sync_dir, new=new, abandon=abandon
        )
        partition = cls(tp, local_log, leader_epoch)
        holder.append(partition)
        local_log.on_segments_deleted = partition._prune_snapshots
        if not new:  # (new: the producer state is empty, no snapshot, no aborted transaction)
            try:
                partition._recover_producer_state(abandon)
            except AbandonedError:
                local_log.close_unflushed()
                raise
        return partition

    # producer state ----------------------------------------------------------------------------
    def _recover_producer_state(self, abandon: threading.Event | None = None) -> None:
        """After a clean shutdown (the recovery point is the log end offset and a producer
        snapshot is there: every file was flushed, ``.txnindex`` included) that snapshot is
        loaded and the indexes trusted, as Kafka skips recovery after a clean shutdown.
        Otherwise the newest snapshot at or below the first segment the log's recovery
        re-read (``LocalLog.recovered_from``, the segment holding the recovery point), then a
        header replay of the local log after it, which also restores the aborted transactions
        those segments' ``.txnindex`` lack (Kafka's LogLoader rebuilds the transaction index
        of the segments it recovers; broker/txn/partition_txn.py). The result is snapshotted
        at the log end offset (Kafka's rebuildProducerState) unless a snapshot is there, so
        the segments it was replayed from may go (local retention) without the state going
        back with them.

        A snapshot below the first local segment (one lost in a crash between a roll and
        its snapshot, or never written on a full disk) cannot be brought up to date: the log
        between them is gone. Its settled producers are forgotten rather than trusted: a
        stale last sequence would answer the producer's next batch OUT_OF_ORDER_SEQUENCE_NUMBER,
        fatal to librdkafka's idempotent producer; an unknown producer is accepted."""
        ps = self.producer_state
        leo = self.log.log_end_offset
        local_base = self.log.segments()[0].base_offset
        clean = self.log.recovery_point == leo and snapshot_path(self.log.dir, leo).exists()
        start = ps.load_latest_snapshot(leo, None if clean else self.log.recovered_from)
        if start < local_base:
            if dropped := ps.forget_settled():
                log.warning(
                    "%s: producer snapshot at %d is below the local log start %d; forgot %d "
                    "producer(s) whose state cannot be replayed",
                    self.tp,
                    start,
                    local_base,
                    dropped,
                )
            start = local_base
        self.txns.load()
        if start < leo:
            replay(self.log, ps, self.txns, start, abandon)
        ps.map_end_offset = leo
        if not snapshot_path(self.log.dir, leo).exists() and leo > 0:
            try:
                ps.take_snapshot(leo, sync=True)
            except OSError:  # a full disk: the next roll tries again
                log.exception("%s: producer state snapshot at %d failed", self.tp, leo)
        self._remove_stray_snapshots()

    def _remove_stray_snapshots(self) -> None:
        """On open: delete the snapshots at or above the local log start offset that are not
        at a segment base offset, but the newest (Kafka's ``removeStraySnapshots``)."""
        offsets = list_snapshots(self.log.dir)
        self._latest_snapshot = offsets[-1] if offsets else None
        bases = {segment.base_offset for segment in self.log.segments()}
        start = self.log.local_log_start_offset
        for offset in offsets[:-1]:
            if offset >= start and offset not in bases:
                self._delete_snapshot(offset)

    def _delete_snapshot(self, offset: int) -> None:
        try:
            self.producer_state.delete_snapshot(offset)
        except OSError:  # left for the next open to try again
            log.exception("%s: deleting the producer snapshot at %d failed", self.tp, offset)

    def _snapshot_on_roll(self, new_base_offset: int) -> None:
        # Called by LocalLog inside append_as_leader/roll, before the new batch is recorded in
        # the producer state: the state then covers exactly [0, new_base_offset). Snapshots
        # below the local log start are pruned (a directory listing) only when it moved.
        try:
            self.producer_state.take_snapshot(new_base_offset)
            self._latest_snapshot = new_base_offset
            start = self.log.local_log_start_offset
            if start != self._snapshots_pruned_below:
                self._prune_snapshots(start)
        except OSError:
            log.exception("%s: producer state snapshot at %d failed", self.tp, new_base_offset)
        if self.on_roll is not None:
            self.on_roll(self.tp)

    def _prune_snapshots(self, local_log_start: int) -> None:
        """Delete the producer snapshots below the local log start offset: called when
        segments were deleted (LocalLog.on_segments_deleted), as Kafka's deleteSegments
        deletes the deleted segments' snapshots, and again at a roll if the start moved
        meanwhile (a deletion that failed is retried there). A crash before this leaves them
        to the next deletion; recovery meanwhile treats one below the start as stale
        (``_recover_producer_state``)."""
        try:
            self.producer_state.delete_snapshots_before(local_log_start)
        except OSError:
            log.exception("%s: deleting the snapshots below %d failed", self.tp, local_log_start)
            return
        self._snapshots_pruned_below = local_log_start

    # leader append -----------------------------------------------------------------------------
    async def append_as_leader(
        self,
        records: memoryview | bytearray,
        batches: list[tuple[int, BatchHeader]],
        verify: Callable[[], object] | None = None,
    ) -> AppendResult:
        """Append records checked by :func:`validate_records`; they are rewritten in place.

        ``verify`` (a transactional produce's check against its transaction) runs under the
        lock right before the append and raises to refuse it: a COMMIT/ABORT marker, appended
        under the same lock, then either follows the batch or makes ``verify`` fail, so no
        batch lands after the marker of its transaction (it would open a transaction no marker
        ends: a hanging transaction, KAFKA-14402).
        Raises NotLeaderOrFollowerError when the log closed (a topic deletion) while the append
        waited for the lock: its files may already be gone or their descriptors reused."""
        async with self.lock:
            self._check_open()
            if verify is not None:
                verify()
            ps = self.producer_state
            if any(h.producer_id >= 0 for _, h in batches):
                dup = ps.check_all([h for _, h in batches])
                if dup is not None:  # answered with the timestamp recorded for the original:
                    # its max timestamp (its append time on a LogAppendTime topic), as Kafka's
                    # UnifiedLog.append answers whatever the timestamp type
                    return AppendResult(
                        dup.first_offset,
                        dup.last_offset,
                        self.log.log_start_offset,
                        True,
                        dup.timestamp,
                    )
            end = self.log.log_end_offset
            try:
                info = self.log.append_as_leader(records, self.leader_epoch, batches)  # type: ignore[arg-type]
            except Exception:
                if self.log.log_end_offset != end:  # written, then its flush failed
                    for position, _ in batches:  # the headers as written: offsets, append time
                        written = read_header(records, position)
                        ps.update(written, written.base_offset)
                    self.maybe_advance_high_watermark()
                raise
            offset = info.first_offset
            for _, h in batches:
                if info.log_append_time_ms >= 0:  # as written: the broker's time (LogAppendTime)
                    h = h._replace(max_timestamp=info.log_append_time_ms)
                ps.update(h, offset)
                offset += h.last_offset_delta + 1
            self.maybe_advance_high_watermark()
            return AppendResult(
                info.first_offset,
                info.last_offset,
                self.log.log_start_offset,
                log_append_time=info.log_append_time_ms,
            )

    async def append_txn_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int
    ) -> int:
        """Append a COMMIT or ABORT control batch for ``producer_id``; return its offset.

        Raises InvalidProducerEpochError when the partition knows a newer producer epoch, and
        TransactionCoordinatorFencedError when its last marker came from a newer coordinator
        epoch (a zombie coordinator); an ABORT closing an ongoing transaction is indexed in
        ``.txnindex``."""
        async with self.lock:
            self._check_open()
            ps = self.producer_state
            entry = ps.producers.get(producer_id)
            if entry is not None and producer_epoch < entry.epoch:
                raise InvalidProducerEpochError(
                    f"{self.tp}: marker epoch {producer_epoch} < producer epoch {entry.epoch}"
                )
            if entry is not None and coordinator_epoch < entry.coordinator_epoch:
                raise TransactionCoordinatorFencedError(
                    f"{self.tp}: marker of producer {producer_id} from coordinator epoch "
                    f"{coordinator_epoch} < {entry.coordinator_epoch} (a zombie coordinator)"
                )
            buf = bytearray(
                encode_control_batch(
                    producer_id, producer_epoch, commit, coordinator_epoch, int(time.time() * 1000)
                )
            )
            batches = iter_batches(buf, validate=True)
            offset = self.log.log_end_offset
            try:
                self.log.append_as_leader(buf, self.leader_epoch, batches)  # type: ignore[arg-type]
            except Exception:
                if self.log.log_end_offset != offset:  # written, then its flush failed
                    self._marker_appended(batches[0][1], offset, commit, coordinator_epoch)
                raise
            self._marker_appended(batches[0][1], offset, commit, coordinator_epoch)
            return int(offset)

    def _marker_appended(
        self, header: BatchHeader, offset: int, commit: bool, coordinator_epoch: int
    ) -> None:
        """The marker at ``offset`` ends its producer's transaction: producer state, high
        watermark, then (an ABORT) the aborted transaction, which raises when its
        ``.txnindex`` write fails (it is in memory already, so reads stay right)."""
        ps = self.producer_state
        completed = ps.update(header, offset, coordinator_epoch)
        self.maybe_advance_high_watermark()
        if completed is not None and not commit:
            segment_base = self.log.active_segment.base_offset
            self.txns.record_abort(completed, stable_offset_after(ps, offset), segment_base)

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """Producer id -> :class:`LastRecord` of every producer this partition remembers
        (Kafka's ``lastRecordsOfActiveProducers``; an expired producer is forgotten, see
        :meth:`remove_expired_producers`, and so no longer kept): the last offset of its last
        batch with a sequence, None when it has none since its current epoch began (its last
        entry is a marker). The log cleaner keeps that batch even when it retains no record
        (call under the lock)."""
        return {
            pid: LastRecord(e.batches[-1].last_offset if e.batches else None, e.epoch)
            for pid, e in self.producer_state.producers.items()
        }

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        """Forget the producers idle ``producer.id.expiration.ms`` (``expiration_ms``) without an
        ongoing transaction (Kafka's ``UnifiedLog.removeExpiredProducers``); return how many.
        Call under the lock (or before the partition is shared). Memory only: the next
        snapshot (a roll, the close) is written without them."""
        expired = self.producer_state.remove_expired_producers(now_ms, expiration_ms)
        if expired:
            log.debug("%s: expired %d producer id(s)", self.tp, len(expired))
        return len(expired)

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        return self.txns.aborted_between(start_offset, end_offset)

    def replace_segments(self, old: Sequence[LogSegment], new_base: int) -> LogSegment:
        """Swap the log cleaner's output in for ``old`` (under the lock): the segments
        (``LocalLog.replace_segments``, ValueError when ``old`` changed), then the aborted
        transactions of their offset range, from the new segment's ``.txnindex``, then the
        producer snapshots at the replaced segments' base offsets but ``new_base`` and the
        newest snapshot (Kafka's ``deleteProducerSnapshots``; a crash before leaves them to
        the stray snapshot removal on open)."""
        segment = self.log.replace_segments(old, new_base)
        self.txns.reload_range(new_base, self.log.next_segment_base(segment))
        for replaced in old:
            offset = replaced.base_offset
            if offset != new_base and offset != self._latest_snapshot:
                self._delete_snapshot(offset)
        return segment

    def maybe_advance_high_watermark(self) -> None:
        leo = self.log.log_end_offset
        if leo > self.high_watermark:
            self.high_watermark = leo
            if self.on_append is not None:
                self.on_append(self.tp)

    # reads ------------------------------------------------------------------------------------
    @property
    def last_stable_offset(self) -> int:
        first = self.producer_state.first_unstable_offset()
        return self.high_watermark if first is None else min(first, self.high_watermark)

    @property
    def log_start_offset(self) -> int:
        return int(self.log.log_start_offset)

    @property
    def log_end_offset(self) -> int:
        return int(self.log.log_end_offset)

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int, min_one: bool) -> Any:
        """Whole batches from ``fetch_offset`` below ``max_offset``: a FetchDataInfo of FileRegions.

        Raises OffsetOutOfRangeError outside [local log start offset, log end offset].
        """
        if max_offset <= fetch_offset <= self.log.log_end_offset:
            return None
        return self.log.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one)

    # lifecycle --------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.log.closed:
            raise NotLeaderOrFollowerError(f"{self.tp} was closed (deleted) on this broker")

    def close(self, snapshot: bool = True) -> None:
        """Flush, snapshot the producer state at the log end offset and close (blocking)."""
        leo = self.log.log_end_offset
        if snapshot and leo > 0 and not snapshot_path(self.log.dir, leo).exists():
            self.producer_state.take_snapshot(leo, sync=True)
            self._latest_snapshot = leo
        self.log.close()
