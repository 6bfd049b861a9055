"""read_committed for bucket reads: which batches belong to aborted transactions.

Two sources, combined (a batch is dropped if either says it was aborted):

1. The ``.txnindex`` objects (Kafka's TransactionIndex format, 34 bytes per entry, big-endian)::

       0   version           i16   0
       2   producerId        i64
       10  firstOffset       i64   first offset of the aborted transaction
       18  lastOffset        i64   offset of its ABORT marker
       26  lastStableOffset  i64

   A segment's index lists the transactions whose ABORT marker lies in that segment; the
   transaction may have started in an earlier segment, so the planner hands every split the
   entries of its own and all later segments that overlap its offsets.

2. The control batches inside the split itself: a transactional batch of producer P is aborted
   when the next control batch of P after it (in offset order) is an ABORT marker, committed
   when it is a COMMIT.

3. Batches whose marker lies beyond the split and that no index entry names: the reader looks
   ahead (the rest of the segment, then up to :data:`LOOKAHEAD_SEGMENTS` later segments of the
   partition) for the producer's next control batch. The broker uploads a ``.txnindex`` object
   with every segment that has aborted transactions, so this is the fallback for buckets
   written without one. A batch whose marker the lookahead does not find is kept.

Undecided transactions (marker not uploaded yet) never reach this module: the planner ends
every split of a partition at the bucket's last stable offset (stable_offset.py), the first
batch from which the lookahead reaches the last uploaded segment without finding its
producer's marker. What is kept by step 3 is then a batch whose lookahead was cut off by
:data:`LOOKAHEAD_SEGMENTS`: its marker lies further on, or it belongs to a transaction that
began before the partition's last ``LOOKAHEAD_SEGMENTS + 1`` segments and is still undecided
(returned as read_uncommitted would).

Control batches themselves are never returned to the caller (consumers never see them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from tiered_mq.errors import CorruptRecordError
from tiered_mq.hot import transaction_index
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.control import ControlType, decode_control_record
from tiered_mq.record.records import decode_batch


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's offset


def parse_txn_index(data: bytes) -> list[AbortedTxn]:
    """Entries of a ``.txnindex`` object; a trailing partial entry is corrupt."""
    if len(data) % transaction_index.ENTRY_SIZE:
        raise CorruptRecordError(
            f"transaction index of {len(data)} bytes is not a whole number of entries"
        )
    try:
        fields = transaction_index.unpack_entries(data)
    except ValueError as e:  # an entry of an unknown version
        raise CorruptRecordError(str(e)) from e
    return [AbortedTxn(pid, first, last) for _, pid, first, last, _ in fields]


def encode_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    """The ``.txnindex`` bytes for ``entries`` (tests and tools)."""
    return b"".join(
        transaction_index.AbortedTxn(e.producer_id, e.first_offset, e.last_offset, -1).encode()
        for e in entries
    )


def overlapping(
    entries: Iterable[AbortedTxn], low: int, high: int | None
) -> tuple[AbortedTxn, ...]:
    """Entries whose transaction may hold offsets in ``[low, high)`` (``high`` None = open)."""
    return tuple(
        e for e in entries if e.last_offset >= low and (high is None or e.first_offset < high)
    )


Lookahead = Callable[[set[int]], dict[int, bool]]

#: later segments of the partition that a split's lookahead reads for a marker
LOOKAHEAD_SEGMENTS = 16


def aborted_batches(
    data: bytes,
    batches: Sequence[tuple[int, BatchHeader]],
    index: Sequence[AbortedTxn],
    lookahead: Lookahead | None = None,
) -> set[int]:
    """Indexes (into ``batches``) of the data batches of aborted transactions.

    ``lookahead(producer_ids)`` is asked about producers whose transaction is still open at the
    end of ``batches`` and that no index entry names: it returns, for those whose next marker
    it found (in the bytes after the split), whether that marker is an ABORT.
    """
    aborted: set[int] = set()
    pending: dict[int, list[int]] = {}
    for i, (pos, header) in enumerate(batches):
        if not header.is_transactional:
            continue
        if header.is_control:
            open_batches = pending.pop(header.producer_id, [])
            if _is_abort(data, pos):
                aborted.update(open_batches)
        else:
            pending.setdefault(header.producer_id, []).append(i)
    unresolved: dict[int, list[int]] = {}
    for producer_id, open_batches in pending.items():
        for i in open_batches:
            header = batches[i][1]
            if any(
                e.producer_id == producer_id
                and e.first_offset <= header.base_offset
                and header.last_offset <= e.last_offset
                for e in index
            ):
                aborted.add(i)
            else:
                unresolved.setdefault(producer_id, []).append(i)
    if unresolved and lookahead is not None:
        for producer_id, is_abort in lookahead(set(unresolved)).items():
            if is_abort:
                aborted.update(unresolved[producer_id])
    return aborted


def first_markers(
    data: bytes, batches: Sequence[tuple[int, BatchHeader]], producer_ids: set[int]
) -> dict[int, bool]:
    """For each of ``producer_ids`` with a control batch in ``batches``: is its first one an
    ABORT (True) or a COMMIT (False)."""
    found: dict[int, bool] = {}
    for pos, header in batches:
        pid = header.producer_id
        if header.is_control and pid in producer_ids and pid not in found:
            found[pid] = _is_abort(data, pos)
            if len(found) == len(producer_ids):
                break
    return found


def _is_abort(data: bytes, pos: int) -> bool:
    _header, records = decode_batch(data, pos)
    if not records:
        return False  # an empty control batch (compacted away) ends nothing
    marker = decode_control_record(records[0])
    return marker.type is ControlType.ABORT
