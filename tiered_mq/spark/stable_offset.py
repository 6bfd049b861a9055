"""read_committed: a partition's last stable offset in the bucket, computed once on the driver.

Kafka's read_committed consumer reads up to the last stable offset (LSO): the first offset of
the earliest open transaction, one whose COMMIT/ABORT marker is not in the log yet. In the
bucket a transaction is *undecided* when its producer's marker is not uploaded. Uploaded
segments are contiguous and a producer's marker follows its data, so a missing marker lies
after the last uploaded offset: only the end of the uploaded data can hold undecided
transactions, and older segments are never read for this.

The *tail* of a partition is its last ``LOOKAHEAD_SEGMENTS + 1`` readable segments, in manifest
order: the segments from which the reader's lookahead (the rest of the segment, then up to
``LOOKAHEAD_SEGMENTS`` later segments, transactions.py) reaches the last uploaded segment. The
bucket's last stable offset (the *stable end*) is::

    the smallest base offset of a transactional data batch in the tail that no control batch
    (COMMIT or ABORT) of its producer follows in the bucket; none when there is no such batch

Every split of the partition ends there (planner.py lowers the partition's end offset to it),
so no executor returns a record at or after it, whoever produced that record; records below it
are returned (committed ones, and non-transactional ones). For a transaction that starts in the
tail this is Kafka's LSO. A transaction that started before the tail and is still undecided
is cut at its first batch in the tail; its batches before the tail are still returned: from
there the lookahead stops at the ``LOOKAHEAD_SEGMENTS`` cap, and an undecided transaction looks
the same as a long one whose marker lies further on.

How, cheapest first (both give the same offset when the snapshot matches the log):

1. The producer snapshot uploaded with the last segment (broker/producer_state.py, Kafka's
   format) is the producer state at the end of the uploaded data: ``current_txn_first_offset``
   is the first offset of each producer's open transaction, -1 for none. No open transaction:
   no stable end. All of them starting in the tail: the stable end is the smallest. One GET of
   a small object.
2. Otherwise (no snapshot, an unreadable one, or a transaction that began before the tail):
   the ``.log`` objects of the tail are read, one GET each, one at a time, and their batch
   headers walked (:func:`first_undecided`).

Neither happens for a read that ends at or before the tail's first offset: it cannot meet an
undecided batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from tiered_mq.broker.producer_state import ProducerStateManager
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import RemoteSegment
from tiered_mq.errors import ObjectNotFoundError
from tiered_mq.record.batch import BatchHeader
from tiered_mq.spark.bucket import Bucket
from tiered_mq.spark.segment_reader import walk_headers
from tiered_mq.spark.transactions import LOOKAHEAD_SEGMENTS


def first_undecided(headers: Iterable[BatchHeader]) -> int | None:
    """Base offset of the first transactional data batch of ``headers`` (in offset order) that
    no control batch of its producer follows; None when every one is followed by one."""
    open_since: dict[int, int] = {}  # producer id -> its first batch after its last marker
    for header in headers:
        if not header.is_transactional:
            continue
        if header.is_control:
            open_since.pop(header.producer_id, None)
        else:
            open_since.setdefault(header.producer_id, header.base_offset)
    return min(open_since.values(), default=None)


def tail(segments: Sequence[RemoteSegment]) -> Sequence[RemoteSegment]:
    """The segments whose lookahead reaches the last one (``segments`` in manifest order)."""
    return segments[-(LOOKAHEAD_SEGMENTS + 1) :]


def stable_end(bucket: Bucket, segments: Sequence[RemoteSegment], end: int) -> int:
    """``end`` (exclusive), lowered to the partition's stable end when that is below it.

    ``segments``: the partition's readable segments sorted by (base offset, end offset)."""
    last = tail(segments)
    if not last or end <= last[0].base_offset:
        return end
    first_offsets = open_transactions(bucket, segments)
    if first_offsets is not None and min(first_offsets, default=end) >= last[0].base_offset:
        found = min(first_offsets, default=None)
    else:
        found = first_undecided(_tail_headers(bucket, last))
    return end if found is None else min(end, found)


def open_transactions(bucket: Bucket, segments: Sequence[RemoteSegment]) -> list[int] | None:
    """First offsets of the transactions open at the end of ``segments``, from the producer
    snapshot of the segment that ends last; None without a readable snapshot."""
    newest = max(segments, key=lambda s: (s.end_offset, s.base_offset))
    key = newest.key(layout.SNAPSHOT)
    if key is None:
        return None
    try:
        entries = ProducerStateManager.decode_snapshot(bucket.get(key))
    except ObjectNotFoundError:
        return None
    if entries is None:
        return None
    return [e.current_txn_first_offset for e in entries.values() if e.current_txn_first_offset >= 0]


def _tail_headers(bucket: Bucket, segments: Sequence[RemoteSegment]) -> Iterator[BatchHeader]:
    """Batch headers of ``segments`` in offset order, each offset once (segments that a new
    leader re-uploaded overlap and hold equal batches there)."""
    covered = 0
    for seg in segments:
        key = seg.key(layout.LOG)
        if key is None or seg.end_offset < covered:
            continue
        data = bucket.get(key)
        for _pos, header in walk_headers(data, bucket.url.describe(key), 0):
            if header.base_offset >= covered:
                yield header
        covered = max(covered, seg.end_offset + 1)
