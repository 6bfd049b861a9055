"""Idempotent-producer state of one partition (Kafka's ProducerStateManager).

Per producer id the broker remembers the producer epoch and the metadata of the last
:data:`MAX_CACHED_BATCHES` batches appended (first/last sequence, first/last offset). On a leader
append, :meth:`ProducerStateManager.check` decides per batch, with Kafka's rules:

- epoch lower than the known one            -> INVALID_PRODUCER_EPOCH
- same epoch, same (first seq, last seq) as a cached batch -> duplicate: answer the original
  offsets, append nothing
- a new epoch must start at sequence 0       -> else OUT_OF_ORDER_SEQUENCE_NUMBER
- same epoch: first seq must be last seq + 1 (wrapping at 2**31-1); a known epoch without a
  batch yet (a marker began it, the coordinator's ABORT after InitProducerId) has last seq -1,
  so only 0 follows -> else OUT_OF_ORDER_SEQUENCE_NUMBER
- a non-transactional batch while the producer's transaction is ongoing -> INVALID_TXN_STATE
- a batch without a sequence (base sequence -1: the group coordinator's TxnOffsetCommit batches
  in ``__consumer_offsets``) gets the epoch check only, as Kafka's coordinator-origin appends
- an unknown producer id is accepted at any sequence (its state may have been removed with old
  segments, or expired, as in Kafka since KIP-360: no UNKNOWN_PRODUCER_ID from the broker)

After the append :meth:`update` records the batch with its assigned offsets; recovery replays
batch headers through the same :meth:`update` (the log is trusted, nothing is checked).

Snapshot file ``{offset:020d}.snapshot`` in the partition dir holds the state of every batch below
``offset`` (the log end offset when it was taken). Format, Kafka's version 1, big-endian::

    version                 i16  = 1
    crc                     u32  CRC-32C of everything after this field
    count                   i32
    count x entry:
      producer_id           i64
      producer_epoch        i16
      last_sequence         i32  of the producer's last data batch (-1: none in its epoch)
      last_offset           i64  of that batch (-1: none)
      offset_delta          i32  last_offset - first offset of the producer's last batch (0: none)
      timestamp             i64  the producer's last timestamp (``ProducerEntry.last_timestamp``:
                                 of its last data batch or marker, Kafka's ``lastTimestamp``)
      coordinator_epoch     i32  of the producer's last marker (-1: none)
      current_txn_first_offset i64 first offset of the producer's ongoing transaction (-1: none)

Transactions: a transactional data batch opens the producer's ongoing transaction at its base
offset (``current_txn_first_offset``, also in :attr:`ProducerStateManager.ongoing`) unless one
is open; a control batch (COMMIT/ABORT marker) closes it and :meth:`update` returns the
completed :class:`CompletedTxn`. An epoch bump keeps the open transaction (the coordinator's
markers after fencing carry the new epoch).

DescribeProducers reads :meth:`ProducerStateManager.active_producers`: the coordinator epoch is
the one of the producer's last marker (-1 before its first; kept across epoch bumps, as Kafka
does); the last timestamp is the max timestamp of the producer's last batch, data or COMMIT /
ABORT marker (Kafka's ``lastTimestamp``, which ``appendEndTxnMarker`` moves to the marker's).

Producer id expiration (Kafka's ``producer.id.expiration.ms``, KIP-854): a producer whose last
batch or marker (``ProducerEntry.last_timestamp``, that batch's max timestamp, as Kafka's
``lastTimestamp``) is ``producer.id.expiration.ms`` or more in the past, and that has no ongoing
transaction, is expired: :meth:`ProducerStateManager.remove_expired_producers` drops it (the
broker runs it every ``producer.id.expiration.check.interval.ms``, and when a partition opens, as
Kafka's load of a snapshot skips expired entries). It is then gone from DescribeProducers, from
the next snapshot and from the log cleaner's kept batches; its next batch is that of an unknown
producer, accepted at any sequence (above).

A snapshot holds every producer the state knows, and of each only its last data batch (as
Kafka's ``writeSnapshot``): a producer whose epoch began with a marker (the coordinator's ABORT
after InitProducerId bumped it) has no batch, and is written with last sequence and last offset
-1, so its epoch still fences the old one after a restart even once the marker left the log.
A file that fails its CRC or is truncated is ignored (and the next older one tried): the log is
replayed from further back.
Snapshots are written to ``.tmp`` then renamed, so a crash never leaves a half-written one.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import crc32c

from tiered_mq.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
)
from tiered_mq.record.batch import NO_PRODUCER_ID, NO_SEQUENCE, BatchHeader

MAX_CACHED_BATCHES: Final = 5
SNAPSHOT_SUFFIX: Final = ".snapshot"
SNAPSHOT_VERSION: Final = 1
_INT32_MAX: Final = 0x7FFFFFFF
NO_PRODUCER_EPOCH: Final = -1
_HEAD = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqiqiq")


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset


@dataclass(frozen=True, slots=True)
class ActiveProducer:
    """One producer as DescribeProducers reports it (-1: none / not known)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int  # max timestamp of the producer's last batch, data or marker
    coordinator_epoch: int  # of the producer's last marker
    current_txn_start_offset: int


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))
    current_txn_first_offset: int = -1
    coordinator_epoch: int = -1  # of the last COMMIT/ABORT marker
    #: max timestamp of the producer's last batch, data or marker (-1: none): expiration's clock
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        last = header.last_sequence
        for b in self.batches:
            if b.first_seq == header.base_sequence and b.last_seq == last:
                return b
        return None


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


def snapshot_path(dir: Path, offset: int) -> Path:
    return dir / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def list_snapshots(dir: Path) -> list[int]:
    """Offsets of the snapshot files in ``dir``, ascending."""
    out = []
    for p in dir.glob(f"*{SNAPSHOT_SUFFIX}"):
        stem = p.name[: -len(SNAPSHOT_SUFFIX)]
        if len(stem) == 20 and stem.isdigit():
            out.append(int(stem))
    return sorted(out)


class ProducerStateManager:
    """Producer id -> :class:`ProducerEntry` of one partition; not thread-safe (partition lock)."""

    def __init__(self, dir: Path) -> None:
        self.dir = dir
        self.producers: dict[int, ProducerEntry] = {}
        #: producer id -> first offset of its ongoing transaction
        self.ongoing: dict[int, int] = {}
        #: offset up to which the state reflects the log (exclusive)
        self.map_end_offset = 0

    # leader path ----------------------------------------------------------------------------
    def check(self, header: BatchHeader) -> BatchMetadata | None:
        """Validate one batch before append; return the original metadata if it is a duplicate.

        Raises InvalidProducerEpochError, OutOfOrderSequenceNumberError or InvalidTxnStateError.
        """
        pid = header.producer_id
        if pid == NO_PRODUCER_ID:
            return None
        entry = self.producers.get(pid)
        if entry is None:
            return None
        epoch = header.producer_epoch
        if epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"producer {pid}: epoch {epoch} is older than the current epoch {entry.epoch}"
            )
        dup = entry.find_duplicate(header)
        if dup is not None:
            return dup
        seq = header.base_sequence
        if seq == NO_SEQUENCE:
            pass  # a coordinator's batch (TxnOffsetCommit): epoch checked, no sequence
        elif epoch > entry.epoch:
            if seq != 0:
                raise OutOfOrderSequenceNumberError(
                    f"producer {pid}: new epoch {epoch} must start at sequence 0, got {seq}"
                )
        elif entry.epoch != NO_PRODUCER_EPOCH and not _in_sequence(entry.last_seq, seq):
            # last_seq -1 (no batch since a marker began the epoch): only 0 follows it
            raise OutOfOrderSequenceNumberError(
                f"producer {pid}: sequence {seq} does not follow {entry.last_seq}"
            )
        if entry.current_txn_first_offset >= 0 and not header.is_transactional:
            raise InvalidTxnStateError(
                f"producer {pid}: non-transactional batch while its transaction at "
                f"{entry.current_txn_first_offset} is ongoing"
            )
        return None

    def check_all(self, headers: Sequence[BatchHeader]) -> BatchMetadata | None:
        """:meth:`check` every batch of one append, each as if the earlier ones were recorded.

        A duplicate answers the whole append with the original batch (Kafka does the same).
        """
        if len(headers) == 1:
            return self.check(headers[0])
        pending: dict[int, tuple[int, int]] = {}  # pid -> (epoch, last seq) earlier in the append
        for h in headers:
            pid = h.producer_id
            if pid == NO_PRODUCER_ID:
                continue
            earlier = pending.get(pid)
            if earlier is None:
                dup = self.check(h)
                if dup is not None:
                    return dup
            else:
                epoch, last = earlier
                if h.producer_epoch < epoch:
                    raise InvalidProducerEpochError(f"producer {pid}: epoch went backwards")
                if h.producer_epoch == epoch and not _in_sequence(last, h.base_sequence):
                    raise OutOfOrderSequenceNumberError(
                        f"producer {pid}: sequence {h.base_sequence} does not follow {last}"
                    )
                if h.producer_epoch > epoch and h.base_sequence != 0:
                    raise OutOfOrderSequenceNumberError(
                        f"producer {pid}: new epoch must start at sequence 0"
                    )
            pending[pid] = (h.producer_epoch, h.last_sequence)
        return None

    def update(
        self, header: BatchHeader, first_offset: int, coordinator_epoch: int = -1
    ) -> CompletedTxn | None:
        """Record an appended (or recovered) batch whose base offset is ``first_offset``;
        ``coordinator_epoch`` is the marker's, for a control batch.

        Returns the transaction a control batch completed (None for other batches, or for a
        marker of a producer without an ongoing transaction here)."""
        last_offset = first_offset + header.last_offset_delta
        self.map_end_offset = last_offset + 1
        pid = header.producer_id
        if pid == NO_PRODUCER_ID:
            return None
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(pid, header.producer_epoch)
        elif header.producer_epoch != entry.epoch:  # a new epoch: forget the old batches only
            entry.epoch = header.producer_epoch
            entry.batches.clear()
        entry.last_timestamp = header.max_timestamp
        if header.is_control:
            entry.coordinator_epoch = coordinator_epoch
            completed = None
            if entry.current_txn_first_offset >= 0:
                completed = CompletedTxn(pid, entry.current_txn_first_offset, first_offset)
            entry.current_txn_first_offset = -1
            self.ongoing.pop(pid, None)
            return completed
        if header.is_transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = first_offset
            self.ongoing[pid] = first_offset
        if header.base_sequence != NO_SEQUENCE:
            entry.batches.append(
                BatchMetadata(
                    header.base_sequence,
                    header.last_sequence,
                    first_offset,
                    last_offset,
                    header.max_timestamp,
                )
            )
        return None

    def active_producers(self) -> list[ActiveProducer]:
        """Every producer id this partition remembers, by id (a walk of the map, no log read)."""
        out = []
        for pid, e in sorted(self.producers.items()):
            out.append(
                ActiveProducer(
                    pid,
                    e.epoch,
                    e.last_seq,
                    e.last_timestamp,
                    e.coordinator_epoch,
                    e.current_txn_first_offset,
                )
            )
        return out

    @staticmethod
    def is_producer_expired(entry: ProducerEntry, now_ms: int, expiration_ms: int) -> bool:
        """Kafka's ``isProducerExpired``: no ongoing transaction, and the last batch or marker
        at least ``expiration_ms`` before ``now_ms``."""
        return entry.current_txn_first_offset < 0 and now_ms - entry.last_timestamp >= expiration_ms

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Drop every expired producer (:meth:`is_producer_expired`); return their ids. A walk
        of the map in memory, no I/O: the next snapshot is written without them."""
        expired = [
            pid
            for pid, e in self.producers.items()
            if self.is_producer_expired(e, now_ms, expiration_ms)
        ]
        for pid in expired:
            del self.producers[pid]
        return expired

    def first_unstable_offset(self) -> int | None:
        """The smallest first offset of the ongoing transactions (None: none ongoing)."""
        return min(self.ongoing.values()) if self.ongoing else None

    def replay(self, headers: Iterable[BatchHeader]) -> None:
        """Rebuild state from batch headers read back from the log (recovery)."""
        for h in headers:
            self.update(h, h.base_offset)

    # snapshots ------------------------------------------------------------------------------
    def encode_snapshot(self) -> bytes:
        body = bytearray(struct.pack(">i", 0))
        count = 0
        for e in self.producers.values():
            if e.batches:
                b = e.batches[-1]
                last_seq, last_offset, delta = (
                    b.last_seq,
                    b.last_offset,
                    b.last_offset - b.first_offset,
                )
            else:  # no data batch since its epoch began (its last entry is a marker)
                last_seq, last_offset, delta = NO_SEQUENCE, -1, 0
            body += _ENTRY.pack(
                e.producer_id,
                e.epoch,
                last_seq,
                last_offset,
                delta,
                e.last_timestamp,
                e.coordinator_epoch,
                e.current_txn_first_offset,
            )
            count += 1
        struct.pack_into(">i", body, 0, count)
        crc = crc32c.crc32c(bytes(body))
        return struct.pack(">hI", SNAPSHOT_VERSION, crc) + bytes(body)

    @staticmethod
    def decode_snapshot(data: bytes) -> dict[int, ProducerEntry] | None:
        """Entries of a snapshot; None if truncated, of another version or failing its CRC.
        (Also the Spark reader's, for the snapshots uploaded with segments: no state needed.)"""
        if len(data) < _HEAD.size:
            return None
        version, crc, count = _HEAD.unpack_from(data, 0)
        if version != SNAPSHOT_VERSION or crc32c.crc32c(data[6:]) != crc:
            return None
        if len(data) != _HEAD.size + count * _ENTRY.size:
            return None
        out: dict[int, ProducerEntry] = {}
        for i in range(count):
            pid, epoch, last_seq, last_off, delta, ts, coord_epoch, txn_first = _ENTRY.unpack_from(
                data, _HEAD.size + i * _ENTRY.size
            )
            entry = ProducerEntry(
                pid,
                epoch,
                current_txn_first_offset=txn_first,
                coordinator_epoch=coord_epoch,
                last_timestamp=ts,
            )
            if last_off >= 0:  # -1: the producer had no data batch in its epoch
                first_seq = (last_seq - delta) & _INT32_MAX
                entry.batches.append(
                    BatchMetadata(first_seq, last_seq, last_off - delta, last_off, ts)
                )
            out[pid] = entry
        return out

    def take_snapshot(self, offset: int | None = None, sync: bool = False) -> Path:
        """Write the state as ``{offset:020d}.snapshot`` (default: the map end offset).

        Without ``sync`` no fsync (the roll path runs on the event loop): a snapshot lost or
        torn by a power failure fails its CRC and recovery replays from an older one."""
        offset = self.map_end_offset if offset is None else offset
        path = snapshot_path(self.dir, offset)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(self.encode_snapshot())
            if sync:
                f.flush()
                os.fsync(f.fileno())
        tmp.replace(path)
        return path

    def load_latest_snapshot(self, log_end_offset: int, at_most: int | None = None) -> int:
        """Load the newest valid snapshot not beyond ``log_end_offset`` (nor ``at_most`` when
        given: recovery wants the state at the start of the first segment it re-reads);
        return its offset (or 0).

        Snapshots above the log end offset (the log was truncated) are deleted.
        """
        limit = log_end_offset if at_most is None else min(at_most, log_end_offset)
        for off in reversed(list_snapshots(self.dir)):
            path = snapshot_path(self.dir, off)
            if off > log_end_offset:
                path.unlink(missing_ok=True)
                continue
            if off > limit:
                continue
            entries = self.decode_snapshot(path.read_bytes())
            if entries is not None:
                self.producers = entries
                self.ongoing = {
                    pid: e.current_txn_first_offset
                    for pid, e in entries.items()
                    if e.current_txn_first_offset >= 0
                }
                self.map_end_offset = off
                return off
        self.producers = {}
        self.ongoing = {}
        self.map_end_offset = 0
        return 0

    def forget_settled(self) -> int:
        """Drop every producer without an ongoing transaction; return how many were dropped.
        For state that no longer matches the log (see Partition's recovery): a forgotten
        producer is unknown, so its next batch is accepted at any sequence (KIP-360)."""
        settled = [pid for pid, e in self.producers.items() if e.current_txn_first_offset < 0]
        for pid in settled:
            del self.producers[pid]
        return len(settled)

    def delete_snapshots_before(self, offset: int) -> None:
        """Remove every snapshot file below ``offset`` (Kafka's ``deleteSnapshotsBefore``):
        called with the local log start offset once segments were deleted, a snapshot there
        describes records no longer in the log, and recovery starts from one at or above it."""
        for o in list_snapshots(self.dir):
            if o < offset:
                self.delete_snapshot(o)

    def delete_snapshot(self, offset: int) -> None:
        """Remove the snapshot file at ``offset`` (none there: nothing to do)."""
        snapshot_path(self.dir, offset).unlink(missing_ok=True)
